/**
 * The exact method (docs/model.md §2a): the distribution of X_W(n) = n·max/sum as exact
 * outcome → probability pairs, grouped by the reduced fraction n·a/s. The correctness reference.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { assertGroupSize } from './group-size.ts';

/** One outcome of X_W(n): the reduced fraction numerator/denominator, its value and probability. */
export interface LossOutcome {
  readonly numerator: number;
  readonly denominator: number;
  readonly value: number;
  readonly probability: number;
}

/** The exact distribution of X_W(n): outcomes by ascending value, and E[X_W(n)]. */
export interface ExactLossDistribution {
  readonly outcomes: LossOutcome[];
  readonly mean: number;
}

/** Work limit of the exact method in multiply-adds (≈ 1–3 s here); beyond it the method refuses. */
export const EXACT_WORK_LIMIT = 2e9;
/** Memory limit of the exact method in double cells (8 bytes each). */
export const EXACT_CELL_LIMIT = 2.5e7;

/** Cost estimate of the exact method for a distribution and n. */
export interface ExactCost {
  /** Multiply-adds of the convolution tables, about n³/6 · Σ_a a/g over the support (g = gcd of values). */
  readonly operations: number;
  /** Double cells held, about n²/2 · max/g. */
  readonly cells: number;
  /** Whether both are within {@link EXACT_WORK_LIMIT} and {@link EXACT_CELL_LIMIT}. */
  readonly feasible: boolean;
}

function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) {
    const r = x % y;
    x = y;
    y = r;
  }
  return x;
}

function reducedSupport(dist: CategoricalDistribution): { scaled: number[]; divisor: number } {
  let divisor = 0;
  for (const v of dist.values) divisor = gcd(v, divisor);
  if (divisor === 0) divisor = 1;
  return { scaled: dist.values.map((v) => v / divisor), divisor };
}

/**
 * Estimates the work and memory of the exact method (scale-free: values are divided by their gcd).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example exactCost(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32).feasible // true
 */
export function exactCost(dist: CategoricalDistribution, n: number): ExactCost {
  assertGroupSize(n);
  const { scaled } = reducedSupport(dist);
  let valueSum = 0;
  for (const a of scaled) valueSum += a;
  const operations = ((n * n * n) / 6) * valueSum + n * scaled.length;
  const cells = ((n * (n + 1)) / 2) * scaled[scaled.length - 1]! + n + 1;
  return { operations, cells, feasible: operations <= EXACT_WORK_LIMIT && cells <= EXACT_CELL_LIMIT };
}

/**
 * Core of the exact method. G[i][s] holds g(s; i, m) of docs/model.md §2a, the unnormalised
 * probability that i draws, each ≤ the current maximum m, sum to s. Adding the next support
 * value a with probability f expands (P_{<a} + f·z^a)^i binomially:
 *
 *     G_a[i][s] = Σ_k C(i,k) f^k G_{a−}[i−k][s − k·a],
 *
 * updated in place for i descending. For i = n the k ≥ 1 terms are exactly
 * P(max = a, sum = s) = g(s; n, a) − g(s; n, a−), computed as a sum of non-negative terms
 * instead of the subtraction (no cancellation), and G[n] itself is never needed.
 */
function runExact(dist: CategoricalDistribution, n: number, onMaximum: (a: number, joint: Float64Array, high: number) => void): void {
  const cost = exactCost(dist, n);
  if (!cost.feasible) {
    throw new ModelError(
      'WW_ERR_MODEL_EXACT_TOO_LARGE',
      `exact method for n=${n} on ${dist.size} values up to ${dist.max} needs about ${cost.operations.toPrecision(2)} operations and ${cost.cells.toPrecision(2)} cells (limits ${EXACT_WORK_LIMIT.toPrecision(2)} and ${EXACT_CELL_LIMIT.toPrecision(2)}); use the fast method for the mean`,
    );
  }
  const { scaled } = reducedSupport(dist);
  const probabilities = dist.probabilities;
  const maxValue = scaled[scaled.length - 1]!;
  const tables: Float64Array[] = [];
  for (let i = 0; i < n; i++) tables.push(new Float64Array(i * maxValue + 1));
  tables[0]![0] = 1;
  const joint = new Float64Array(n * maxValue + 1);
  let current = 0; // largest support value added so far (tables hold sums up to i·current)
  for (let index = 0; index < scaled.length; index++) {
    const a = scaled[index]!;
    const f = probabilities[index]!;
    const last = index === scaled.length - 1;
    for (let i = n; i >= 1; i--) {
      if (last && i < n) break; // the last value only needs the joint row
      const target = i === n ? joint : tables[i]!;
      if (i === n) target.fill(0, 0, n * a + 1);
      let coefficient = 1;
      for (let k = 1; k <= i; k++) {
        coefficient *= ((i - k + 1) / k) * f;
        if (coefficient === 0) break;
        const source = tables[i - k]!;
        const length = (i - k) * current + 1;
        const offset = k * a;
        for (let s = 0; s < length; s++) target[s + offset]! += coefficient * source[s]!;
      }
    }
    onMaximum(a, joint, n * a);
    current = a;
  }
}

/**
 * The exact distribution of X_W(n) (docs/model.md §2a) with outcomes grouped by reduced fraction
 * n·a/s and sorted by value; an all-zero group counts as X = 1 (fraction 1/1). Probabilities
 * sum to 1 within rounding (about 1e-14). Cost: see {@link exactCost}.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_EXACT_TOO_LARGE when
 *   the support is too large for the exact method (use the fast method).
 * @example exactLossDistribution(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2).mean // 1 + 1/6
 */
export function exactLossDistribution(dist: CategoricalDistribution, n: number): ExactLossDistribution {
  const { scaled } = reducedSupport(dist);
  const maxValue = scaled[scaled.length - 1]!;
  const keyBase = n * maxValue + 2; // numerator and denominator (≤ n·max, or 1/1) are both below keyBase
  const groups = new Map<number, number>();
  let mean = 0;
  runExact(dist, n, (a, joint, high) => {
    if (a === 0) {
      const p = joint[0]!;
      if (p > 0) {
        groups.set(keyBase + 1, (groups.get(keyBase + 1) ?? 0) + p);
        mean += p;
      }
      return;
    }
    const top = n * a;
    for (let s = a; s <= high; s++) {
      const p = joint[s]!;
      if (p === 0) continue;
      const divisor = gcd(top, s);
      const key = (top / divisor) * keyBase + s / divisor;
      groups.set(key, (groups.get(key) ?? 0) + p);
      mean += (p * top) / s;
    }
  });
  const outcomes: LossOutcome[] = [];
  for (const [key, probability] of groups) {
    const numerator = Math.floor(key / keyBase);
    const denominator = key - numerator * keyBase;
    outcomes.push({ numerator, denominator, value: numerator / denominator, probability });
  }
  outcomes.sort((x, y) => x.value - y.value);
  return { outcomes, mean };
}

/**
 * E[X_W(n)] by the exact method without building the outcome list (same sums, less memory).
 *
 * @throws {ModelError} as {@link exactLossDistribution}.
 * @example exactExpectedLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32)
 */
export function exactExpectedLoss(dist: CategoricalDistribution, n: number): number {
  let mean = 0;
  runExact(dist, n, (a, joint, high) => {
    if (a === 0) {
      mean += joint[0]!;
      return;
    }
    const top = n * a;
    let partial = 0;
    for (let s = a; s <= high; s++) {
      const p = joint[s]!;
      if (p !== 0) partial += p / s;
    }
    mean += partial * top;
  });
  return mean;
}
