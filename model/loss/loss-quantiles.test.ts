import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { granularitySweep } from '../what-ifs/granularity-sweep.ts';
import { lossQuantiles } from './loss-quantiles.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { expectedLoss } from './expected-loss.ts';
import { workloadLoss } from './sample-maximum.ts';

describe('lossQuantiles', () => {
  it('exact quantiles of W ∈ {1, 2}, n = 2: X = 1 w.p. 1/2, 4/3 w.p. 1/2', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 2: 1 });
    const result = lossQuantiles(dist, 2, [0.25, 0.5, 0.75]);
    expect(result.method).toBe('exact');
    expect(result.quantiles).toEqual({ '0.25': 1, '0.5': 1, '0.75': 4 / 3 });
  });
  it('Monte Carlo quantiles agree with exact ones (fixed seed)', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.3 });
    const exact = lossQuantiles(dist, 8, [0.5, 0.9]);
    const simulated = lossQuantiles(dist, 8, [0.5, 0.9], { method: 'monte-carlo', random: createSeededRandom(4), samples: 100_000 });
    expect(exact.method).toBe('exact');
    expect(simulated.method).toBe('monte-carlo');
    expect(simulated.samples).toBe(100_000);
    // X takes many close values; the empirical quantile lies within 2% of the exact one.
    for (const key of ['0.5', '0.9']) expect(Math.abs(simulated.quantiles[key]! - exact.quantiles[key]!) / exact.quantiles[key]!).toBeLessThan(0.02);
  });
  it('falls back to Monte Carlo when the exact method is too expensive', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 5000 });
    const result = lossQuantiles(dist, 32, [0.5], { samples: 2000 });
    expect(result.method).toBe('monte-carlo');
    expect(result.quantiles['0.5']).toBeGreaterThan(1);
    expect(result.quantiles['0.5']).toBeLessThan(2);
  });
  it('rejects probabilities outside (0, 1)', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 2: 1 });
    for (const p of [0, 1, -0.5, Number.NaN]) expect(() => lossQuantiles(dist, 2, [p])).toThrow(/quantile probabilities must be in \(0, 1\), got/);
  });
});

describe('granularitySweep', () => {
  it('returns one row per group size with expected and workload loss', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'pois', lambda: 3 });
    const rows = granularitySweep(dist, [1, 4, 32]);
    expect(rows.map((r) => r.n)).toEqual([1, 4, 32]);
    expect(rows[0]!.expectedLoss).toBe(1);
    expect(rows[2]!.expectedLoss).toBe(expectedLoss(dist, 32));
    expect(rows[2]!.workloadLoss).toBe(workloadLoss(dist, 32));
    expect(granularitySweep(dist)).toHaveLength(32);
    expect(() => granularitySweep(dist, [2, 2048])).toThrow(/group size n must be an integer 1\.\.1024, got 2048/);
  });
});
