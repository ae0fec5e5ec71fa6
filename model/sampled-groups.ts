import { addDivergenceObservation, createDivergenceMoments, divergenceObservationOfGroup, SAMPLED_GROUP_DIVERGENCE_FIT, solveDivergenceMoments } from './divergence-fit.ts';
import { ratioOfConstantDenominator } from './locality-loss.ts';
import { mergeRegressionMoments, type RegressionMoments } from './streaming-regression.ts';

/**
 * The sampled-group statistics (GroupSamples frames: per-lane counts and finish clocks of a
 * sampled subset of groups, model.md §3), as mergeable sums and moments that give
 *
 * - the measured and count-based loss of the sampled groups themselves (a check of the
 *   device-side sums of the LaunchSummary, on a sample),
 * - the lane idle fraction 1 − ΣC_MIMD/ΣC_SIMT (share of lane time spent waiting for the
 *   group's deepest lane),
 * - the intra-group correlation of iteration counts (one-way ANOVA ICC): > 0 means the lanes
 *   of a group get similar work, which is why loss_counts (μ_S) can sit below
 *   loss_predicted (μ_A, independent lanes) — the finding of model.md §2c, quantified,
 * - the divergence-cost fit (model.md §4) on the sampled groups, the one model for sampled
 *   groups ({@link SAMPLED_GROUP_DIVERGENCE_FIT}, divergence-fit.ts):
 *   (c_end − c0) ≈ c + T·issued + δ·D(w) + s·spills, with the reconvergence-stack emulator's
 *   features per group; T, δ, s in clock ticks (SM cycles on CUDA, ns on the CPU backend),
 *   reported unconstrained with their standard errors. `warpwatch analyze` fits the same
 *   moments the same way.
 *
 * The estimator keeps one accumulation per window (and checkpoints it), `warpwatch analyze`
 * and `advise` one per stream. Plain JSON-friendly objects.
 */

/** One sampled group of a GroupSamples frame: counts and clock offsets relative to the group start c0. */
export interface SampledGroupInput {
  /** w_i per lane. */
  readonly laneCounts: readonly number[];
  /** c_i − c0 per lane, clock ticks (negative when the clock ran backwards: counted invalid). */
  readonly laneFinishTicks: readonly number[];
  /** c_end − c0, clock ticks. */
  readonly durationTicks: number;
}

/** Mergeable accumulation of the sampled groups of one window. */
export interface SampledGroupsAccumulation {
  /** Sampled groups recorded. */
  groups: number;
  /** Sampled groups left out: end clock before start clock, a lane finish clock before c0, counts that are not safe integers, or lane arrays of different lengths. */
  invalidGroups: number;
  /** Lanes of the recorded groups. */
  lanes: number;
  /** Σ over groups of measured H = C_SIMT/C_MIMD (1 when C_MIMD = 0). */
  sumLossMeasured: number;
  /** Σ over groups of H from counts = n·max(w)/Σw (1 when all counts are 0). */
  sumLossCounts: number;
  /** Σ C_SIMT = n·(c_end − c0), ticks. */
  sumSimtClocks: number;
  /** Σ C_MIMD = Σ_i (c_i − c0), ticks. */
  sumMimdClocks: number;
  /** Σ w over lanes; Σ w²; Σ over groups of (Σ_i w_i)²: the one-way ANOVA sums behind the ICC. */
  sumCounts: number;
  sumSquaredCounts: number;
  sumSquaredGroupTotals: number;
  /**
   * Locality (docs/model.md §11): each sampled group is a contiguous run of n lanes; for n and
   * every power of two n′ < n dividing it, Σ over groups of a_r = Σ over the run's consecutive
   * subgroups of n′·max/Σ, and Σ a_r² (keyed by n′). Absent in checkpoints written before it existed.
   */
  locality?: Record<string, { sum: number; sumSquares: number }>;
  /** Streaming regression of (c_end − c0) on the divergence features. */
  divergence: RegressionMoments;
}

/** The divergence-cost fit of one window (clock ticks). */
export interface SampledDivergenceFit {
  /** T: ticks per issued loop iteration. */
  readonly iterationTicks: number;
  /** δ: ticks per diverging exit (undefined when no sampled group diverged differently from the others). */
  readonly deltaTicks: number | undefined;
  readonly deltaStandardError: number | undefined;
  /** Ticks per spill chunk; undefined when no sampled group spilled. */
  readonly spillTicks: number | undefined;
  /** c: per-group constant overhead, ticks. */
  readonly overheadTicks: number;
  readonly rSquared: number;
  readonly groups: number;
}

