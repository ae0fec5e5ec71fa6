import {
  CategoricalDistribution,
  createSeededRandom,
  exactCost,
  expectedLoss,
  lossQuantiles,
  lossStandardError,
  normalQuantileTwoSided,
  prepareFastLoss,
  preparedExpectedLoss,
  prepareWorkloadLoss,
  preparedWorkloadLoss,
  relativeError as modelRelativeError,
  summarizeSampledGroups,
  type SampledGroupsResult,
} from '../../model/index.ts';
import { binningErrorBound, histogramEntries, representativeCounts, type CountHistogram } from './count-histogram.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { hashString, poissonDeviate } from './random-deviates.ts';
import { hasOverflowed, type WindowAccumulation, type WindowSum } from './stream-state.ts';

/** A parametric fit as the model reports it (best first). */
export interface ParametricFit {
  readonly family: string;
  readonly parameters: Readonly<Record<string, number>>;
  readonly logLikelihood: number;
  readonly aic: number;
}

/**
 * The fitting function (model `fitParametric`, best first), injected so tests and benchmarks
 * can turn it off. `sampleSize` is the number of lanes behind the distribution (its weights
 * may be decayed, so the total weight is passed explicitly).
 */
export type ParametricFitter = (distribution: CategoricalDistribution, sampleSize: number) => readonly ParametricFit[];

/**
 * How the standard error of loss_predicted is computed: `bootstrap` simulates the Poisson
 * bootstrap (bootstrapReplicates replicates, each one evaluation of E[X]); `linearised` is its
 * first-order (delta-method) value, Σ_j c_j·(∂μ/∂c_j)², from the conditional losses of every
 * count value in one quadrature (model lossStandardError, docs/model.md §2f); `auto` (the
 * default) is `linearised`.
 */
export type StandardErrorMethod = 'auto' | 'bootstrap' | 'linearised';

/** What to compute at window close. */
export interface WindowComputeOptions {
  /** Poisson-bootstrap replicates for the interval of loss_predicted; 0 disables it (interval = binning bound only). */
  readonly bootstrapReplicates: number;
  /** How the standard error is computed (default `auto`; see {@link StandardErrorMethod}). */
  readonly standardErrorMethod?: StandardErrorMethod | undefined;
  /** Two-sided confidence level of the interval, e.g. 0.95. */
  readonly confidenceLevel: number;
  /** Group sizes n' of the granularity sweep (model.md §2d). Empty disables the sweep. */
  readonly sweepGroupSizes: readonly number[];
  /** Whether to compute quantiles 0.5/0.9/0.99 of the predicted per-group loss. */
  readonly quantiles: boolean;
  /** Quantiles are exact (model.md §2a) when its estimated work is at most this many operations ... */
  readonly quantileExactWorkLimit: number;
  /** ... else Monte Carlo over this many simulated groups (seeded per stream and window). */
  readonly quantileSamples: number;
  /** Parametric fitter, or undefined when none is available (fit fields are then absent). */
  readonly fitter?: ParametricFitter | undefined;
}

