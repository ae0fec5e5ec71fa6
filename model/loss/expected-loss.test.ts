import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { exactCost, exactExpectedLoss, exactLossDistribution } from './exact-loss.ts';
import { expectedLoss } from './expected-loss.ts';
import { fastExpectedLoss } from './fast-loss.ts';
import { createFamilySampler } from '../distributions/family-sampler.ts';
import type { FamilySpec } from '../distributions/family.ts';
import { groupLoss } from './group-loss.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { bruteForceLoss } from '../testing/brute-force.ts';
import { randomTestDistribution, TEST_DISTRIBUTION_KINDS } from '../testing/random-distributions.ts';

const relative = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

// Tiny supports where |supp|^n ≤ 4^6 can be enumerated outright.
const TINY: Record<string, CategoricalDistribution> = {
  'two points': CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }),
  'with zero': CategoricalDistribution.fromCounts({ 0: 3, 1: 2, 5: 1 }),
  'zero-heavy': CategoricalDistribution.fromCounts({ 0: 90, 1: 7, 9: 3 }),
  gapped: CategoricalDistribution.fromCounts({ 2: 1, 7: 2, 30: 1, 31: 4 }),
  'far spike': CategoricalDistribution.fromCounts({ 1: 1000, 200: 1 }),
  'only zero and one': CategoricalDistribution.fromPmf([
    [0, 0.999],
    [1, 0.001],
  ]),
};