/** What a window reports about its sampled groups. */
export interface SampledGroupsResult {
  readonly groups: number;
  readonly invalidGroups: number;
  /** Mean measured H of the sampled groups. */
  readonly lossMeasured: number;
  /** Mean H from counts of the sampled groups. */
  readonly lossCounts: number;
  /** 1 − ΣC_MIMD/ΣC_SIMT: share of lane time spent idle, waiting at the group's end; undefined when no time was measured. */
  readonly laneIdleFraction: number | undefined;
  /** Intra-group correlation of iteration counts (one-way ANOVA estimator, may be slightly < 0); undefined with < 2 groups, n < 2 or no variation. */
  readonly countIcc: number | undefined;
  /** Divergence-cost fit; undefined when the samples cannot identify T (fewer than 5 groups, or no variation in the issued iterations). */
  readonly divergence: SampledDivergenceFit | undefined;
  /**
   * Locality-aware loss (docs/model.md §11) of the sampled groups as contiguous runs: at the
   * stream's n (the sampled groups' mean H) and at every power of two n′ < n dividing it, with
   * the ratio estimator's standard error over groups (undefined with fewer than 2 groups);
   * empty for accumulations restored from checkpoints written before it existed.
   */
  readonly locality?: readonly { readonly groupSize: number; readonly loss: number; readonly standardError: number | undefined }[];
}


/**
 * An empty accumulation.
 *
 * @example const samples = createSampledGroups();
 */
export function createSampledGroups(): SampledGroupsAccumulation {
  return {
    groups: 0,
    invalidGroups: 0,
    lanes: 0,
    sumLossMeasured: 0,
    sumLossCounts: 0,
    sumSimtClocks: 0,
    sumMimdClocks: 0,
    sumCounts: 0,
    sumSquaredCounts: 0,
    sumSquaredGroupTotals: 0,
    divergence: createDivergenceMoments(),
  };
}

/**
 * Records one sampled group (mutates `samples`). A group whose clocks cannot be right (end
 * before start, non-finite values, counts that are not non-negative safe integers, lane
 * arrays of different lengths) is counted in `invalidGroups` and otherwise ignored: a bad
 * sample never throws.
 *
 * @example recordSampledGroup(samples, { laneCounts: [4, 4, 3, 2], laneFinishTicks: [40, 41, 30, 20], durationTicks: 45 });
 */
export function recordSampledGroup(samples: SampledGroupsAccumulation, group: SampledGroupInput): void {
  const n = group.laneCounts.length;
  const duration = group.durationTicks;
  const valid =
    n > 0 &&
    group.laneFinishTicks.length === n &&
    Number.isFinite(duration) &&
    duration >= 0 &&
    group.laneCounts.every((w) => Number.isSafeInteger(w) && w >= 0) &&
    group.laneFinishTicks.every((c) => Number.isFinite(c) && c >= 0);
  if (!valid) {
    samples.invalidGroups += 1;
    return;
  }
  let total = 0;
  let max = 0;
  let squares = 0;
  for (const w of group.laneCounts) {
    total += w;
    squares += w * w;
    if (w > max) max = w;
  }
  let mimd = 0;
  for (const c of group.laneFinishTicks) mimd += c;
  const simt = n * duration;
  samples.groups += 1;
  samples.lanes += n;
  samples.sumLossMeasured += mimd === 0 ? 1 : simt / mimd;
  samples.sumLossCounts += total === 0 ? 1 : (n * max) / total;
  samples.sumSimtClocks += simt;
  samples.sumMimdClocks += mimd;
  samples.sumCounts += total;
  samples.sumSquaredCounts += squares;
  samples.sumSquaredGroupTotals += total * total;
  const locality = (samples.locality ??= {});
  const subs: number[] = [];
  for (let sub = 1; sub < n; sub *= 2) if (n % sub === 0) subs.push(sub);
  subs.push(n);
  for (const sub of subs) {
    let a = 0;
    for (let start = 0; start < n; start += sub) {
      let subMax = 0;
      let subTotal = 0;
      for (let i = start; i < start + sub; i++) {
        const w = group.laneCounts[i]!;
        if (w > subMax) subMax = w;
        subTotal += w;
      }
      a += subTotal === 0 ? 1 : (sub * subMax) / subTotal;
    }
    const entry = (locality[String(sub)] ??= { sum: 0, sumSquares: 0 });
    entry.sum += a;
    entry.sumSquares += a * a;
  }
  addDivergenceObservation(samples.divergence, divergenceObservationOfGroup(group.laneCounts, duration));
}

/**
 * A new accumulation holding both (neither changes).
 *
 * @example const both = mergeSampledGroups(a, b);
 */
