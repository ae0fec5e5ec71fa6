import { describe, expect, it } from 'vitest';
import {
  CategoricalDistribution,
  createCategoricalSampler,
  createSeededRandom,
  groupLoss,
  parseDistributionSpec,
  type RandomSource,
} from '../../model/index.ts';
import { computeAdvice } from './advice.ts';

// advise's sorting and binning predictions (docs/model.md §2d) against a Monte Carlo simulation of
// the same policies: launches of N i.i.d. units are drawn with a fixed seed, sorted (or binned
// by the advice's own bin ranges) and cut into consecutive groups of n; the mean over launches
// must lie within 4 standard errors (plus a 1e-3 floor for near-deterministic policies).

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
      it(`${c.name}: binning into ${binning.k} bins matches the predicted binned loss`, () => {
        const mc = simulate(
          300,
          (random) => {
            const units = drawUnits(random);
            const groups = binning.bins.flatMap((bin) => cut(units.filter((w) => w >= bin.low && w <= bin.high), c.n));
            return lossOfGroups(groups);
          },
          13 + binning.k,
        );
        // Leftover partial groups per bin are dropped; with N/n ≥ 128 groups that bias is far below the tolerance.
        expect(Math.abs(mc.mean.expectedLoss - binning.expectedLoss)).toBeLessThan(4 * mc.standardError.expectedLoss + 2e-3);
        expect(Math.abs(mc.mean.workloadLoss - binning.workloadLoss)).toBeLessThan(4 * mc.standardError.workloadLoss + 2e-3);
      });
    }
  }
});
