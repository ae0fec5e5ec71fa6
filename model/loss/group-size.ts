/**
 * The group sizes the model accepts (lanes of one lockstep group: warp, tile, or a what-if).
 */
import { ModelError } from '../errors.ts';

/** Largest group size the model accepts (a CUDA block holds at most 1024 threads). */
export const MAX_GROUP_SIZE = 1024;

/**
 * Checks that n is an integer 1..{@link MAX_GROUP_SIZE}.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE, e.g. "group size n must be an integer 1..1024, got 2048".
 * @example assertGroupSize(32) // ok
 */
export function assertGroupSize(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > MAX_GROUP_SIZE) {
    throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `group size n must be an integer 1..${MAX_GROUP_SIZE}, got ${String(n)}`);
  }
}
