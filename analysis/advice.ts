import {
  binnedGroupingLoss,
  blockLoss,
  fitParametric,
  formatDistributionSpec,
  granularitySweep,
  idleLaneShare,
  localityLoss,
  runPolicyLoss,
  sortedGroupingLoss,
  traceLocalityLoss,
  DEFAULT_PREPASS_STRIDE,
  type CategoricalDistribution,
  type GroupingBin,
} from '../model/index.ts';

/**
 * `warpwatch advise`: from one iteration-count distribution, the design what-ifs of
 * docs/model.md §2d (granularity, sorting, binning, parametric fit) and a short plain-language
 * recommendation. Pure: the distribution comes in, numbers and sentences go out.
 */

/** What the advice is computed for. */
export interface AdviceRequest {
  readonly distribution: CategoricalDistribution;
  /** Where the distribution came from, for the output ('counts:FILE', 'stream job/kernel', ...). */
  readonly source: string;
  /** The group size the kernel uses now (lanes in lockstep), 1..32. */
  readonly groupSize: number;
  /** Units of one launch (what is sorted or binned at once). */
  readonly unitsPerLaunch: number;
  /** Bin counts k to evaluate for binning. */
  readonly binCounts: readonly number[];
  /** Mean H the source observed at this group size (loss_counts), if it measured groups. */
  readonly observedLossCounts?: number | undefined;
  /** Intra-group correlation of iteration counts the source saw in sampled groups, if any. */
  readonly observedCountIcc?: number | undefined;
  /** Contiguous runs of unit counts in unit order (the sampled groups of frames), for the locality-aware loss. */
  readonly runs?: readonly (readonly number[])[] | undefined;
  /** The runs grouped by launch (sorting and binning on the runs' units sort within a launch); default: all runs one launch. */
  readonly runsByLaunch?: readonly (readonly (readonly number[])[])[] | undefined;
  /** A per-unit counts trace in unit order (`--trace`): the layout loss of every n′ that divides its length (docs/model.md §11c), and the what-ifs on its units. */
  readonly trace?: readonly number[] | undefined;
  /** Units per pre-pass block of the estimated sorting and binning on the runs' units (default 4; docs/model.md §11b). */
  readonly prepassStride?: number | undefined;
  /** Block runs (frames with selection `block`): each sampled block's unit counts in unit order, for the two-level loss (docs/model.md §11a). */
  readonly blocks?: readonly (readonly number[])[] | undefined;
  /** What the kernel already does (e.g. 'sorting' for a run recorded with `--sorted`): options of these kinds are never recommended. */
  readonly alreadyApplied?: readonly AdviceOption['kind'][] | undefined;
  /**
   * Called before each step ('granularity', 'sorting', 'binning k = 4', 'fit') with its 1-based
   * index and the step count, and again within a long step with the same index and the step's
   * progress in the name ('sorting (12 of 128 groups)').
   */
  readonly onProgress?: ((step: string, index: number, steps: number) => void) | undefined;
}

/** One what-if option with its predicted effect at the current group size. */
export interface AdviceOption {
  /** 'tiles' | 'sorting' | 'binning'. */
  readonly kind: 'tiles' | 'sorting' | 'binning';
  /** Tile size (tiles) or bin count (binning); undefined for sorting. */
  readonly parameter: number | undefined;
  /** Predicted mean loss E[X] with the option. */
  readonly expectedLoss: number;
  /** Predicted ΣC_SIMT/ΣC_MIMD with the option: the run-time overhead, what the options are ranked by. */
  readonly workloadLoss: number;
  /** Idle lane time with the option, 1 − 1/workloadLoss (model/loss/idle-lane-share.ts); NaN when unknown. */
  readonly idleLaneShare: number;
  /** One plain sentence with the numbers. */
  readonly sentence: string;
}

