/**
 * Weighted counts of per-lane iteration counts, exact up to a support bound and binned
 * beyond it with a bounded relative bin width (an HDR-histogram layout: values below
 * 2·S stay exact, each octave [2^k, 2^(k+1)) above is split into S bins of equal width, so
 * a bin [low, high] has (high − low)/low < 1/S).
 *
 * The object is a plain mutable record; functions below create, add, merge, scale and
 * read it. Keys are bin lower bounds; an entry whose high equals its low is an exact value.
 */
export interface CountHistogram {
  /** Weight (lane count, possibly decayed, so not always an integer) per bin lower bound. */
  readonly counts: Map<number, number>;
  /** Upper bound (inclusive) for entries that are bins of more than one value. */
  readonly highs: Map<number, number>;
  /** True once the support exceeded the exact bound and the histogram was re-binned. */
  binned: boolean;
  /** Sum of all weights. */
  total: number;
}

/** How a histogram bins. */
export interface CountHistogramOptions {
  /** Largest number of distinct entries kept exact; beyond, values ≥ 2·subBinsPerOctave are binned. */
  readonly maxExactSupport: number;
  /** S: bins per octave once binned (a power of two); the relative bin width is below 1/S. */
  readonly subBinsPerOctave: number;
}

/** One entry in ascending order of `low`. `representative` is the integer the model sees. */
export interface HistogramEntry {
  readonly low: number;
  readonly high: number;
  readonly representative: number;
  readonly count: number;
}

/** Default binning: exact up to 4096 distinct values, then 128 bins per octave (< 0.79 % wide). */
export const DEFAULT_COUNT_HISTOGRAM_OPTIONS: CountHistogramOptions = Object.freeze({
  maxExactSupport: 4096,
  subBinsPerOctave: 128,
});

/**
 * Creates an empty histogram.
 *
 * @example
 * const histogram = createCountHistogram();
 * addCount(histogram, 7, 7, 32, DEFAULT_COUNT_HISTOGRAM_OPTIONS);
 */
export function createCountHistogram(): CountHistogram {
  return { counts: new Map(), highs: new Map(), binned: false, total: 0 };
}

/**
 * Lower and upper bound of the bin of `value` once binned: values below 2·S are their own bin.
 *
 * @example
 * binOfValue(1000, 128); // { low: 1000, high: 1001 }  (width 2 in the octave [512, 1024))
 */
export function binOfValue(value: number, subBinsPerOctave: number): { low: number; high: number } {
  if (value < 2 * subBinsPerOctave) return { low: value, high: value };
  let exponent = Math.floor(Math.log2(value));
  // Math.log2 may round across an exact power of two: correct it.
  while (2 ** exponent > value) exponent -= 1;
  while (2 ** (exponent + 1) <= value) exponent += 1;
  const width = 2 ** exponent / subBinsPerOctave;
  const low = Math.floor(value / width) * width;
  return { low, high: low + width - 1 };
}

/**
 * Adds `count` lanes whose iteration count lies in [low, high] (low = high for an exact value).
 * Mutates `histogram`; re-bins it when the exact support bound is exceeded.
 *
 * @throws RangeError on negative, non-integer or reversed bounds, or a negative count.
 */
export function addCount(
  histogram: CountHistogram,
  low: number,
  high: number,
  count: number,
  options: CountHistogramOptions,
): void {
  if (!Number.isInteger(low) || !Number.isInteger(high) || low < 0 || high < low) {
    throw new RangeError(`histogram bin must be integers 0 <= low <= high, got [${low}, ${high}]`);
  }
  if (!(count >= 0) || !Number.isFinite(count)) {
    throw new RangeError(`histogram count must be a finite number >= 0, got ${count}`);
  }
  if (count === 0) return;
  let key = low;
  let top = high;
  if (histogram.binned) {
    const bin = binOfValue(low, options.subBinsPerOctave);
    key = bin.low;
    top = Math.max(bin.high, high);
  }
  histogram.counts.set(key, (histogram.counts.get(key) ?? 0) + count);
  if (top > key) histogram.highs.set(key, Math.max(histogram.highs.get(key) ?? key, top));
  histogram.total += count;
  if (!histogram.binned && histogram.counts.size > options.maxExactSupport) rebin(histogram, options);
}

function rebin(histogram: CountHistogram, options: CountHistogramOptions): void {
  const entries = [...histogram.counts].map(([low, count]) => ({ low, high: histogram.highs.get(low) ?? low, count }));
  histogram.counts.clear();
  histogram.highs.clear();
  histogram.total = 0;
  histogram.binned = true;
  for (const entry of entries) addCount(histogram, entry.low, entry.high, entry.count, options);
}

