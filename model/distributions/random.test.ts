import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { createCategoricalSampler } from './categorical-sampler.ts';
import { createFamilySampler } from './family-sampler.ts';
import type { FamilySpec } from './family.ts';
import { createSeededRandom } from './random.ts';

describe('createSeededRandom', () => {
  it('is deterministic per seed and differs between seeds', () => {
    const a = createSeededRandom(1);
    const b = createSeededRandom(1);
    const c = createSeededRandom(2);
    const xs = Array.from({ length: 5 }, () => a.nextFloat());
    expect(Array.from({ length: 5 }, () => b.nextFloat())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.nextFloat())).not.toEqual(xs);
  });
  it('gives floats in [0, 1) with mean 1/2 and variance 1/12 (within 4 SE over 1e5 draws)', () => {
    const random = createSeededRandom(99);
    const count = 100_000;
    let sum = 0;
    let sumSquares = 0;
    for (let i = 0; i < count; i++) {
      const u = random.nextFloat();
      expect(u >= 0 && u < 1).toBe(true);
      sum += u;
      sumSquares += u * u;
    }
    expect(Math.abs(sum / count - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / count));
    expect(Math.abs(sumSquares / count - 1 / 3)).toBeLessThan(4 * Math.sqrt(4 / 45 / count));
  });
  it('nextInt covers its range uniformly (chi-square, 9 degrees of freedom, below the 0.999 quantile 27.9)', () => {
    const random = createSeededRandom(5);
    const counts = new Array<number>(10).fill(0);
    for (let i = 0; i < 50_000; i++) counts[random.nextInt(10)]!++;
    const chiSquare = counts.reduce((s, c) => s + (c - 5000) ** 2 / 5000, 0);
    expect(chiSquare).toBeLessThan(27.9);
    expect(() => random.nextInt(0)).toThrow(/nextInt bound must be an integer 1\.\.2\^32, got 0/);
  });
  it('rejects a non-finite seed', () => {
    expect(() => createSeededRandom(Number.NaN)).toThrow(/seed must be a finite number, got NaN/);
  });
});

describe('samplers', () => {
  it('the alias sampler reproduces a categorical pmf (chi-square, 3 d.f., below 16.3 = 0.999 quantile)', () => {
    const dist = CategoricalDistribution.fromCounts({ 0: 1, 3: 2, 7: 3, 40: 4 });
    const draw = createCategoricalSampler(dist);
    const random = createSeededRandom(3);
    const counts = new Map<number, number>();
    const total = 40_000;
    for (let i = 0; i < total; i++) {
      const v = draw(random);
      counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const chiSquare = dist.values.reduce((s, v, i) => s + ((counts.get(v) ?? 0) - total * dist.probabilities[i]!) ** 2 / (total * dist.probabilities[i]!), 0);
    expect(chiSquare).toBeLessThan(16.3);
  });
  const moments: [FamilySpec, number, number][] = [
    [{ family: 'binom', trials: 20, p: 0.3 }, 6, 4.2],
    [{ family: 'geo', p: 0.2 }, 5, 20], // mean 1/p, variance (1−p)/p²
    [{ family: 'pois', lambda: 45 }, 45, 45],
    [{ family: 'unif', low: 2, high: 8 }, 5, 4], // variance ((b−a+1)² − 1)/12
    [{ family: 'nbinom', r: 2.5, p: 0.4 }, 3.75, 9.375], // mean r(1−p)/p, variance r(1−p)/p²
  ];
  for (const [spec, mean, variance] of moments) {
    it(`${spec.family} draws have the family's mean (within 4 SE)`, () => {
      const draw = createFamilySampler(spec);
      const random = createSeededRandom(8);
      const count = 40_000;
      let sum = 0;
      for (let i = 0; i < count; i++) sum += draw(random);
      expect(Math.abs(sum / count - mean)).toBeLessThan(4 * Math.sqrt(variance / count));
    });
  }
});