export function mergeSampledGroups(a: SampledGroupsAccumulation, b: SampledGroupsAccumulation): SampledGroupsAccumulation {
  return {
    groups: a.groups + b.groups,
    invalidGroups: a.invalidGroups + b.invalidGroups,
    lanes: a.lanes + b.lanes,
    sumLossMeasured: a.sumLossMeasured + b.sumLossMeasured,
    sumLossCounts: a.sumLossCounts + b.sumLossCounts,
    sumSimtClocks: a.sumSimtClocks + b.sumSimtClocks,
    sumMimdClocks: a.sumMimdClocks + b.sumMimdClocks,
    sumCounts: a.sumCounts + b.sumCounts,
    sumSquaredCounts: a.sumSquaredCounts + b.sumSquaredCounts,
    sumSquaredGroupTotals: a.sumSquaredGroupTotals + b.sumSquaredGroupTotals,
    locality: mergeLocality(a.locality, b.locality),
    divergence: mergeRegressionMoments(a.divergence, b.divergence),
  };
}

function mergeLocality(a: SampledGroupsAccumulation['locality'], b: SampledGroupsAccumulation['locality']): SampledGroupsAccumulation['locality'] {
  const merged: Record<string, { sum: number; sumSquares: number }> = {};
  for (const part of [a ?? {}, b ?? {}]) {
    for (const [key, value] of Object.entries(part)) {
      const entry = (merged[key] ??= { sum: 0, sumSquares: 0 });
      entry.sum += value.sum;
      entry.sumSquares += value.sumSquares;
    }
  }
  return merged;
}

/** A deep copy. */
export function cloneSampledGroups(samples: SampledGroupsAccumulation): SampledGroupsAccumulation {
  return { ...samples, locality: mergeLocality(samples.locality, undefined), divergence: { ...samples.divergence, means: [...samples.divergence.means], comoments: [...samples.divergence.comoments] } };
}

/** Fewest sampled groups the divergence fit is attempted on (4 parameters + 1). */
export const MIN_DIVERGENCE_FIT_GROUPS = 5;

/**
 * Intra-class correlation of the counts for groups of `groupSize` lanes (one-way ANOVA):
 * (MSB − MSW)/(MSB + (n − 1)·MSW).
 */
function countIcc(samples: SampledGroupsAccumulation, groupSize: number): number | undefined {
  const g = samples.groups;
  const n = groupSize;
  if (g < 2 || n < 2 || samples.lanes !== g * n) return undefined;
  const between = samples.sumSquaredGroupTotals / n - (samples.sumCounts * samples.sumCounts) / (g * n);
  const within = samples.sumSquaredCounts - samples.sumSquaredGroupTotals / n;
  const msb = Math.max(0, between) / (g - 1);
  const msw = Math.max(0, within) / (g * (n - 1));
  const denominator = msb + (n - 1) * msw;
  return denominator > 0 ? (msb - msw) / denominator : undefined;
}

/**
 * What the window reports about its sampled groups; undefined when none were recorded.
 *
 * @param groupSize the stream's n (lanes per group).
 * @example const sampled = summarizeSampledGroups(window.samples, 32);
 */
export function summarizeSampledGroups(samples: SampledGroupsAccumulation, groupSize: number): SampledGroupsResult | undefined {
  if (samples.groups === 0) return undefined;
  let divergence: SampledDivergenceFit | undefined;
  if (samples.divergence.count >= MIN_DIVERGENCE_FIT_GROUPS) {
    const fit = solveDivergenceMoments(samples.divergence, SAMPLED_GROUP_DIVERGENCE_FIT);
    if (fit.iterationCycles !== undefined) {
      divergence = {
        iterationTicks: fit.iterationCycles,
        deltaTicks: fit.deltaCycles,
        deltaStandardError: fit.deltaCycles === undefined ? undefined : fit.standardErrors?.deltaCycles,
        spillTicks: fit.spillCycles,
        overheadTicks: fit.overheadCycles,
        rSquared: fit.rSquared,
        groups: fit.observations,
      };
    }
  }
  return {
    groups: samples.groups,
    invalidGroups: samples.invalidGroups,
    lossMeasured: samples.sumLossMeasured / samples.groups,
    lossCounts: samples.sumLossCounts / samples.groups,
    laneIdleFraction: samples.sumSimtClocks > 0 ? 1 - samples.sumMimdClocks / samples.sumSimtClocks : undefined,
    countIcc: countIcc(samples, groupSize),
    divergence,
    locality: localityOf(samples, groupSize),
  };
}

/** The locality-aware loss at each recorded n′ (ratio estimator over sampled groups, model/locality-loss.ts). */
function localityOf(samples: SampledGroupsAccumulation, groupSize: number): SampledGroupsResult['locality'] {
  const g = samples.groups;
  const rows: { groupSize: number; loss: number; standardError: number | undefined }[] = [];
  for (const [key, entry] of Object.entries(samples.locality ?? {})) {
    const sub = Number(key);
    const estimate = ratioOfConstantDenominator(entry.sum, entry.sumSquares, g, groupSize / sub);
    rows.push({ groupSize: sub, loss: estimate.value, standardError: Number.isFinite(estimate.standardError) ? estimate.standardError : undefined });
  }
  return rows.sort((x, y) => x.groupSize - y.groupSize);
}