/** Everything advise reports. */
export interface Advice {
  readonly source: string;
  readonly distribution: {
    readonly description: string;
    /** Σ counts (units observed) for counts input; 1 for a pmf. */
    readonly totalWeight: number;
    readonly support: number;
    readonly min: number;
    readonly max: number;
    readonly mean: number;
    readonly variance: number;
    /** [value, probability] pairs, ascending. */
    readonly pmf: readonly (readonly [number, number])[];
  };
  readonly groupSize: number;
  readonly unitsPerLaunch: number;
  /** Predicted loss for every group size 1..32 (docs/model.md §2d granularity). */
  readonly granularity: readonly { readonly n: number; readonly expectedLoss: number; readonly workloadLoss: number }[];
  /** The loss now, at the current group size (predicted; observed loss_counts when the source measured it). */
  readonly current: {
    readonly expectedLoss: number;
    readonly workloadLoss: number;
    readonly observedLossCounts: number | null;
    /** Intra-group correlation of counts in the sampled groups (null when the source had none). */
    readonly observedCountIcc: number | null;
  };
  /**
   * What the options start from: the run-time overhead now (ΣC_SIMT/ΣC_MIMD, the layout's when its
   * loss leads, else the independent-lanes prediction) and its idle lane time 1 − 1/overhead.
   */
  readonly now: { readonly workloadLoss: number; readonly idleLaneShare: number };
  readonly sorting: { readonly expectedLoss: number; readonly workloadLoss: number; readonly groups: number; readonly mixedGroups: number };
  readonly binning: readonly {
    readonly k: number;
    readonly expectedLoss: number;
    readonly workloadLoss: number;
    readonly bins: readonly GroupingBin[];
  }[];
  /** Parametric fits, best (smallest AIC) first. */
  readonly fits: readonly { readonly family: string; readonly spec: string; readonly parameters: Readonly<Record<string, number>>; readonly logLikelihood: number; readonly aic: number }[];
  /** Options ranked by run-time overhead (workloadLoss, ΣC_SIMT/ΣC_MIMD), then by the per-group mean loss; best first. */
  readonly options: readonly AdviceOption[];
  /**
   * Locality-aware loss (docs/model.md §11) of the runs, per group size that tiles them, with
   * the independent-lanes figure beside it; null without runs (at least 2).
   */
  readonly locality: readonly { readonly n: number; readonly expectedLoss: number; readonly low: number; readonly high: number; readonly workloadLoss: number; readonly independentLoss: number; readonly sortedLoss: number }[] | null;
  /**
   * Two levels (docs/model.md §11a) from block runs at the current group size: the warp-level
   * loss, the warps-in-block factor and the block-level loss (= their product) with its 95 %
   * interval; null or absent without block runs (at least 2 blocks that tile into groups of n).
   */
  readonly blockLevel?: { readonly blocks: number; readonly warpsPerBlock: number; readonly warpLoss: number; readonly warpInBlockLoss: number; readonly blockLoss: number; readonly low: number; readonly high: number } | null;
  /**
   * Sorting and binning at the current n evaluated on the units of the runs (or the trace),
   * within each launch (docs/model.md §11b): `exact` orders units by their counts (an exact
   * work estimate), `estimated` by a coarse pre-pass estimate (one unit in `stride` computed,
   * the rest interpolated) with its 95 % jackknife interval; null without runs.
   */
  readonly onRuns: {
    readonly units: number;
    readonly runs: number;
    readonly stride: number;
    /** The layout's loss at the current n (the baseline of these what-ifs), when the runs tile n. */
    readonly layoutLoss: number | null;
    readonly sorting: RunPolicyFigures;
    readonly binning: readonly (RunPolicyFigures & { readonly k: number })[];
  } | null;
  /**
   * The figure the recommendation leads with: the layout's loss at the current n (locality-aware,
   * with its 95 % interval) when runs exist and it differs from the independent-lanes figure
   * beyond its interval, else the independent-lanes prediction; `ifRandom` is always the latter.
   */
  readonly headline: { readonly basis: 'layout' | 'independent-lanes'; readonly expectedLoss: number; readonly low: number | null; readonly high: number | null; readonly ifRandom: number };
  /** The short recommendation: a few sentences, most useful first. */
  readonly recommendation: readonly string[];
}

/** One what-if on the runs' units: exact-estimate and pre-pass-estimate figures. */
export interface RunPolicyFigures {
  readonly exact: number;
  readonly estimated: number;
  readonly low: number;
  readonly high: number;
  readonly workloadLoss: number;
}

/** Sample size assumed when fitting a pmf that carries no counts (a family spec as input). */
export const NOMINAL_FIT_SAMPLE_SIZE = 10_000;

/** Loss at or below this is called balanced: a few percent of idle lanes is not worth a redesign. */
export const BALANCED_LOSS = 1.05;

function format(value: number): string {
  return value.toFixed(2);
}

function percent(share: number): string {
  return Number.isFinite(share) ? `${(100 * share).toFixed(1)}%` : 'n/a';
}

/** 'idle lane time 90.9% → 77.6%': the one definition, 1 − 1/(ΣC_SIMT/ΣC_MIMD) (model/loss/idle-lane-share.ts). */
function idleChange(fromWorkload: number, toWorkload: number): string {
  return `idle lane time ${percent(idleLaneShare(fromWorkload))} → ${percent(idleLaneShare(toWorkload))}`;
}

/** Run-time overhead for ranking: NaN (not known) ranks last. */
function rankable(workloadLoss: number): number {
  return Number.isFinite(workloadLoss) ? workloadLoss : Number.POSITIVE_INFINITY;
}

