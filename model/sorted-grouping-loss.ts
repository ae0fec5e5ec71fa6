/**
 * The "load balancing by sorting" what-if (model.md §2d): a launch's N units are sorted by
 * their work before being grouped, so consecutive groups hold consecutive order statistics.
 */
import type { CategoricalDistribution } from './categorical-distribution.ts';
import { ModelError } from './errors.ts';
import { assertGroupSize } from './group-size.ts';

/** Result of {@link sortedGroupingLoss}. */
export interface SortedGroupingLoss {
  /** Mean of H over the groups of the sorted launch. */
  readonly expectedLoss: number;
  /** Σ n·max / Σ work over the sorted launch (the run-time view). */
  readonly workloadLoss: number;
  /** Full groups formed (units rounded down to a multiple of n). */
  readonly groups: number;
  readonly units: number;
  /** Groups that hold more than one distinct value (the only ones with loss above 1). */
  readonly mixedGroups: number;
}

/** Default number of units of a sorted launch: 2^20. */
export const DEFAULT_SORTED_UNITS = 1 << 20;

/**
 * Loss of grouping a sorted launch of `units` units: the i-th smallest unit (i = 1..N) is given
 * the value Q((i − ½)/N) of the quantile function of W (its expected position; no sampling),
 * and groups are consecutive blocks of n. With a discrete W most groups hold one value and have
 * H = 1; only groups across the boundary between two values lose anything, so the loss tends to
 * 1 as N grows: 1 + O(|supp|·n/N). Cost O(|supp|) (runs of equal values are skipped in bulk).
 *
 * @param options.units launch size N, an integer ≥ n (default 2^20); rounded down to a multiple of n.
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_INVALID_ARGUMENT for bad units.
 * @example sortedGroupingLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32, { units: 256 })
 */
export function sortedGroupingLoss(dist: CategoricalDistribution, n: number, options: { units?: number } = {}): SortedGroupingLoss {
  assertGroupSize(n);
  const requested = options.units ?? DEFAULT_SORTED_UNITS;
  if (!Number.isSafeInteger(requested) || requested < n) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `units (launch size) must be an integer >= n=${n}, got ${String(requested)}`);
  }
  const groups = Math.floor(requested / n);
  const units = groups * n;
  // Value v_j occupies positions i with F_{j−1} < (i − ½)/N ≤ F_j, i.e. up to ⌊N·F_j + ½⌋.
  let cumulative = 0;
  let previousEnd = 0;
  let fill = 0; // units in the group being filled
  let fillSum = 0;
  let lossSum = 0;
  let simtCost = 0;
  let mimdCost = 0;
  let mixedGroups = 0;
  let counted = 0;
  const closeGroup = (max: number, sum: number, count: number): void => {
    lossSum += (sum === 0 ? 1 : (n * max) / sum) * count;
    simtCost += n * max * count;
    mimdCost += sum * count;
    counted += count;
  };
  for (let j = 0; j < dist.size; j++) {
    cumulative += dist.probabilities[j]!;
    const end = j === dist.size - 1 ? units : Math.min(units, Math.floor(units * cumulative + 0.5));
    let run = end - previousEnd;
    previousEnd = Math.max(previousEnd, end);
    if (run <= 0) continue;
    const v = dist.values[j]!;
    if (fill > 0) {
      const take = Math.min(run, n - fill);
      fill += take;
      fillSum += take * v;
      run -= take;
      if (fill === n) {
        closeGroup(v, fillSum, 1); // ascending order: the last value is the group's maximum
        mixedGroups++;
        fill = 0;
        fillSum = 0;
      }
    }
    const whole = Math.floor(run / n);
    if (whole > 0) closeGroup(v, n * v, whole);
    const rest = run - whole * n;
    if (rest > 0) {
      fill = rest;
      fillSum = rest * v;
    }
  }
  if (counted !== groups) throw new RangeError(`internal: sorted grouping formed ${counted} groups, expected ${groups}`);
  return { expectedLoss: lossSum / groups, workloadLoss: mimdCost > 0 ? simtCost / mimdCost : 1, groups, units, mixedGroups };
}