/**
 * Adds every entry of `source` into `target` (mutates target). Associative and commutative
 * up to the order in which re-binning happens (re-binning is idempotent).
 */
export function addHistogram(target: CountHistogram, source: CountHistogram, options: CountHistogramOptions): void {
  if (source.binned && !target.binned) rebin(target, options);
  for (const [low, count] of source.counts) addCount(target, low, source.highs.get(low) ?? low, count, options);
}

/**
 * A new histogram holding the entries of both inputs.
 *
 * @example
 * const both = mergeCountHistograms(a, b, DEFAULT_COUNT_HISTOGRAM_OPTIONS);
 */
export function mergeCountHistograms(
  a: CountHistogram,
  b: CountHistogram,
  options: CountHistogramOptions,
): CountHistogram {
  const merged = cloneCountHistogram(a);
  addHistogram(merged, b, options);
  return merged;
}

/** A deep copy. */
export function cloneCountHistogram(histogram: CountHistogram): CountHistogram {
  return {
    counts: new Map(histogram.counts),
    highs: new Map(histogram.highs),
    binned: histogram.binned,
    total: histogram.total,
  };
}

/**
 * Multiplies every weight by `factor` ∈ (0, 1] (exponential decay of the "current"
 * distribution) and drops entries whose weight falls below `pruneBelow` lanes.
 */
export function scaleCountHistogram(histogram: CountHistogram, factor: number, pruneBelow = 1e-6): void {
  if (!(factor > 0 && factor <= 1)) throw new RangeError(`decay factor must be in (0, 1], got ${factor}`);
  let total = 0;
  // forEach visits the entries as for…of does (insertion order; deleting the current one is
  // safe), without an [low, count] array per entry: this runs once per launch.
  const { counts, highs } = histogram;
  counts.forEach((count, low) => {
    const scaled = count * factor;
    if (scaled < pruneBelow) {
      counts.delete(low);
      highs.delete(low);
    } else {
      counts.set(low, scaled);
      total += scaled;
    }
  });
  histogram.total = total;
}

/**
 * The entries in ascending order of `low`, each with the integer the model sees for it
 * (the bin's midpoint, rounded down; any value inside the bin keeps the error bound valid).
 */
export function histogramEntries(histogram: CountHistogram): HistogramEntry[] {
  const lows = [...histogram.counts.keys()].sort((x, y) => x - y);
  return lows.map((low) => {
    const high = histogram.highs.get(low) ?? low;
    return { low, high, representative: Math.floor((low + high) / 2), count: histogram.counts.get(low) ?? 0 };
  });
}

/**
 * Weights per representative value, ascending (what the model's distributions are built from).
 */
export function representativeCounts(histogram: CountHistogram): Map<number, number> {
  const result = new Map<number, number>();
  for (const entry of histogramEntries(histogram)) {
    result.set(entry.representative, (result.get(entry.representative) ?? 0) + entry.count);
  }
  return result;
}

/**
 * Bound on |E[X_true] − E[X_model]| caused by binning (model.md §2c, docs/estimator.md).
 *
 * If every lane's true count w lies in its bin [l, h] and the model uses a value v in the
 * same bin, then w/v ∈ [l/h, h/l], so for one group H(w) = n·max(w)/Σw lies within a factor
 * (1 + r) of H(v), r = max (h − l)/l over the bins used. Only groups containing a binned lane
 * are affected, and X ≤ n, hence
 *
 *     |E[X_true] − E[X_model]| ≤ r · min(E[X_model], n · (1 − (1 − p_b)^n))
 *
 * with p_b the probability mass of multi-value bins. Capped at n − 1 (X ∈ [1, n]). Zero when
 * every entry is exact.
 *
 * @param lossPredicted E[X_model] computed on the representatives.
 * @param groupSize n.
 */
export function binningErrorBound(histogram: CountHistogram, groupSize: number, lossPredicted: number): number {
  if (histogram.highs.size === 0 || histogram.total <= 0) return 0;
  let relativeWidth = 0;
  let binnedMass = 0;
  for (const [low, high] of histogram.highs) {
    const count = histogram.counts.get(low) ?? 0;
    if (count <= 0) continue;
    binnedMass += count;
    relativeWidth = Math.max(relativeWidth, low === 0 ? Number.POSITIVE_INFINITY : (high - low) / low);
  }
  if (binnedMass === 0) return 0;
  const probabilityBinned = Math.min(1, binnedMass / histogram.total);
  const affected = groupSize * (1 - (1 - probabilityBinned) ** groupSize);
  const bound = relativeWidth * Math.min(lossPredicted, affected);
  return Math.min(bound, Math.max(0, groupSize - 1));
}
