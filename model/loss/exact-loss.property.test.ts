import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { createSeededRandom, type RandomSource } from '../distributions/random.ts';
import * as previous from '../testing/previous/exact-loss.ts';
import { lossQuantiles as previousLossQuantiles } from '../testing/previous/loss-quantiles.ts';
import { exactCost, exactExpectedLoss, exactLossDistribution, exactLossTable, visitExactLossOutcomes } from './exact-loss.ts';
import { lossQuantiles } from './loss-quantiles.ts';

/** Supports the exact method takes: a few values, with 0 or not, sharing a factor or not, a far largest value, weights of many scales. */
function randomSupport(random: RandomSource): CategoricalDistribution {
  const weights = new Map<number, number>();
  const size = 1 + random.nextInt(12);
  const factor = [1, 1, 2, 3, 7][random.nextInt(5)]!;
  const start = random.nextInt(3) === 0 ? 0 : random.nextInt(20);
  for (let i = 0; i < size; i++) weights.set(factor * (start + random.nextInt(1 + 4 * size)), random.nextInt(3) === 0 ? random.nextFloat() ** 8 + 1e-300 : 1 + random.nextInt(1_000));
  if (random.nextInt(4) === 0) weights.set(factor * (start + 40 + random.nextInt(40)), 1 + random.nextInt(10));
  return CategoricalDistribution.fromPmf(weights);
}

function same(now: ArrayLike<number>, before: ArrayLike<number>, count: number): boolean {
  for (let i = 0; i < count; i++) if (!Object.is(now[i], before[i])) return false;
  return true;
}

describe('exact method and exact quantiles against the previous implementation, bit for bit', () => {
  it('gives the same outcome tables, distributions and means over random supports and n', () => {
    const random = createSeededRandom(7);
    let checked = 0;
    for (let trial = 0; trial < 400; trial++) {
      const dist = randomSupport(random);
      const n = [1, 2, 3, 5, 8, 16, 31, 32, 64][random.nextInt(9)]!;
      if (!exactCost(dist, n).feasible || exactCost(dist, n).operations > 2e7) continue;
      checked += 1;
      const label = `${JSON.stringify([...dist.values])} n=${n}`;
      const table = exactLossTable(dist, n);
      const tableBefore = previous.exactLossTable(dist, n);
      expect(table.count, label).toBe(tableBefore.count);
      expect(same(table.values, tableBefore.values, table.count), label).toBe(true);
      expect(same(table.probabilities, tableBefore.probabilities, table.count), label).toBe(true);
      expect(Object.is(table.mean, tableBefore.mean), label).toBe(true);
      expect(JSON.stringify(exactLossDistribution(dist, n)), label).toBe(JSON.stringify(previous.exactLossDistribution(dist, n)));
      expect(Object.is(exactExpectedLoss(dist, n), previous.exactExpectedLoss(dist, n)), label).toBe(true);
      // The visitor hands out the previous table's outcomes in order, and stops when asked.
      const visited: number[] = [];
      visitExactLossOutcomes(dist, n, (value, probability) => (visited.push(value, probability), true));
      expect(visited.length, label).toBe(2 * tableBefore.count);
      expect(visited.every((x, i) => Object.is(x, i % 2 === 0 ? tableBefore.values[i / 2] : tableBefore.probabilities[(i - 1) / 2])), label).toBe(true);
      let calls = 0;
      visitExactLossOutcomes(dist, n, () => ++calls < 2);
      expect(calls).toBe(Math.min(2, tableBefore.count));
      // Quantiles in one pass over the outcomes: any order of probabilities, repeats, ones the sum never reaches.
      for (const probabilities of [[0.5, 0.9, 0.99], [0.99, 0.01, 0.5, 0.5], [1 - 1e-13, 0.25], [0.999999]]) {
        const now = lossQuantiles(dist, n, probabilities, { method: 'exact' });
        const before = previousLossQuantiles(dist, n, probabilities, { method: 'exact' });
        expect(Object.keys(now.quantiles)).toEqual(Object.keys(before.quantiles));
        for (const key of Object.keys(before.quantiles)) expect(Object.is(now.quantiles[key], before.quantiles[key]), `${label} ${key}`).toBe(true);
        expect(now.method).toBe(before.method);
      }
    }
    expect(checked).toBeGreaterThan(200);
  });

  it('takes the three-point supports of the engine bench (rows walked in steps of the differences)', () => {
    for (const [low, middle] of [[1, 10], [3, 14], [7, 22], [2, 30]] as const) {
      const dist = CategoricalDistribution.fromPmf(new Map([[low, 10_240], [middle, 6_800], [30, 3_400]]));
      const table = exactLossTable(dist, 32);
      const before = previous.exactLossTable(dist, 32);
      expect(table.count).toBe(before.count);
      expect(same(table.values, before.values, table.count) && same(table.probabilities, before.probabilities, table.count)).toBe(true);
    }
  });
});
