/**
 * E[X_W(n)], the expected lockstep loss of a random group (docs/model.md §2), by either method.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { exactExpectedLoss } from './exact-loss.ts';
import { fastExpectedLoss } from './fast-loss.ts';

/** Which computation of E[X_W(n)]: `fast` (docs/model.md §2b, default) or `exact` (docs/model.md §2a, the reference). */
export type LossMethod = 'fast' | 'exact';

/** The methods {@link expectedLoss} accepts. */
export const LOSS_METHODS: readonly LossMethod[] = ['fast', 'exact'];

/**
 * E[X_W(n)] = E[n·max(W_1..W_n)/Σ W_i] for n i.i.d. draws of W (all-zero groups count as 1).
 * `fast` (default): O(nodes·|supp|), ~1e-13 relative on the test distributions;
 * `exact`: the reference, refuses supports too large for it (see exactCost).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for n outside 1..1024, WW_ERR_MODEL_INVALID_ARGUMENT
 *   for an unknown method, WW_ERR_MODEL_EXACT_TOO_LARGE for an exact request beyond its limits.
 * @example expectedLoss(CategoricalDistribution.fromFamily({ family: 'nbinom', r: 5, p: 0.3 }), 32)
 */
export function expectedLoss(dist: CategoricalDistribution, n: number, options: { method?: LossMethod } = {}): number {
  const method = options.method ?? 'fast';
  if (method === 'fast') return fastExpectedLoss(dist, n).expectedLoss;
  if (method === 'exact') return exactExpectedLoss(dist, n);
  throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `method must be 'fast' or 'exact', got '${String(method)}'`);
}
