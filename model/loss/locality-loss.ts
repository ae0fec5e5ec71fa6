/**
 * Locality-aware loss (docs/model.md §11): the loss of contiguous grouping measured on real
 * traces of per-unit iteration counts in unit order ("runs": whole warps, whole blocks, or any
 * contiguous stretch of units), beside the independent-lanes model of the same units.
 *
 * The independent-lanes model (§2) answers "what if work were assigned to lanes at random".
 * Real kernels give neighbouring units similar work (neighbouring pixels, rows of one band of
 * a sparse matrix), so their groups are more uniform than random ones and lose less. Cutting
 * each run into consecutive groups of n′ units and averaging n′·max/Σ over those groups is the
 * loss the kernel's own layout gives at group size n′ — the trace method, with no model of the
 * correlation. Groups of one run are correlated; runs are taken as independent, so the
 * interval is that of a ratio estimator over runs.
 */
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { expectedLoss } from './expected-loss.ts';
import { groupLoss } from './group-loss.ts';
import { normalQuantileTwoSided } from '../numerics/normal-quantile.ts';
import { workloadLoss } from './sample-maximum.ts';

/** A ratio Σa/Σb over runs with its normal-approximation interval (runs independent). */
export interface RatioEstimate {
  readonly value: number;
  readonly standardError: number;
  readonly low: number;
  readonly high: number;
}

/** The locality-aware prediction at one group size n′. */
export interface LocalityLossRow {
  readonly groupSize: number;
  /** Groups cut from the runs (Σ over runs of length/n′). */
  readonly groups: number;
  /** Mean over groups of H = n′·max/Σ, groups of consecutive units within runs (the layout's loss). */
  readonly lossContiguous: RatioEstimate;
  /** Σ n′·max / Σ w over the same groups: lockstep time over busy lane time. */
  readonly workloadLossContiguous: RatioEstimate;
  /** The independent-lanes model on the same units: E[H] for n′ random draws from their distribution. */
  readonly lossIndependent: number;
  /** The independent-lanes workload loss E[n′·max]/E[n′·w̄] of the same distribution. */
  readonly workloadLossIndependent: number;
  /** lossIndependent / lossContiguous: how much the layout's locality saves against random assignment (1 = none). */
  readonly localityBenefit: number;
  /** Sorting what-if on these units: all units sorted by count, cut into consecutive groups of n′ (a remainder < n′ left out). */
  readonly lossSorted: number;
}

/** Result of {@link localityLoss}. */
export interface LocalityLoss {
  readonly runs: number;
  readonly units: number;
  readonly rows: readonly LocalityLossRow[];
  /** Group sizes asked for that do not tile every run (left out). */
  readonly skippedGroupSizes: readonly number[];
}

/**
 * Σa_r/Σb_r over runs r with the standard error of a ratio estimator (runs independent):
 * SE² = R/(R−1) · Σ(a_r − v·b_r)² / (Σb_r)², interval v ± z·SE (z: the two-sided normal
 * quantile of the level). With Σb = 0 the value is 1; with one run the SE is NaN.
 *
 * @example ratioEstimate([2, 4], [2, 2], 1.96).value // 6 / 4 = 1.5
 */
export function ratioEstimate(a: readonly number[], b: readonly number[], z: number): RatioEstimate {
  let sa = 0;
  let sb = 0;
  for (let r = 0; r < a.length; r++) {
    sa += a[r]!;
    sb += b[r]!;
  }
  const value = sb > 0 ? sa / sb : 1;
  let residual = 0;
  for (let r = 0; r < a.length; r++) residual += (a[r]! - value * b[r]!) ** 2;
  const runs = a.length;
  const standardError = runs > 1 && sb > 0 ? Math.sqrt((runs / (runs - 1)) * residual) / sb : Number.NaN;
  return { value, standardError, low: value - z * standardError, high: value + z * standardError };
}

/**
 * A ratio Σa_r / (R·k) over R runs that each hold k groups (a constant denominator), from the
 * sums Σa_r and Σa_r²: the same ratio estimator as {@link localityLoss}, for callers that keep
 * only sums (the estimator's windows). The interval is left to the caller (value ± z·SE).
 *
 * @example ratioOfConstantDenominator(3, 5, 2, 1) // { value: 1.5, standardError: 0.5 } (runs with a = 2 and 1)
 */
