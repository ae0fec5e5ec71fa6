import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { ModelError } from '../errors.ts';

describe('CategoricalDistribution', () => {
  describe('fromCounts', () => {
    it('accepts a Map, a plain object and [value, weight] pairs alike, merging duplicates', () => {
      const fromMap = CategoricalDistribution.fromCounts(new Map([[3, 1], [1, 3]]));
      const fromObject = CategoricalDistribution.fromCounts({ '1': 3, '3': 1 });
      const fromPairs = CategoricalDistribution.fromCounts([
        [1, 1],
        [3, 1],
        [1, 2],
      ]);
      for (const dist of [fromMap, fromObject, fromPairs]) {
        expect(dist.values).toEqual([1, 3]);
        expect(dist.probabilities).toEqual([0.75, 0.25]);
        expect(dist.totalWeight).toBe(4);
      }
    });
    it('drops zero counts and keeps values ascending', () => {
      const dist = CategoricalDistribution.fromCounts({ 9: 1, 0: 0, 4: 1 });
      expect(dist.values).toEqual([4, 9]);
      expect(dist.size).toBe(2);
      expect(dist.min).toBe(4);
      expect(dist.max).toBe(9);
    });
    it('is immutable', () => {
      const dist = CategoricalDistribution.fromCounts({ 1: 1 });
      expect(Object.isFrozen(dist)).toBe(true);
      expect(Object.isFrozen(dist.values)).toBe(true);
      expect(Object.isFrozen(dist.probabilities)).toBe(true);
    });

    const bad: [string, Parameters<typeof CategoricalDistribution.fromCounts>[0], RegExp][] = [
      ['empty object', {}, /distribution is empty/],
      ['empty pairs', [], /distribution is empty/],
      ['negative value', { '-1': 3 }, /values must be non-negative integers \(iteration counts\), got -1/],
      ['non-integer value', { '1.5': 3 }, /values must be non-negative integers \(iteration counts\), got 1\.5/],
      ['non-numeric key', { abc: 3 }, /values must be non-negative integers \(iteration counts\), got NaN/],
      ['NaN weight', { 1: Number.NaN }, /weights must be finite numbers, got NaN for value 1/],
      ['infinite weight', { 1: Number.POSITIVE_INFINITY }, /weights must be finite numbers, got Infinity for value 1/],
      ['negative weight', { 1: 2, 2: -1 }, /weights must be non-negative, got -1 for value 2/],
      ['all-zero weights', { 1: 0, 2: 0 }, /all weights are zero/],
      ['malformed pair', [[1, 2, 3] as unknown as [number, number]], /each entry must be a \[value, weight\] pair/],
    ];
    for (const [name, input, message] of bad) {
      it(`rejects ${name} with a RangeError naming the problem`, () => {
        expect(() => CategoricalDistribution.fromCounts(input)).toThrow(RangeError);
        expect(() => CategoricalDistribution.fromCounts(input)).toThrow(message);
        try {
          CategoricalDistribution.fromPmf(input);
        } catch (error) {
          expect(error).toBeInstanceOf(ModelError);
          expect((error as ModelError).code).toBe('WW_ERR_MODEL_INVALID_DISTRIBUTION');
        }
      });
    }
  });

  describe('fromPmf', () => {
    it('normalises weights and records totalWeight 1', () => {
      const dist = CategoricalDistribution.fromPmf([
        [2, 2],
        [5, 6],
      ]);
      expect(dist.probabilities).toEqual([0.25, 0.75]);
      expect(dist.totalWeight).toBe(1);
    });
  });

  describe('fromFamily', () => {
    it('geo(0.5) is truncated at 20, where 2^-20 ≤ 1e-6 < 2^-19, and reports it', () => {
      const dist = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.5 });
      expect(dist.values[0]).toBe(1);
      expect(dist.max).toBe(20);
      expect(dist.truncation?.point).toBe(20);
      expect(dist.truncation?.tailMass).toBeCloseTo(2 ** -20, 15);
      expect(dist.truncation?.epsilon).toBe(1e-6);
      expect(dist.probabilities[0]).toBeCloseTo(0.5 / (1 - 2 ** -20), 14);
    });
    it('honours epsilon', () => {
      const dist = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.5 }, { epsilon: 1e-3 });
      expect(dist.truncation?.point).toBe(10); // 2^-10 = 9.8e-4 ≤ 1e-3
    });
    it('describe() names the family, support, mean and truncation', () => {
      const text = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.5 }).describe();
      expect(text).toMatch(/^geo\(0\.5\): 20 values in \[1, 20\], mean 1\.99998, truncated at 20 \(tail mass 9\.5e-7 <= epsilon 1e-6\)$/);
      expect(CategoricalDistribution.fromCounts({ 1: 1, 3: 1 }).describe()).toBe('categorical: 2 values in [1, 3], mean 2');
    });
  });

  describe('moments, cdf and quantile', () => {
    const dist = CategoricalDistribution.fromCounts({ 0: 1, 2: 2, 10: 1 });
    it('mean and variance match hand computation', () => {
      expect(dist.mean()).toBe(3.5); // (0 + 4 + 10)/4
      expect(dist.variance()).toBeCloseTo((3.5 ** 2 + 2 * 1.5 ** 2 + 6.5 ** 2) / 4, 14);
    });
    it('cdf is a right-continuous step function', () => {
      expect(dist.cdf(-1)).toBe(0);
      expect(dist.cdf(0)).toBe(0.25);
      expect(dist.cdf(1.9)).toBe(0.25);
      expect(dist.cdf(2)).toBe(0.75);
      expect(dist.cdf(100)).toBe(1);
    });
    it('quantile is the lower inverse of the cdf', () => {
      expect(dist.quantile(0)).toBe(0);
      expect(dist.quantile(0.25)).toBe(0);
      expect(dist.quantile(0.26)).toBe(2);
      expect(dist.quantile(0.75)).toBe(2);
      expect(dist.quantile(1)).toBe(10);
      expect(() => dist.quantile(1.5)).toThrow(/quantile\(p\): p must be in \[0, 1\], got 1\.5/);
      expect(() => dist.cdf(Number.NaN)).toThrow(/cdf\(x\): x must be a number, got NaN/);
    });
    it('scaled(k) multiplies values and keeps probabilities', () => {
      const scaled = dist.scaled(3);
      expect(scaled.values).toEqual([0, 6, 30]);
      expect(scaled.probabilities).toEqual(dist.probabilities);
      expect(() => dist.scaled(0)).toThrow(/scaled\(k\): k must be a positive integer/);
      expect(() => dist.scaled(1.5)).toThrow(/scaled\(k\): k must be a positive integer/);
    });
  });
});
