/**
 * Sorting and binning what-ifs evaluated on the units of contiguous runs (docs/model.md §11b),
 * and the locality-aware loss of one long trace (§11c). Pure.
 *
 * The what-ifs of §2d take units as independent draws and sort or bin them by their exact work.
 * A kernel that sorts needs a cheap estimate of each unit's work, and a cheap estimate is
 * usually a coarse pre-pass (escape --sorted: one escape count per 4×4 pixel block,
 * interpolated), so its groups still mix work. Here the policies are applied to the units the
 * runs actually hold, within each launch, once by the exact counts and once by a coarse-pre-pass
 * estimate computed from the run itself.
 */
import { ModelError } from '../errors.ts';
import { localityLoss, type LocalityLoss, type RatioEstimate } from '../loss/locality-loss.ts';
import { normalQuantileTwoSided } from '../numerics/normal-quantile.ts';

/** Default pre-pass stride: one unit in 4 computed (escape's 4×4 blocks, along a run). */
export const DEFAULT_PREPASS_STRIDE = 4;

/** Groups of runs of the delete-a-group jackknife of {@link runPolicyLoss}. */
const JACKKNIFE_GROUPS = 20;

/**
 * The coarse pre-pass estimate of each unit of a run: the run is cut into blocks of `stride`
 * consecutive units; the middle unit of each block (index ⌊len/2⌋ within it) is computed
 * exactly; every other unit gets the linear interpolation between the computed units on
 * either side (the nearest computed unit's count beyond the first and last). Stride 1 gives the
 * counts themselves.
 *
 * @param run - per-unit counts in unit order (non-empty)
 * @param stride - units per pre-pass block, an integer ≥ 1
 * @throws ModelError WW_ERR_MODEL_INVALID_ARGUMENT for an empty run or a stride below 1
 * @example coarseEstimate([0, 4, 8, 8, 4, 0, 0, 0], 4) // computed: units 2 (8) and 6 (0) → [8, 8, 8, 6, 4, 2, 0, 0]
 */
export function coarseEstimate(run: readonly number[], stride: number): number[] {
  if (run.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'a run must hold at least one unit');
  if (!Number.isInteger(stride) || stride < 1) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `pre-pass stride must be an integer >= 1, got ${stride}`);
  const positions: number[] = [];
  for (let start = 0; start < run.length; start += stride) positions.push(start + Math.floor((Math.min(run.length, start + stride) - start) / 2));
  const estimate = new Array<number>(run.length);
  let k = 0;
  for (let i = 0; i < run.length; i++) {
    while (k + 1 < positions.length && positions[k + 1]! <= i) k++;
    const left = positions[k]!;
    if (i <= left || k + 1 >= positions.length) {
      estimate[i] = run[left]!; // before the first computed unit, at one, or beyond the last
      continue;
    }
    const right = positions[k + 1]!;
    const t = (i - left) / (right - left);
    estimate[i] = (1 - t) * run[left]! + t * run[right]!;
  }
  return estimate;
}

/** How units are ordered before they are cut into groups: by their key, or by the work class of their key. */
export type RunPolicy = { readonly kind: 'sorting' } | { readonly kind: 'binning'; readonly bins: number };

/** What a policy gives on the runs' units, by the exact counts and by the pre-pass estimate. */
export interface RunPolicyLoss {
  readonly policy: RunPolicy;
  /** Mean H of the groups when units are ordered by their exact counts (the ideal estimate). */
  readonly exact: number;
  /** Mean H when units are ordered by the coarse pre-pass estimate, with a jackknife interval over runs. */
  readonly estimated: RatioEstimate;
  /** Σ n·max / Σ w of the groups ordered by the estimate: lockstep time over busy lane time (the run-time view). */
  readonly estimatedWorkloadLoss: number;
  readonly stride: number;
  /** Groups formed (Σ over launches of ⌊units/n⌋). */
  readonly groups: number;
}

