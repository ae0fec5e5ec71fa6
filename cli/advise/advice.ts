import {
  binnedGroupingLoss,
  blockLoss,
  fitParametric,
  formatDistributionSpec,
  granularitySweep,
  localityLoss,
  sortedGroupingLoss,
  type CategoricalDistribution,
  type GroupingBin,
} from '../../model/index.ts';

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
  /** Block runs (frames with selection `block`): each sampled block's unit counts in unit order, for the two-level loss (docs/model.md §11a). */
  readonly blocks?: readonly (readonly number[])[] | undefined;
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
  /** Predicted ΣSIMT/ΣMIMD (run-time view) with the option. */
  readonly workloadLoss: number;
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
  readonly sorting: { readonly expectedLoss: number; readonly workloadLoss: number; readonly groups: number; readonly mixedGroups: number };
  readonly binning: readonly {
    readonly k: number;
    readonly expectedLoss: number;
    readonly workloadLoss: number;
    readonly bins: readonly GroupingBin[];
  }[];
  /** Parametric fits, best (smallest AIC) first. */
  readonly fits: readonly { readonly family: string; readonly spec: string; readonly parameters: Readonly<Record<string, number>>; readonly logLikelihood: number; readonly aic: number }[];
  /** Options ranked by predicted loss, best first. */
  readonly options: readonly AdviceOption[];
  /** The short recommendation: a few sentences, most useful first. */
  /**
   * Locality-aware loss (docs/model.md §11) of the runs, per group size that tiles them, with
   * the independent-lanes figure beside it; null without runs (at least 2).
   */
  readonly locality: readonly { readonly n: number; readonly expectedLoss: number; readonly low: number; readonly high: number; readonly independentLoss: number; readonly sortedLoss: number }[] | null;
  /**
   * Two levels (docs/model.md §11a) from block runs at the current group size: the warp-level
   * loss, the warps-in-block factor and the block-level loss (= their product) with its 95 %
   * interval; null or absent without block runs (at least 2 blocks that tile into groups of n).
   */
  readonly blockLevel?: { readonly blocks: number; readonly warpsPerBlock: number; readonly warpLoss: number; readonly warpInBlockLoss: number; readonly blockLoss: number; readonly low: number; readonly high: number } | null;
  readonly recommendation: readonly string[];
}

/** Sample size assumed when fitting a pmf that carries no counts (a family spec as input). */
export const NOMINAL_FIT_SAMPLE_SIZE = 10_000;

/** Loss at or below this is called balanced: a few percent of idle lanes is not worth a redesign. */
export const BALANCED_LOSS = 1.05;

function format(value: number): string {
  return value.toFixed(2);
}

function percentCut(from: number, to: number): string {
  // Share of the idle lane-time removed: (from − to)/(from − 1); the useful view when loss ≥ 1.
  const excess = from - 1;
  return excess > 0 ? `${Math.round((100 * (from - to)) / excess)}% of the idle lane-time` : 'nothing';
}

/**
 * Chooses the tile size to suggest: the largest power of two below n that removes at least
 * half of the predicted excess loss (larger tiles cost less to map work onto); when none
 * does, the one with the lowest loss among n/2, n/4, ... 2 (1 lane per unit is no lockstep).
 */
function chooseTile(granularity: Advice['granularity'], n: number, current: number): { n: number; expectedLoss: number; workloadLoss: number } | undefined {
  const candidates: { n: number; expectedLoss: number; workloadLoss: number }[] = [];
  for (let m = 2; m < n; m *= 2) {
    const row = granularity[m - 1];
    if (row !== undefined) candidates.push(row);
  }
  if (candidates.length === 0) return undefined;
  const halfway = 1 + (current - 1) / 2;
  const good = candidates.filter((row) => row.expectedLoss <= halfway).sort((a, b) => b.n - a.n)[0];
  return good ?? [...candidates].sort((a, b) => a.expectedLoss - b.expectedLoss)[0];
}

/** 'nbinom(1.254,0.05902)': the fitted parameters to 4 significant digits (integers as they are). */
function roundedSpecText(family: string, parameters: Readonly<Record<string, number>>, fallback: string): string {
  const values = Object.values(parameters);
  if (values.length === 0 || values.some((v) => !Number.isFinite(v))) return fallback;
  return `${family}(${values.map((v) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))))).join(',')})`;
}