/** The quantities of model.md §2c for one closed window of one stream. */
export interface WindowResult {
  readonly identity: StreamIdentity;
  readonly startMillis: number;
  readonly endMillis: number;
  readonly launches: number;
  readonly groups: number;
  readonly units: number;
  /** μ_A = E[X_W(n)] from the basis distribution; undefined when no lane was observed. */
  readonly lossPredicted: number | undefined;
  /** Interval of μ_A: bootstrap sampling interval widened by the binning error bound. */
  readonly lossPredictedLow: number | undefined;
  readonly lossPredictedHigh: number | undefined;
  /** Standard error of μ_A (0 when the bootstrap is off). */
  readonly lossPredictedStandardError: number | undefined;
  /** How the standard error was computed: Poisson bootstrap simulation, its linearisation, or none (off). */
  readonly standardErrorMethod?: 'bootstrap' | 'linearised' | 'none' | undefined;
  /** μ_S: mean over the window's groups of H from counts. */
  readonly lossCounts: number | undefined;
  /** μ_M: mean over the window's clocked groups of measured C_SIMT/C_MIMD; undefined when no launch of the window was clocked (counts-only frames). */
  readonly lossMeasured: number | undefined;
  /** E[max]/E[W] of the basis distribution. */
  readonly workloadLossPredicted: number | undefined;
  /** ΣC_SIMT / ΣC_MIMD over the window's clocked launches; undefined without clocks. */
  readonly workloadLossMeasured: number | undefined;
  /** η(a, b) = |(a − b)/a| (model.md §2c), named after (a, b). */
  readonly etaPredictedCounts: number | undefined;
  readonly etaCountsMeasured: number | undefined;
  readonly etaPredictedMeasured: number | undefined;
  /** Locality-aware loss (model.md §11) at n from the window's sampled groups, with its interval; undefined without samples. */
  readonly lossLocality?: number | undefined;
  readonly lossLocalityLow?: number | undefined;
  readonly lossLocalityHigh?: number | undefined;
  /** lossPredicted / lossLocality. */
  readonly localityBenefit?: number | undefined;
  /** η(lossLocality if present else lossPredicted, lossMeasured): what the drift alerts compare. */
  readonly etaDrift?: number | undefined;
  /** Two levels (model.md §11a) from block runs: block-level loss with its interval, warps-in-block and warp-level factors; undefined without block runs. */
  readonly lossBlock?: number | undefined;
  readonly lossBlockLow?: number | undefined;
  readonly lossBlockHigh?: number | undefined;
  readonly lossWarpInBlock?: number | undefined;
  readonly lossBlockWarps?: number | undefined;
  readonly lossQ50: number | undefined;
  readonly lossQ90: number | undefined;
  readonly lossQ99: number | undefined;
  /** How the quantiles were computed (the model's method string). */
  readonly quantileMethod: string | undefined;
  /** Absolute bound on |μ_A(true counts) − μ_A(representatives)| from binning; 0 when exact. */
  readonly binningErrorBound: number;
  /** Predicted loss and workload loss for other group sizes. */
  readonly sweep: readonly { readonly groupSize: number; readonly lossPredicted: number; readonly workloadLossPredicted: number }[];
  /** Best parametric fit, or undefined (no fitter, or fitting failed). */
  readonly fit: ParametricFit | undefined;
  /** What the window's GroupSamples frames show (lane idle share, count correlation, divergence-cost fit); undefined without samples. */
  readonly sampled?: SampledGroupsResult | undefined;
  /**
   * The window sums that overflowed (docs/estimator.md, Overflow): the quantities derived from
   * them (loss_counts, loss_measured, workload_loss_measured and the η built on them) are left
   * out (undefined), and the points leave out groups or units when those overflowed; empty for a
   * normal window (absent in results built elsewhere: none).
   */
  readonly overflowedSums?: readonly WindowSum[] | undefined;
  /** The window's own histogram (for warpwatch_histogram): bin low, count, probability. */
  readonly histogram: readonly { readonly low: number; readonly high: number; readonly count: number; readonly probability: number }[];
}

/** η(a, b) = |(a − b)/a| (model/loss/relative-error.ts), undefined when either is missing, a = 0, or the quotient is not finite (a tiny a, a huge b: docs/estimator.md, Overflow). */
export function relativeError(a: number | undefined, b: number | undefined): number | undefined {
  const eta = modelRelativeError(a, b);
  return eta !== undefined && Number.isFinite(eta) ? eta : undefined;
}

function distributionOf(counts: ReadonlyMap<number, number>): CategoricalDistribution {
  return CategoricalDistribution.fromPmf(counts);
}

/**
 * Poisson bootstrap of E[X_W(n)]: each replicate redraws every entry's weight as
 * Poisson(weight) (the large-sample equivalent of a multinomial resample of the lanes, at
 * O(|support|) instead of O(lanes) per replicate) and recomputes the expected loss. The
 * seed is derived from the stream key and window start, so results are reproducible.
 * Lanes are treated as independent draws, which is the model's own assumption.
 */
