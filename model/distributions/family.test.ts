import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { familyLogPmf, generateFamilyPmf, type FamilySpec } from './family.ts';

function factorial(k: number): number {
  let result = 1;
  for (let i = 2; i <= k; i++) result *= i;
  return result;
}
function choose(n: number, k: number): number {
  return factorial(n) / (factorial(k) * factorial(n - k));
}

// Closed forms of docs/model.md §2d, written directly (small arguments, exact enough in doubles).
const closedForms: [FamilySpec, (k: number) => number][] = [
  [{ family: 'binom', trials: 12, p: 0.3 }, (k) => (k <= 12 ? choose(12, k) * 0.3 ** k * 0.7 ** (12 - k) : 0)],
  [{ family: 'geo', p: 0.25 }, (k) => (k >= 1 ? 0.75 ** (k - 1) * 0.25 : 0)],
  [{ family: 'pois', lambda: 3.5 }, (k) => (Math.exp(-3.5) * 3.5 ** k) / factorial(k)],
  [{ family: 'unif', low: 3, high: 7 }, (k) => (k >= 3 && k <= 7 ? 0.2 : 0)],
  [{ family: 'nbinom', r: 5, p: 0.3 }, (k) => choose(k + 4, k) * 0.3 ** 5 * 0.7 ** k],
];

describe('families (docs/model.md §2d)', () => {
  describe('familyLogPmf', () => {
    for (const [spec, pmf] of closedForms) {
      it(`${spec.family} matches its closed form`, () => {
        for (let k = 0; k <= 18; k++) {
          const expected = pmf(k);
          const actual = Math.exp(familyLogPmf(spec, k));
          if (expected === 0) expect(actual).toBe(0);
          else expect(Math.abs(actual - expected) / expected).toBeLessThan(1e-12);
        }
      });
    }
    it('nbinom with real r uses Γ: r = 1 is the geometric number of failures', () => {
      for (let k = 0; k < 10; k++) expect(Math.exp(familyLogPmf({ family: 'nbinom', r: 1, p: 0.4 }, k))).toBeCloseTo(0.4 * 0.6 ** k, 14);
    });
  });

  describe('generateFamilyPmf', () => {
    for (const [spec, pmf] of closedForms) {
      it(`${spec.family}: the truncated pmf is the closed form renormalised, cut at the first m with tail ≤ ε`, () => {
        const generated = generateFamilyPmf(spec);
        // Independent truncation point: walk the closed form until the remaining mass ≤ 1e-6.
        let cumulative = 0;
        let m = -1;
        for (let k = 0; k < 1000; k++) {
          cumulative += pmf(k);
          if (1 - cumulative <= 1e-6) {
            m = k;
            break;
          }
        }
        const kept = Array.from({ length: m + 1 }, (_, k) => pmf(k)).reduce((a, b) => a + b, 0);
        expect(generated.values[generated.values.length - 1]).toBe(m);
        generated.values.forEach((v, i) => {
          expect(Math.abs(generated.probabilities[i]! - pmf(v) / kept)).toBeLessThan(1e-13);
        });
        const tail = 1 - kept;
        if (tail > 1e-12) expect(generated.truncation?.tailMass).toBeCloseTo(tail, 12);
        else expect(generated.truncation).toBeUndefined();
      });
    }
    it('pois with a large mean leaves out values whose mass underflows instead of failing', () => {
      const dist = CategoricalDistribution.fromFamily({ family: 'pois', lambda: 5000 });
      // ln P(k) ≈ k·ln(λ/k) + k − λ reaches ln(1e-300) ≈ −691 near k = 2620.
      expect(dist.min).toBeGreaterThan(2550);
      expect(dist.min).toBeLessThan(2700);
      expect(dist.probabilities[0]).toBeGreaterThanOrEqual(1e-300);
      expect(dist.mean()).toBeCloseTo(5000, 3);
      expect(dist.variance()).toBeCloseTo(5000, -1);
    });
    it('degenerate parameters give point masses', () => {
      expect(CategoricalDistribution.fromFamily({ family: 'geo', p: 1 }).values).toEqual([1]);
      expect(CategoricalDistribution.fromFamily({ family: 'binom', trials: 9, p: 1 }).values).toEqual([9]);
      expect(CategoricalDistribution.fromFamily({ family: 'binom', trials: 9, p: 0 }).values).toEqual([0]);
      expect(CategoricalDistribution.fromFamily({ family: 'pois', lambda: 0 }).values).toEqual([0]);
    });
    it('refuses supports too large to generate', () => {
      expect(() => generateFamilyPmf({ family: 'geo', p: 1e-9 })).toThrow(/needs more than 2000000 support values/);
    });
    it('validates epsilon', () => {
      for (const epsilon of [0, -1, 0.5, Number.NaN]) {
        expect(() => generateFamilyPmf({ family: 'geo', p: 0.5 }, epsilon)).toThrow(/epsilon \(tail truncation mass\) must be a number in \(0, 0\.5\)/);
      }
    });
  });
});
