import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { exactExpectedLoss, exactLossDistribution, exactLossTable } from './exact-loss.ts';

describe('exactLossDistribution and exactLossTable', () => {
  const cases: [string, CategoricalDistribution, number][] = [
    ['small support, n = 32 (merged runs)', CategoricalDistribution.fromPmf(new Map([[4, 6000], [13, 4000], [30, 2000]])), 32],
    ['a zero value (the all-zero group is 1/1)', CategoricalDistribution.fromPmf(new Map([[0, 3], [2, 5], [7, 1]])), 8],
    ['prefix gcd above 1 (values 6, 9, 10)', CategoricalDistribution.fromPmf(new Map([[6, 1], [9, 2], [10, 1]])), 5],
    // n·max + 2 above 2^20: outcomes grouped by reduced fraction in a Map
    ['large values (grouped path)', CategoricalDistribution.fromPmf(new Map([[1, 2], [350_001, 1], [700_001, 1]])), 2],
  ];
  it.each(cases)('%s: outcomes ascending, reduced fractions, probabilities sum to 1, the table is the same bits', (_name, dist, n) => {
    const { outcomes, mean } = exactLossDistribution(dist, n);
    const table = exactLossTable(dist, n);
    expect(table.count).toBe(outcomes.length);
    let total = 0;
    outcomes.forEach((outcome, i) => {
      if (i > 0) expect(outcome.value).toBeGreaterThan(outcomes[i - 1]!.value);
      let a = outcome.numerator;
      let b = outcome.denominator;
      while (b !== 0) [a, b] = [b, a % b];
      expect(a).toBe(1);
      expect(outcome.value).toBe(outcome.numerator / outcome.denominator);
      expect(Object.is(table.values[i], outcome.value)).toBe(true);
      expect(Object.is(table.probabilities[i], outcome.probability)).toBe(true);
      total += outcome.probability;
    });
    expect(total).toBeCloseTo(1, 12);
    expect(table.mean).toBe(mean);
    expect(Math.abs(exactExpectedLoss(dist, n) - mean) / mean).toBeLessThan(1e-12);
  });

  it('gives the hand-computed distribution for W ∈ {1, 2} equally likely, n = 2', () => {
    // (1,1) → 1, (2,2) → 1, (1,2) and (2,1) → 2·2/3 = 4/3
    const { outcomes, mean } = exactLossDistribution(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2);
    expect(outcomes.map((o) => [o.numerator, o.denominator])).toEqual([[1, 1], [4, 3]]);
    expect(outcomes.map((o) => o.probability)).toEqual([0.5, 0.5]);
    expect(mean).toBeCloseTo(1 + 1 / 6, 15);
  });
});
