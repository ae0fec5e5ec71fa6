/**
 * Benchmark of `warpwatch advise`: the whole computation behind the command
 * (granularity n = 1..32, sorting, binning k = 2, 4, 8, parametric fit; `computeAdvice`) for
 * supports of 10^4 and 10^5 values, n = 32, 2^20 units per launch, against the previous method
 * doing the same steps in the same run: the sorting what-if with its stationary programme in
 * quadrature form (`sortedGroupingLoss(..., { stationary: 'quadrature' })`, ~50 Laplace nodes per
 * state) instead of the moment form with a proven remainder bound (docs/model.md §2d).
 */
import type { BenchContext, BenchResult } from './bench-context.ts';
import { computeAdvice } from '../analysis/index.ts';
import {
  binnedGroupingLoss,
  CategoricalDistribution,
  createSeededRandom,
  fitParametric,
  granularitySweep,
  parseDistributionSpec,
  sortedGroupingLoss,
} from '../model/index.ts';

const N = 32;
const UNITS = 2 ** 20;
const BINS = [2, 4, 8];

/** A counts file of 10^4 distinct values: values 1..10^4, seeded integer counts 1..40 (as an observed histogram). */
function countsInput(size: number): CategoricalDistribution {
  const random = createSeededRandom(size);
  const counts: Record<number, number> = {};
  for (let v = 1; v <= size; v++) counts[v] = 1 + random.nextInt(40);
  return CategoricalDistribution.fromCounts(counts);
}

function oldAdvice(distribution: CategoricalDistribution): number {
  let sink = granularitySweep(distribution, Array.from({ length: 32 }, (_, i) => i + 1)).length;
  sink += sortedGroupingLoss(distribution, N, { units: UNITS, stationary: 'quadrature' }).expectedLoss;
  for (const k of BINS) sink += binnedGroupingLoss(distribution, N, k, { units: UNITS }).expectedLoss;
  sink += fitParametric(distribution, distribution.totalWeight > 1 ? {} : { sampleSize: 10_000 }).length;
  return sink;
}

function newAdvice(distribution: CategoricalDistribution): number {
  const advice = computeAdvice({ distribution, source: 'bench', groupSize: N, unitsPerLaunch: UNITS, binCounts: BINS });
  return advice.sorting.expectedLoss + advice.binning.length;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const inputs: [string, CategoricalDistribution][] = [
    ['unif(0,10000)', CategoricalDistribution.fromFamily(parseDistributionSpec('unif(0,10000)'))],
    ['counts 10^4 values', countsInput(10_000)],
    ['unif(0,100000)', CategoricalDistribution.fromFamily(parseDistributionSpec('unif(0,100000)'))],
  ];
  ctx.note(`computeAdvice: n = ${N}, units per launch ${UNITS}, bins ${BINS.join(',')}; old = the same steps with the sorting stationary programme in quadrature form`);
  const metrics: Record<string, number> = {};
  for (const [name, distribution] of inputs) {
    const large = distribution.size > 50_000;
    const options = { runs: large ? 3 : 5, minRuns: large ? 2 : 3, warmupRuns: large ? 0 : 1, maxTotalMillis: large ? 30_000 : 10_000 };
    await ctx.measure(`old advise ${name}`, () => oldAdvice(distribution), { ...options, parameters: { support: distribution.size, method: 'old' } });
    await ctx.measure(`new advise ${name}`, () => newAdvice(distribution), { ...options, baseline: `old advise ${name}`, parameters: { support: distribution.size, method: 'new' } });
    const advice = computeAdvice({ distribution, source: 'bench', groupSize: N, unitsPerLaunch: UNITS, binCounts: BINS });
    let started = process.cpuUsage();
    const oldSorted = sortedGroupingLoss(distribution, N, { units: UNITS, stationary: 'quadrature' });
    const oldSortingCpu = process.cpuUsage(started);
    started = process.cpuUsage();
    const newSorted = sortedGroupingLoss(distribution, N, { units: UNITS });
    const newSortingCpu = process.cpuUsage(started);
    metrics[`sorting expectedLoss ${name}`] = advice.sorting.expectedLoss;
    metrics[`sorting |new − old| / (old − 1) ${name}`] = Math.abs(newSorted.expectedLoss - oldSorted.expectedLoss) / (oldSorted.expectedLoss - 1);
    // One run each, for orientation only (the timed cases above are the measurement).
    metrics[`sorting step alone, old, cpu ms ${name}`] = (oldSortingCpu.user + oldSortingCpu.system) / 1000;
    metrics[`sorting step alone, new, cpu ms ${name}`] = (newSortingCpu.user + newSortingCpu.system) / 1000;
    for (const b of advice.binning) metrics[`binning k=${b.k} expectedLoss ${name}`] = b.expectedLoss;
  }
  ctx.targetMaxMillis('new advise unif(0,10000)', 1000, 'advise at 10^4 support values (unif(0,10000))');
  ctx.targetMaxMillis('new advise counts 10^4 values', 1000, 'advise at a 10^4-value counts file');
  ctx.targetMaxMillis('new advise unif(0,100000)', 5000, 'advise at 10^5 support values (unif(0,100000))');
  return { metrics };
}
