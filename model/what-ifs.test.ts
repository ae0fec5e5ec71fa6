import { describe, expect, it } from 'vitest';
import { binnedGroupingLoss } from './binned-grouping-loss.ts';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { createCategoricalSampler } from './categorical-sampler.ts';
import { expectedLoss } from './expected-loss.ts';
import { createFamilySampler } from './family-sampler.ts';
import type { FamilySpec } from './family.ts';
import { fitParametric } from './fit-parametric.ts';
import { groupLoss } from './group-loss.ts';
import { createSeededRandom } from './random.ts';
import { workloadLoss } from './sample-maximum.ts';
import { sortedGroupingLoss } from './sorted-grouping-loss.ts';

const geo = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 });

function meanAndStandardError(xs: readonly number[]): { mean: number; standardError: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, standardError: Math.sqrt(variance / xs.length) };
}

describe('sortedGroupingLoss', () => {
  it('equals grouping the explicit sorted array Q((i − ½)/N), i = 1..N', () => {
    for (const [units, n] of [
      [20_000, 32],
      [256, 32],
      [1000, 7],
    ] as const) {
      const groups = Math.floor(units / n);
      const sorted = Array.from({ length: groups * n }, (_, i) => geo.quantile((i + 0.5) / (groups * n)));
      let lossSum = 0;
      let simt = 0;
      let mimd = 0;
      for (let g = 0; g < groups; g++) {
        const lanes = sorted.slice(g * n, g * n + n);
        lossSum += groupLoss(lanes);
        simt += n * Math.max(...lanes);
        mimd += lanes.reduce((a, b) => a + b, 0);
      }
      const result = sortedGroupingLoss(geo, n, { units });
      expect(result.groups).toBe(groups);
      expect(result.expectedLoss).toBeCloseTo(lossSum / groups, 12);
      expect(result.workloadLoss).toBeCloseTo(simt / mimd, 12);
    }
  });

  it('agrees with sorting simulated launches (fixed seed): the excess loss within 15% plus 4 SE', () => {
    const units = 20_000;
    const n = 32;
    const draw = createCategoricalSampler(geo);
    const replicates: number[] = [];
    for (let r = 0; r < 20; r++) {
      const random = createSeededRandom(100 + r);
      const launch = Float64Array.from({ length: units }, () => draw(random)).sort();
      let sum = 0;
      for (let g = 0; g < units / n; g++) sum += groupLoss(launch.subarray(g * n, g * n + n));
      replicates.push(sum / (units / n));
    }
    const simulated = meanAndStandardError(replicates);
    const model = sortedGroupingLoss(geo, n, { units }).expectedLoss;
    // The model puts each boundary between two values at its expected position; real launches
    // move it by ~√N units, which changes the few mixed groups: allow 15% of the excess 1 − loss.
    expect(Math.abs(simulated.mean - model)).toBeLessThanOrEqual(0.15 * (model - 1) + 4 * simulated.standardError);
    expect(model).toBeLessThan(expectedLoss(geo, n) / 3); // sorting removes most of the loss
  });

  it('tends to 1 as the launch grows and rejects bad unit counts', () => {
    expect(sortedGroupingLoss(geo, 32, { units: 1 << 24 }).expectedLoss - 1).toBeLessThan(1e-3);
    expect(() => sortedGroupingLoss(geo, 32, { units: 16 })).toThrow(/units \(launch size\) must be an integer >= n=32, got 16/);
  });
});

