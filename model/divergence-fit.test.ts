import { describe, expect, it } from 'vitest';
import { divergenceObservationOf, divergenceObservationOfGroup, fitDivergenceCost, parseDivergenceCsv, type DivergenceObservation } from './divergence-fit.ts';
import { divergencePatternBounds } from './divergence-cost.ts';
import { solveLeastSquares } from './least-squares.ts';

// Seeded generator (mulberry32) and Box–Muller normals for synthetic measurement noise.
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

function syntheticCsv(params: { t: number; delta: number; spill: number; overhead?: number; noise: number; seed: number; repeats: number }): string {
  const random = mulberry32(params.seed);
  const lines = ['pattern,loop,k,bounds,cycles'];
  for (const loop of ['single', 'nested'] as const) {
    for (let k = 0; k <= 31; k += 1) {
      const o = divergenceObservationOf({ pattern: '', loop, k, bounds: divergencePatternBounds(k), innerBounds: undefined, cycles: 0, line: 0 });
      for (let r = 0; r < params.repeats; r += 1) {
        const cycles = (params.overhead ?? 0) + params.t * o.issuedIterations + params.delta * o.divergingExits + params.spill * o.spills + params.noise * normal(random);
        lines.push(`${loop}-k${k},${loop},${k},,${cycles.toFixed(3)}`);
      }
    }
  }
  return lines.join('\n') + '\n';
}

describe('solveLeastSquares', () => {
  it('recovers an exact line and matches the closed-form simple regression', () => {
    expect(solveLeastSquares([[1, 0], [1, 1], [1, 2]], [1, 3, 5]).coefficients.map((c) => Number(c.toFixed(12)))).toEqual([1, 2]);
    // Closed form: slope = Sxy/Sxx, intercept = ȳ − slope·x̄.
    const xs = [0, 1, 2, 3, 4];
    const ys = [1.1, 2.9, 5.2, 6.8, 9.1];
    const xBar = 2;
    const yBar = ys.reduce((a, b) => a + b) / 5;
    const sxy = xs.reduce((s, x, i) => s + (x - xBar) * ((ys[i] as number) - yBar), 0);
    const sxx = xs.reduce((s, x) => s + (x - xBar) ** 2, 0);
    const fit = solveLeastSquares(xs.map((x) => [1, x]), ys);
    expect(fit.coefficients[1]).toBeCloseTo(sxy / sxx, 12);
    expect(fit.coefficients[0]).toBeCloseTo(yBar - (sxy / sxx) * xBar, 12);
    // SE(slope) = sqrt(s² / Sxx)
    const s2 = fit.residualSumOfSquares / 3;
    expect(fit.standardErrors?.[1]).toBeCloseTo(Math.sqrt(s2 / sxx), 12);
  });
  it('names a collinear column', () => {
    expect(() => solveLeastSquares([[1, 2], [2, 4], [3, 6]], [1, 2, 3], ['a', 'b'])).toThrow(/'b' cannot be determined/);
  });
});

