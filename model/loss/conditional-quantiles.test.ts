import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { conditionalLossCdf, conditionalLossTerms } from './conditional-quantiles.ts';
import { lossQuantiles } from './loss-quantiles.ts';

const P = [0.5, 0.9, 0.99];

/** Largest |conditional / reference − 1| over the probabilities. */
function worstRelative(dist: CategoricalDistribution, n: number, reference: Record<string, number>): number {
  const conditional = lossQuantiles(dist, n, P, { method: 'conditional' });
  expect(conditional.method).toBe('conditional');
  return Math.max(...P.map((p) => Math.abs(conditional.quantiles[String(p)]! / reference[String(p)]! - 1)));
}

describe('conditional quantiles (docs/model.md §2e)', () => {
  it('terms of W ∈ {1, 2, 4} (1:1:2), n = 3, by hand', () => {
    const terms = conditionalLossTerms(CategoricalDistribution.fromCounts({ 1: 1, 2: 1, 4: 2 }), 3);
    // Maximum 4 reached by j = 1 draw: C(3,1)·(1/2)·(1/2)² = 0.375; the other two are uniform on {1, 2}:
    // T has mean 3, sd √(2·1/4), skewness 0, lattice step 1.
    const t = [...Array(terms.count).keys()].find((i) => terms.top[i] === 12 && terms.shift[i] === 4)!;
    expect(terms.weight[t]).toBeCloseTo(0.375, 14);
    expect(terms.mean[t]).toBeCloseTo(3, 14);
    expect(terms.deviation[t]).toBeCloseTo(Math.SQRT1_2, 14);
    expect(terms.skewness[t]).toBeCloseTo(0, 12);
    expect(terms.halfStep[t]).toBe(0.5);
    // All terms together: P(max = v) summed over v is 1.
    let total = 0;
    for (let i = 0; i < terms.count; i++) total += terms.weight[i]!;
    expect(total + terms.omittedMass).toBeCloseTo(1, 12);
  });
  it('a point mass gives X = 1 at every probability', () => {
    const result = lossQuantiles(CategoricalDistribution.fromCounts({ 7: 1 }), 32, P, { method: 'conditional' });
    expect(result.quantiles).toEqual({ '0.5': 1, '0.9': 1, '0.99': 1 });
  });
  it('within 0.5 % of the exact quantiles on unimodal work of 10+ values (n = 16, 32)', () => {
    const cases: [CategoricalDistribution, number][] = [
      [CategoricalDistribution.fromFamily({ family: 'pois', lambda: 30 }), 32],
      [CategoricalDistribution.fromFamily({ family: 'geo', p: 0.1 }), 32],
      [CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 50 }), 32],
      [CategoricalDistribution.fromFamily({ family: 'nbinom', r: 5, p: 0.3 }), 16],
      [CategoricalDistribution.fromFamily({ family: 'pois', lambda: 8 }), 16],
    ];
    for (const [dist, n] of cases) {
      const exact = lossQuantiles(dist, n, P, { method: 'exact' });
      expect(exact.method).toBe('exact');
      expect(worstRelative(dist, n, exact.quantiles)).toBeLessThan(0.005);
    }
  });
  it('within 1 % of a fixed-seed Monte Carlo (2e5 groups, ~±0.3 % in probability) on 1,191 heavy-tailed values', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'nbinom', r: 0.5, p: 0.01 });
    expect(dist.size).toBeGreaterThan(1000);
    const simulated = lossQuantiles(dist, 32, P, { method: 'monte-carlo', random: createSeededRandom(11), samples: 200_000 });
    expect(worstRelative(dist, 32, simulated.quantiles)).toBeLessThan(0.01);
  });
  it('the cdf rises with x and quantiles are ordered within [1, n] (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 300 }), fc.double({ min: 0.01, max: 10, noNaN: true })), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 2, max: 64 }),
        fc.double({ min: 1, max: 64, noNaN: true }),
        fc.double({ min: 1, max: 64, noNaN: true }),
        (entries, n, a, b) => {
          const dist = CategoricalDistribution.fromCounts(entries);
          const terms = conditionalLossTerms(dist, n);
          const [x, y] = a <= b ? [a, b] : [b, a];
          expect(conditionalLossCdf(terms, x)).toBeLessThanOrEqual(conditionalLossCdf(terms, y) + 1e-12);
          const q = lossQuantiles(dist, n, P, { method: 'conditional' }).quantiles;
          expect(q['0.5']!).toBeGreaterThanOrEqual(1);
          expect(q['0.5']!).toBeLessThanOrEqual(q['0.9']!);
          expect(q['0.9']!).toBeLessThanOrEqual(q['0.99']!);
          expect(q['0.99']!).toBeLessThanOrEqual(n);
        },
      ),
      { numRuns: 60, seed: 20240601 },
    );
  });
});
