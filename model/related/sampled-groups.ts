import { createDivergenceMoments, SAMPLED_GROUP_DIVERGENCE_FIT, solveDivergenceMoments } from './divergence-fit.ts';
import { singleLoopSpills } from './reconvergence-stack.ts';
import { ratioOfConstantDenominator } from '../loss/locality-loss.ts';
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
  /**
   * false for a group of a counts-only launch (protocol/SPEC.md, "Counts-only frames": its clocks
   * are all 0, not measured): its counts are used, its clocks are not (no measured loss, no
   * divergence-fit observation). Absent: clocked.
   */
  readonly clocked?: boolean | undefined;
}

/** Mergeable accumulation of the sampled groups of one window. */
export interface SampledGroupsAccumulation {
  /** Sampled groups recorded. */
  groups: number;
  /** Sampled groups left out: end clock before start clock, a lane finish clock before c0, counts that are not safe integers, or lane arrays of different lengths. */
  invalidGroups: number;
  /** Lanes of the recorded groups. */
  lanes: number;
  /** Σ over clocked groups of measured H = C_SIMT/C_MIMD (1 when C_MIMD = 0). */
  sumLossMeasured: number;
  /** Recorded groups with clocks (see SampledGroupInput.clocked); absent in checkpoints written before counts-only groups were told apart (all clocked). */
  clockedGroups?: number;
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
  /**
   * Two levels (docs/model.md §11a) from block runs (selection `block`): per block b with K_b
   * warps of n lanes, warp times t_bj = max count, T_b = max_j t_bj: the ratio sums of
   * warpLoss = Σ n·Σ_j t / Σ w, warpInBlockLoss = Σ K·T / Σ_j t and blockLoss = Σ K·n·T / Σ w
   * (Σ, Σ², Σ cross products over blocks, for the ratio estimator over blocks). Absent without block runs.
   */
  blocks?: BlockSums;
  /** Streaming regression of (c_end − c0) on the divergence features. */
  divergence: RegressionMoments;
}

/** Sums over blocks for the two-level ratios (see SampledGroupsAccumulation.blocks). */
export interface BlockSums {
  count: number;
  warps: number;
  /** Per block: w = Σ counts, nt = n·Σ_j t_bj, t = Σ_j t_bj, kt = K·T, knt = K·n·T. */
  w: number;
  ww: number;
  nt: number;
  ntnt: number;
  ntw: number;
  t: number;
  tt: number;
  kt: number;
  ktkt: number;
  ktt: number;
  knt: number;
  kntknt: number;
  kntw: number;
}

const BLOCK_SUM_KEYS = ['count', 'warps', 'w', 'ww', 'nt', 'ntnt', 'ntw', 't', 'tt', 'kt', 'ktkt', 'ktt', 'knt', 'kntknt', 'kntw'] as const;

/** A ratio Σa/Σb over blocks with the ratio estimator's standard error, from the sums (undefined SE with < 2 blocks). */
export interface BlockRatio {
  readonly value: number;
  readonly standardError: number | undefined;
}

/** What a window reports about its block runs (docs/model.md §11a). */
export interface SampledBlocksResult {
  readonly blocks: number;
  readonly warps: number;
  readonly warpLoss: BlockRatio;
  readonly warpInBlockLoss: BlockRatio;
  readonly blockLoss: BlockRatio;
}

/**
 * Adds one block run (a complete sampled block's unit counts in order, cut into warps of
 * `warpSize` lanes) to the window's block sums (mutates `samples`). A run whose length is not a
 * positive multiple of warpSize, or with a count that is not a non-negative safe integer, is
 * counted in invalidGroups and left out.
 *
 * @example recordSampledBlock(samples, [4, 2, 1, 1], 2); // K = 2 warps, t = (4, 1), T = 4
 */
export function recordSampledBlock(samples: SampledGroupsAccumulation, units: readonly number[], warpSize: number): void {
  const n = warpSize;
  if (!(n >= 1) || units.length === 0 || units.length % n !== 0 || !units.every((w) => Number.isSafeInteger(w) && w >= 0)) {
    samples.invalidGroups += 1;
    return;
  }
  const k = units.length / n;
  let w = 0;
  let t = 0;
  let slowest = 0;
  for (let j = 0; j < k; j++) {
    let max = 0;
    for (let i = j * n; i < (j + 1) * n; i++) {
      const count = units[i]!;
      w += count;
      if (count > max) max = count;
    }
    t += max;
    if (max > slowest) slowest = max;
  }
  const nt = n * t;
  const kt = k * slowest;
  const knt = n * kt;
  const s = (samples.blocks ??= Object.fromEntries(BLOCK_SUM_KEYS.map((key) => [key, 0])) as unknown as BlockSums);
  s.count += 1;
  s.warps += k;
  s.w += w;
  s.ww += w * w;
  s.nt += nt;
  s.ntnt += nt * nt;
  s.ntw += nt * w;
  s.t += t;
  s.tt += t * t;
  s.kt += kt;
  s.ktkt += kt * kt;
  s.ktt += kt * t;
  s.knt += knt;
  s.kntknt += knt * knt;
  s.kntw += knt * w;
}

