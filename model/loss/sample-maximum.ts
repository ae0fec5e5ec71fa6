/**
 * The sample maximum of n i.i.d. draws, and the workload loss E[max]/E[W] (docs/model.md §2a, §2c).
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { assertGroupSize } from './group-size.ts';

/** pmf of max(W_1..W_n) on the support of W (same value order; zero-probability values kept). */
export interface MaximumPmf {
  readonly values: readonly number[];
  readonly probabilities: readonly number[];
}

/**
 * P(max = v_j) = F(v_j)^n − F(v_{j−1})^n, evaluated as F_j^n·(1 − (1 − f_j/F_j)^n) with
 * log1p/expm1 and with F_j^n = exp(n·log1p(−tail_j)), so that neither the upper tail (F near 1)
 * nor the lower values (F^n tiny) lose their relative precision to cancellation. Cost O(size).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example sampleMaximumPmf(CategoricalDistribution.fromCounts({ 0: 1, 1: 1 }), 2).probabilities // [0.25, 0.75]
 */
export function sampleMaximumPmf(dist: CategoricalDistribution, n: number): MaximumPmf {
  assertGroupSize(n);
  const { values, probabilities: f } = dist;
  const size = values.length;
  const tailAbove = new Float64Array(size + 1); // tailAbove[j] = P(W > v_{j-1}) = Σ_{i ≥ j} f_i
  for (let j = size - 1; j >= 0; j--) tailAbove[j] = tailAbove[j + 1]! + f[j]!;
  const result: number[] = new Array<number>(size);
  let prefix = 0;
  for (let j = 0; j < size; j++) {
    prefix += f[j]!;
    const upperTail = tailAbove[j + 1]!;
    // ln F_j: log1p(−tail) is exact-ish when F_j is near 1, ln(prefix) when F_j is small.
    const logF = prefix > 0.5 ? Math.log1p(-Math.min(upperTail, 1)) : Math.log(prefix);
    const share = f[j]! / prefix; // f_j / F_j in (0, 1]
    const fraction = share >= 1 ? 1 : -Math.expm1(n * Math.log1p(-share));
    result[j] = Math.exp(n * logF) * fraction;
  }
  return { values, probabilities: result };
}

/**
 * E[max(W_1..W_n)] in the units of W. Cost O(size).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example expectedMaximum(CategoricalDistribution.fromCounts({ 0: 1, 1: 1 }), 2) // 0.75
 */
export function expectedMaximum(dist: CategoricalDistribution, n: number): number {
  const { values, probabilities } = sampleMaximumPmf(dist, n);
  let sum = 0;
  for (let j = 0; j < values.length; j++) sum += values[j]! * probabilities[j]!;
  return sum;
}

/**
 * Workload loss E[max]/E[W] (docs/model.md §2c): total SIMT cost over total MIMD cost across many
 * groups, what a job's run time feels. It is not E[X_W(n)] (Jensen). A distribution with all
 * mass at 0 has no work and, by the H = 1 convention, workload loss 1. Cost O(size).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example workloadLoss(CategoricalDistribution.fromCounts({ 0: 1, 1: 1 }), 2) // 1.5
 */
export function workloadLoss(dist: CategoricalDistribution, n: number): number {
  const maximum = expectedMaximum(dist, n);
  const mean = dist.mean();
  return mean > 0 ? maximum / mean : 1;
}