describe('fitDivergenceCost', () => {
  it('recovers T, δ and the spill cost from noisy synthetic measurements (Kepler-like)', () => {
    const csv = syntheticCsv({ t: 12, delta: 32, spill: 84, noise: 5, seed: 42, repeats: 3 });
    const fit = fitDivergenceCost(parseDivergenceCsv(csv).map((m) => divergenceObservationOf(m)));
    expect(fit.observations).toBe(192);
    expect(fit.iterationCycles).toBeCloseTo(12, 1);
    expect(Math.abs(fit.deltaCycles - 32)).toBeLessThan(1);
    expect(Math.abs((fit.spillCycles as number) - 84)).toBeLessThan(8);
    expect(fit.rSquared).toBeGreaterThan(0.999);
    expect(fit.rmseCycles).toBeGreaterThan(3.5);
    expect(fit.rmseCycles).toBeLessThan(6.5);
    // Each estimate lies within 4 standard errors of the truth.
    const se = fit.standardErrors as Record<string, number>;
    expect(Math.abs(fit.deltaCycles - 32)).toBeLessThan(4 * (se.deltaCycles as number));
    expect(Math.abs((fit.spillCycles as number) - 84)).toBeLessThan(4 * (se.spillCycles as number));
  });
  it('recovers exact parameters (and an intercept) without noise', () => {
    const csv = syntheticCsv({ t: 7, delta: 26, spill: 176, overhead: 300, noise: 0, seed: 1, repeats: 1 });
    const fit = fitDivergenceCost(parseDivergenceCsv(csv).map((m) => divergenceObservationOf(m)), { intercept: true });
    expect(fit.iterationCycles).toBeCloseTo(7, 6);
    expect(fit.deltaCycles).toBeCloseTo(26, 6);
    expect(fit.spillCycles).toBeCloseTo(176, 6);
    expect(fit.overheadCycles).toBeCloseTo(300, 4);
    for (const r of fit.residuals) expect(Math.abs(r.residualCycles)).toBeLessThan(1e-3);
  });
  it('reports the spill cost as unidentified when nothing spilled', () => {
    const obs: DivergenceObservation[] = [0, 1, 2, 3, 4].map((k) => ({ label: `k${k}`, issuedIterations: 32, divergingExits: k, spills: 0, cycles: 320 + 30 * k }));
    const fit = fitDivergenceCost(obs);
    expect(fit.unidentified).toEqual(['spillCycles']);
    expect(fit.spillCycles).toBeUndefined();
    expect(fit.deltaCycles).toBeCloseTo(30, 9);
  });
  it('refuses an intercept that the data cannot separate from T', () => {
    const obs: DivergenceObservation[] = [0, 1, 2, 3].map((k) => ({ label: `k${k}`, issuedIterations: 32, divergingExits: k, spills: 0, cycles: 400 + 30 * k }));
    expect(() => fitDivergenceCost(obs, { intercept: true })).toThrow(/cannot be determined/);
  });
});

describe('divergenceObservationOfGroup', () => {
  it('fits T and δ from per-group measured cycles (production-data path)', () => {
    // Groups with random counts; cycles = 11·max + 29·D exactly → the fit must return 11 and 29.
    const random = mulberry32(5);
    const observations = Array.from({ length: 200 }, (_, g) => {
      const counts = Array.from({ length: 32 }, () => Math.floor(random() * 12));
      const max = Math.max(...counts);
      const distinctBelowMax = new Set(counts.filter((c) => c < max)).size;
      return divergenceObservationOfGroup(counts, 11 * max + 29 * distinctBelowMax, `g${g}`);
    });
    const fit = fitDivergenceCost(observations);
    expect(fit.iterationCycles).toBeCloseTo(11, 9);
    expect(fit.deltaCycles).toBeCloseTo(29, 9);
    expect(fit.unidentified).toEqual(['spillCycles']);
  });
});

describe('parseDivergenceCsv', () => {
  it('reads k patterns, explicit bounds, nested rows and ignores comments and extra columns', () => {
    const rows = parseDivergenceCsv('# comment\npattern,loop,k,bounds,cycles,device\na,single,2,,100,x\nb,nested,,4 4 3;2,200.5,x\n\n');
    expect(rows).toHaveLength(2);
    expect(rows[0]?.bounds).toEqual(divergencePatternBounds(2));
    expect(rows[1]).toMatchObject({ pattern: 'b', loop: 'nested', bounds: [4, 4, 3, 2], cycles: 200.5, line: 4 });
  });
  it('names the line and column of a problem', () => {
    expect(() => parseDivergenceCsv('loop,k,cycles\nsingle,3,abc\n')).toThrow(/line 2: cycles/);
    expect(() => parseDivergenceCsv('loop,k,cycles\ndouble,3,1\n')).toThrow(/line 2: loop must be/);
    expect(() => parseDivergenceCsv('loop,cycles\nsingle,1\n')).toThrow(/'k' or 'bounds'/);
    expect(() => parseDivergenceCsv('loop,k,cycles\nsingle,40,1\n')).toThrow(/line 2: k must be an integer 0..31/);
    expect(() => parseDivergenceCsv('')).toThrow(/empty/);
  });
});