function mergeBlockSums(a: BlockSums | undefined, b: BlockSums | undefined): BlockSums | undefined {
  if (a === undefined && b === undefined) return undefined;
  const merged = Object.fromEntries(BLOCK_SUM_KEYS.map((key) => [key, (a?.[key] ?? 0) + (b?.[key] ?? 0)])) as unknown as BlockSums;
  return merged;
}

/** Σa/Σb with SE² = R/(R−1)·(Σa² − 2vΣab + v²Σb²)/(Σb)² (model/loss/locality-loss.ts ratioEstimate, from sums). */
function blockRatio(count: number, sa: number, sb: number, saa: number, sab: number, sbb: number): BlockRatio {
  const value = sb > 0 ? sa / sb : 1;
  const residual = Math.max(0, saa - 2 * value * sab + value * value * sbb);
  return { value, standardError: count > 1 && sb > 0 ? Math.sqrt((count / (count - 1)) * residual) / sb : undefined };
}

function blocksOf(samples: SampledGroupsAccumulation): SampledBlocksResult | undefined {
  const s = samples.blocks;
  if (s === undefined || s.count === 0) return undefined;
  return {
    blocks: s.count,
    warps: s.warps,
    warpLoss: blockRatio(s.count, s.nt, s.w, s.ntnt, s.ntw, s.ww),
    warpInBlockLoss: blockRatio(s.count, s.kt, s.t, s.ktkt, s.ktt, s.tt),
    blockLoss: blockRatio(s.count, s.knt, s.w, s.kntknt, s.kntw, s.ww),
  };
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
  /** Mean measured H of the clocked sampled groups; undefined when none was clocked (counts-only frames). */
  readonly lossMeasured: number | undefined;
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
  /** Two levels (docs/model.md §11a) from the window's block runs; undefined without them. */
  readonly blocks?: SampledBlocksResult | undefined;
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
    clockedGroups: 0,
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
  const counts = group.laneCounts;
  const finish = group.laneFinishTicks;
  const n = counts.length;
  const duration = group.durationTicks;
  if (!(n > 0 && finish.length === n && typeof duration === 'number')) {
    samples.invalidGroups += 1;
    return;
  }
  // The lanes go through the columns' path in a one-group scratch. A lane that is not a number
  // is invalid here, as Number.isSafeInteger and Number.isFinite would say of it; the rest of
  // the checks are the columns path's.
  if (oneCounts.length < n) {
    oneCounts = new Float64Array(n);
    oneFinish = new Float64Array(n);
  }
  for (let i = 0; i < n; i++) {
    const w = counts[i];
    const c = finish[i];
    if (typeof w !== 'number' || typeof c !== 'number') {
      samples.invalidGroups += 1;
      return;
    }
    oneCounts[i] = w;
    oneFinish[i] = c;
  }
  recordGroupAt(samples, oneCounts, oneFinish, 0, n, duration, group.clocked !== false);
}

/** Scratch of {@link recordSampledGroup}: one group's lanes as columns. */
let oneCounts = new Float64Array(64);
let oneFinish = new Float64Array(64);

/**
 * Sampled groups in columns: how the estimator reads a GroupSamples frame (into scratch columns
 * reused from frame to frame, instead of two arrays per group). Group g's lane i is at index
 * g·lanes + i of `laneCounts` and `laneFinishTicks`; each field means what it means in
 * {@link SampledGroupInput}. The arrays may be longer than `groups` needs.
 */
export interface SampledGroupColumns {
  /** Groups held. */
  readonly groups: number;
  /** Lanes per group, n. */
  readonly lanes: number;
  /** w_i of every group's lanes (groups·lanes values). */
  readonly laneCounts: Float64Array;
  /** c_i − c0 of every group's lanes, clock ticks (groups·lanes values). */
  readonly laneFinishTicks: Float64Array;
  /** c_end − c0 per group, clock ticks. */
  readonly durationTicks: Float64Array;
  /** Per group: 0 for a counts-only group (SampledGroupInput.clocked false), 1 for a clocked one. */
  readonly clocked: Uint8Array;
}