/** Mean-H sums of one ordering of one launch's units cut into groups of n (remainder left out). */
function orderedGroupSums(counts: readonly number[], keys: readonly number[], n: number, policy: RunPolicy): { sum: number; groups: number; lockstep: number; busy: number } {
  const units = counts.length;
  const order = Array.from({ length: units }, (_, i) => i);
  let rank: (i: number) => number = (i) => keys[i]!;
  if (policy.kind === 'binning') {
    // Work classes of equal unit shares by value thresholds: a key holding more than 1/k of the units spans quantiles (fewer classes form).
    const sortedKeys = [...keys].sort((a, b) => a - b);
    const thresholds: number[] = [];
    for (let c = 1; c < policy.bins; c++) thresholds.push(sortedKeys[Math.max(0, Math.ceil((c * units) / policy.bins) - 1)]!);
    rank = (i) => {
      let cls = 0;
      while (cls < thresholds.length && keys[i]! > thresholds[cls]!) cls++;
      return cls;
    };
  }
  const ranks = order.map(rank);
  order.sort((a, b) => ranks[a]! - ranks[b]! || a - b); // stable: within a key or class, unit order
  let sum = 0;
  let groups = 0;
  let lockstep = 0;
  let busy = 0;
  for (let start = 0; start + n <= units; start += n) {
    let max = 0;
    let total = 0;
    for (let j = start; j < start + n; j++) {
      const w = counts[order[j]!]!;
      if (w > max) max = w;
      total += w;
    }
    sum += total === 0 ? 1 : (n * max) / total;
    groups += 1;
    lockstep += n * max;
    busy += total;
  }
  return { sum, groups, lockstep, busy };
}

/**
 * A sorting or binning what-if on the units of contiguous runs, within each launch: the launch's
 * sampled units (its runs, in order) are ordered by their key — sorting: the key itself;
 * binning into k classes: the class of the key, classes of equal unit shares by value
 * thresholds — ties kept in unit order, and cut into consecutive groups of n (a remainder
 * shorter than n left out); the loss is Σ H / groups over launches. Once with the exact counts
 * as keys (the ideal estimate), once with the coarse pre-pass estimate ({@link coarseEstimate}).
 * The interval of the estimated figure is a delete-a-group jackknife over runs (20 groups of
 * runs, round robin), normal, at the confidence level, its low end cut at 1 (no group loses less).
 *
 * @param launches - per launch, its runs of per-unit counts in unit order
 * @param n - group size 1..1024
 * @param policy - sorting, or binning into `bins` classes (1..1024)
 * @param options - pre-pass stride (default 4) and confidence level (default 0.95)
 * @throws ModelError WW_ERR_MODEL_INVALID_ARGUMENT for an empty run, a negative or non-finite count, fewer units than n, a bad stride, bin count or level; WW_ERR_MODEL_GROUP_SIZE for n outside 1..1024
 * @example runPolicyLoss([[[1, 1, 9, 9], [9, 9, 1, 1]]], 2, { kind: 'sorting' }).exact // [1,1][1,1][9,9][9,9] → 1
 */
