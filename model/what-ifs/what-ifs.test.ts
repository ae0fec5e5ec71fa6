import { describe, expect, it } from 'vitest';
import { binnedGroupingLoss } from './binned-grouping-loss.ts';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { createCategoricalSampler } from '../distributions/categorical-sampler.ts';
import { expectedLoss } from '../loss/expected-loss.ts';
import { createFamilySampler } from '../distributions/family-sampler.ts';
import type { FamilySpec } from '../distributions/family.ts';
import { fitParametric } from '../distributions/fit-parametric.ts';
import { groupLoss } from '../loss/group-loss.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { workloadLoss } from '../loss/sample-maximum.ts';
import { sortedGroupingLoss } from './sorted-grouping-loss.ts';
import { MOMENT_RELATIVE_TOLERANCE, stationaryMomentExcess } from './sorted-stationary-moments.ts';

const geo = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 });

function meanAndStandardError(xs: readonly number[]): { mean: number; standardError: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, standardError: Math.sqrt(variance / xs.length) };
}

/** Exact E over all launches of N units from a small support: every multinomial count vector. */
function bruteForceSorted(values: readonly number[], probabilities: readonly number[], units: number, n: number): { expectedLoss: number; workloadLoss: number } {
  const logFactorial = (k: number): number => {
    let s = 0;
    for (let i = 2; i <= k; i++) s += Math.log(i);
    return s;
  };
  let expected = 0;
  let simt = 0;
  let mimd = 0;
  const counts: number[] = [];
  const visit = (j: number, left: number): void => {
    if (j === values.length - 1) {
      counts.push(left);
      let logP = logFactorial(units);
      counts.forEach((c, i) => (logP += c * Math.log(probabilities[i]!) - logFactorial(c)));
      const probability = Math.exp(logP);
      const sorted = counts.flatMap((c, i) => Array.from({ length: c }, () => values[i]!));
      let lossSum = 0;
      for (let g = 0; g < units / n; g++) {
        const lanes = sorted.slice(g * n, g * n + n);
        lossSum += groupLoss(lanes);
        simt += probability * n * Math.max(...lanes);
        mimd += probability * lanes.reduce((a, b) => a + b, 0);
      }
      expected += (probability * lossSum) / (units / n);
      counts.pop();
      return;
    }
    for (let c = 0; c <= left; c++) {
      counts.push(c);
      visit(j + 1, left - c);
      counts.pop();
    }
  };
  visit(0, units);
  return { expectedLoss: expected, workloadLoss: simt / mimd };
}

/** Seeded launches of the same policy: N units i.i.d., sorted, cut into consecutive groups of n. */
function simulateSortedLaunches(
  dist: CategoricalDistribution,
  n: number,
  units: number,
  launches: number,
  seed: number,
): { loss: { mean: number; standardError: number }; workload: { ratio: number; standardError: number } } {
  const draw = createCategoricalSampler(dist);
  const random = createSeededRandom(seed);
  const losses: number[] = [];
  const simts: number[] = [];
  const mimds: number[] = [];
  const launch = new Float64Array(units);
  for (let l = 0; l < launches; l++) {
    for (let i = 0; i < units; i++) launch[i] = draw(random);
    launch.sort();
    let lossSum = 0;
    let simt = 0;
    let mimd = 0;
    for (let g = 0; g < units / n; g++) {
      const lanes = launch.subarray(g * n, g * n + n);
      lossSum += groupLoss(lanes);
      simt += n * lanes[n - 1]!;
      for (const w of lanes) mimd += w;
    }
    losses.push(lossSum / (units / n));
    simts.push(simt);
    mimds.push(mimd);
  }
  // Workload loss = Σ SIMT / Σ MIMD over all launches (ratio estimator, delta-method standard error).
  const ratio = simts.reduce((a, b) => a + b, 0) / mimds.reduce((a, b) => a + b, 0);
  const meanMimd = mimds.reduce((a, b) => a + b, 0) / launches;
  const residual = simts.reduce((a, s, i) => a + (s - ratio * mimds[i]!) ** 2, 0) / (launches - 1);
  return { loss: meanAndStandardError(losses), workload: { ratio, standardError: Math.sqrt(residual / launches) / meanMimd } };
}