/**
 * Records the sampled groups held in `columns`, in order (mutates `samples`): the same sums,
 * bits and invalid-group rules as {@link recordSampledGroup} once per group.
 *
 * @example
 * recordSampledGroupColumns(samples, { groups: 1, lanes: 2, laneCounts: Float64Array.of(4, 2), laneFinishTicks: Float64Array.of(40, 20), durationTicks: Float64Array.of(45), clocked: Uint8Array.of(1) });
 */
export function recordSampledGroupColumns(samples: SampledGroupsAccumulation, columns: SampledGroupColumns): void {
  const n = columns.lanes;
  const durations = columns.durationTicks;
  const clocked = columns.clocked;
  for (let g = 0, base = 0; g < columns.groups; g++, base += n) {
    recordGroupAt(samples, columns.laneCounts, columns.laneFinishTicks, base, n, durations[g]!, clocked[g] !== 0);
  }
}

/**
 * Records the group whose n lanes are counts[base … base + n) and finish[base … base + n): a
 * group whose values cannot be right (n = 0, a count that is not a non-negative safe integer, a
 * finish offset or duration that is negative or not finite) is counted in `invalidGroups`.
 */
function recordGroupAt(samples: SampledGroupsAccumulation, counts: Float64Array, finish: Float64Array, base: number, n: number, duration: number, clocked: boolean): void {
  if (!(n > 0 && Number.isFinite(duration) && duration >= 0)) {
    samples.invalidGroups += 1;
    return;
  }
  // One pass over the counts does the checks, the sums (in lane order: the order of the sums is
  // the order of their bits, docs/estimator.md "The engine's hot path"), the maximum, the
  // distinct values below SEEN_BOUND, and the locality sums of sub-groups of 2, 4, 8, 16 and 32
  // lanes: n lanes read once, not once per statistic. Each sub-group's maximum and total come
  // from its two halves when its last lane is read (a carry from level to level, held in the
  // variables below), and each level's sum a_n′ adds its sub-groups in ascending order: the
  // same bits as recordLocalityDirect (the totals are safe integers, exact in any order).
  if (stamp === 0xffffffff) {
    seenStamp.fill(0);
    stamp = 0;
  }
  stamp += 1;
  const mark = stamp;
  const seen = seenStamp;
  const end = base + n;
  let valid = true;
  let total = 0;
  let max = 0;
  let squares = 0;
  let distinct = 0;
  let large = false;
  let left = 0;
  // The first half (maximum, total) of the sub-group of 4, 8 and 16 lanes being read.
  let max2 = 0;
  let total2 = 0;
  let max4 = 0;
  let total4 = 0;
  let max8 = 0;
  let total8 = 0;
  let max16 = 0;
  let total16 = 0;
  // a_n′ = Σ over complete sub-groups of n′ lanes of n′·max/total (1 for an empty one). The
  // levels are written out one by one below, on purpose: in local variables they cost ~0.1 µs
  // less per 32-lane group than level arrays (typed-array stores), a sixth of the group's cost.
  let a2 = 0;
  let a4 = 0;
  let a8 = 0;
  let a16 = 0;
  let a32 = 0;
  for (let i = base; i < end; i++) {
    const w = counts[i]!;
    if (!(Number.isSafeInteger(w) && w >= 0)) {
      valid = false;
      break;
    }
    total += w;
    squares += w * w;
    if (w > max) max = w;
    if (w < SEEN_BOUND) {
      if (seen[w] !== mark) {
        seen[w] = mark;
        distinct += 1;
      }
    } else {
      large = true;
    }
    const k = i - base;
    if ((k & 1) === 0) {
      left = w;
      continue;
    }
    let subMax = w > left ? w : left;
    let subTotal = left + w;
    a2 += subTotal === 0 ? 1 : (2 * subMax) / subTotal;
    if ((k & 2) === 0) {
      max2 = subMax;
      total2 = subTotal;
      continue;
    }
    subMax = subMax > max2 ? subMax : max2;
    subTotal = total2 + subTotal;
    a4 += subTotal === 0 ? 1 : (4 * subMax) / subTotal;
    if ((k & 4) === 0) {
      max4 = subMax;
      total4 = subTotal;
      continue;
    }
    subMax = subMax > max4 ? subMax : max4;
    subTotal = total4 + subTotal;
    a8 += subTotal === 0 ? 1 : (8 * subMax) / subTotal;
    if ((k & 8) === 0) {
      max8 = subMax;
      total8 = subTotal;
      continue;
    }
    subMax = subMax > max8 ? subMax : max8;
    subTotal = total8 + subTotal;
    a16 += subTotal === 0 ? 1 : (16 * subMax) / subTotal;
    if ((k & 16) === 0) {
      max16 = subMax;
      total16 = subTotal;
      continue;
    }
    subMax = subMax > max16 ? subMax : max16;
    subTotal = total16 + subTotal;
    a32 += subTotal === 0 ? 1 : (32 * subMax) / subTotal;
  }
  let mimd = 0;
  for (let i = base; valid && i < end; i++) {
    const c = finish[i]!;
    if (!(Number.isFinite(c) && c >= 0)) valid = false;
    mimd += c;
  }
  if (!valid) {
    samples.invalidGroups += 1;
    return;
  }
  if (large) distinct = distinctCounts(counts, base, n);
  const simt = n * duration;
  samples.groups += 1;
  samples.lanes += n;
  if (clocked) {
    samples.sumLossMeasured += mimd === 0 ? 1 : simt / mimd;
    samples.clockedGroups = (samples.clockedGroups ?? samples.groups - 1) + 1;
  }
  const groupLoss = total === 0 ? 1 : (n * max) / total;
  samples.sumLossCounts += groupLoss;
  samples.sumSimtClocks += simt;
  samples.sumMimdClocks += mimd;
  samples.sumCounts += total;
  samples.sumSquaredCounts += squares;
  samples.sumSquaredGroupTotals += total * total;
  const locality = (samples.locality ??= {});
  if (total > Number.MAX_SAFE_INTEGER || n > STREAMED_LOCALITY_LANES) {
    recordLocalityDirect(locality, counts, base, n);
  } else {
    // The sub-group sizes n′ < n that divide n (as recordLocalityDirect), then n itself; at
    // n′ = 1 every lane's 1·w/w is exactly 1 (and 1 for w = 0), so a = n exactly; at n it is
    // the group's count-based loss.
    if (n > 1) addLocality(locality, 1, n);
    if (n > 2 && n % 2 === 0) addLocality(locality, 2, a2);
    if (n > 4 && n % 4 === 0) addLocality(locality, 4, a4);
    if (n > 8 && n % 8 === 0) addLocality(locality, 8, a8);
    if (n > 16 && n % 16 === 0) addLocality(locality, 16, a16);
    if (n > 32 && n % 32 === 0) addLocality(locality, 32, a32);
    addLocality(locality, n, groupLoss);
  }
  if (clocked) addSingleLoopObservation(samples.divergence, distinct, max, duration);
}