/**
 * Chooses the tile size to suggest: the largest power of two below n that removes at least
 * half of the excess run-time overhead (ΣC_SIMT/ΣC_MIMD − 1; larger tiles cost less to map work
 * onto); when none does, the one with the lowest overhead among n/2, n/4, ... 2 (1 lane per
 * unit is no lockstep).
 */
function chooseTile(granularity: Advice['granularity'], n: number, currentWorkload: number): { n: number; expectedLoss: number; workloadLoss: number } | undefined {
  const candidates: { n: number; expectedLoss: number; workloadLoss: number }[] = [];
  for (let m = 2; m < n; m *= 2) {
    const row = granularity[m - 1];
    if (row !== undefined) candidates.push(row);
  }
  if (candidates.length === 0) return undefined;
  const halfway = 1 + (currentWorkload - 1) / 2;
  const good = candidates.filter((row) => row.workloadLoss <= halfway).sort((a, b) => b.n - a.n)[0];
  return good ?? [...candidates].sort((a, b) => rankable(a.workloadLoss) - rankable(b.workloadLoss) || a.expectedLoss - b.expectedLoss)[0];
}

/** 'nbinom(1.254,0.05902)': the fitted parameters to 4 significant digits (integers as they are). */
function roundedSpecText(family: string, parameters: Readonly<Record<string, number>>, fallback: string): string {
  const values = Object.values(parameters);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v))) return fallback;
  return `${family}(${values.map((v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))))).join(',')})`;
}

/**
 * Computes the advice. The steps run in this order, `onProgress` told before each long one:
 * the granularity sweep and the loss now ({@link granularityRows}, {@link currentLoss}), the
 * layout's own loss from runs or a trace ({@link localityRows}, {@link blockLevelOf}), sorting,
 * binning per k and the parametric fits on the distribution, the what-ifs on the runs' units
 * ({@link whatIfsOnRuns}); then the figure the what-ifs start from ({@link baselineOf}), the
 * ranked options ({@link adviceOptions}) and the recommendation ({@link recommendationLines}).
 *
 * @throws RangeError (ModelError) when the group size is outside 1..32, a bin count outside
 *   1..1024, or units per launch below the group size.
 * @example
 * const advice = computeAdvice({ distribution, source: 'counts:c.json', groupSize: 32, unitsPerLaunch: 1 << 20, binCounts: [2, 4, 8] });
 * advice.recommendation[0]; // 'tiles of 8 lanes cut the predicted loss from 2.37 to 1.86 ...'
 */
export function computeAdvice(request: AdviceRequest): Advice {
  const { distribution, groupSize: n } = request;
  const binCounts = [...new Set(request.binCounts)].sort((a, b) => a - b);
  const steps = 3 + binCounts.length;
  let step = 0;
  const progress = (name: string): void => request.onProgress?.(name, ++step, steps);
  checkRequest(request);
  progress('granularity');
  const granularity = granularityRows(distribution);
  const current = currentLoss(request, granularity);
  const runs = unitRuns(request);
  const locality = localityRows(runs, request.trace);
  const blockLevel = blockLevelOf(request);
  progress('sorting');
  const sortingStep = step;
  const sorting = sortingWhatIf(request, (done, groups) => request.onProgress?.(`sorting (${done} of ${groups} groups)`, sortingStep, steps));
  const binning = binCounts.map((k) => {
    progress(`binning k = ${k}`);
    return binningWhatIf(request, k);
  });
  progress('fit');
  const fits = parametricFits(distribution);
  const onRuns = whatIfsOnRuns(request, runs, binCounts, locality);
  const baseline = baselineOf(n, current, locality);
  const options = adviceOptions(request, baseline, { granularity, sorting, binning, locality, onRuns });
  const recommendation = recommendationLines(request, baseline, { options, onRuns, fits, runs });
  return {
    source: request.source,
    distribution: distributionSummary(distribution),
    groupSize: n,
    unitsPerLaunch: request.unitsPerLaunch,
    granularity,
    current,
    sorting,
    binning,
    fits,
    now: { workloadLoss: baseline.nowWorkload, idleLaneShare: idleLaneShare(baseline.nowWorkload) },
    options,
    locality,
    blockLevel,
    onRuns,
    headline: headlineOf(baseline),
    recommendation,
  };
}

/** One row of {@link Advice.locality}: the layout's locality-aware loss at one group size. */
type LocalityRow = NonNullable<Advice['locality']>[number];

/** The what-ifs on the runs' units ({@link Advice.onRuns}) when there are runs to evaluate them on. */
type WhatIfsOnRuns = NonNullable<Advice['onRuns']>;

/**
 * The loss the what-ifs start from, shared by the options, the recommendation and the headline.
 * The layout's own loss leads when it differs from the independent-lanes figure beyond its
 * interval (neighbouring units do alike work): the what-ifs then start from it, on the runs' units.
 */