/** The earlier deterministic-grid value: the i-th unit = Q((i − ½)/N), no sampling. */
function deterministicGridLoss(dist: CategoricalDistribution, n: number, units: number): number {
  const sorted = Array.from({ length: units }, (_, i) => dist.quantile((i + 0.5) / units));
  let lossSum = 0;
  for (let g = 0; g < units / n; g++) lossSum += groupLoss(sorted.slice(g * n, g * n + n));
  return lossSum / (units / n);
}

describe('sortedGroupingLoss', () => {
  it('equals the exact expectation over all launches of a few units (every multinomial outcome)', () => {
    const cases: [number[], number[], number, number][] = [
      [[0, 1, 2, 40], [0.4, 0.3, 0.2, 0.1], 8, 4],
      [[0, 1, 2, 40], [0.4, 0.3, 0.2, 0.1], 12, 3],
      [[0, 1, 2, 40, 45], [0.3, 0.2, 0.1, 0.25, 0.15], 10, 5],
      [[1, 5, 6, 9, 30], [0.1, 0.3, 0.2, 0.3, 0.1], 12, 4],
      [[0, 3], [0.9, 0.1], 16, 8],
      [[2, 3, 4, 5, 6, 7], [0.3, 0.25, 0.2, 0.1, 0.1, 0.05], 12, 6],
      [[0, 5], [0.5, 0.5], 13, 2], // 13 units: rounded down to 12, i.e. launches of 12 units
    ];
    for (const [values, probabilities, units, n] of cases) {
      const dist = CategoricalDistribution.fromPmf(values.map((v, i) => [v, probabilities[i]!] as const));
      const exact = bruteForceSorted(values, probabilities, Math.floor(units / n) * n, n);
      const result = sortedGroupingLoss(dist, n, { units });
      expect(result.groups).toBe(Math.floor(units / n));
      expect(Math.abs(result.expectedLoss - exact.expectedLoss)).toBeLessThan(2e-9);
      expect(result.workloadLoss).toBeCloseTo(exact.workloadLoss, 12);
    }
  });

  const supports: [string, CategoricalDistribution][] = [
    ['zero-heavy', CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 })],
    ['geo(0.05)', geo],
    ['pois(4)', CategoricalDistribution.fromFamily({ family: 'pois', lambda: 4 })],
    ['bimodal', CategoricalDistribution.fromCounts({ 1: 30, 2: 20, 3: 10, 40: 25, 45: 15 })],
    ['gapped', CategoricalDistribution.fromCounts({ 3: 40, 60: 35, 900: 25 })],
  ];
  let seed = 1000;
  for (const [name, dist] of supports) {
    for (const n of [4, 8, 32]) {
      for (const units of [4 * n, 2048]) {
        const caseSeed = seed++;
        it(`${name}, n = ${n}, N = ${units}: within 4 SE of seeded simulated sorted launches`, () => {
          const launches = Math.max(300, Math.ceil(400_000 / units));
          const simulated = simulateSortedLaunches(dist, n, units, launches, caseSeed);
          const model = sortedGroupingLoss(dist, n, { units });
          expect(Math.abs(model.expectedLoss - simulated.loss.mean)).toBeLessThanOrEqual(4 * simulated.loss.standardError);
          expect(Math.abs(model.workloadLoss - simulated.workload.ratio)).toBeLessThanOrEqual(4 * simulated.workload.standardError);
        });
      }
    }
  }

  it('differs from the deterministic quantile grid where the demo found it (0 → 1 boundary, n = 16, N = 4096)', () => {
    const zeroHeavy = supports[0]![1];
    const simulated = simulateSortedLaunches(zeroHeavy, 16, 4096, 800, 77);
    const model = sortedGroupingLoss(zeroHeavy, 16, { units: 4096 }).expectedLoss;
    expect(Math.abs(model - simulated.loss.mean)).toBeLessThanOrEqual(4 * simulated.loss.standardError);
    // The grid value Q((i − ½)/N) is many standard errors away: this check would fail for it.
    expect(Math.abs(deterministicGridLoss(zeroHeavy, 16, 4096) - simulated.loss.mean)).toBeGreaterThan(6 * simulated.loss.standardError);
  });

  it('the stationary programme of large launches agrees with the per-group programme within 1e-6 of the excess loss', () => {
    // The per-group programme took 37 s for unif(0,10000) at N = 2^20; the stationary one
    // (docs/model.md §2d) covers boundaries spread over ≥ n units and evaluates almost no group.
    for (const [dist, n, units] of [
      [geo, 4, 1 << 19],
      [geo, 32, 1 << 16],
      [CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 60 }), 8, 1 << 21],
      [CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 300 }), 8, 1 << 17],
      [CategoricalDistribution.fromFamily({ family: 'pois', lambda: 30 }), 32, 1 << 16],
      [CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 }), 16, 1 << 18],
    ] as const) {
      const exact = sortedGroupingLoss(dist, n, { units, exact: true });
      const stationary = sortedGroupingLoss(dist, n, { units });
      expect(stationary.evaluatedGroups).toBeLessThan(exact.evaluatedGroups / 2);
      expect(Math.abs(stationary.expectedLoss - exact.expectedLoss)).toBeLessThan(1e-6 * (exact.expectedLoss - 1));
      expect(Math.abs(stationary.expectedMixedGroups - exact.expectedMixedGroups)).toBeLessThan(1e-6 * exact.expectedMixedGroups);
      expect(stationary.workloadLoss).toBe(exact.workloadLoss);
    }
    const huge = sortedGroupingLoss(geo, 4, { units: 2 ** 40 });
    expect(huge.expectedLoss - 1).toBeGreaterThan(0);
    expect(huge.expectedLoss - 1).toBeLessThan(1e-9);
    expect(sortedGroupingLoss(geo, 32, { units: 4096 }).expectedLoss).toBeLessThan(expectedLoss(geo, 32) / 3); // sorting removes most of the loss
  });

  it('unif(0,1000), n = 32, N = 2^17 (stationary programme): within 4 SE of seeded simulated sorted launches', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 1000 });
    const model = sortedGroupingLoss(dist, 32, { units: 1 << 17 });
    expect(model.evaluatedGroups).toBeLessThan(100);
    const simulated = simulateSortedLaunches(dist, 32, 1 << 17, 60, 4242);
    expect(Math.abs(model.expectedLoss - simulated.loss.mean)).toBeLessThanOrEqual(4 * simulated.loss.standardError);
    expect(simulated.loss.standardError).toBeLessThan(0.2 * (model.expectedLoss - 1));
  });

  it('the moment form of the stationary programme agrees with the quadrature form (the previous method) within 1e-6 of the excess', () => {
    // Advise --dist 'unif(0,100000)' spent ~9 s in the quadrature form. The moment form
    // sums a series for 1/Σ whose remainder is bounded by 1e-6 of each start value's excess; the
    // quadrature form is exact to ~1e-9. Cases with the value 0 and small values exercise the
    // quadrature fallback for start values the series cannot cover.
    for (const [dist, n, units] of [
      [geo, 32, 1 << 20],
      [CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 3000 }), 32, 1 << 20],
      [CategoricalDistribution.fromFamily({ family: 'unif', low: 1, high: 400 }), 8, 1 << 16],
      [CategoricalDistribution.fromFamily({ family: 'pois', lambda: 30 }), 32, 1 << 16],
      [CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 }), 16, 1 << 18],
      [CategoricalDistribution.fromFamily({ family: 'geo', p: 0.002 }), 16, 1 << 18],
    ] as const) {
      const reference = sortedGroupingLoss(dist, n, { units, stationary: 'quadrature' });
      const moments = sortedGroupingLoss(dist, n, { units });
      const excess = reference.expectedLoss - 1;
      expect(excess).toBeGreaterThan(0);
      expect(Math.abs(moments.expectedLoss - reference.expectedLoss)).toBeLessThanOrEqual(1.01e-6 * excess);
      expect(Math.abs(moments.expectedMixedGroups - reference.expectedMixedGroups)).toBeLessThanOrEqual(1e-8 * reference.expectedMixedGroups);
      expect(moments.workloadLoss).toBe(reference.workloadLoss);
    }
  });

  it('the moment form leaves to the quadrature exactly the start values its series bound cannot cover', () => {
    // values 0 (c = 0), 1, 2, … : small values against the spread of their windows are hard;
    // the large values of unif(10000, 10400) are covered by the series at order 2.
    const small = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.01 });
    const all = new Uint8Array(small.size).fill(1);
    const part = stationaryMomentExcess(small.values, small.probabilities, 1, 1 << 20, 32, all);
    expect(part.hard[0]).toBe(1);
    expect(part.lastHard).toBeGreaterThan(0);
    expect(part.hard.reduce((a, b) => a + b, 0)).toBeLessThan(small.size / 2);
    const large = CategoricalDistribution.fromFamily({ family: 'unif', low: 10_000, high: 10_400 });
    const covered = stationaryMomentExcess(large.values, large.probabilities, 1, 1 << 20, 32, new Uint8Array(large.size).fill(1));
    expect(covered.lastHard).toBe(-1);
    expect(covered.bound).toBeGreaterThan(0);
    expect(covered.bound).toBeLessThanOrEqual(MOMENT_RELATIVE_TOLERANCE * covered.excess);
  });

  it('geo(0.002), n = 16, N = 2^18 (moment form with quadrature fallback): within 4 SE of seeded simulated sorted launches', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.002 });
    const model = sortedGroupingLoss(dist, 16, { units: 1 << 18 });
    const simulated = simulateSortedLaunches(dist, 16, 1 << 18, 40, 9090);
    expect(Math.abs(model.expectedLoss - simulated.loss.mean)).toBeLessThanOrEqual(4 * simulated.loss.standardError);
    expect(simulated.loss.standardError).toBeLessThan(0.2 * (model.expectedLoss - 1));
  });

  it('gives 1 for a single value, n = 1, or all-zero work, and rejects bad unit counts', () => {
    expect(sortedGroupingLoss(CategoricalDistribution.fromCounts({ 0: 5 }), 8, { units: 64 })).toMatchObject({ expectedLoss: 1, workloadLoss: 1, mixedGroups: 0 });
    expect(sortedGroupingLoss(CategoricalDistribution.fromCounts({ 7: 5 }), 8, { units: 64 }).expectedLoss).toBe(1);
    expect(sortedGroupingLoss(geo, 1, { units: 64 }).expectedLoss).toBe(1);
    expect(() => sortedGroupingLoss(geo, 32, { units: 16 })).toThrow(/units \(launch size\) must be an integer >= n=32 and <= 2\^40, got 16/);
    expect(() => sortedGroupingLoss(geo, 32, { units: 2 ** 41 })).toThrow(/<= 2\^40/);
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

  const binningCases: [string, CategoricalDistribution, number, number][] = [
    ['geo(0.05)', geo, 32, 4],
    // zero-heavy: bins of zeros only (all-zero groups: H = 1), and a 0 → 1 mix in a bin
    ['zero-heavy', CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 }), 16, 2],
    ['zero-heavy', CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 }), 8, 4],
    ['zeros and gaps', CategoricalDistribution.fromCounts({ 0: 60, 3: 15, 60: 15, 900: 10 }), 8, 3],
  ];
  for (const [name, dist, n, k] of binningCases) for (const edges of ['equal-mass', 'optimal'] as const) {
    it(`agrees with simulated binning (${name}, n = ${n}, k = ${k}, ${edges}, fixed seed) within 4 SE`, () => {
      const model = binnedGroupingLoss(dist, n, k, { edges });
      const draw = createCategoricalSampler(dist);
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
