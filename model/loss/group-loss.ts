/**
 * The loss of one observed group, H(w) = n·max(w)/Σw (docs/model.md §1).
 */
import { ModelError } from '../errors.ts';
import { MAX_GROUP_SIZE } from './group-size.ts';

/**
 * H(w) = n·max(w)/Σw ∈ [1, n] for the iteration counts of one group; all-zero counts give 1
 * (no work, no loss). This is what `loss_counts` averages. Cost O(n).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for 0 or more than 1024 counts;
 *   WW_ERR_MODEL_INVALID_ARGUMENT for a negative or non-finite count.
 * @example groupLoss([1, 1, 4, 2]) // 4·4/8 = 2
 */
export function groupLoss(counts: ArrayLike<number>): number {
  const n = counts.length;
  if (n < 1 || n > MAX_GROUP_SIZE) {
    throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `a group needs 1..${MAX_GROUP_SIZE} counts, got ${n}`);
  }
  let max = 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const w = counts[i]!;
    if (!(w >= 0) || !Number.isFinite(w)) {
      throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `group counts must be finite and non-negative, got ${String(w)} at lane ${i}`);
    }
    if (w > max) max = w;
    sum += w;
  }
  return sum === 0 ? 1 : (n * max) / sum;
}
