import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { createSeededRandom, type RandomSource } from '../distributions/random.ts';
import { randomTestDistribution, TEST_DISTRIBUTION_KINDS } from '../testing/random-distributions.ts';
import { fastExpectedLoss as previousFastExpectedLoss } from '../testing/previous/fast-loss.ts';
import { fastExpectedLoss, prepareFastLoss, preparedExpectedLoss } from './fast-loss.ts';
import { prepareWorkloadLoss, preparedWorkloadLoss, workloadLoss } from './sample-maximum.ts';

/** Supports the test kinds do not reach: wide (more than 33 values, the drop cut), gaps of 16 and more, dense runs, large values, one value. */
function wideDistribution(random: RandomSource): CategoricalDistribution {
  const weights = new Map<number, number>();
  const size = 1 + random.nextInt(300);
  const spread = [1, 2, 17, 1_000][random.nextInt(4)]!;
  const start = random.nextInt(2) === 0 ? 0 : random.nextInt(100_000);
  for (let i = 0; i < size; i++) weights.set(start + (spread === 1 ? i : random.nextInt(spread * size + 1)), random.nextInt(3) === 0 ? random.nextFloat() ** 6 + 1e-12 : 1 + random.nextInt(1_000));
  return CategoricalDistribution.fromPmf(weights);
}

function distributions(seed: number, count: number): CategoricalDistribution[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0 ? randomTestDistribution(random, TEST_DISTRIBUTION_KINDS[(i / 2) % TEST_DISTRIBUTION_KINDS.length]!, 2 + random.nextInt(120)) : wideDistribution(random),
  );
}

const SIZES = [1, 2, 3, 4, 5, 8, 16, 31, 32, 33, 100, 1024];

describe('fast expected loss: the prepared and per-call paths against the previous implementation, bit for bit', () => {
  it('fastExpectedLoss gives the previous expected loss, evaluations and head limit for every n', () => {
    for (const dist of distributions(1, 120)) {
      for (const n of SIZES) {
        const now = fastExpectedLoss(dist, n);
        const before = previousFastExpectedLoss(dist, n);
        expect(Object.is(now.expectedLoss, before.expectedLoss), `${JSON.stringify([...dist.values])} n=${n}`).toBe(true);
        expect(now.evaluations).toBe(before.evaluations);
        expect(Object.is(now.headLimit, before.headLimit)).toBe(true);
      }
    }
  });

  it('one preparation serves every n, and a reused preparation serves another distribution of the same size', () => {
    const all = distributions(2, 120);
    for (const dist of all) {
      const prepared = prepareFastLoss(dist);
      for (const n of SIZES) expect(Object.is(preparedExpectedLoss(prepared, n), previousFastExpectedLoss(dist, n).expectedLoss)).toBe(true);
      // The same support with other weights, in the reused arrays (as the linearised standard error does).
      const reweighted = { values: dist.values, probabilities: dist.probabilities.map((p, j) => (j === 0 ? p + 1e-6 : p) / (1 + 1e-6)) };
      const again = prepareFastLoss(reweighted, prepared);
      if (dist.size > 0) expect(again.values).toBe(prepared.values);
      for (const n of [2, 32]) expect(Object.is(preparedExpectedLoss(again, n), previousFastExpectedLoss(reweighted, n).expectedLoss)).toBe(true);
    }
  });

  it('rejects a bad n like fastExpectedLoss', () => {
    const prepared = prepareFastLoss(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }));
    expect(() => preparedExpectedLoss(prepared, 0)).toThrow(/WW_ERR_MODEL_GROUP_SIZE|group size/i);
    expect(() => fastExpectedLoss(CategoricalDistribution.fromCounts({ 1: 1 }), 1025)).toThrow(/WW_ERR_MODEL_GROUP_SIZE|group size/i);
  });
});

describe('workload loss: the prepared path against workloadLoss, bit for bit', () => {
  it('one preparation gives workloadLoss for every n', () => {
    for (const dist of distributions(3, 120)) {
      const prepared = prepareWorkloadLoss(dist);
      for (const n of SIZES) expect(Object.is(preparedWorkloadLoss(prepared, n), workloadLoss(dist, n)), `${JSON.stringify([...dist.values])} n=${n}`).toBe(true);
    }
    expect(preparedWorkloadLoss(prepareWorkloadLoss(CategoricalDistribution.fromCounts({ 0: 1 })), 4)).toBe(1);
    expect(() => preparedWorkloadLoss(prepareWorkloadLoss(CategoricalDistribution.fromCounts({ 1: 1 })), 0)).toThrow(/WW_ERR_MODEL_GROUP_SIZE|group size/i);
  });
});
