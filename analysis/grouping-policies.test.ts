import { describe, expect, it } from 'vitest';
import {
  CategoricalDistribution,
  createCategoricalSampler,
  createSeededRandom,
  groupLoss,
  parseDistributionSpec,
  type RandomSource,
} from '../model/index.ts';
import { computeAdvice } from './advice.ts';

// advise's sorting and binning predictions (docs/model.md §2d) against a Monte Carlo simulation of
// the same policies: launches of N i.i.d. units are drawn with a fixed seed, sorted (or binned
// by the advice's own bin ranges) and cut into consecutive groups of n; the mean over launches
// must lie within 4 standard errors (plus a 1e-3 floor for near-deterministic policies; binning: none).

interface LaunchLoss {
  readonly expectedLoss: number;
  readonly workloadLoss: number;
}

function lossOfGroups(groups: readonly number[][]): LaunchLoss {
  let lossSum = 0;
  let simt = 0;
  let mimd = 0;
  for (const group of groups) {
    lossSum += groupLoss(group);
    simt += group.length * Math.max(...group);
    mimd += group.reduce((a, b) => a + b, 0);
  }
  return { expectedLoss: lossSum / groups.length, workloadLoss: mimd > 0 ? simt / mimd : 1 };
}

function cut(units: readonly number[], n: number): number[][] {
  const groups: number[][] = [];
  for (let i = 0; i + n <= units.length; i += n) groups.push(units.slice(i, i + n));
  return groups;
}

function simulate(launches: number, draw: (random: RandomSource) => LaunchLoss, seed: number): { mean: LaunchLoss; standardError: LaunchLoss } {
  const random = createSeededRandom(seed);
  const samples = Array.from({ length: launches }, () => draw(random));
  const stats = (pick: (s: LaunchLoss) => number): [number, number] => {
    const values = samples.map(pick);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
    return [mean, Math.sqrt(variance / values.length)];
  };
  const [e, eSe] = stats((s) => s.expectedLoss);
  const [w, wSe] = stats((s) => s.workloadLoss);
  return { mean: { expectedLoss: e, workloadLoss: w }, standardError: { expectedLoss: eSe, workloadLoss: wSe } };
}

/**
 * Monte Carlo of the documented binning policy (docs/model.md §2d), written independently of the
 * model: per launch, N' = ⌊N/n⌋·n units are drawn, put in bin order (a stable counting sort on
 * the bin index: units of one bin keep their draw order) and the sequence is cut into N'/n
 * consecutive groups, H = n·max/Σ (1 if all zero). Every launch has N'/n groups, so the mean H
 * and the cost ratio are pooled over launches (ratio estimators, delta-method standard errors).
 */
function simulateBinning(
  distribution: CategoricalDistribution,
  n: number,
  units: number,
  bins: readonly { readonly low: number; readonly high: number }[],
  launches: number,
  seed: number,
): { loss: number; lossSe: number; workload: number; workloadSe: number } {
  const sampler = createCategoricalSampler(distribution);
  const random = createSeededRandom(seed);
  const size = Math.floor(units / n) * n;
  const perLaunch: { loss: number; groups: number; simt: number; work: number }[] = [];
  const binOf = (w: number): number => bins.findIndex((bin) => w >= bin.low && w <= bin.high);
  for (let l = 0; l < launches; l++) {
    const byBin: number[][] = bins.map(() => []);
    for (let i = 0; i < size; i++) {
      const w = sampler(random);
      byBin[binOf(w)]!.push(w);
    }
    const ordered = byBin.flat();
    let loss = 0;
    let simt = 0;
    let work = 0;
    for (let i = 0; i < size; i += n) {
      let max = 0;
      let sum = 0;
      for (let j = i; j < i + n; j++) {
        max = Math.max(max, ordered[j]!);
        sum += ordered[j]!;
      }
      loss += sum === 0 ? 1 : (n * max) / sum;
      simt += n * max;
      work += sum;
    }
    perLaunch.push({ loss, groups: size / n, simt, work });
  }
  const ratio = (num: (x: (typeof perLaunch)[number]) => number, den: (x: (typeof perLaunch)[number]) => number): [number, number] => {
    const a = perLaunch.map(num);
    const b = perLaunch.map(den);
    const meanA = a.reduce((sum, v) => sum + v, 0) / launches;
    const meanB = b.reduce((sum, v) => sum + v, 0) / launches;
    const r = meanA / meanB;
    const residualVariance = a.reduce((sum, v, i) => sum + (v - r * b[i]!) ** 2, 0) / (launches - 1);
    return [r, Math.sqrt(residualVariance / launches) / meanB];
  };
  const [loss, lossSe] = ratio((x) => x.loss, (x) => x.groups);
  const [workload, workloadSe] = ratio((x) => x.simt, (x) => x.work);
  return { loss, lossSe, workload, workloadSe };
}

