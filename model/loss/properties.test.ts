import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { exactExpectedLoss, exactLossDistribution } from './exact-loss.ts';
import { fastExpectedLoss } from './fast-loss.ts';
import type { FamilySpec } from '../distributions/family.ts';
import { sampleMaximumPmf } from './sample-maximum.ts';

// Small random categoricals: up to 8 values in 0..40, weights in (0, 1].
const smallDistribution = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.double({ min: 0.001, max: 1, noNaN: true })), { minLength: 1, maxLength: 8 })
  .map((pairs) => CategoricalDistribution.fromPmf(pairs));

// Monotonicity holds for the families with unbounded support. With a bounded support E[X]
// tends to v_max/E[W] and can overshoot it: see the counterexample test below.
const unboundedFamilySpec: fc.Arbitrary<FamilySpec> = fc.oneof(
  fc.record({ family: fc.constant('geo' as const), p: fc.double({ min: 0.05, max: 0.95, noNaN: true }) }),
  fc.record({ family: fc.constant('pois' as const), lambda: fc.double({ min: 0.05, max: 40, noNaN: true }) }),
  fc.record({ family: fc.constant('nbinom' as const), r: fc.double({ min: 0.3, max: 20, noNaN: true }), p: fc.double({ min: 0.1, max: 0.95, noNaN: true }) }),
);

describe('model invariants (fast-check)', () => {
  it('exact outcome probabilities sum to 1 and every outcome X lies in [1, n]', () => {
    fc.assert(
      fc.property(smallDistribution, fc.integer({ min: 1, max: 12 }), (dist, n) => {
        const { outcomes, mean } = exactLossDistribution(dist, n);
        const total = outcomes.reduce((sum, o) => sum + o.probability, 0);
        expect(Math.abs(total - 1)).toBeLessThanOrEqual(1e-12);
        for (const o of outcomes) {
          expect(o.value).toBeGreaterThanOrEqual(1 - 1e-15);
          expect(o.value).toBeLessThanOrEqual(n + 1e-12);
          expect(o.probability).toBeGreaterThan(0);
        }
        expect(mean).toBeGreaterThanOrEqual(1 - 1e-12);
        expect(mean).toBeLessThanOrEqual(n + 1e-12);
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  it('the pmf of the sample maximum sums to 1', () => {
    fc.assert(
      fc.property(smallDistribution, fc.integer({ min: 1, max: 1024 }), (dist, n) => {
        const total = sampleMaximumPmf(dist, n).probabilities.reduce((a, b) => a + b, 0);
        expect(Math.abs(total - 1)).toBeLessThanOrEqual(1e-12);
      }),
      { numRuns: 200, seed: 12 },
    );
  });

  it('E[X_W(n)] is non-decreasing in n for the unbounded families (geo, pois, nbinom)', () => {
    fc.assert(
      fc.property(unboundedFamilySpec, (spec) => {
        const dist = CategoricalDistribution.fromFamily(spec);
        let previous = 1;
        for (const n of [1, 2, 3, 4, 6, 8, 12, 16, 24, 32]) {
          const loss = fastExpectedLoss(dist, n).expectedLoss;
          expect(loss).toBeGreaterThanOrEqual(previous * (1 - 1e-12));
          previous = loss;
        }
      }),
      { numRuns: 60, seed: 13 },
    );
  });

  it('is not monotone for every bounded family: Bernoulli(1/2) = unif(0,1) drops from n = 6 to 7', () => {
    // Exact rationals (Python fractions): E[X] = 2^-n·(1 + Σ_s C(n,s)·n/s) = 2.3859375 (n = 6),
    // 2.382682291666667 (n = 7): E[X] approaches v_max/E[W] = 2 from above.
    const bernoulli = CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 1 });
    expect(exactExpectedLoss(bernoulli, 6)).toBeCloseTo(2.3859375, 13);
    expect(exactExpectedLoss(bernoulli, 7)).toBeCloseTo(2.382682291666667, 13);
    expect(fastExpectedLoss(bernoulli, 7).expectedLoss).toBeLessThan(fastExpectedLoss(bernoulli, 6).expectedLoss);
  });

  it('scaling every value by k changes neither method', () => {
    fc.assert(
      fc.property(smallDistribution, fc.integer({ min: 2, max: 1000 }), fc.integer({ min: 1, max: 8 }), (dist, k, n) => {
        const scaled = dist.scaled(k);
        const exact = exactExpectedLoss(dist, n);
        expect(Math.abs(exactExpectedLoss(scaled, n) - exact) / exact).toBeLessThanOrEqual(1e-12);
        expect(Math.abs(fastExpectedLoss(scaled, n).expectedLoss - exact) / exact).toBeLessThanOrEqual(1e-11);
      }),
      { numRuns: 100, seed: 14 },
    );
  });
});
