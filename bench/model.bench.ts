/**
 * Benchmark of the imbalance model: fast E[X_W(32)] for supports of 10^2..10^5
 * values, the exact method where it finishes, exact vs fast on geo(0.05) (270 values).
 */
import type { BenchContext, BenchResult } from './bench-context.ts';
import {
  CategoricalDistribution,
  createSeededRandom,
  exactCost,
  exactExpectedLoss,
  fastExpectedLoss,
} from '../model/index.ts';

/** Seeded random weights on {1..size}: a flat, irregular distribution with every value present. */
function randomSupport(size: number, seed: number): CategoricalDistribution {
  const random = createSeededRandom(seed);
  const pairs: [number, number][] = [];
  for (let v = 1; v <= size; v++) pairs.push([v, 0.05 + random.nextFloat()]);
  return CategoricalDistribution.fromPmf(pairs);
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const n = 32;
  const metrics: Record<string, number> = {};
  ctx.note('supports: seeded random weights 0.05 + U(0,1) on {1..K} (createSeededRandom(K)); n = 32');
  for (const size of [100, 1000, 10_000, 100_000]) {
    const dist = randomSupport(size, size);
    const fastName = `fast K=${size}`;
    await ctx.measure(fastName, () => fastExpectedLoss(dist, n), { runs: size >= 100_000 ? 9 : 25, warmupRuns: size >= 100_000 ? 2 : 10, parameters: { method: 'fast', support: size, n } });
    const fast = fastExpectedLoss(dist, n);
    metrics[`expectedLoss K=${size}`] = fast.expectedLoss;
    metrics[`quadratureNodes K=${size}`] = fast.evaluations;
    const cost = exactCost(dist, n);
    if (cost.feasible) {
      await ctx.measure(`exact K=${size}`, () => exactExpectedLoss(dist, n), {
        runs: 5,
        warmupRuns: 1,
        baseline: fastName,
        parameters: { method: 'exact', support: size, n },
      });
      const exact = exactExpectedLoss(dist, n);
      metrics[`relativeDifference fast-exact K=${size}`] = Math.abs(fast.expectedLoss - exact) / exact;
    } else {
      ctx.note(`exact K=${size} skipped: it would need ~${cost.operations.toPrecision(2)} operations (limit 2e9)`);
    }
  }
  const geo = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 });
  ctx.note(`geo(0.05): ${geo.describe()}`);
  await ctx.measure('fast geo(0.05)', () => fastExpectedLoss(geo, n), { runs: 25, warmupRuns: 10, parameters: { method: 'fast', support: geo.size, n } });
  await ctx.measure('exact geo(0.05)', () => exactExpectedLoss(geo, n), {
    runs: 3,
    warmupRuns: 1,
    maxTotalMillis: 20_000,
    baseline: 'fast geo(0.05)',
    parameters: { method: 'exact', support: geo.size, n },
  });
  const geoExact = exactExpectedLoss(geo, n);
  metrics['expectedLoss geo(0.05) exact'] = geoExact;
  metrics['relativeDifference fast-exact geo(0.05)'] = Math.abs(fastExpectedLoss(geo, n).expectedLoss - geoExact) / geoExact;
  ctx.targetMaxMillis('fast K=10000', 5, 'fast E[X_W(32)] at 10^4 values');
  ctx.targetMaxMillis('fast K=100000', 100, 'fast E[X_W(32)] at 10^5 values');
  ctx.targetMaxMillis('exact geo(0.05)', 3000, 'exact E[X_W(32)] for geo(0.05)');
  ctx.targetMinSpeedup('fast geo(0.05)', 'exact geo(0.05)', 1000, 'fast vs exact at ~300 values (geo(0.05), 270 values)');
  return { metrics };
}