const cases = [
  { name: 'geo(0.05)', distribution: CategoricalDistribution.fromFamily(parseDistributionSpec('geo(0.05)')), n: 32, units: 4096 },
  { name: 'nbinom(5,0.15)', distribution: CategoricalDistribution.fromFamily(parseDistributionSpec('nbinom(5,0.15)')), n: 8, units: 2048 },
  { name: 'bimodal', distribution: CategoricalDistribution.fromCounts({ 1: 30, 2: 20, 3: 10, 40: 25, 45: 15 }), n: 16, units: 4096 },
  // Zeros: all-zero groups have H = 1 by convention (docs/model.md §1).
  { name: 'bimodal with zeros', distribution: CategoricalDistribution.fromCounts({ 0: 30, 1: 20, 2: 10, 40: 25, 45: 15 }), n: 16, units: 4096 },
];

describe('advise grouping policies vs Monte Carlo', () => {
  for (const c of cases) {
    const advice = computeAdvice({ distribution: c.distribution, source: c.name, groupSize: c.n, unitsPerLaunch: c.units, binCounts: [2, 4] });
    const sampler = createCategoricalSampler(c.distribution);
    const drawUnits = (random: RandomSource): number[] => Array.from({ length: c.units }, () => sampler(random));

    it(`${c.name}: random grouping matches the predicted current loss`, () => {
      const mc = simulate(300, (random) => lossOfGroups(cut(drawUnits(random), c.n)), 11);
      expect(Math.abs(mc.mean.expectedLoss - advice.current.expectedLoss)).toBeLessThan(4 * mc.standardError.expectedLoss + 1e-3);
      expect(Math.abs(mc.mean.workloadLoss - advice.current.workloadLoss)).toBeLessThan(4 * mc.standardError.workloadLoss + 1e-3);
    });

    // sortedGroupingLoss is the expectation over random launches (each value boundary falls at a
    // Binomial(N, F) position), so it holds with zeros too: the group across a 0 → 1 boundary has
    // H = n/k for k ones, averaged over where the boundary falls.
    it(`${c.name}: sorting a launch before grouping matches the predicted sorted loss`, () => {
      const mc = simulate(300, (random) => lossOfGroups(cut(drawUnits(random).sort((a, b) => a - b), c.n)), 12);
      expect(Math.abs(mc.mean.expectedLoss - advice.sorting.expectedLoss)).toBeLessThan(4 * mc.standardError.expectedLoss + 1e-3);
      expect(Math.abs(mc.mean.workloadLoss - advice.sorting.workloadLoss)).toBeLessThan(4 * mc.standardError.workloadLoss + 1e-3);
      expect(advice.sorting.expectedLoss).toBeLessThan(advice.current.expectedLoss);
    });

    for (const binning of advice.binning) {
      it(`${c.name}: binning into ${binning.k} bins (bin-ordered launch, consecutive groups) matches the simulated policy within 4 SE`, () => {
        const mc = simulateBinning(c.distribution, c.n, c.units, binning.bins, 400, 13 + binning.k);
        expect(Math.abs(mc.loss - binning.expectedLoss)).toBeLessThanOrEqual(4 * mc.lossSe + 1e-9);
        expect(Math.abs(mc.workload - binning.workloadLoss)).toBeLessThanOrEqual(4 * mc.workloadSe + 1e-9);
      });
    }
  }

  // Finite launches. The documented policy (docs/model.md §2d, binning): the launch's
  // N' = ⌊N/n⌋·n units in bin order, cut into consecutive groups; groups across a bin boundary mix
  // two bins. Fixed seed (= N), 4000 launches: SE about 3e-4 at N = 4096 and 6e-4 at N = 1001.
  for (const units of [1001, 4096]) {
    it(`geo(0.05), n = 32, k = 8, N = ${units}: binning matches the simulated policy within 4 SE`, () => {
      const distribution = CategoricalDistribution.fromFamily(parseDistributionSpec('geo(0.05)'));
      const advice = computeAdvice({ distribution, source: 'geo', groupSize: 32, unitsPerLaunch: units, binCounts: [8] });
      const binning = advice.binning[0]!;
      expect(binning.bins).toHaveLength(8);
      const { loss, lossSe, workload, workloadSe } = simulateBinning(distribution, 32, units, binning.bins, 4000, units);
      expect(lossSe).toBeLessThan(1e-3);
      expect(Math.abs(binning.expectedLoss - loss)).toBeLessThanOrEqual(4 * lossSe);
      expect(Math.abs(binning.workloadLoss - workload)).toBeLessThanOrEqual(4 * workloadSe);
      // The groups across bin boundaries matter: the large-launch limit is clearly off for these launches.
      expect(Math.abs(binning.bins.reduce((s, b) => s + b.probability * b.expectedLoss, 0) - loss)).toBeGreaterThan(8 * lossSe);
    });
  }

  it('names the bins that formed when fewer than k form (a heavy value takes several quantiles)', () => {
    const distribution = CategoricalDistribution.fromCounts({ 1: 70, 2: 10, 3: 10, 50: 10 });
    const advice = computeAdvice({ distribution, source: 'heavy', groupSize: 8, unitsPerLaunch: 4096, binCounts: [5] });
    expect(advice.binning[0]!.bins.length).toBeLessThan(5);
    const option = advice.options.find((o) => o.kind === 'binning')!;
    expect(option.sentence).toMatch(new RegExp(`binning units into ${advice.binning[0]!.bins.length} work classes \\(1, .*; 5 asked, ${advice.binning[0]!.bins.length} formed\\)`));
  });
});
