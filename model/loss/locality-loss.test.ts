// localityLoss: the trace method for contiguous grouping, checked against exact fractions,
// the independent-lanes model on i.i.d. traces, and the coverage of its interval by Monte
// Carlo with fixed seeds.
import { describe, expect, it } from 'vitest';
import { localityLoss } from './locality-loss.ts';
import { createSeededRandom, type RandomSource } from '../distributions/random.ts';

/** Poisson(λ) by Knuth's product of uniforms (λ small here). */
function poisson(random: RandomSource, lambda: number): number {
  const limit = Math.exp(-lambda);
  let k = 0;
  let product = random.nextFloat();
  while (product > limit) {
    k += 1;
    product *= random.nextFloat();
  }
  return k;
}

/** Runs of 32 units whose counts share a run-level mean (neighbouring units alike): λ_r = 2 + 20·U. */
function correlatedRuns(random: RandomSource, runs: number): number[][] {
  return Array.from({ length: runs }, () => {
    const lambda = 2 + 20 * random.nextFloat();
    return Array.from({ length: 32 }, () => poisson(random, lambda));
  });
}

describe('localityLoss', () => {
  it('gives the exact mean H and workload loss of consecutive groups (hand-computed fractions)', () => {
    const result = localityLoss([[1, 1, 4, 2], [3, 3, 3, 3]], [1, 2, 4, 3]);
    const byN = new Map(result.rows.map((r) => [r.groupSize, r]));
    // n = 4: H = 4·4/8 = 2 and 1; workload (16 + 12)/(8 + 12).
    expect(byN.get(4)?.lossContiguous.value).toBeCloseTo(3 / 2, 14);
    expect(byN.get(4)?.workloadLossContiguous.value).toBeCloseTo(28 / 20, 14);
    // n = 2: [1,1] → 1, [4,2] → 8/6, [3,3] → 1, [3,3] → 1.
    expect(byN.get(2)?.lossContiguous.value).toBeCloseTo((1 + 8 / 6 + 1 + 1) / 4, 14);
    expect(byN.get(1)?.lossContiguous.value).toBe(1);
    // Sorting the 8 units [1,1,2,3,3,3,3,4] into groups of 4: 4·3/7 and 4·4/13.
    expect(byN.get(4)?.lossSorted).toBeCloseTo((12 / 7 + 16 / 13) / 2, 14);
    expect(result.skippedGroupSizes).toEqual([3]);
    expect(result).toMatchObject({ runs: 2, units: 8 });
    // Run-level standard error by the ratio formula, by hand: S = [2, 1], G = [1, 1], v = 1.5.
    expect(byN.get(4)?.lossContiguous.standardError).toBeCloseTo(Math.sqrt(2 * (0.25 + 0.25)) / 2, 14);
  });

  it('agrees with the independent-lanes model when the units are independent draws (within 4 SE and 1 %)', () => {
    const random = createSeededRandom(7);
    const runs = Array.from({ length: 3000 }, () => Array.from({ length: 32 }, () => poisson(random, 6)));
    for (const row of localityLoss(runs, [4, 8, 16, 32]).rows) {
      const gap = row.lossContiguous.value - row.lossIndependent;
      expect(Math.abs(gap), `n=${row.groupSize}`).toBeLessThan(4 * row.lossContiguous.standardError);
      expect(Math.abs(gap) / row.lossIndependent, `n=${row.groupSize}`).toBeLessThan(0.01);
      expect(row.localityBenefit).toBeCloseTo(1, 1);
    }
  });

  it('shows the locality benefit of correlated runs: contiguous groups lose less than random assignment', () => {
    const result = localityLoss(correlatedRuns(createSeededRandom(11), 500), [8, 32]);
    for (const row of result.rows) {
      expect(row.lossContiguous.high, `n=${row.groupSize}`).toBeLessThan(row.lossIndependent);
      expect(row.localityBenefit).toBeGreaterThan(1.1);
      // Sorting all units beats both.
      expect(row.lossSorted).toBeLessThan(row.lossContiguous.value);
    }
  });

  it('its 95 % interval covers the true contiguous loss in about 95 % of replicates (runs independent)', () => {
    // The truth: the same process with 200,000 runs (its own standard error is ~1/20 of a replicate's).
    const truth = localityLoss(correlatedRuns(createSeededRandom(99), 200_000), [8]).rows[0]!.lossContiguous.value;
    const random = createSeededRandom(2024);
    const replicates = 400;
    let covered = 0;
    for (let i = 0; i < replicates; i++) {
      const row = localityLoss(correlatedRuns(random, 100), [8]).rows[0]!;
      if (row.lossContiguous.low <= truth && truth <= row.lossContiguous.high) covered += 1;
    }
    // Binomial(400, 0.95): sd 0.011; 4 sd band.
    expect(covered / replicates).toBeGreaterThan(0.95 - 4 * 0.011);
    expect(covered / replicates).toBeLessThan(0.95 + 4 * 0.011);
  });

  it('refuses no runs, empty runs, negative counts and a bad level', () => {
    expect(() => localityLoss([], [4])).toThrow(/at least one run/);
    expect(() => localityLoss([[]], [4])).toThrow(/run 0 is empty/);
    expect(() => localityLoss([[1, -2]], [2])).toThrow(/non-negative/);
    expect(() => localityLoss([[1, 2]], [2], { confidenceLevel: 1 })).toThrow(/confidence level/);
  });
});