export function runPolicyLoss(
  launches: readonly (readonly (readonly number[])[])[],
  n: number,
  policy: RunPolicy,
  options: { stride?: number; confidenceLevel?: number } = {},
): RunPolicyLoss {
  const stride = options.stride ?? DEFAULT_PREPASS_STRIDE;
  const level = options.confidenceLevel ?? 0.95;
  if (!Number.isInteger(n) || n < 1 || n > 1024) throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `group size must be an integer 1..1024, got ${n}`);
  if (policy.kind === 'binning' && !(Number.isInteger(policy.bins) && policy.bins >= 1 && policy.bins <= 1024)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `bin count must be an integer 1..1024, got ${policy.bins}`);
  if (!(level > 0 && level < 1)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `confidence level must be in (0, 1), got ${level}`);
  // Runs numbered across launches; each keeps its exact counts and its estimate.
  const runs = launches.flatMap((runsOfLaunch, launch) => runsOfLaunch.map((run) => ({ launch, run, estimate: coarseEstimate(run, stride) })));
  for (const r of runs) if (r.run.some((w) => !(w >= 0) || !Number.isFinite(w))) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'unit counts must be finite and non-negative');
  const runsOfLaunch = launches.map(() => [] as number[]);
  runs.forEach((r, index) => runsOfLaunch[r.launch]!.push(index));
  const units = runs.reduce((s, r) => s + r.run.length, 0);
  if (units < n) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `the runs hold ${units} units, fewer than one group of ${n}`);
  const evaluate = (keep: (index: number) => boolean, exact: boolean): { sum: number; groups: number; lockstep: number; busy: number } => {
    let sum = 0;
    let groups = 0;
    let lockstep = 0;
    let busy = 0;
    for (const indices of runsOfLaunch) {
      const counts: number[] = [];
      const keys: number[] = [];
      for (const index of indices) {
        if (!keep(index)) continue;
        const r = runs[index]!;
        for (let i = 0; i < r.run.length; i++) {
          counts.push(r.run[i]!);
          keys.push(exact ? r.run[i]! : r.estimate[i]!);
        }
      }
      const part = orderedGroupSums(counts, keys, n, policy);
      sum += part.sum;
      groups += part.groups;
      lockstep += part.lockstep;
      busy += part.busy;
    }
    return { sum, groups, lockstep, busy };
  };
  const all = evaluate(() => true, false);
  const value = all.sum / all.groups;
  const g = Math.min(JACKKNIFE_GROUPS, runs.length);
  let standardError = Number.NaN;
  if (g >= 2) {
    const replicates: number[] = [];
    for (let j = 0; j < g; j++) {
      const part = evaluate((index) => index % g !== j, false);
      if (part.groups > 0) replicates.push(part.sum / part.groups);
    }
    const mean = replicates.reduce((a, b) => a + b, 0) / replicates.length;
    const m = replicates.length;
    standardError = m >= 2 ? Math.sqrt(((m - 1) / m) * replicates.reduce((s, x) => s + (x - mean) ** 2, 0)) : Number.NaN;
  }
  const z = normalQuantileTwoSided(level);
  const exact = evaluate(() => true, true);
  return {
    policy,
    exact: exact.sum / exact.groups,
    estimated: { value, standardError, low: Math.max(1, value - z * standardError), high: value + z * standardError }, // H ≥ 1: the interval is cut there
    estimatedWorkloadLoss: all.busy > 0 ? all.lockstep / all.busy : 1,
    stride,
    groups: all.groups,
  };
}

/**
 * The locality-aware loss (§11) of one trace of per-unit counts in unit order, for each group
 * size n′ that divides its length: the trace's consecutive groups of n′ are cut into
 * min(groups, 30) batches of consecutive groups (sizes differing by at most one), and the
 * batches are the runs of {@link localityLoss} — batch means, so the interval treats stretches
 * of the trace, not single groups, as independent.
 *
 * @param trace - per-unit counts in unit order (non-empty)
 * @param groupSizes - n′ to evaluate (1..1024); those that do not divide the length are skipped
 * @throws ModelError as {@link localityLoss}
 * @example traceLocalityLoss([1, 3, 2, 2, 5, 1, 4, 4], [4]).rows[0].lossContiguous.value // (3/2 + 10/7)/2 = 41/28
 */
export function traceLocalityLoss(trace: readonly number[], groupSizes: readonly number[], options: { confidenceLevel?: number } = {}): LocalityLoss {
  if (trace.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'a trace needs at least one unit');
  const rows: LocalityLoss['rows'][number][] = [];
  const skippedGroupSizes: number[] = [];
  for (const n of groupSizes) {
    if (!Number.isInteger(n) || n < 1 || n > 1024) throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `group size must be an integer 1..1024, got ${n}`);
    if (trace.length % n !== 0) {
      skippedGroupSizes.push(n);
      continue;
    }
    const groups = trace.length / n;
    const batches = Math.min(groups, 30);
    const runs: number[][] = [];
    let start = 0;
    for (let b = 0; b < batches; b++) {
      const size = Math.floor(groups / batches) + (b < groups % batches ? 1 : 0);
      runs.push(trace.slice(start * n, (start + size) * n));
      start += size;
    }
    rows.push(...localityLoss(runs, [n], options).rows);
  }
  return { runs: 1, units: trace.length, rows, skippedGroupSizes };
}