function bootstrapStandardError(
  counts: ReadonlyMap<number, number>,
  groupSize: number,
  replicates: number,
  seed: number,
): number {
  const random = createSeededRandom(seed);
  const entries = [...counts];
  const values: number[] = [];
  for (let r = 0; r < replicates; r += 1) {
    const resampled = new Map<number, number>();
    for (const [value, weight] of entries) {
      const drawn = poissonDeviate(random, weight);
      if (drawn > 0) resampled.set(value, drawn);
    }
    if (resampled.size === 0) continue;
    values.push(expectedLoss(distributionOf(resampled), groupSize));
  }
  if (values.length < 2) return 0;
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance = values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1);
  return Math.sqrt(variance);
}

/**
 * First-order (delta-method) value of the Poisson-bootstrap standard error of E[X_W(n)]: with
 * μ(c) the expected loss of the normalised weights c and independent c*_j ~ Poisson(c_j),
 * Var μ(c*) ≈ Σ_j c_j·(∂μ/∂c_j)², the derivatives exact from the conditional losses
 * h_j = E[X | W_1 = v_j] (model lossStandardError, docs/model.md §2f): one quadrature,
 * O(nodes·|support|), no seed and no Monte Carlo noise.
 *
 * @param counts value → weight (lanes, possibly decayed), every weight positive.
 * @param groupSize n.
 * @throws ModelError for counts the model refuses (see CategoricalDistribution.fromPmf).
 * @example linearisedStandardError(new Map([[1, 300], [10, 200], [30, 100]]), 32) // ≈ 0.03
 */
export function linearisedStandardError(counts: ReadonlyMap<number, number>, groupSize: number): number {
  let total = 0;
  for (const weight of counts.values()) total += weight;
  if (counts.size < 2 || !(total > 0)) return 0;
  return lossStandardError(distributionOf(counts), groupSize, total);
}

/**
 * Computes everything model.md §2c asks for at the close of one window.
 *
 * @param window the closed window (its sums give loss_counts, loss_measured, workload_loss_measured).
 * @param basis the histogram the prediction is made from (the window's own, or the stream's
 *   current or cumulative distribution, per config).
 * @param cache model answers of bases seen before (optional).
 * @param sweepWindow whether this window is its stream's sweep window (series-points.ts
 *   isSweepWindow; default true): only a sweep window gets the quantiles, the granularity sweep
 *   and the parametric fit (docs/estimator.md, What is computed per window); the other windows
 *   leave them out (undefined, []), the costliest parts of a close on wide histograms.
 * @throws ModelError/RangeError only on malformed input (the model validates it).
 * @example
 * const result = computeWindowResult(identity, window, window.histogram, options);
 */