interface Baseline {
  /** The group size now. */
  readonly n: number;
  /** The independent-lanes prediction at n (and what the source observed). */
  readonly current: Advice['current'];
  /** The layout's row at n when its loss leads; undefined when the independent-lanes figure does. */
  readonly leadingLayout: LocalityRow | undefined;
  /** The loss (mean H) the what-ifs cut from: the leading layout's, else the independent-lanes prediction. */
  readonly now: number;
  /** The run-time overhead ΣC_SIMT/ΣC_MIMD the options are ranked against: the leading layout's, else the independent-lanes prediction's. */
  readonly nowWorkload: number;
  /** How the option sentences name the overhead now: 'run-time overhead of this layout' or 'predicted run-time overhead'. */
  readonly lossWord: string;
}

/** Throws a RangeError when the group size is not an integer 1..32 or units per launch not an integer ≥ it. */
function checkRequest(request: AdviceRequest): void {
  const n = request.groupSize;
  if (!Number.isInteger(n) || n < 1 || n > 32) throw new RangeError(`group size must be an integer 1..32, got ${n}`);
  if (!Number.isSafeInteger(request.unitsPerLaunch) || request.unitsPerLaunch < n) {
    throw new RangeError(`units per launch must be an integer >= the group size ${n}, got ${request.unitsPerLaunch}`);
  }
}

/** The distribution as advise reports it: its description, moments and pmf. */
function distributionSummary(distribution: CategoricalDistribution): Advice['distribution'] {
  return {
    description: distribution.describe(),
    totalWeight: distribution.totalWeight,
    support: distribution.size,
    min: distribution.min,
    max: distribution.max,
    mean: distribution.mean(),
    variance: distribution.variance(),
    pmf: distribution.values.map((value, i) => [value, distribution.probabilities[i] ?? 0] as const),
  };
}

/** Predicted loss (mean H and ΣSIMT/ΣMIMD) for independent lanes at every group size 1..32 (docs/model.md §2d). */
function granularityRows(distribution: CategoricalDistribution): Advice['granularity'] {
  return granularitySweep(distribution, Array.from({ length: 32 }, (_, i) => i + 1)).map((row) => ({
    n: row.n,
    expectedLoss: row.expectedLoss,
    workloadLoss: row.workloadLoss,
  }));
}

/** The loss now: the granularity row at the request's group size, with what the source observed (null when it did not). */
function currentLoss(request: AdviceRequest, granularity: Advice['granularity']): Advice['current'] {
  const currentRow = granularity[request.groupSize - 1];
  if (currentRow === undefined) throw new RangeError(`no granularity row for n = ${request.groupSize}`);
  return {
    expectedLoss: currentRow.expectedLoss,
    workloadLoss: currentRow.workloadLoss,
    observedLossCounts: request.observedLossCounts ?? null,
    observedCountIcc: request.observedCountIcc ?? null,
  };
}

/** The runs of unit counts in unit order the layout's loss and the what-ifs on units use: the trace as one run, else the sampled runs. */
function unitRuns(request: AdviceRequest): readonly (readonly number[])[] {
  return request.trace === undefined ? (request.runs ?? []) : [request.trace];
}

/**
 * Locality-aware loss of the kernel's own layout (docs/model.md §11): of a trace at every n up
 * to 32 that its length allows (§11c), else of at least 2 sampled runs at the powers of two up to
 * the shortest run; null without either.
 */
function localityRows(runs: readonly (readonly number[])[], trace: readonly number[] | undefined): Advice['locality'] {
  const rows =
    trace !== undefined
      ? traceLocalityLoss(trace, Array.from({ length: Math.min(32, trace.length) }, (_, i) => i + 1)).rows
      : runs.length >= 2
        ? localityLoss(runs, [1, 2, 4, 8, 16, 32].filter((size) => size <= Math.min(...runs.map((r) => r.length)))).rows
        : undefined;
  return rows !== undefined
    ? rows.map((row) => ({
        n: row.groupSize,
        expectedLoss: row.lossContiguous.value,
        low: row.lossContiguous.low,
        high: row.lossContiguous.high,
        workloadLoss: row.workloadLossContiguous.value,
        independentLoss: row.lossIndependent,
        sortedLoss: row.lossSorted,
      }))
    : null;
}