/** Scratch of {@link distinctCounts}: the lane counts, sorted. */
let sortedCounts = new Float64Array(64);
/** Counts below this are told apart by {@link seenStamp} (a fixed 16 KB scratch) in recordSampledGroup's pass; a group with a larger one by {@link distinctCounts}. */
const SEEN_BOUND = 4096;
/** Scratch of recordSampledGroup: seenStamp[w] = the stamp of the last group with a lane count w. */
const seenStamp = new Uint32Array(SEEN_BOUND);
let stamp = 0;

/** The number of distinct values among counts[base … base + n) (non-negative safe integers), as the size of a Set of them, by sorting. */
function distinctCounts(counts: Float64Array, base: number, n: number): number {
  if (sortedCounts.length < n) sortedCounts = new Float64Array(n);
  const sorted = sortedCounts;
  // Insertion sort: n ≤ 32 lanes in frames (protocol/SPEC.md), faster than a Set.
  for (let i = 0; i < n; i++) {
    const w = counts[base + i]!;
    let j = i;
    for (; j > 0 && sorted[j - 1]! > w; j--) sorted[j] = sorted[j - 1]!;
    sorted[j] = w;
  }
  let distinct = 1;
  for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) distinct += 1;
  return distinct;
}

/** Scratch of {@link addSingleLoopObservation}: the row (issued, exits, spills, ticks) and its deltas. */
const divergenceRow = new Float64Array(4);
const divergenceDelta = new Float64Array(4);

/**
 * addDivergenceObservation(moments, divergenceObservationOfGroup(counts, duration)) for a group
 * already checked (counts non-negative safe integers, duration finite ≥ 0), without the
 * emulator's trace and arrays: the group is one loop without a body, so the emulator's
 * features are closed-form (model/related/reconvergence-stack.ts): issued = max count,
 * diverging exits = distinct counts − 1, spills = singleLoopSpills(distinct counts), from
 * the group's largest count `max` and its number of distinct counts `distinct`. The moments are
 * updated with addRegressionRow's arithmetic in its order (the same bits;
 * model/related/sampled-groups.test.ts compares both).
 */
