import { describe, expect, it } from 'vitest';
import { binnedGroupingLoss } from './binned-grouping-loss.ts';
import { binnedLaunchLoss, type LaunchBin } from './binned-launch.ts';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { expectedLoss } from '../loss/expected-loss.ts';
import { parseDistributionSpec } from '../distributions/distribution-spec.ts';
import { expectedMaximum } from '../loss/sample-maximum.ts';

// Binning a finite launch (docs/model.md §2d): the launch's units ordered by bin (units of one bin
// in draw order) and cut into consecutive groups of n.

/**
 * Exact expectation by enumerating every sequence of N' = ⌊N/n⌋·n draws (|supp|^N' of them, each
 * with its product probability): stable partition by bin, cut, H = n·max/Σ (1 for all zeros).
 */
function enumerate(values: readonly number[], probabilities: readonly number[], bins: readonly { low: number; high: number }[], units: number, n: number): { loss: number; workload: number } {
  const groups = Math.floor(units / n);
  const size = groups * n;
  let loss = 0;
  let simt = 0;
  let work = 0;
  const sequence = new Array<number>(size).fill(0);
  const visit = (position: number, probability: number): void => {
    if (position === size) {
      const ordered = bins.flatMap((bin) => sequence.filter((w) => w >= bin.low && w <= bin.high));
      for (let g = 0; g < groups; g++) {
        const group = ordered.slice(g * n, g * n + n);
        const max = Math.max(...group);
        const sum = group.reduce((a, b) => a + b, 0);
        loss += (probability * (sum === 0 ? 1 : (n * max) / sum)) / groups;
        simt += probability * n * max;
        work += probability * sum;
      }
      return;
    }
    for (let j = 0; j < values.length; j++) {
      sequence[position] = values[j]!;
      visit(position + 1, probability * probabilities[j]!);
    }
  };
  visit(0, 1);
  return { loss, workload: simt / work };
}

function launchBins(dist: CategoricalDistribution, bins: readonly { low: number; high: number; probability: number }[], n: number): LaunchBin[] {
  return bins.map((bin) => {
    const pairs: [number, number][] = [];
    dist.values.forEach((v, i) => {
      if (v >= bin.low && v <= bin.high) pairs.push([v, dist.probabilities[i]!]);
    });
    const truncated = CategoricalDistribution.fromPmf(pairs);
    return { distribution: truncated, probability: bin.probability, expectedLoss: expectedLoss(truncated, n), expectedMaximum: expectedMaximum(truncated, n) };
  });
}

describe('binnedLaunchLoss (bin-ordered launch cut into consecutive groups)', () => {
  // Launches so small that bins often hold fewer than n units (or none): groups across 3+ bins,
  // bins inside one group, zeros. Enumeration has no quadrature; the model's 1/Σ quadrature is
  // good to 5e-10 relative (numerics/laplace-quadrature.ts), the cost ratio needs none (rounding: 1e-11).
  const cases: [Record<number, number>, number, number, number][] = [
    [{ 0: 3, 1: 2, 5: 4, 9: 1 }, 4, 3, 8],
    [{ 1: 5, 2: 1, 7: 3 }, 3, 2, 9],
    [{ 0: 1, 2: 1, 3: 1, 10: 1 }, 2, 4, 10],
    [{ 1: 6, 4: 3, 6: 1 }, 4, 3, 11],
    [{ 0: 8, 1: 1, 2: 1 }, 5, 3, 10],
  ];
  for (const [counts, n, k, units] of cases) {
    it(`equals the enumeration of every launch: ${JSON.stringify(counts)}, n = ${n}, k = ${k}, N = ${units}`, () => {
      const dist = CategoricalDistribution.fromCounts(counts);
      const model = binnedGroupingLoss(dist, n, k, { units });
      const exact = enumerate(dist.values, dist.probabilities, model.bins, units, n);
      expect(Math.abs(model.expectedLoss - exact.loss)).toBeLessThanOrEqual(1e-9 * exact.loss);
      expect(Math.abs(model.workloadLoss - exact.workload)).toBeLessThanOrEqual(1e-11 * exact.workload);
    });
  }

  // The fast path (every bin holds ≥ n units but for probability e^-46: two bins per mixed group,
  // only C_b mod n matters) against the general recursion over every position of C_b.
  const longCases: [string, number, number, number][] = [
    ['geo(0.05)', 32, 8, 4096],
    ['nbinom(5,0.15)', 8, 4, 2048],
    ['unif(0,1000)', 32, 4, 20_000],
    ['pois(3)', 16, 3, 5000],
  ];
  for (const [spec, n, k, units] of longCases) {
    it(`fast path equals the general recursion: ${spec}, n = ${n}, k = ${k}, N = ${units}`, () => {
      const dist = CategoricalDistribution.fromFamily(parseDistributionSpec(spec));
      const bins = launchBins(dist, binnedGroupingLoss(dist, n, k).bins, n);
      const fast = binnedLaunchLoss(bins, n, units, dist.mean());
      const general = binnedLaunchLoss(bins, n, units, dist.mean(), { general: true });
      expect(fast.mixedGroups).toBeGreaterThan(0);
      expect(Math.abs(fast.expectedLoss - general.expectedLoss)).toBeLessThanOrEqual(1e-10);
      expect(Math.abs(fast.workloadLoss - general.workloadLoss)).toBeLessThanOrEqual(1e-12);
      expect(Math.abs(fast.mixedGroups - general.mixedGroups)).toBeLessThanOrEqual(1e-9);
      // every group is inside a bin or across a boundary
      for (const result of [fast, general]) expect(Math.abs([...result.pureGroups].reduce((a, b) => a + b, 0) + result.mixedGroups - result.groups)).toBeLessThanOrEqual(1e-9);
    });
  }

  it('tends to the large-launch limit Σ P(b)·E[X_b(n)] (one mixed group per boundary among N/n groups)', () => {
    const dist = CategoricalDistribution.fromFamily(parseDistributionSpec('geo(0.05)'));
    const limit = binnedGroupingLoss(dist, 32, 4);
    const huge = binnedGroupingLoss(dist, 32, 4, { units: 2 ** 36 });
    expect(Math.abs(huge.expectedLoss - limit.expectedLoss)).toBeLessThan(1e-6);
    expect(huge.mixedGroups).toBeCloseTo((3 * 31) / 32, 9); // 3 boundaries, each mixes unless it falls on a group edge (1/32)
  });

  it('rejects launches smaller than one group', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 2: 1 });
    expect(() => binnedGroupingLoss(dist, 32, 2, { units: 31 })).toThrow(/units \(launch size\) must be an integer >= n=32 and <= 2\^40, got 31/);
  });
});
