/**
 * Quantiles of the loss X_W(n): how bad the worst groups are.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { aliasTable } from '../distributions/categorical-sampler.ts';
import { ModelError } from '../errors.ts';
import { conditionalLossQuantile, conditionalLossTerms } from './conditional-quantiles.ts';
import { exactCost, visitExactLossOutcomes } from './exact-loss.ts';
import { assertGroupSize } from './group-size.ts';
import { createSeededRandom, type RandomSource } from '../distributions/random.ts';

/** Above this estimated work (multiply-adds) `auto` quantiles come from Monte Carlo instead of the exact method. */
export const EXACT_QUANTILE_WORK_LIMIT = 3e8;
/** Seed of the Monte Carlo method when no random source is passed (results are reproducible). */
export const DEFAULT_QUANTILE_SEED = 20240531;

/** How quantiles are computed: exact (docs/model.md §2a), conditional on the maximum (§2e) or by Monte Carlo. */
export type QuantileMethod = 'exact' | 'conditional' | 'monte-carlo';

/** Quantiles keyed by the probability as written by String(p) (e.g. "0.5"), and how they were obtained. */
export interface LossQuantiles {
  readonly quantiles: Record<string, number>;
  /** `exact`, `conditional` (docs/model.md §2e) or `monte-carlo`. */
  readonly method: QuantileMethod;
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
 * Lower quantiles min { x : P(X ≤ x) ≥ p } of every p from the exact outcomes, visited in value
 * order (visitExactLossOutcomes) until the last p is met: the running sum never falls
 * (probabilities are ≥ 0), so the thresholds p − 1e-12 are met in ascending order and each p
 * gets the outcome at which a pass of its own over the whole table would stop. A slack of 1e-12
 * on the running sum keeps rounding from skipping an outcome whose cumulative probability is
 * exactly p. A p the sum never reaches gets the largest outcome.
 */
function exactQuantiles(dist: CategoricalDistribution, n: number, probabilities: readonly number[]): number[] {
  const thresholds = probabilities.map((p) => p - 1e-12);
  const order = thresholds.map((_, q) => q).sort((x, y) => thresholds[x]! - thresholds[y]!);
  const found: (number | undefined)[] = probabilities.map(() => undefined);
  let next = 0; // order[next]: the smallest threshold not met yet
  let sum = 0;
  let largest: number | undefined;
  visitExactLossOutcomes(dist, n, (value, probability) => {
    largest = value;
    sum += probability;
    while (next < order.length && sum >= thresholds[order[next]!]!) found[order[next++]!] = value;
    return next < order.length;
  });
  // Unmet thresholds (the sum stayed below them): the largest outcome, every outcome visited.
  return found.map((value) => (value === undefined ? largest! : value));
}

/**
 * Quantiles of X_W(n) (values in [1, n], loss ratios) for the given probabilities (each in
 * (0, 1)). `method`:
 *
 * - `auto` (default): `exact` when the exact method's estimated work is at most
 *   {@link EXACT_QUANTILE_WORK_LIMIT} (~0.5 s), else `monte-carlo` (`conditional` is not chosen
 *   by itself: its error depends on the shape, below);
 * - `exact` (docs/model.md §2a): the lower quantile min { x : P(X ≤ x) ≥ p } of the exact
 *   distribution;
 * - `conditional` (§2e): conditioned on the maximum and the number of draws that reach it, with
 *   the sum of the others approximated by its three-moment law; O(|support|·J) per cdf
 *   evaluation (J: the draws that may share the maximum, 1–3 for wide supports), deterministic.
 *   Accuracy (§8): within 0.5 % of the exact quantile for unimodal work (Poisson, geometric,
 *   negative binomial, uniform) of 10 values or more at n ≥ 16; several percent, in value and
 *   in probability, for multimodal, zero-heavy or spiky work and for small n;
 * - `monte-carlo`: `samples` groups (default min(200000, ⌈6.4e6/n⌉)) of n draws by the alias
 *   method (one nextUint32 per draw) from `random` (default: a generator seeded with {@link DEFAULT_QUANTILE_SEED}), and the
 *   empirical lower quantile (for 2e5 groups, about ±0.3 % in probability around the 0.99 quantile).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_INVALID_ARGUMENT for a
 *   probability outside (0, 1) or a bad sample count; WW_ERR_MODEL_EXACT_TOO_LARGE for `exact`
 *   beyond the exact method's limits.
 * @example lossQuantiles(dist, 32, [0.5, 0.99]).quantiles['0.99']
 * @example lossQuantiles(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.01 }), 32, [0.5], { method: 'conditional' }).quantiles['0.5'] // ≈ 3.9
 */
export function lossQuantiles(
  dist: CategoricalDistribution,
  n: number,
  probabilities: readonly number[],
  options: { random?: RandomSource; samples?: number; method?: 'auto' | QuantileMethod } = {},
): LossQuantiles {
  assertGroupSize(n);
  checkProbabilities(probabilities);
  const choice = options.method ?? 'auto';
  const method: QuantileMethod = choice === 'auto' ? (exactCost(dist, n).operations <= EXACT_QUANTILE_WORK_LIMIT ? 'exact' : 'monte-carlo') : choice;
  const quantiles: Record<string, number> = {};
  if (method === 'exact') {
    const found = exactQuantiles(dist, n, probabilities); // exactLossDistribution's outcomes, in order
    probabilities.forEach((p, q) => (quantiles[String(p)] = found[q]!));
    return { quantiles, method: 'exact' };
  }
  if (method === 'conditional') {
    const terms = conditionalLossTerms(dist, n);
    // Ascending probabilities: each search starts at the quantile below it.
    const order = probabilities.map((_, q) => q).sort((x, y) => probabilities[x]! - probabilities[y]!);
    let from = 1;
    for (const q of order) {
      from = conditionalLossQuantile(terms, n, probabilities[q]!, from);
      quantiles[String(probabilities[q])] = from;
    }
    return { quantiles, method: 'conditional' };
  }
  const samples = options.samples ?? Math.min(200_000, Math.ceil(6.4e6 / n));
  if (!Number.isInteger(samples) || samples < 1) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `samples must be a positive integer, got ${String(samples)}`);
  }
  const random = options.random ?? createSeededRandom(DEFAULT_QUANTILE_SEED);
  // The alias method with one 32-bit draw per lane (column and the fraction within it from the
  // same uniform: 2^32 / |support| ≥ 10^6 levels per column for the protocol's 2,432 bins at
  // most), half the random bits of a 53-bit float: the Monte Carlo's main cost.
  const { size, values, threshold, alias } = aliasTable(dist);
  const scale = size / 4294967296;
  const losses = new Float64Array(samples);
  for (let g = 0; g < samples; g++) {
    let max = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const u = random.nextUint32() * scale;
      const column = Math.floor(u);
      const w = u - column < threshold[column]! ? values[column]! : values[alias[column]!]!;
      if (w > max) max = w;
      sum += w;
    }
    losses[g] = sum === 0 ? 1 : (n * max) / sum;
  }
  losses.sort();
  for (const p of probabilities) quantiles[String(p)] = losses[Math.min(samples - 1, Math.max(0, Math.ceil(p * samples) - 1))]!;
  return { quantiles, method: 'monte-carlo', samples };
}