export function computeWindowResult(
  identity: StreamIdentity,
  window: WindowAccumulation,
  basis: CountHistogram,
  options: WindowComputeOptions,
  cache?: WindowModelCache,
  sweepWindow = true,
): WindowResult {
  const n = identity.groupSize;
  // A sum that overflowed is never used: what derives from it is left out, the rest is written.
  const usable = (field: WindowSum): boolean => !hasOverflowed(window, field);
  const groupsKnown = usable('groups') && window.groups > 0;
  const lossCounts = groupsKnown && usable('sumLossCounts') ? window.sumLossCounts / window.groups : undefined;
  // Measured values come from the clocked launches only (counts-only ones add no clocks: protocol/SPEC.md).
  const lossMeasured =
    usable('clockedGroups') && window.clockedGroups > 0 && usable('sumLossMeasured') ? window.sumLossMeasured / window.clockedGroups : undefined;
  const workloadLossMeasured =
    usable('sumSimtClocks') && usable('sumMimdClocks') && window.sumMimdClocks > 0 ? window.sumSimtClocks / window.sumMimdClocks : undefined;
  const windowTotal = window.histogram.total;
  const histogram = histogramEntries(window.histogram).map((entry) => ({
    low: entry.low,
    high: entry.high,
    count: entry.count,
    probability: windowTotal > 0 ? entry.count / windowTotal : 0,
  }));

  let lossPredicted: number | undefined;
  let lossPredictedLow: number | undefined;
  let lossPredictedHigh: number | undefined;
  let standardError: number | undefined;
  let standardErrorMethod: WindowResult['standardErrorMethod'];
  let workloadLossPredicted: number | undefined;
  let quantileValues: { q50: number; q90: number; q99: number; method: string } | undefined;
  let bound = 0;
  let sweep: WindowResult['sweep'] = [];
  let fit: ParametricFit | undefined;

  const counts = representativeCounts(basis);
  if (basis.total > 0 && counts.size > 0) {
    // What depends only on the basis counts and n comes from the cache when this exact basis
    // was modelled before (docs/estimator.md, Performance); what is seeded per window (bootstrap,
    // Monte Carlo quantiles) is computed every time.
    const key = cache !== undefined && (cache.options === undefined || cache.options === options) ? modelCacheKey(counts, basis.total, n) : undefined;
    let model = key === undefined ? undefined : cache!.entries.get(key);
    let distribution: CategoricalDistribution | undefined;
    if (model !== undefined) {
      // Most recently used last: the oldest entry is the first one evicted.
      cache!.entries.delete(key!);
      cache!.entries.set(key!, model);
      cache!.hits += 1;
    } else {
      distribution = distributionOf(counts);
      model = basisModel(distribution, counts, n, options);
      if (key !== undefined) rememberModel(cache!, key, model, counts.size, options);
    }
    const predicted = model.predicted;
    lossPredicted = predicted;
    workloadLossPredicted = model.workloadLoss;
    bound = binningErrorBound(basis, n, predicted);
    if (options.bootstrapReplicates <= 0) {
      standardError = 0;
      standardErrorMethod = 'none';
    } else if (model.linearisedStandardError !== undefined) {
      standardError = model.linearisedStandardError;
      standardErrorMethod = 'linearised';
    } else {
      const seed = hashString(`${identity.stream}|${identity.device}|${n}|${identity.source}|${window.startMillis}`);
      standardError = bootstrapStandardError(counts, n, options.bootstrapReplicates, seed);
      standardErrorMethod = 'bootstrap';
    }
    const halfWidth = normalQuantileTwoSided(options.confidenceLevel) * standardError + bound;
    lossPredictedLow = Math.max(1, predicted - halfWidth);
    lossPredictedHigh = Math.min(n, predicted + halfWidth);
    if (sweepWindow) {
      // The sweep window's parts: kept with the basis model once computed (a cached basis pays once).
      const detail = (model.detail ??= sweepWindowDetail((distribution ??= distributionOf(counts)), basis.total, n, model, options));
      if (options.quantiles) {
        if (detail.exactQuantiles !== undefined) {
          quantileValues = detail.exactQuantiles;
        } else {
          const seed = hashString(`${identity.stream}|${identity.device}|${n}|${identity.source}|${window.startMillis}`);
          const result = lossQuantiles((distribution ??= distributionOf(counts)), n, [0.5, 0.9, 0.99], {
            method: 'monte-carlo',
            random: createSeededRandom(seed ^ 0x5bd1e995),
            samples: options.quantileSamples,
          });
          quantileValues = { q50: quantileOf(result.quantiles, 0.5), q90: quantileOf(result.quantiles, 0.9), q99: quantileOf(result.quantiles, 0.99), method: result.method };
        }
      }
      sweep = detail.sweep;
      fit = detail.fit;
    }
  }

  const sampled = window.samples === undefined ? undefined : summarizeSampledGroups(window.samples, n);
  const locality = sampled?.locality?.find((row) => row.groupSize === n);
  const zLevel = normalQuantileTwoSided(options.confidenceLevel);
  return {
    identity,
    startMillis: window.startMillis,
    endMillis: window.endMillis,
    launches: window.launches,
    // Finite always: an overflowed groups/units sum keeps its last finite value (listed in overflowedSums; the points leave it out).
    groups: window.groups,
    units: window.units,
    lossPredicted,
    lossPredictedLow,
    lossPredictedHigh,
    lossPredictedStandardError: standardError,
    standardErrorMethod,
    lossCounts,
    lossMeasured,
    workloadLossPredicted,
    workloadLossMeasured,
    etaPredictedCounts: relativeError(lossPredicted, lossCounts),
    etaCountsMeasured: relativeError(lossCounts, lossMeasured),
    etaPredictedMeasured: relativeError(lossPredicted, lossMeasured),
    lossLocality: locality?.loss,
    lossLocalityLow: locality?.standardError === undefined ? undefined : locality.loss - zLevel * locality.standardError,
    lossLocalityHigh: locality?.standardError === undefined ? undefined : locality.loss + zLevel * locality.standardError,
    localityBenefit: locality === undefined || lossPredicted === undefined ? undefined : lossPredicted / locality.loss,
    etaDrift: relativeError(locality?.loss ?? lossPredicted, lossMeasured),
    lossBlock: sampled?.blocks?.blockLoss.value,
    lossBlockLow: blockBound(sampled?.blocks?.blockLoss, -zLevel),
    lossBlockHigh: blockBound(sampled?.blocks?.blockLoss, zLevel),
    lossWarpInBlock: sampled?.blocks?.warpInBlockLoss.value,
    lossBlockWarps: sampled?.blocks?.warpLoss.value,
    lossQ50: quantileValues?.q50,
    lossQ90: quantileValues?.q90,
    lossQ99: quantileValues?.q99,
    quantileMethod: quantileValues?.method,
    binningErrorBound: bound,
    sweep,
    fit,
    sampled,
    overflowedSums: window.overflowed === undefined ? [] : [...window.overflowed],
    histogram,
  };
}