function addSingleLoopObservation(moments: RegressionMoments, distinct: number, max: number, duration: number): void {
  const size = moments.features + 1;
  const z = divergenceRow;
  z[0] = max;
  z[1] = distinct - 1;
  z[2] = singleLoopSpills(distinct);
  z[3] = duration;
  if (size !== 4) throw new RangeError(`row must have ${moments.features} feature values, got 3`);
  // addRegressionRow (model/related/streaming-regression.ts), unrolled for the divergence row.
  const means = moments.means;
  const comoments = moments.comoments;
  moments.count += 1;
  const delta = divergenceDelta;
  for (let i = 0; i < size; i += 1) {
    delta[i] = z[i]! - means[i]!;
    means[i] = means[i]! + delta[i]! / moments.count;
  }
  let index = 0;
  for (let i = 0; i < size; i += 1) {
    for (let j = i; j < size; j += 1) {
      comoments[index] = comoments[index]! + delta[i]! * (z[j]! - means[j]!);
      index += 1;
    }
  }
}

type LocalitySums = NonNullable<SampledGroupsAccumulation['locality']>;

function addLocality(locality: LocalitySums, sub: number, a: number): void {
  // locality[sub] is locality[String(sub)] (an index key), without building the string.
  const entry = (locality[sub] ??= { sum: 0, sumSquares: 0 });
  entry.sum += a;
  entry.sumSquares += a * a;
}

/**
 * Groups of at most this many lanes get their locality sums in recordGroupAt's pass over the
 * counts (sub-groups up to 32 lanes); larger ones (not in frames, whose groups have ≤ 32 lanes)
 * from {@link recordLocalityDirect}, which gives the same bits.
 */
const STREAMED_LOCALITY_LANES = 64;

/** The locality sums lane by lane for each sub-group size, of the group at laneCounts[base … base + n) (groups whose total is beyond 2^53, or of more than STREAMED_LOCALITY_LANES lanes). */
function recordLocalityDirect(locality: LocalitySums, laneCounts: Float64Array, base: number, n: number): void {
  const subs: number[] = [];
  for (let sub = 1; sub < n; sub *= 2) if (n % sub === 0) subs.push(sub);
  subs.push(n);
  for (const sub of subs) {
    let a = 0;
    for (let start = 0; start < n; start += sub) {
      let subMax = 0;
      let subTotal = 0;
      for (let i = base + start; i < base + start + sub; i++) {
        const w = laneCounts[i]!;
        if (w > subMax) subMax = w;
        subTotal += w;
      }
      a += subTotal === 0 ? 1 : (sub * subMax) / subTotal;
    }
    addLocality(locality, sub, a);
  }
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
    clockedGroups: (a.clockedGroups ?? a.groups) + (b.clockedGroups ?? b.groups),
    sumLossCounts: a.sumLossCounts + b.sumLossCounts,
    sumSimtClocks: a.sumSimtClocks + b.sumSimtClocks,
    sumMimdClocks: a.sumMimdClocks + b.sumMimdClocks,
    sumCounts: a.sumCounts + b.sumCounts,
    sumSquaredCounts: a.sumSquaredCounts + b.sumSquaredCounts,
    sumSquaredGroupTotals: a.sumSquaredGroupTotals + b.sumSquaredGroupTotals,
    locality: mergeLocality(a.locality, b.locality),
    ...(a.blocks === undefined && b.blocks === undefined ? {} : { blocks: mergeBlockSums(a.blocks, b.blocks) }),
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
  return { ...samples, locality: mergeLocality(samples.locality, undefined), ...(samples.blocks === undefined ? {} : { blocks: mergeBlockSums(samples.blocks, undefined) }), divergence: { ...samples.divergence, means: [...samples.divergence.means], comoments: [...samples.divergence.comoments] } };
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
    lossMeasured: (samples.clockedGroups ?? samples.groups) > 0 ? samples.sumLossMeasured / (samples.clockedGroups ?? samples.groups) : undefined,
    lossCounts: samples.sumLossCounts / samples.groups,
    laneIdleFraction: samples.sumSimtClocks > 0 ? 1 - samples.sumMimdClocks / samples.sumSimtClocks : undefined,
    countIcc: countIcc(samples, groupSize),
    divergence,
    locality: localityOf(samples, groupSize),
    blocks: blocksOf(samples),
  };
}

/** The locality-aware loss at each recorded n′ (ratio estimator over sampled groups, model/loss/locality-loss.ts). */
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
