import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, createSeededRandom, expectedLoss } from '../../model/index.ts';
import {
  addCount,
  binOfValue,
  binningErrorBound,
  createCountHistogram,
  histogramEntries,
  mergeCountHistograms,
  representativeCounts,
  scaleCountHistogram,
} from './count-histogram.ts';

const options = { maxExactSupport: 8, subBinsPerOctave: 4 };

describe('count-histogram', () => {
  describe('binOfValue', () => {
    it('keeps values below 2·S exact and bins the rest with relative width below 1/S', () => {
      for (let value = 0; value < 100_000; value += 1 + Math.floor(value / 50)) {
        const bin = binOfValue(value, 16);
        expect(bin.low).toBeLessThanOrEqual(value);
        expect(bin.high).toBeGreaterThanOrEqual(value);
        if (value < 32) expect(bin).toEqual({ low: value, high: value });
        else expect((bin.high - bin.low) / bin.low).toBeLessThan(1 / 16);
      }
    });
    it('is consistent: every value of a bin maps to the same bin', () => {
      const bin = binOfValue(1000, 16);
      for (let v = bin.low; v <= bin.high; v += 1) expect(binOfValue(v, 16)).toEqual(bin);
      expect(binOfValue(bin.high + 1, 16).low).toBe(bin.high + 1);
    });
  });

  describe('addCount', () => {
    it('stays exact up to the support bound, then re-bins and keeps the total', () => {
      const histogram = createCountHistogram();
      for (let v = 0; v < 8; v += 1) addCount(histogram, v * 10, v * 10, 1, options);
      expect(histogram.binned).toBe(false);
      addCount(histogram, 1000, 1000, 2, options);
      expect(histogram.binned).toBe(true);
      expect(histogram.total).toBe(10);
      const entries = histogramEntries(histogram);
      expect(entries.reduce((s, e) => s + e.count, 0)).toBe(10);
      for (const entry of entries) {
        if (entry.high > entry.low) expect((entry.high - entry.low) / entry.low).toBeLessThan(1 / 4);
      }
    });
    it('rejects malformed bins', () => {
      expect(() => addCount(createCountHistogram(), 5, 4, 1, options)).toThrow(RangeError);
      expect(() => addCount(createCountHistogram(), -1, 4, 1, options)).toThrow(RangeError);
      expect(() => addCount(createCountHistogram(), 1, 1, Number.NaN, options)).toThrow(RangeError);
    });
  });

  describe('mergeCountHistograms', () => {
    it('equals adding all entries into one histogram', () => {
      const random = createSeededRandom(3);
      const a = createCountHistogram();
      const b = createCountHistogram();
      const all = createCountHistogram();
      for (let i = 0; i < 200; i += 1) {
        const v = Math.floor(random.nextFloat() * 40);
        addCount(i % 2 === 0 ? a : b, v, v, 1, { maxExactSupport: 1000, subBinsPerOctave: 4 });
        addCount(all, v, v, 1, { maxExactSupport: 1000, subBinsPerOctave: 4 });
      }
      const merged = mergeCountHistograms(a, b, { maxExactSupport: 1000, subBinsPerOctave: 4 });
      expect(representativeCounts(merged)).toEqual(representativeCounts(all));
    });
  });

  describe('scaleCountHistogram', () => {
    it('scales every weight and prunes negligible ones', () => {
      const histogram = createCountHistogram();
      addCount(histogram, 1, 1, 4, options);
      addCount(histogram, 2, 2, 1e-6, options);
      scaleCountHistogram(histogram, 0.5);
      expect([...histogram.counts]).toEqual([[1, 2]]);
      expect(histogram.total).toBe(2);
    });
  });

  describe('binningErrorBound', () => {
    it('is 0 for an exact histogram', () => {
      const histogram = createCountHistogram();
      addCount(histogram, 3, 3, 10, options);
      expect(binningErrorBound(histogram, 32, 1.5)).toBe(0);
    });
    it('bounds the change of E[X] when the true values move anywhere inside their bins', () => {
      // Brute force: random distributions over wide bins; the true values are the bins' low
      // ends, high ends, or random points inside; E[X] of each must lie within the bound of
      // E[X] computed on the representatives.
      const random = createSeededRandom(11);
      for (let trial = 0; trial < 40; trial += 1) {
        const histogram = createCountHistogram();
        const bins: { low: number; high: number; count: number }[] = [];
        const binCount = 2 + Math.floor(random.nextFloat() * 5);
        for (let i = 0; i < binCount; i += 1) {
          const low = 20 + Math.floor(random.nextFloat() * 200);
          const high = low + Math.floor(random.nextFloat() * low * 0.1);
          const count = 1 + Math.floor(random.nextFloat() * 20);
          bins.push({ low, high, count });
          addCount(histogram, low, high, count, { maxExactSupport: 1000, subBinsPerOctave: 64 });
        }
        const exactCount = 1 + Math.floor(random.nextFloat() * 30);
        addCount(histogram, 3, 3, exactCount, { maxExactSupport: 1000, subBinsPerOctave: 64 });
        const n = [2, 4, 8, 32][trial % 4] ?? 4;
        const predicted = expectedLoss(CategoricalDistribution.fromPmf(representativeCounts(histogram)), n);
        const bound = binningErrorBound(histogram, n, predicted);
        for (const placement of ['low', 'high', 'random'] as const) {
          const truth = new Map<number, number>([[3, exactCount]]);
          for (const bin of bins) {
            const value =
              placement === 'low' ? bin.low : placement === 'high' ? bin.high : bin.low + Math.floor(random.nextFloat() * (bin.high - bin.low + 1));
            truth.set(value, (truth.get(value) ?? 0) + bin.count);
          }
          const actual = expectedLoss(CategoricalDistribution.fromPmf(truth), n);
          expect(Math.abs(actual - predicted)).toBeLessThanOrEqual(bound + 1e-9);
        }
      }
    });
  });
});