/** Warps in blocks (two levels, docs/model.md §11a) from the sampled blocks whose length is a multiple of the group size, or null with fewer than 2 of them. */
function blockLevelOf(request: AdviceRequest): NonNullable<Advice['blockLevel']> | null {
  const blocks = (request.blocks ?? []).filter((block) => block.length > 0 && block.length % request.groupSize === 0);
  if (blocks.length < 2) return null;
  const twoLevels = blockLoss(blocks, request.groupSize);
  return {
    blocks: twoLevels.blocks,
    warpsPerBlock: twoLevels.warps / twoLevels.blocks,
    warpLoss: twoLevels.warpLoss.value,
    warpInBlockLoss: twoLevels.warpInBlockLoss.value,
    blockLoss: twoLevels.blockLoss.value,
    low: twoLevels.blockLoss.low,
    high: twoLevels.blockLoss.high,
  };
}

/** Sorting each launch's units by work before grouping, on the distribution (docs/model.md §2d); `onProgress` gets groups done of all. */
function sortingWhatIf(request: AdviceRequest, onProgress: (done: number, groups: number) => void): Advice['sorting'] {
  const result = sortedGroupingLoss(request.distribution, request.groupSize, { units: request.unitsPerLaunch, onProgress });
  return { expectedLoss: result.expectedLoss, workloadLoss: result.workloadLoss, groups: result.groups, mixedGroups: result.mixedGroups };
}

/** Binning each launch's units into k work classes and grouping within a class, on the distribution (docs/model.md §2d). */
function binningWhatIf(request: AdviceRequest, k: number): Advice['binning'][number] {
  const result = binnedGroupingLoss(request.distribution, request.groupSize, k, { units: request.unitsPerLaunch });
  return { k, expectedLoss: result.expectedLoss, workloadLoss: result.workloadLoss, bins: result.bins };
}

/** Parametric fits of the distribution, best (smallest AIC) first, each with its rounded spec text. */
function parametricFits(distribution: CategoricalDistribution): Advice['fits'] {
  // A pmf (a family spec) carries no sample size; AIC then needs one: a nominal 10 000 units.
  return fitParametric(distribution, distribution.totalWeight > 1 ? {} : { sampleSize: NOMINAL_FIT_SAMPLE_SIZE }).map((fit) => ({
    family: fit.family,
    spec: roundedSpecText(fit.family, fit.parameters, formatDistributionSpec(fit.spec)),
    parameters: fit.parameters,
    logLikelihood: fit.logLikelihood,
    aic: fit.aic,
  }));
}

/** The figures advise reports for one what-if on the runs' units. */
function runPolicyFigures(result: ReturnType<typeof runPolicyLoss>): RunPolicyFigures {
  return {
    exact: result.exact,
    estimated: result.estimated.value,
    low: result.estimated.low,
    high: result.estimated.high,
    workloadLoss: result.estimatedWorkloadLoss,
  };
}

/**
 * The what-ifs on the runs' units (docs/model.md §11b): sorting and binning per k within each
 * launch, by exact counts and by a pre-pass estimate; null without a trace or at least 2 runs,
 * or with fewer units than the group size.
 */
function whatIfsOnRuns(
  request: AdviceRequest,
  runs: readonly (readonly number[])[],
  binCounts: readonly number[],
  locality: Advice['locality'],
): WhatIfsOnRuns | null {
  const { trace, groupSize: n } = request;
  const units = runs.reduce((sum, run) => sum + run.length, 0);
  if (!((trace !== undefined || runs.length >= 2) && units >= n)) return null;
  const stride = request.prepassStride ?? DEFAULT_PREPASS_STRIDE;
  const launches = trace !== undefined ? [traceBatches(trace, n * stride)] : (request.runsByLaunch ?? [runs]);
  return {
    units,
    runs: trace !== undefined ? 1 : runs.length,
    stride,
    layoutLoss: locality?.find((row) => row.n === n)?.expectedLoss ?? null,
    sorting: runPolicyFigures(runPolicyLoss(launches, n, { kind: 'sorting' }, { stride })),
    binning: binCounts.map((k) => ({ k, ...runPolicyFigures(runPolicyLoss(launches, n, { kind: 'binning', bins: k }, { stride })) })),
  };
}

/**
 * A trace cut into min(blocks, 30) batches of consecutive whole blocks of `block` units (the
 * last batch also takes a remainder), all of one launch: the independent stretches of
 * docs/model.md §11c, so the what-ifs on a trace get the jackknife interval over batches that
 * sampled runs get (one run has none). Blocks are whole groups and whole pre-pass blocks, so
 * the groups and the pre-pass estimate stay as on the whole trace (except its interpolation
 * across a batch edge). Fewer than 2 blocks: the trace as one run.
 */
function traceBatches(trace: readonly number[], block: number): (readonly number[])[] {
  const blocks = Math.floor(trace.length / block);
  if (blocks < 2) return [trace];
  const batches = Math.min(blocks, 30);
  const out: (readonly number[])[] = [];
  let start = 0;
  for (let b = 0; b < batches; b++) {
    const size = Math.floor(blocks / batches) + (b < blocks % batches ? 1 : 0);
    const end = b === batches - 1 ? trace.length : start + size * block;
    out.push(trace.slice(start, end));
    start = end;
  }
  return out;
}