describe('binnedGroupingLoss', () => {
  it('with one bin is the unbinned model', () => {
    const result = binnedGroupingLoss(geo, 32, 1);
    expect(result.bins).toHaveLength(1);
    expect(result.expectedLoss).toBeCloseTo(expectedLoss(geo, 32), 12);
    expect(result.workloadLoss).toBeCloseTo(workloadLoss(geo, 32), 12);
  });

  it('equal-mass bins split the probability into about equal parts and the work shares sum to 1', () => {
    const result = binnedGroupingLoss(geo, 32, 4);
    expect(result.bins).toHaveLength(4);
    for (const bin of result.bins) expect(Math.abs(bin.probability - 0.25)).toBeLessThan(0.05);
    expect(result.bins.reduce((a, b) => a + b.workShare, 0)).toBeCloseTo(1, 12);
    expect(result.bins.reduce((a, b) => a + b.probability, 0)).toBeCloseTo(1, 12);
  });

  it('optimal edges never cost more work than equal-mass ones', () => {
    for (const k of [2, 3, 4, 8]) {
      expect(binnedGroupingLoss(geo, 32, k, { edges: 'optimal' }).workloadLoss).toBeLessThanOrEqual(binnedGroupingLoss(geo, 32, k).workloadLoss + 1e-12);
    }
  });

  for (const edges of ['equal-mass', 'optimal'] as const) {
    it(`agrees with simulated binning (${edges}, fixed seed) within 4 SE`, () => {
      const n = 32;
      const model = binnedGroupingLoss(geo, n, 4, { edges });
      const draw = createCategoricalSampler(geo);
      const lossReplicates: number[] = [];
      const workloadReplicates: number[] = [];
      for (let r = 0; r < 20; r++) {
        const random = createSeededRandom(500 + r);
        const lanes = model.bins.map(() => [] as number[]);
        let lossSum = 0;
        let groups = 0;
        let simt = 0;
        let mimd = 0;
        for (let i = 0; i < 40_000; i++) {
          const w = draw(random);
          const b = model.bins.findIndex((bin) => w >= bin.low && w <= bin.high);
          lanes[b]!.push(w);
          if (lanes[b]!.length === n) {
            lossSum += groupLoss(lanes[b]!);
            simt += n * Math.max(...lanes[b]!);
            mimd += lanes[b]!.reduce((a, c) => a + c, 0);
            groups++;
            lanes[b] = [];
          }
        }
        lossReplicates.push(lossSum / groups);
        workloadReplicates.push(simt / mimd);
      }
      const loss = meanAndStandardError(lossReplicates);
      const workload = meanAndStandardError(workloadReplicates);
      expect(Math.abs(loss.mean - model.expectedLoss)).toBeLessThanOrEqual(4 * loss.standardError);
      expect(Math.abs(workload.mean - model.workloadLoss)).toBeLessThanOrEqual(4 * workload.standardError);
    });
  }

  it('rejects bad bin counts and too large supports for optimal edges', () => {
    expect(() => binnedGroupingLoss(geo, 32, 0)).toThrow(/bin count k must be an integer 1\.\.1024, got 0/);
    const wide = CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 500 });
    expect(() => binnedGroupingLoss(wide, 32, 4, { edges: 'optimal' })).toThrow(/optimal bin edges need a support of at most 300 values, got 501/);
  });
});

describe('fitParametric', () => {
  const cases: [FamilySpec, (parameters: Readonly<Record<string, number>>) => void][] = [
    [{ family: 'pois', lambda: 4 }, (p) => expect(Math.abs(p.lambda! - 4)).toBeLessThan(4 * Math.sqrt(4 / 50_000))],
    [{ family: 'geo', p: 0.2 }, (p) => expect(Math.abs(p.p! - 0.2)).toBeLessThan(4 * Math.sqrt((0.2 * 0.2 * 0.8) / 50_000))],
    [
      { family: 'nbinom', r: 3, p: 0.4 },
      (p) => {
        expect(Math.abs(p.r! - 3) / 3).toBeLessThan(0.08);
        expect(Math.abs(p.p! - 0.4) / 0.4).toBeLessThan(0.05);
      },
    ],
    [
      { family: 'binom', trials: 20, p: 0.4 },
      (p) => {
        expect(Math.abs(p.trials! - 20)).toBeLessThanOrEqual(2);
        expect(Math.abs(p.p! - 0.4) / 0.4).toBeLessThan(0.05);
      },
    ],
    [
      { family: 'unif', low: 3, high: 10 },
      (p) => {
        expect(p.low).toBe(3);
        expect(p.high).toBe(10);
      },
    ],
  ];
  for (const [spec, checkParameters] of cases) {
    it(`recovers ${spec.family} from 50,000 seeded draws, best by AIC`, () => {
      const draw = createFamilySampler(spec);
      const random = createSeededRandom(9);
      const counts = new Map<number, number>();
      for (let i = 0; i < 50_000; i++) {
        const v = draw(random);
        counts.set(v, (counts.get(v) ?? 0) + 1);
      }
      const fits = fitParametric(counts);
      expect(fits[0]!.family).toBe(spec.family);
      checkParameters(fits[0]!.parameters);
      for (let i = 1; i < fits.length; i++) expect(fits[i]!.aic).toBeGreaterThanOrEqual(fits[i - 1]!.aic);
      expect(fits[0]!.aic).toBeCloseTo(2 * Object.keys(fits[0]!.parameters).length - 2 * fits[0]!.logLikelihood, 6);
    });
  }

  it('leaves out families whose MLE does not exist for the data', () => {
    // Overdispersed data with a zero: no geo (zero outside support), no binom (variance > mean).
    const families = fitParametric({ 0: 50, 1: 10, 10: 40 }).map((f) => f.family);
    expect(families).not.toContain('geo');
    expect(families).not.toContain('binom');
    expect(families).toContain('nbinom');
  });

  it('uses sampleSize for a pmf and validates it', () => {
    const pmf = CategoricalDistribution.fromPmf([
      [1, 0.5],
      [2, 0.5],
    ]);
    const small = fitParametric(pmf).find((f) => f.family === 'unif')!;
    const large = fitParametric(pmf, { sampleSize: 1000 }).find((f) => f.family === 'unif')!;
    expect(small.logLikelihood).toBeCloseTo(Math.log(0.5), 12); // one observation, P = 1/2
    expect(large.logLikelihood).toBeCloseTo(small.logLikelihood * 1000, 6);
    expect(() => fitParametric(pmf, { sampleSize: 0 })).toThrow(/sampleSize must be a positive number, got 0/);
  });
});
