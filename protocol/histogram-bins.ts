/**
 * Histogram bins of per-lane iteration counts (SPEC.md "Histogram bins"): values below 1024
 * have exact bins; above, each power of two [2^e, 2^(e+1)) is split into 64 equal bins
 * (log-linear, like HdrHistogram with 6 significant bits), so a bin's width relative to its
 * lowest value is below 2^-6.
 */
import { EXACT_BIN_COUNT, HISTOGRAM_BIN_COUNT, LOG_SUB_BIN_BITS } from './limits.ts';
import type { HistogramEntry } from './types.ts';

const SUB_BINS = 1 << LOG_SUB_BIN_BITS;

/** Upper bound on (high − low) / low over every bin (exact bins have 0): 2^-6. */
export const HISTOGRAM_MAX_RELATIVE_WIDTH = 2 ** -LOG_SUB_BIN_BITS;

/**
 * Upper bound on |v − representative| / v for every value v in its bin: 2^-7. A group's loss
 * H = n·max/Σ computed from representatives is within a factor (1 ± 2^-7)/(1 ∓ 2^-7) of the
 * exact one; use this for the estimator's binning error bound.
 */
export const HISTOGRAM_MAX_RELATIVE_ERROR = 2 ** -(LOG_SUB_BIN_BITS + 1);

function checkValue(value: number): void {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new RangeError(`iteration count must be an integer 0..4294967295, got ${value}`);
  }
}

function checkBin(bin: number): void {
  if (!Number.isInteger(bin) || bin < 0 || bin >= HISTOGRAM_BIN_COUNT) {
    throw new RangeError(`histogram bin must be an integer 0..${HISTOGRAM_BIN_COUNT - 1}, got ${bin}`);
  }
}

/**
 * The bin of an iteration count. O(1).
 *
 * @param value - per-lane iteration count, integer 0..2^32−1
 * @returns bin index 0..2431
 * @throws RangeError when value is not an integer in range
 * @example histogramBinOf(5) === 5; histogramBinOf(1024) === 1024; histogramBinOf(1040) === 1025
 */
export function histogramBinOf(value: number): number {
  checkValue(value);
  if (value < EXACT_BIN_COUNT) return value;
  const e = 31 - Math.clz32(value);
  const sub = Math.floor(value / 2 ** (e - LOG_SUB_BIN_BITS)) % SUB_BINS;
  return EXACT_BIN_COUNT + (e - 10) * SUB_BINS + sub;
}

/**
 * The inclusive range of iteration counts a bin holds.
 *
 * @param bin - bin index 0..2431
 * @returns `{ low, high }`, both inclusive; low === high for bins below 1024
 * @throws RangeError when bin is out of range
 * @example histogramBinRange(1025) // { low: 1040, high: 1055 }
 */
export function histogramBinRange(bin: number): { low: number; high: number } {
  checkBin(bin);
  return { low: binLowOf(bin), high: binHighOf(bin) };
}

/**
 * The lowest iteration count of a bin, as histogramBinRange gives it, for a bin index already
 * checked (0..2431): no object (the decoder's per-entry path).
 *
 * @example binLowOf(1025) === 1040
 */
export function binLowOf(bin: number): number {
  if (bin < EXACT_BIN_COUNT) return bin;
  const k = bin - EXACT_BIN_COUNT;
  const e = 10 + Math.floor(k / SUB_BINS);
  return 2 ** e + (k % SUB_BINS) * 2 ** (e - LOG_SUB_BIN_BITS);
}

/**
 * The highest iteration count of a bin, as histogramBinRange gives it, for a bin index already
 * checked (0..2431).
 *
 * @example binHighOf(1025) === 1055
 */
export function binHighOf(bin: number): number {
  if (bin < EXACT_BIN_COUNT) return bin;
  const e = 10 + Math.floor((bin - EXACT_BIN_COUNT) / SUB_BINS);
  return binLowOf(bin) + 2 ** (e - LOG_SUB_BIN_BITS) - 1;
}

/**
 * The value that stands for a whole bin: ⌊(low + high) / 2⌋, the integer nearest the middle,
 * so that |v − representative| / v ≤ {@link HISTOGRAM_MAX_RELATIVE_ERROR} for every v in the bin.
 *
 * @throws RangeError when bin is out of range
 * @example histogramBinRepresentative(7) === 7; histogramBinRepresentative(1025) === 1047
 */
export function histogramBinRepresentative(bin: number): number {
  const { low, high } = histogramBinRange(bin);
  return Math.floor((low + high) / 2);
}

/**
 * Turns a sparse histogram into counts per representative value (the input of
 * `CategoricalDistribution.fromCounts`). Entries of the same bin are added.
 *
 * @param histogram - `(bin, count)` entries, as in a LaunchSummary
 * @returns Map from representative iteration count to number of lanes, in ascending value order
 * @throws RangeError on a bad bin or a count that is not a non-negative integer
 * @example histogramToCounts([{ bin: 3, count: 10 }]) // Map { 3 => 10 }
 */
export function histogramToCounts(histogram: readonly HistogramEntry[]): Map<number, number> {
  const byBin = new Map<number, number>();
  for (const { bin, count } of histogram) {
    checkBin(bin);
    if (!Number.isSafeInteger(count) || count < 0) {
      throw new RangeError(`histogram count must be a non-negative integer, got ${count}`);
    }
    byBin.set(bin, (byBin.get(bin) ?? 0) + count);
  }
  const out = new Map<number, number>();
  for (const bin of [...byBin.keys()].sort((a, b) => a - b)) {
    const count = byBin.get(bin)!;
    if (count > 0) out.set(histogramBinRepresentative(bin), count);
  }
  return out;
}

/**
 * Builds a sparse histogram from per-lane iteration counts (what the probe computes on the device).
 *
 * @param values - iteration counts, integers 0..2^32−1
 * @returns entries sorted by bin, counts ≥ 1
 * @throws RangeError on a value out of range
 * @example histogramOfCounts([1, 1, 2000]) // [{ bin: 1, count: 2 }, { bin: 1085, count: 1 }]
 */
export function histogramOfCounts(values: Iterable<number>): HistogramEntry[] {
  const byBin = new Map<number, number>();
  for (const v of values) {
    const bin = histogramBinOf(v);
    byBin.set(bin, (byBin.get(bin) ?? 0) + 1);
  }
  return [...byBin.entries()].sort((a, b) => a[0] - b[0]).map(([bin, count]) => ({ bin, count }));
}