describe('expectedLoss', () => {
  describe('against brute-force enumeration of all |supp|^n samples', () => {
    for (const [name, dist] of Object.entries(TINY)) {
      for (let n = 1; n <= 6; n++) {
        it(`${name}, n=${n}: exact and fast agree with enumeration to 1e-12`, () => {
          const reference = bruteForceLoss(dist, n);
          expect(relative(exactExpectedLoss(dist, n), reference.expectedLoss)).toBeLessThanOrEqual(1e-12);
          expect(relative(fastExpectedLoss(dist, n).expectedLoss, reference.expectedLoss)).toBeLessThanOrEqual(1e-12);
          // The exact outcome list matches outcome by outcome (reduced fractions).
          const exact = exactLossDistribution(dist, n);
          const exactMap = new Map(exact.outcomes.map((o) => [`${o.numerator}/${o.denominator}`, o.probability]));
          expect([...exactMap.keys()].sort()).toEqual([...reference.byFraction.keys()].sort());
          for (const [key, p] of reference.byFraction) expect(Math.abs(exactMap.get(key)! - p)).toBeLessThanOrEqual(1e-14 + 1e-12 * p);
        });
      }
    }
  });

  it('closed form: W ∈ {1, 2} equally likely, n = 2 gives 1 + 1/6', () => {
    // Samples (1,1),(2,2): H = 1; (1,2),(2,1): H = 2·2/3 = 4/3; mean = 1/2 + 2/3 = 7/6.
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 2: 1 });
    expect(expectedLoss(dist, 2, { method: 'exact' })).toBeCloseTo(7 / 6, 14);
    expect(relative(expectedLoss(dist, 2), 7 / 6)).toBeLessThanOrEqual(1e-12);
  });

  it('a point mass has loss 1 for every n, including a point mass at zero', () => {
    for (const dist of [CategoricalDistribution.fromCounts({ 7: 3 }), CategoricalDistribution.fromCounts({ 0: 3 })]) {
      for (const n of [1, 2, 32, 1024]) expect(expectedLoss(dist, n)).toBe(1);
    }
  });

  it('fast agrees with exact to 1e-9 on 250 random distributions (zero-heavy, gapped, bimodal, spiky, flat; n ≤ 32)', () => {
    const random = createSeededRandom(2024);
    let worst = 0;
    let count = 0;
    for (let i = 0; i < 250; i++) {
      const kind = TEST_DISTRIBUTION_KINDS[i % TEST_DISTRIBUTION_KINDS.length]!;
      const dist = randomTestDistribution(random, kind, 60);
      const n = i % 10 === 0 ? 32 : 1 + random.nextInt(32);
      if (!exactCost(dist, n).feasible) continue;
      const exact = exactExpectedLoss(dist, n);
      const fast = fastExpectedLoss(dist, n).expectedLoss;
      worst = Math.max(worst, relative(fast, exact));
      count++;
    }
    expect(count).toBe(250);
    expect(worst).toBeLessThanOrEqual(1e-9);
  });

  it('fast agrees with exact to 1e-9 for the five families at n = 32', () => {
    const specs: FamilySpec[] = [
      { family: 'binom', trials: 40, p: 0.3 },
      { family: 'geo', p: 0.1 },
      { family: 'pois', lambda: 6 },
      { family: 'unif', low: 0, high: 50 },
      { family: 'nbinom', r: 5, p: 0.3 },
    ];
    for (const spec of specs) {
      const dist = CategoricalDistribution.fromFamily(spec);
      expect(relative(fastExpectedLoss(dist, 32).expectedLoss, exactExpectedLoss(dist, 32))).toBeLessThanOrEqual(1e-9);
    }
  });

  it('fast agrees with exact for large groups (n = 256, 1024) on small supports', () => {
    const cases: [Record<string, number>, number][] = [
      [{ 1: 1, 2: 1, 5: 1 }, 256],
      [{ 0: 50, 1: 2, 7: 1 }, 256],
      [{ 0: 5, 1: 2, 2: 1 }, 1024],
      [{ 1: 3, 2: 1 }, 1024],
    ];
    for (const [counts, n] of cases) {
      const dist = CategoricalDistribution.fromCounts(counts);
      expect(relative(fastExpectedLoss(dist, n).expectedLoss, exactExpectedLoss(dist, n))).toBeLessThanOrEqual(1e-11);
    }
  });

  describe('Monte Carlo with a fixed seed, within 4 standard errors', () => {
    const cases: [FamilySpec, number][] = [
      [{ family: 'binom', trials: 20, p: 0.3 }, 32],
      [{ family: 'geo', p: 0.2 }, 32],
      [{ family: 'pois', lambda: 4 }, 32],
      [{ family: 'unif', low: 1, high: 10 }, 8],
      [{ family: 'nbinom', r: 3, p: 0.4 }, 16],
      [{ family: 'geo', p: 0.5 }, 4],
    ];
    for (const [spec, n] of cases) {
      it(`${spec.family} ${JSON.stringify(spec)} n=${n}`, () => {
        const draw = createFamilySampler(spec);
        const random = createSeededRandom(77 + n);
        const groups = 20_000;
        const lanes = new Float64Array(n);
        let sum = 0;
        let sumSquares = 0;
        for (let g = 0; g < groups; g++) {
          for (let i = 0; i < n; i++) lanes[i] = draw(random);
          const h = groupLoss(lanes);
          sum += h;
          sumSquares += h * h;
        }
        const mean = sum / groups;
        const standardError = Math.sqrt((sumSquares / groups - mean * mean) / (groups - 1));
        const model = expectedLoss(CategoricalDistribution.fromFamily(spec), n);
        expect(Math.abs(mean - model)).toBeLessThanOrEqual(4 * standardError);
      });
    }
  });

  describe('errors', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 2: 1 });
    it('rejects group sizes outside 1..1024 with a message naming the range', () => {
      for (const n of [0, -1, 1025, 2.5, Number.NaN]) {
        expect(() => expectedLoss(dist, n)).toThrow(RangeError);
        expect(() => expectedLoss(dist, n)).toThrow(/group size n must be an integer 1\.\.1024, got/);
        expect(() => expectedLoss(dist, n, { method: 'exact' })).toThrow(/group size n must be an integer 1\.\.1024/);
      }
    });
    it('rejects an unknown method', () => {
      expect(() => expectedLoss(dist, 2, { method: 'slow' as 'fast' })).toThrow(/method must be 'fast' or 'exact', got 'slow'/);
    });
    it('refuses the exact method beyond its limits and points to the fast method', () => {
      const wide = CategoricalDistribution.fromFamily({ family: 'unif', low: 0, high: 20_000 });
      expect(() => expectedLoss(wide, 32, { method: 'exact' })).toThrow(/exact method for n=32 .* use the fast method/);
      expect(exactCost(wide, 32).feasible).toBe(false);
    });
  });
});