export function ratioOfConstantDenominator(sum: number, sumSquares: number, runs: number, groupsPerRun: number): { value: number; standardError: number } {
  const value = runs > 0 ? sum / (runs * groupsPerRun) : Number.NaN;
  const centered = Math.max(0, sumSquares - (sum * sum) / runs);
  const standardError = runs > 1 ? Math.sqrt((runs / (runs - 1)) * centered) / (runs * groupsPerRun) : Number.NaN;
  return { value, standardError };
}

/** Mean H of consecutive groups of n units of a sequence (a remainder shorter than n is left out). */
function contiguousMeanLoss(units: readonly number[], n: number): number {
  const groups = Math.floor(units.length / n);
  if (groups === 0) return Number.NaN;
  let sum = 0;
  for (let g = 0; g < groups; g++) sum += groupLoss(units.slice(g * n, (g + 1) * n));
  return sum / groups;
}

/**
 * The locality-aware loss of contiguous runs of per-unit iteration counts, for each group size
 * n′ that divides every run's length, beside the independent-lanes model and the sorting
 * what-if of the same units.
 *
 * @param runs - runs of per-unit iteration counts, each in unit order (non-negative integers)
 * @param groupSizes - the n′ to evaluate (1..1024); those that do not tile every run are skipped
 * @param options - confidence level of the intervals (default 0.95)
 * @throws ModelError WW_ERR_MODEL_INVALID_ARGUMENT for no runs, an empty run, a negative or
 *   non-finite count, or a confidence level outside (0, 1)
 * @example
 * localityLoss([[1, 1, 4, 2], [3, 3, 3, 3]], [2, 4]).rows[1].lossContiguous.value // (2 + 1) / 2 = 1.5
 */
export function localityLoss(runs: readonly (readonly number[])[], groupSizes: readonly number[], options: { confidenceLevel?: number } = {}): LocalityLoss {
  const level = options.confidenceLevel ?? 0.95;
  if (!(level > 0 && level < 1)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `confidence level must be in (0, 1), got ${level}`);
  if (runs.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'locality loss needs at least one run of unit counts');
  const counts = new Map<number, number>();
  let units = 0;
  for (const [r, run] of runs.entries()) {
    if (run.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `run ${r} is empty`);
    for (const w of run) {
      if (!(w >= 0) || !Number.isFinite(w)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `unit counts must be finite and non-negative, got ${String(w)} in run ${r}`);
      counts.set(w, (counts.get(w) ?? 0) + 1);
      units += 1;
    }
  }
  const distribution = CategoricalDistribution.fromCounts(Object.fromEntries(counts));
  const sorted = runs.flat().sort((a, b) => a - b);
  const z = normalQuantileTwoSided(level);
  const rows: LocalityLossRow[] = [];
  const skippedGroupSizes: number[] = [];
  for (const n of groupSizes) {
    if (!Number.isInteger(n) || n < 1 || n > 1024) throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `group size must be an integer 1..1024, got ${n}`);
    if (runs.some((run) => run.length % n !== 0)) {
      skippedGroupSizes.push(n);
      continue;
    }
    const lossSums: number[] = [];
    const groupCounts: number[] = [];
    const lockstep: number[] = [];
    const busy: number[] = [];
    for (const run of runs) {
      let lossSum = 0;
      let lockstepSum = 0;
      let busySum = 0;
      for (let start = 0; start < run.length; start += n) {
        let max = 0;
        let sum = 0;
        for (let i = start; i < start + n; i++) {
          const w = run[i]!;
          if (w > max) max = w;
          sum += w;
        }
        lossSum += sum === 0 ? 1 : (n * max) / sum;
        lockstepSum += n * max;
        busySum += sum;
      }
      lossSums.push(lossSum);
      groupCounts.push(run.length / n);
      lockstep.push(lockstepSum);
      busy.push(busySum);
    }
    const lossContiguous = ratioEstimate(lossSums, groupCounts, z);
    const lossIndependent = expectedLoss(distribution, Math.min(n, 1024));
    rows.push({
      groupSize: n,
      groups: groupCounts.reduce((a, b) => a + b, 0),
      lossContiguous,
      workloadLossContiguous: ratioEstimate(lockstep, busy, z),
      lossIndependent,
      workloadLossIndependent: workloadLoss(distribution, n),
      localityBenefit: lossIndependent / lossContiguous.value,
      lossSorted: contiguousMeanLoss(sorted, n),
    });
  }
  return { runs: runs.length, units, rows, skippedGroupSizes };
}
