import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { exactExpectedLoss, exactLossDistribution } from './exact-loss.ts';
import { fastExpectedLoss } from './fast-loss.ts';
import type { FamilySpec } from './family.ts';
import { sampleMaximumPmf } from './sample-maximum.ts';

// Small random categoricals: up to 8 values in 0..40, weights in (0, 1].
const smallDistribution = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.double({ min: 0.001, max: 1, noNaN: true })), { minLength: 1, maxLength: 8 })
  .map((pairs) => CategoricalDistribution.fromPmf(pairs));

const familySpec: fc.Arbitrary<FamilySpec> = fc.oneof(
  fc.record({ family: fc.constant('binom' as const), trials: fc.integer({ min: 1, max: 60 }), p: fc.double({ min: 0.02, max: 0.98, noNaN: true }) }),
  fc.record({ family: fc.constant('geo' as const), p: fc.double({ min: 0.05, max: 0.95, noNaN: true }) }),
  fc.record({ family: fc.constant('pois' as const), lambda: fc.double({ min: 0.05, max: 40, noNaN: true }) }),
  fc
    .tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 30 }))
    .map(([a, b]) => ({ family: 'unif' as const, low: Math.min(a, b), high: Math.max(a, b) })),
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

  it('E[X_W(n)] is non-decreasing in n for the parametric families', () => {
    fc.assert(
      fc.property(familySpec, (spec) => {
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