/**
 * Computes the advice.
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
  if (!Number.isInteger(n) || n < 1 || n > 32) throw new RangeError(`group size must be an integer 1..32, got ${n}`);
  if (!Number.isSafeInteger(request.unitsPerLaunch) || request.unitsPerLaunch < n) {
    throw new RangeError(`units per launch must be an integer >= the group size ${n}, got ${request.unitsPerLaunch}`);
  }
  progress('granularity');
  const granularity = granularitySweep(distribution, Array.from({ length: 32 }, (_, i) => i + 1)).map((row) => ({
    n: row.n,
    expectedLoss: row.expectedLoss,
    workloadLoss: row.workloadLoss,
  }));
  const currentRow = granularity[n - 1];
  if (currentRow === undefined) throw new RangeError(`no granularity row for n = ${n}`);
  const current = {
    expectedLoss: currentRow.expectedLoss,
    workloadLoss: currentRow.workloadLoss,
    observedLossCounts: request.observedLossCounts ?? null,
    observedCountIcc: request.observedCountIcc ?? null,
  };
  const locality = localityRows(request.runs ?? []);
  const blockLevel = blockLevelOf(request);
  progress('sorting');
  const sortingStep = step;
  const sortedResult = sortedGroupingLoss(distribution, n, {
    units: request.unitsPerLaunch,
    onProgress: (done, groups) => request.onProgress?.(`sorting (${done} of ${groups} groups)`, sortingStep, steps),
  });
  const sorting = { expectedLoss: sortedResult.expectedLoss, workloadLoss: sortedResult.workloadLoss, groups: sortedResult.groups, mixedGroups: sortedResult.mixedGroups };
  const binning = binCounts.map((k) => {
    progress(`binning k = ${k}`);
    const result = binnedGroupingLoss(distribution, n, k, { units: request.unitsPerLaunch });
    return { k, expectedLoss: result.expectedLoss, workloadLoss: result.workloadLoss, bins: result.bins };
  });
  // A pmf (a family spec) carries no sample size; AIC then needs one: a nominal 10 000 units.
  progress('fit');
  const fits = fitParametric(distribution, distribution.totalWeight > 1 ? {} : { sampleSize: NOMINAL_FIT_SAMPLE_SIZE }).map((fit) => ({
    family: fit.family,
    spec: roundedSpecText(fit.family, fit.parameters, formatDistributionSpec(fit.spec)),
    parameters: fit.parameters,
    logLikelihood: fit.logLikelihood,
    aic: fit.aic,
  }));

  const options = adviceOptions(request, granularity, current, sorting, binning);
  const recommendation = recommendationLines(request, { current, options, locality, fits });

  return {
    source: request.source,
    distribution: {
      description: distribution.describe(),
      totalWeight: distribution.totalWeight,
      support: distribution.size,
      min: distribution.min,
      max: distribution.max,
      mean: distribution.mean(),
      variance: distribution.variance(),
      pmf: distribution.values.map((value, i) => [value, distribution.probabilities[i] ?? 0] as const),
    },
    groupSize: n,
    unitsPerLaunch: request.unitsPerLaunch,
    granularity,
    current,
    sorting,
    binning,
    fits,
    options,
    locality,
    blockLevel,
    recommendation,
  };
}

/** Locality-aware loss of the kernel's own layout from sampled runs (group sizes 1..32 up to the shortest run), or null with fewer than 2 runs. */
function localityRows(runs: NonNullable<AdviceRequest['runs']>): Advice['locality'] {
  if (runs.length < 2) return null;
  const sizes = [1, 2, 4, 8, 16, 32].filter((size) => size <= Math.min(...runs.map((r) => r.length)));
  return localityLoss(runs, sizes).rows.map((row) => ({
    n: row.groupSize,
    expectedLoss: row.lossContiguous.value,
    low: row.lossContiguous.low,
    high: row.lossContiguous.high,
    independentLoss: row.lossIndependent,
    sortedLoss: row.lossSorted,
  }));
}

/** Warps in blocks (two levels) from the sampled blocks whose length is a multiple of the group size, or null with fewer than 2 of them. */
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