/**
 * The model's answers for one basis that depend only on its representative counts, its total
 * and n (not on the window or the stream): μ_A, E[max]/E[W], the linearised standard error, and
 * (computed the first time a sweep window needs them) exact quantiles, the sweep and the
 * parametric fit. Seeded quantities (bootstrap, Monte Carlo quantiles) are computed per window.
 */
interface BasisModel {
  readonly predicted: number;
  /** Entries of the basis (what the cache's size limit counts). */
  readonly support: number;
  readonly workloadLoss: number;
  /** Set when the standard error is linearised (method `linearised` or `auto`). */
  readonly linearisedStandardError: number | undefined;
  /** The sweep window's parts, once a sweep window of this basis was closed. */
  detail?: SweepWindowDetail;
}

/** What only a sweep window computes of a basis (see computeWindowResult's `sweepWindow`). */
interface SweepWindowDetail {
  /** Set when the quantiles are exact (their work within quantileExactWorkLimit). */
  readonly exactQuantiles: { readonly q50: number; readonly q90: number; readonly q99: number; readonly method: string } | undefined;
  readonly sweep: WindowResult['sweep'];
  readonly fit: ParametricFit | undefined;
}

/**
 * A bounded cache of {@link BasisModel}s keyed by the exact basis (docs/estimator.md,
 * Performance): a stream whose launches repeat one histogram, or many streams of one kernel on
 * one input shape, pay for the model once. Least recently used entries are evicted beyond
 * `capacity` bases or `maxSupport` histogram entries in all (the key text grows with them);
 * a basis of more than maxSupport / 64 entries is not kept. One cache serves one set of WindowComputeOptions (the first it sees); calls with
 * other options bypass it. A hit returns the very numbers the computation returned (same
 * function, same input in the same order), so cached and uncached results are identical bits.
 */
export interface WindowModelCache {
  readonly capacity: number;
  readonly maxSupport: number;
  /** Histogram entries of the bases held. */
  support: number;
  readonly entries: Map<string, BasisModel>;
  options: WindowComputeOptions | undefined;
  hits: number;
  misses: number;
}

/**
 * Creates an empty model cache holding at most `capacity` distinct bases (each ~1 KB) and
 * `maxSupport` histogram entries in all (~12 bytes of key text each).
 *
 * @throws RangeError when capacity or maxSupport is not a positive integer.
 * @example
 * const cache = createWindowModelCache(4096, 262_144);
 * computeWindowResult(identity, window, window.histogram, options, cache);
 */
export function createWindowModelCache(capacity: number, maxSupport: number): WindowModelCache {
  if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`model cache capacity must be a positive integer, got ${capacity}`);
  if (!Number.isInteger(maxSupport) || maxSupport < 1) throw new RangeError(`model cache support limit must be a positive integer, got ${maxSupport}`);
  return { capacity, maxSupport, support: 0, entries: new Map(), options: undefined, hits: 0, misses: 0 };
}

