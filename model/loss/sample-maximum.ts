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
 * What {@link sampleMaximumPmf} computes of a distribution before it looks at n: per value, ln F_j
 * and ln(1 − f_j/F_j) (or that f_j/F_j = 1). Prepared once by {@link prepareWorkloadLoss}, it gives
 * {@link preparedWorkloadLoss} for every n with the same bits as workloadLoss.
 */
export interface WorkloadLossPreparation {
  readonly values: readonly number[];
  /** ln F_j as sampleMaximumPmf takes it (log1p of the upper tail when F_j > 0.5, else ln F_j). */
  readonly logCdf: Float64Array;
  /** ln(1 − f_j/F_j); unused where whole[j]. */
  readonly logRemainder: Float64Array;
  /** f_j/F_j ≥ 1 (the value carries all the mass up to it: P(max = v_j) = F_j^n). */
  readonly whole: Uint8Array;
  /** E[W] = dist.mean(). */
  readonly mean: number;
}

/**
 * Prepares `dist` for {@link preparedWorkloadLoss}: the n-free logarithms of sampleMaximumPmf,
 * each the same expression on the same numbers. Cost O(size).
 *
 * @example preparedWorkloadLoss(prepareWorkloadLoss(dist), 8) === workloadLoss(dist, 8) // true
 */
export function prepareWorkloadLoss(dist: CategoricalDistribution): WorkloadLossPreparation {
  const { values, probabilities: f } = dist;
  const size = values.length;
  const tailAbove = new Float64Array(size + 1); // tailAbove[j] = P(W > v_{j-1}) = Σ_{i ≥ j} f_i
  for (let j = size - 1; j >= 0; j--) tailAbove[j] = tailAbove[j + 1]! + f[j]!;
  const logCdf = new Float64Array(size);
  const logRemainder = new Float64Array(size);
  const whole = new Uint8Array(size);
  let prefix = 0;
  for (let j = 0; j < size; j++) {
    prefix += f[j]!;
    const upperTail = tailAbove[j + 1]!;
    logCdf[j] = prefix > 0.5 ? Math.log1p(-Math.min(upperTail, 1)) : Math.log(prefix);
    const share = f[j]! / prefix;
    if (share >= 1) whole[j] = 1;
    else logRemainder[j] = Math.log1p(-share);
  }
  return { values, logCdf, logRemainder, whole, mean: dist.mean() };
}

/**
 * {@link workloadLoss} of the prepared distribution and n, bit for bit: P(max = v_j) =
 * exp(n·ln F_j)·(1 − exp(n·ln(1 − f_j/F_j))) summed against the values as expectedMaximum sums
 * them, over the mean. Cost O(size): two exponentials per value instead of four logarithms and
 * exponentials.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example preparedWorkloadLoss(prepareWorkloadLoss(CategoricalDistribution.fromCounts({ 0: 1, 1: 1 })), 2) // 1.5
 */
export function preparedWorkloadLoss(prepared: WorkloadLossPreparation, n: number): number {
  assertGroupSize(n);
  const { values, logCdf, logRemainder, whole } = prepared;
  let maximum = 0;
  for (let j = 0; j < values.length; j++) {
    const fraction = whole[j] === 1 ? 1 : -Math.expm1(n * logRemainder[j]!);
    maximum += values[j]! * (Math.exp(n * logCdf[j]!) * fraction);
  }
  const mean = prepared.mean;
  return mean > 0 ? maximum / mean : 1;
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
