import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  HISTOGRAM_MAX_RELATIVE_ERROR,
  HISTOGRAM_MAX_RELATIVE_WIDTH,
  histogramBinOf,
  histogramBinRange,
  histogramBinRepresentative,
  histogramOfCounts,
  histogramToCounts,
} from './histogram-bins.ts';
import { HISTOGRAM_BIN_COUNT } from './limits.ts';

describe('histogram bins', () => {
  describe('histogramBinOf', () => {
    it('gives every value below 1024 its own bin', () => {
      for (let v = 0; v < 1024; v++) expect(histogramBinOf(v)).toBe(v);
    });

    it('agrees with a brute-force scan of consecutive bins up to 2^18', () => {
      let bin = 0;
      for (let v = 0; v < 1 << 18; v++) {
        if (v > histogramBinRange(bin).high) bin++;
        if (histogramBinOf(v) !== bin) expect.fail(`value ${v}: bin ${histogramBinOf(v)}, scan says ${bin}`);
      }
    });

    it('puts 2^32 - 1 into the last bin and rejects values outside u32', () => {
      expect(histogramBinOf(0xffffffff)).toBe(HISTOGRAM_BIN_COUNT - 1);
      expect(() => histogramBinOf(-1)).toThrow(RangeError);
      expect(() => histogramBinOf(2 ** 32)).toThrow(RangeError);
      expect(() => histogramBinOf(1.5)).toThrow(RangeError);
    });
  });

  describe('histogramBinRange', () => {
    it('tiles 0..2^32-1 with contiguous bins of bounded relative width', () => {
      expect(histogramBinRange(0).low).toBe(0);
      expect(histogramBinRange(HISTOGRAM_BIN_COUNT - 1).high).toBe(0xffffffff);
      for (let bin = 0; bin < HISTOGRAM_BIN_COUNT; bin++) {
        const { low, high } = histogramBinRange(bin);
        if (bin + 1 < HISTOGRAM_BIN_COUNT) expect(histogramBinRange(bin + 1).low).toBe(high + 1);
        expect(histogramBinOf(low)).toBe(bin);
        expect(histogramBinOf(high)).toBe(bin);
        if (low > 0) expect((high - low) / low).toBeLessThan(HISTOGRAM_MAX_RELATIVE_WIDTH);
      }
      expect(() => histogramBinRange(HISTOGRAM_BIN_COUNT)).toThrow(RangeError);
    });
  });

  describe('histogramBinRepresentative', () => {
    it('is within the documented relative error of every value of its bin', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 0xffffffff }), (v) => {
          const rep = histogramBinRepresentative(histogramBinOf(v));
          expect(Math.abs(v - rep) / v).toBeLessThanOrEqual(HISTOGRAM_MAX_RELATIVE_ERROR);
        }),
      );
      expect(histogramBinRepresentative(1025)).toBe(1047); // bin [1040, 1055]
    });
  });

  describe('histogramToCounts', () => {
    it('maps bins to representative values, adding repeated bins, in ascending order', () => {
      const counts = histogramToCounts([
        { bin: 1025, count: 2 },
        { bin: 3, count: 10 },
        { bin: 1025, count: 1 },
      ]);
      expect([...counts.entries()]).toEqual([
        [3, 10],
        [1047, 3],
      ]);
    });

    it('inverts histogramOfCounts exactly for values below 1024', () => {
      fc.assert(
        fc.property(fc.array(fc.nat({ max: 1023 }), { maxLength: 100 }), (values) => {
          const expected = new Map<number, number>();
          for (const v of values) expected.set(v, (expected.get(v) ?? 0) + 1);
          expect(new Map(histogramToCounts(histogramOfCounts(values)))).toEqual(expected);
        }),
      );
    });
  });
});
