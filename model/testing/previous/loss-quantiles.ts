/**
 * Test-only reference: model/loss/loss-quantiles.ts as it was before the window model's cache-miss
 * path was made cheaper (docs/estimator.md, Performance), kept verbatim (imports adjusted; its
 * exact table from the previous exact method beside it) so the property tests can check the
 * current code against it bit for bit (Object.is). Not for use outside tests.
 */
/**
 * Quantiles of the loss X_W(n): how bad the worst groups are.
 */
import type { CategoricalDistribution } from '../../distributions/categorical-distribution.ts';
import { createCategoricalSampler } from '../../distributions/categorical-sampler.ts';
import { ModelError } from '../../errors.ts';
import { exactCost, exactLossTable, type ExactLossTable } from './exact-loss.ts';
import { assertGroupSize } from '../../loss/group-size.ts';
import { createSeededRandom, type RandomSource } from '../../distributions/random.ts';

/** Above this estimated work (multiply-adds) quantiles come from Monte Carlo instead of the exact method. */
export const EXACT_QUANTILE_WORK_LIMIT = 3e8;
/** Seed of the Monte Carlo fallback when no random source is passed (results are reproducible). */
export const DEFAULT_QUANTILE_SEED = 20240531;

/** Quantiles keyed by the probability as written by String(p) (e.g. "0.5"), and how they were obtained. */
export interface LossQuantiles {
  readonly quantiles: Record<string, number>;
  /** `exact` or `monte-carlo`. */
  readonly method: 'exact' | 'monte-carlo';
  /** Groups simulated (Monte Carlo only). */
  readonly samples?: number;
}

function checkProbabilities(probabilities: readonly number[]): void {
  for (const p of probabilities) {
    if (!(p > 0 && p < 1)) {
      throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `quantile probabilities must be in (0, 1), got ${String(p)}`);
    }
  }
}

/**
 * Lower quantile min { x : P(X ≤ x) ≥ p } from outcomes sorted by value; a slack of 1e-12 on the
 * running sum keeps rounding from skipping an outcome whose cumulative probability is exactly p.
 */
function quantileOfOutcomes(outcomes: ExactLossTable, p: number): number {
  let sum = 0;
  for (let i = 0; i < outcomes.count; i++) {
    sum += outcomes.probabilities[i]!;
    if (sum >= p - 1e-12) return outcomes.values[i]!;
  }
  return outcomes.values[outcomes.count - 1]!;
}

/**
 * Quantiles of X_W(n) for the given probabilities (each in (0, 1)). Exact (docs/model.md §2a) when
 * the exact method's estimated work is at most {@link EXACT_QUANTILE_WORK_LIMIT} (~0.5 s);
 * beyond that, Monte Carlo: `samples` groups (default min(200000, ⌈6.4e6/n⌉)) of n draws by the
 * alias method from `random` (default: a generator seeded with {@link DEFAULT_QUANTILE_SEED}), and
 * the empirical lower quantile. Monte Carlo quantiles carry sampling error (for 2e5 groups, about
 * ±0.3% in probability around the 0.99 quantile); `method` says which was used.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_INVALID_ARGUMENT for a
 *   probability outside (0, 1) or a bad sample count.
 * @example lossQuantiles(dist, 32, [0.5, 0.99]).quantiles['0.99']
 */
export function lossQuantiles(
  dist: CategoricalDistribution,
  n: number,
  probabilities: readonly number[],
  options: { random?: RandomSource; samples?: number; method?: 'auto' | 'exact' | 'monte-carlo' } = {},
): LossQuantiles {
  assertGroupSize(n);
  checkProbabilities(probabilities);
  const choice = options.method ?? 'auto';
  const useExact = choice === 'exact' || (choice === 'auto' && exactCost(dist, n).operations <= EXACT_QUANTILE_WORK_LIMIT);
  const quantiles: Record<string, number> = {};
  if (useExact) {
    const outcomes = exactLossTable(dist, n); // exactLossDistribution's outcomes as arrays
    for (const p of probabilities) quantiles[String(p)] = quantileOfOutcomes(outcomes, p);
    return { quantiles, method: 'exact' };
  }
  const samples = options.samples ?? Math.min(200_000, Math.ceil(6.4e6 / n));
  if (!Number.isInteger(samples) || samples < 1) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `samples must be a positive integer, got ${String(samples)}`);
  }
  const random = options.random ?? createSeededRandom(DEFAULT_QUANTILE_SEED);
  const draw = createCategoricalSampler(dist);
  const losses = new Float64Array(samples);
  for (let g = 0; g < samples; g++) {
    let max = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const w = draw(random);
      if (w > max) max = w;
      sum += w;
    }
    losses[g] = sum === 0 ? 1 : (n * max) / sum;
  }
  losses.sort();
  for (const p of probabilities) quantiles[String(p)] = losses[Math.min(samples - 1, Math.max(0, Math.ceil(p * samples) - 1))]!;
  return { quantiles, method: 'monte-carlo', samples };
}