/** The loss the what-ifs start from: the layout's at n when it differs from the independent-lanes figure beyond its interval, else the latter. */
function baselineOf(n: number, current: Advice['current'], locality: Advice['locality']): Baseline {
  const layout = locality?.find((row) => row.n === n);
  const layoutLeads = layout !== undefined && (layout.high < current.expectedLoss || layout.low > current.expectedLoss);
  return {
    n,
    current,
    leadingLayout: layoutLeads ? layout : undefined,
    now: layoutLeads ? layout.expectedLoss : current.expectedLoss,
    nowWorkload: layoutLeads ? layout.workloadLoss : current.workloadLoss,
    lossWord: layoutLeads ? 'run-time overhead of this layout' : 'predicted run-time overhead',
  };
}

/** The figure the recommendation leads with ({@link Advice.headline}). */
function headlineOf(baseline: Baseline): Advice['headline'] {
  const { leadingLayout: layout, current } = baseline;
  return layout !== undefined
    ? { basis: 'layout', expectedLoss: layout.expectedLoss, low: layout.low, high: layout.high, ifRandom: current.expectedLoss }
    : { basis: 'independent-lanes', expectedLoss: current.expectedLoss, low: null, high: null, ifRandom: current.expectedLoss };
}

/**
 * The what-ifs as options, lowest run-time overhead (ΣC_SIMT/ΣC_MIMD, what a user pays) first,
 * ties by the per-group mean loss: tiles when a smaller group helps, sorting and the best
 * binning, on the runs' units when there are runs, else on the distribution.
 */
function adviceOptions(
  request: AdviceRequest,
  baseline: Baseline,
  whatIfs: Pick<Advice, 'granularity' | 'sorting' | 'binning' | 'locality' | 'onRuns'>,
): AdviceOption[] {
  const options: AdviceOption[] = [];
  const tile = tileOption(baseline, whatIfs.granularity, whatIfs.locality);
  if (tile !== undefined) options.push(tile);
  if (whatIfs.onRuns !== null) options.push(...optionsOnRuns(request, baseline, whatIfs.onRuns));
  else options.push(...optionsOnDistribution(request, baseline, whatIfs.sorting, whatIfs.binning));
  options.sort((a, b) => rankable(a.workloadLoss) - rankable(b.workloadLoss) || a.expectedLoss - b.expectedLoss);
  const applied = new Set(request.alreadyApplied ?? []);
  return options.filter((option) => !applied.has(option.kind));
}

/**
 * Smaller groups ({@link chooseTile}): from the layout's locality-aware loss per group size when
 * it leads (no run-time figure then), else from the independent-lanes granularity sweep.
 */
function tileOption(baseline: Baseline, granularity: Advice['granularity'], locality: Advice['locality']): AdviceOption | undefined {
  const { n, now, nowWorkload, lossWord } = baseline;
  const layoutLeads = baseline.leadingLayout !== undefined;
  const tile = chooseTile(layoutLeads ? layoutTileRows(locality) : granularity, n, nowWorkload);
  if (tile === undefined) return undefined;
  return {
    kind: 'tiles',
    parameter: tile.n,
    expectedLoss: tile.expectedLoss,
    workloadLoss: tile.workloadLoss,
    idleLaneShare: idleLaneShare(tile.workloadLoss),
    sentence:
      `tiles of ${tile.n} lanes cut the ${lossWord} from ${format(nowWorkload)} to ${format(tile.workloadLoss)}` +
      ` (mean per-group loss ${format(now)} → ${format(tile.expectedLoss)}${layoutLeads ? '; consecutive units of this layout, locality-aware' : ''})` +
      `, if each unit can be spread over ${n / tile.n} lanes (${tile.n} units in lockstep instead of ${n})`,
  };
}

/** The layout's locality-aware rows laid out like the granularity sweep (index n − 1; holes where the runs give no row). */
function layoutTileRows(locality: Advice['locality']): Advice['granularity'] {
  return Array.from({ length: 32 }, (_, i) => {
    const row = locality?.find((r) => r.n === i + 1);
    return { n: i + 1, expectedLoss: row?.expectedLoss ?? Number.POSITIVE_INFINITY, workloadLoss: row?.workloadLoss ?? Number.NaN };
  })
    .filter((row) => Number.isFinite(row.expectedLoss))
    .reduce<Advice['granularity'][number][]>((rows, row) => {
      rows[row.n - 1] = row;
      return rows;
    }, []);
}

