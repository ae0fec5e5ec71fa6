/**
 * The granularity what-if (docs/model.md §2d): the loss for several group sizes.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { expectedLoss, type LossMethod } from '../loss/expected-loss.ts';
import { workloadLoss } from '../loss/sample-maximum.ts';

/** One row of a granularity sweep. */
export interface GranularityRow {
  readonly n: number;
  /** E[X_W(n)]. */
  readonly expectedLoss: number;
  /** E[max]/E[W]. */
  readonly workloadLoss: number;
}

/** Group sizes 1..32: one unit per thread up to a full warp. */
export const DEFAULT_SWEEP_GROUP_SIZES: readonly number[] = Array.from({ length: 32 }, (_, i) => i + 1);

/**
 * E[X_W(n)] and the workload loss for each group size (in the given order).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for any size outside 1..1024.
 * @example granularitySweep(dist, [1, 2, 4, 8, 16, 32]).map((row) => row.expectedLoss)
 */
export function granularitySweep(
  dist: CategoricalDistribution,
  groupSizes: readonly number[] = DEFAULT_SWEEP_GROUP_SIZES,
  options: { method?: LossMethod } = {},
): GranularityRow[] {
  return groupSizes.map((n) => ({ n, expectedLoss: expectedLoss(dist, n, options), workloadLoss: workloadLoss(dist, n) }));
}