/** The what-ifs (tiles when one helps, sorting, the best binning), each with its sentence, lowest predicted loss first. */
function adviceOptions(
  request: AdviceRequest,
  granularity: Advice['granularity'],
  current: Advice['current'],
  sorting: Advice['sorting'],
  binning: Advice['binning'],
): AdviceOption[] {
  const n = request.groupSize;
  const now = current.expectedLoss;
  const options: AdviceOption[] = [];
  const tile = chooseTile(granularity, n, now);
  if (tile !== undefined) {
    options.push({
      kind: 'tiles',
      parameter: tile.n,
      expectedLoss: tile.expectedLoss,
      workloadLoss: tile.workloadLoss,
      sentence:
        `tiles of ${tile.n} lanes cut the predicted loss from ${format(now)} to ${format(tile.expectedLoss)} ` +
        `(run-time overhead ${format(current.workloadLoss)} → ${format(tile.workloadLoss)}), if each unit can be spread over ${n / tile.n} lanes (${tile.n} units in lockstep instead of ${n})`,
    });
  }
  options.push({
    kind: 'sorting',
    parameter: undefined,
    expectedLoss: sorting.expectedLoss,
    workloadLoss: sorting.workloadLoss,
    sentence:
      `sorting each launch's ${request.unitsPerLaunch} units by their work before grouping cuts the predicted loss from ${format(now)} to ${format(sorting.expectedLoss)} ` +
      `(run-time overhead ${format(current.workloadLoss)} → ${format(sorting.workloadLoss)}); it needs a cheap estimate of each unit's work`,
  });
  const bestBinning = [...binning].sort((a, b) => a.expectedLoss - b.expectedLoss || a.k - b.k)[0];
  if (bestBinning !== undefined) {
    options.push({
      kind: 'binning',
      parameter: bestBinning.k,
      expectedLoss: bestBinning.expectedLoss,
      workloadLoss: bestBinning.workloadLoss,
      sentence:
        `binning units into ${bestBinning.bins.length} work classes (${bestBinning.bins.map((b) => (b.low === b.high ? `${b.low}` : `${b.low}–${b.high}`)).join(', ')}${bestBinning.bins.length < bestBinning.k ? `; ${bestBinning.k} asked, ${bestBinning.bins.length} formed` : ''}) and grouping within a class cuts the predicted loss from ${format(now)} to ${format(bestBinning.expectedLoss)} ` +
        `(run-time overhead ${format(current.workloadLoss)} → ${format(bestBinning.workloadLoss)})`,
    });
  }
  options.sort((a, b) => a.expectedLoss - b.expectedLoss);
  return options;
}

/**
 * The plain-language recommendation: the kernel's own layout when its locality-aware loss
 * differs, whether the work is balanced, the best option and every other that removes at least
 * a quarter of the idle lane-time, a note when the observed groups disagree with independent
 * lanes, and the best fit.
 */
function recommendationLines(
  request: AdviceRequest,
  advice: Pick<Advice, 'current' | 'options' | 'locality' | 'fits'>,
): string[] {
  const { current, options, locality, fits } = advice;
  const n = request.groupSize;
  const now = current.expectedLoss;
  const runs = request.runs ?? [];
  const recommendation: string[] = [];
  // With runs of the kernel's own layout, its locality-aware loss leads when it differs from
  // the independent-lanes figure beyond its interval (neighbouring units do alike work).
  const layout = locality?.find((row) => row.n === n);
  if (layout !== undefined && (layout.high < now || layout.low > now)) {
    recommendation.push(
      `in this kernel's layout groups of ${n} lanes lose ${format(layout.expectedLoss)}× (locality-aware, from ${runs.length} sampled groups; ${Math.round(100 * 0.95)}% interval ${format(layout.low)}–${format(layout.high)}); ` +
        `if work were assigned to lanes at random: ${format(now)}×. The what-ifs below assume random grouping.`,
    );
  }
  if (now <= BALANCED_LOSS) {
    recommendation.push(
      `the work is balanced: groups of ${n} lanes are predicted to lose only ${format(now)}× (${Math.round((now - 1) * 100)}% idle lane-time); no change is worth its cost.`,
    );
  } else {
    recommendation.push(
      `groups of ${n} lanes are predicted to lose ${format(now)}× (mean H; run time ${format(current.workloadLoss)}× an ideal machine that never idles).`,
    );
    const [best, ...rest] = options;
    if (best !== undefined) {
      recommendation.push(`best: ${best.sentence} — removes ${percentCut(now, best.expectedLoss)}.`);
      // Every other option that removes at least a quarter of the idle lane-time is worth naming:
      // they differ in what they cost (a work estimate, a remapping of units to lanes).
      for (const other of rest) {
        if (other.expectedLoss < now - 0.25 * (now - 1)) recommendation.push(`also: ${other.sentence} — removes ${percentCut(now, other.expectedLoss)}.`);
      }
    }
  }
  const observed = current.observedLossCounts;
  if (observed !== null && Math.abs(now - observed) > 0.1 * now) {
    // docs/model.md §2c: loss_predicted vs loss_counts differs when lanes of a group are not independent.
    recommendation.push(
      `note: the measured groups lost ${format(observed)}× by their counts, not the ${format(now)}× predicted for independent lanes: units in one group have ${observed < now ? 'similar' : 'dissimilar'} work${current.observedCountIcc === null ? '' : ` (intra-group correlation of counts in sampled groups: ${current.observedCountIcc.toFixed(2)})`}, and the what-ifs above assume random grouping.`,
    );
  } else if (current.observedCountIcc !== null && current.observedCountIcc > 0.2) {
    recommendation.push(
      `note: sampled groups show an intra-group correlation of counts of ${current.observedCountIcc.toFixed(2)}: units in one group have similar work, so the what-ifs above (random grouping) may overstate what sorting or binning gains.`,
    );
  }
  const fit = fits[0];
  if (fit !== undefined) recommendation.push(`the counts look like ${fit.spec} (best of ${fits.length} families by AIC ${fit.aic.toFixed(1)}).`);
  return recommendation;
}