/** Adds a computed model to the cache, evicting the least recently used beyond its limits. */
function rememberModel(cache: WindowModelCache, key: string, model: BasisModel, support: number, options: WindowComputeOptions): void {
  cache.options = options;
  cache.misses += 1;
  if (support > cache.maxSupport / 64) return;
  cache.entries.set(key, model);
  cache.support += support;
  while (cache.entries.size > cache.capacity || cache.support > cache.maxSupport) {
    const [oldestKey, oldest] = cache.entries.entries().next().value!;
    cache.entries.delete(oldestKey);
    cache.support -= oldest.support;
  }
}

/** Exact text of a basis: n, total and every (representative, weight) in the map's order (the order the model consumes them in). */
function modelCacheKey(counts: ReadonlyMap<number, number>, total: number, n: number): string {
  let key = `${n}|${total}|`;
  for (const [value, weight] of counts) key += `${value}:${weight},`;
  return key;
}

/**
 * Computes a {@link BasisModel} (what the cache holds) but its sweep-window parts: μ_A and
 * E[max]/E[W] from one preparation of the distribution each (prepareFastLoss,
 * prepareWorkloadLoss: the same bits as expectedLoss and workloadLoss), and the linearised
 * standard error.
 */
function basisModel(distribution: CategoricalDistribution, counts: ReadonlyMap<number, number>, n: number, options: WindowComputeOptions): BasisModel {
  const predicted = preparedExpectedLoss(prepareFastLoss(distribution), n);
  const workload = preparedWorkloadLoss(prepareWorkloadLoss(distribution), n);
  const method = options.standardErrorMethod ?? 'auto';
  const linearised = options.bootstrapReplicates > 0 && method !== 'bootstrap' ? linearisedStandardError(counts, n) : undefined;
  return { predicted, support: counts.size, workloadLoss: workload, linearisedStandardError: linearised };
}

/**
 * The sweep-window parts of a basis: exact quantiles when their work is within the limit, the
 * granularity sweep (expectedLoss and workloadLoss per size, from one preparation each; the row
 * of the stream's own n is μ_A and E[max]/E[W] of the basis model, the same calls on the same
 * input) and the parametric fit (`total`: the lanes behind the basis).
 */
function sweepWindowDetail(distribution: CategoricalDistribution, total: number, n: number, model: BasisModel, options: WindowComputeOptions): SweepWindowDetail {
  let exactQuantiles: SweepWindowDetail['exactQuantiles'];
  if (options.quantiles && exactCost(distribution, n).operations <= options.quantileExactWorkLimit) {
    const result = lossQuantiles(distribution, n, [0.5, 0.9, 0.99], { method: 'exact' });
    exactQuantiles = { q50: quantileOf(result.quantiles, 0.5), q90: quantileOf(result.quantiles, 0.9), q99: quantileOf(result.quantiles, 0.99), method: result.method };
  }
  let sweep: WindowResult['sweep'] = [];
  if (options.sweepGroupSizes.length > 0) {
    const prepared = prepareFastLoss(distribution);
    const preparedWorkload = prepareWorkloadLoss(distribution);
    sweep = options.sweepGroupSizes.map((size) =>
      size === n
        ? { groupSize: size, lossPredicted: model.predicted, workloadLossPredicted: model.workloadLoss }
        : { groupSize: size, lossPredicted: preparedExpectedLoss(prepared, size), workloadLossPredicted: preparedWorkloadLoss(preparedWorkload, size) },
    );
  }
  let fit: ParametricFit | undefined;
  if (options.fitter !== undefined) {
    const best = options.fitter(distribution, total)[0];
    if (best !== undefined) fit = { family: best.family, parameters: best.parameters, logLikelihood: best.logLikelihood, aic: best.aic };
  }
  return { exactQuantiles, sweep, fit };
}

function quantileOf(quantiles: Readonly<Record<string, number>>, probability: number): number {
  const value = quantiles[String(probability)];
  if (value === undefined) throw new RangeError(`model returned no quantile for p = ${probability}`);
  return value;
}

/** value + z·SE of a block ratio; undefined without one or without its SE. */
function blockBound(ratio: { value: number; standardError: number | undefined } | undefined, z: number): number | undefined {
  return ratio?.standardError === undefined ? undefined : ratio.value + z * ratio.standardError;
}