/** Sorting and the best binning (lowest estimated loss, then smallest k) on the runs' units, by the pre-pass estimate with the exact-work figure beside it. */
function optionsOnRuns(request: AdviceRequest, baseline: Baseline, onRuns: WhatIfsOnRuns): AdviceOption[] {
  const { now, nowWorkload, lossWord } = baseline;
  const where = request.trace !== undefined ? `the trace's ${onRuns.units} units` : `the ${onRuns.units} units of ${onRuns.runs} sampled runs`;
  const prepass = `a coarse pre-pass estimate (one unit in ${onRuns.stride} computed, the rest interpolated)`;
  const sorting = onRuns.sorting;
  const options: AdviceOption[] = [
    {
      kind: 'sorting',
      parameter: undefined,
      expectedLoss: sorting.estimated,
      workloadLoss: sorting.workloadLoss,
      idleLaneShare: idleLaneShare(sorting.workloadLoss),
      sentence:
        `sorting each launch's units by ${prepass} cuts the ${lossWord} from ${format(nowWorkload)} to ${format(sorting.workloadLoss)} (mean per-group loss ${format(now)} → ${format(sorting.estimated)}, 95% interval ${format(sorting.low)}–${format(sorting.high)}); ` +
        `with an exact estimate of each unit's work ${format(sorting.exact)} (both on ${where}, docs/model.md §11b)`,
    },
  ];
  const best = [...onRuns.binning].sort((a, b) => rankable(a.workloadLoss) - rankable(b.workloadLoss) || a.estimated - b.estimated || a.k - b.k)[0];
  if (best !== undefined) {
    options.push({
      kind: 'binning',
      parameter: best.k,
      expectedLoss: best.estimated,
      workloadLoss: best.workloadLoss,
      idleLaneShare: idleLaneShare(best.workloadLoss),
      sentence:
        `binning units into ${best.k} work classes (equal unit shares) by the same pre-pass estimate and grouping within a class cuts the ${lossWord} from ${format(nowWorkload)} to ${format(best.workloadLoss)} (mean per-group loss ${format(now)} → ${format(best.estimated)}, 95% interval ${format(best.low)}–${format(best.high)}); ` +
        `by exact work ${format(best.exact)}`,
    });
  }
  return options;
}

/** Sorting and the best binning (lowest predicted loss, then smallest k) on the distribution, for independent lanes. */
function optionsOnDistribution(request: AdviceRequest, baseline: Baseline, sorting: Advice['sorting'], binning: Advice['binning']): AdviceOption[] {
  const { now, nowWorkload } = baseline;
  const options: AdviceOption[] = [
    {
      kind: 'sorting',
      parameter: undefined,
      expectedLoss: sorting.expectedLoss,
      workloadLoss: sorting.workloadLoss,
      idleLaneShare: idleLaneShare(sorting.workloadLoss),
      sentence:
        `sorting each launch's ${request.unitsPerLaunch} units by their work before grouping cuts the predicted run-time overhead from ${format(nowWorkload)} to ${format(sorting.workloadLoss)} ` +
        `(mean per-group loss ${format(now)} → ${format(sorting.expectedLoss)}); it needs a cheap estimate of each unit's work`,
    },
  ];
  const best = [...binning].sort((a, b) => rankable(a.workloadLoss) - rankable(b.workloadLoss) || a.expectedLoss - b.expectedLoss || a.k - b.k)[0];
  if (best !== undefined) {
    options.push({
      kind: 'binning',
      parameter: best.k,
      expectedLoss: best.expectedLoss,
      workloadLoss: best.workloadLoss,
      idleLaneShare: idleLaneShare(best.workloadLoss),
      sentence:
        `binning units into ${best.bins.length} work classes (${best.bins.map((b) => (b.low === b.high ? `${b.low}` : `${b.low}–${b.high}`)).join(', ')}${best.bins.length < best.k ? `; ${best.k} asked, ${best.bins.length} formed` : ''}) and grouping within a class cuts the predicted run-time overhead from ${format(nowWorkload)} to ${format(best.workloadLoss)} ` +
        `(mean per-group loss ${format(now)} → ${format(best.expectedLoss)})`,
    });
  }
  return options;
}

/**
 * The plain-language recommendation, most useful first: the layout's own loss when it leads,
 * whether the work is balanced or else the best option and every other that removes at least a
 * quarter of the excess run-time overhead, a note when the observed groups disagree with independent
 * lanes, and the best fit.
 */
