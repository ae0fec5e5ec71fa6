import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { fastExpectedLoss, maximumSumMoments } from './fast-loss.ts';
import { bruteForceLoss } from '../testing/brute-force.ts';

describe('fastExpectedLoss', () => {
  describe('maximumSumMoments (the Taylor head of the integrand)', () => {
    it('W ∈ {1, 2}, n = 2 by hand: E[max] = 7/4, E[max·S] = 22/4, E[max·S²] = 72/4', () => {
      const moments = maximumSumMoments(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2);
      expect(moments.maximum).toBeCloseTo(1.75, 14);
      expect(moments.first).toBeCloseTo(5.5, 14);
      expect(moments.second).toBeCloseTo(18, 13);
    });
    it('matches enumeration for n = 1..5 on supports with zero and gaps', () => {
      const cases: Record<string, number>[] = [{ 0: 3, 1: 2, 5: 1 }, { 2: 1, 7: 2, 30: 1, 31: 4 }, { 0: 90, 1: 7, 9: 3 }];
      for (const counts of cases) {
        const dist = CategoricalDistribution.fromCounts(counts);
        for (let n = 1; n <= 5; n++) {
          const reference = bruteForceLoss(dist, n);
          const moments = maximumSumMoments(dist, n);
          expect(Math.abs(moments.maximum - reference.expectedMaximum) / reference.expectedMaximum).toBeLessThan(1e-13);
          expect(Math.abs(moments.first - reference.maximumTimesSum) / reference.maximumTimesSum).toBeLessThan(1e-13);
          expect(Math.abs(moments.second - reference.maximumTimesSumSquared) / reference.maximumTimesSumSquared).toBeLessThan(1e-13);
        }
      }
    });
  });

  it('reports its quadrature work', () => {
    const result = fastExpectedLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32);
    expect(result.evaluations).toBeGreaterThan(10);
    expect(result.evaluations).toBeLessThan(200);
    expect(result.headLimit).toBeGreaterThan(0);
  });

  it('handles supports of 10^5 values and very large values without overflow', () => {
    const wide = CategoricalDistribution.fromFamily({ family: 'unif', low: 1, high: 100_000 });
    const loss = fastExpectedLoss(wide, 32).expectedLoss;
    // For U{1..N} with large N, X ≈ n·max/Σ with max ≈ N: E[X] → E[n·N/S] ≈ 2·(1 + 1/(3n)) + O(1/n²); bracket it.
    expect(loss).toBeGreaterThan(1.9);
    expect(loss).toBeLessThan(2.1);
    const huge = CategoricalDistribution.fromCounts({ 1: 1, 1_000_000_000: 1 });
    const exactByHand = (() => {
      // n = 2: (1,1) → 1, (big,big) → 1, mixed → 2·big/(big+1); each mixed w.p. 1/4.
      const big = 1_000_000_000;
      return 0.5 + 0.5 * ((2 * big) / (big + 1));
    })();
    expect(Math.abs(fastExpectedLoss(huge, 2).expectedLoss - exactByHand) / exactByHand).toBeLessThan(1e-12);
  });
});