function recommendationLines(
  request: AdviceRequest,
  baseline: Baseline,
  advice: { readonly options: readonly AdviceOption[]; readonly onRuns: WhatIfsOnRuns | null; readonly fits: Advice['fits']; readonly runs: readonly (readonly number[])[] },
): string[] {
  const { n, current, leadingLayout: layout } = baseline;
  const { onRuns, fits } = advice;
  const recommendation: string[] = [];
  if (layout !== undefined) {
    const from = request.trace !== undefined ? 'the trace' : `${advice.runs.length} sampled groups`;
    recommendation.push(
      `in this kernel's layout groups of ${n} lanes run ${format(layout.workloadLoss)}× as long as a machine that never idles (run-time overhead ΣC_SIMT/ΣC_MIMD; idle lane time ${percent(idleLaneShare(layout.workloadLoss))}; ` +
        `mean per-group loss ${format(layout.expectedLoss)}×, locality-aware, from ${from}, ${Math.round(100 * 0.95)}% interval ${format(layout.low)}–${format(layout.high)}); ` +
        `if work were assigned to lanes at random: ${format(current.workloadLoss)}× (mean per-group loss ${format(current.expectedLoss)}×).` +
        (onRuns === null ? ' The what-ifs below assume random grouping.' : ' The what-ifs below start from the layout and are evaluated on its units.'),
    );
  }
  recommendation.push(...lossLines(baseline, advice.options));
  const note = groupingNote(current, onRuns);
  if (note !== undefined) recommendation.push(note);
  const fit = fits[0];
  if (fit !== undefined) recommendation.push(`the counts look like ${fit.spec} (best of ${fits.length} families by AIC ${fit.aic.toFixed(1)}).`);
  return recommendation;
}

/**
 * The loss now and what to do about it: 'balanced' at or below {@link BALANCED_LOSS} (mean
 * per-group loss); else the run-time overhead (unless the layout line already gave it), the best
 * option when it cuts the run-time overhead, and every other option that removes at least a
 * quarter of the excess overhead; each with the idle lane time it leaves (1 − 1/overhead).
 */
function lossLines(baseline: Baseline, options: readonly AdviceOption[]): string[] {
  const { n, now, nowWorkload } = baseline;
  const layoutLeads = baseline.leadingLayout !== undefined;
  if (now <= BALANCED_LOSS) {
    return [
      `the work is balanced: groups of ${n} lanes ${layoutLeads ? 'lose' : 'are predicted to lose'} only ${format(now)}× (idle lane time ${percent(idleLaneShare(nowWorkload))}); no change is worth its cost.`,
    ];
  }
  const lines: string[] = [];
  if (!layoutLeads) {
    lines.push(
      `groups of ${n} lanes are predicted to run ${format(nowWorkload)}× as long as a machine that never idles (run-time overhead ΣC_SIMT/ΣC_MIMD; idle lane time ${percent(idleLaneShare(nowWorkload))}; mean per-group loss ${format(now)}×).`,
    );
  }
  const [best, ...rest] = options;
  if (best !== undefined && rankable(best.workloadLoss) < nowWorkload) {
    lines.push(`best: ${best.sentence} — ${idleChange(nowWorkload, best.workloadLoss)}.`);
    // Every other option that removes at least a quarter of the excess run-time overhead is worth
    // naming: they differ in what they cost (a work estimate, a remapping of units to lanes).
    for (const other of rest) {
      if (rankable(other.workloadLoss) < nowWorkload - 0.25 * (nowWorkload - 1)) lines.push(`also: ${other.sentence} — ${idleChange(nowWorkload, other.workloadLoss)}.`);
    }
  }
  return lines;
}

/**
 * A note when the measured groups' loss by their counts differs from the independent-lanes
 * prediction by more than 10 % (docs/model.md §2c), or, without runs, when sampled groups show an
 * intra-group correlation of counts above 0.2; undefined otherwise.
 */
function groupingNote(current: Advice['current'], onRuns: WhatIfsOnRuns | null): string | undefined {
  const observed = current.observedLossCounts;
  const predicted = current.expectedLoss;
  const whatIfs = onRuns === null ? 'the what-ifs above assume random grouping' : 'the what-ifs above are evaluated on the sampled units in their layout';
  if (observed !== null && Math.abs(predicted - observed) > 0.1 * predicted) {
    // docs/model.md §2c: loss_predicted vs loss_counts differs when lanes of a group are not independent.
    return `note: the measured groups lost ${format(observed)}× by their counts, not the ${format(predicted)}× predicted for independent lanes: units in one group have ${observed < predicted ? 'similar' : 'dissimilar'} work${current.observedCountIcc === null ? '' : ` (intra-group correlation of counts in sampled groups: ${current.observedCountIcc.toFixed(2)})`}; ${whatIfs}.`;
  }
  if (current.observedCountIcc !== null && current.observedCountIcc > 0.2 && onRuns === null) {
    return `note: sampled groups show an intra-group correlation of counts of ${current.observedCountIcc.toFixed(2)}: units in one group have similar work, so the what-ifs above (random grouping) may overstate what sorting or binning gains.`;
  }
  return undefined;
}
