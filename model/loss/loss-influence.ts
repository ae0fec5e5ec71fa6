/**
 * The influence of each count value on E[X_W(n)] (docs/model.md §2f), and from it the
 * standard error of an expected loss estimated from a histogram, both in O(nodes·|supp|).
 */
import { assertGroupSize } from './group-size.ts';
import { powInteger } from '../numerics/special-functions.ts';
import type { SupportArrays } from './fast-loss.ts';

/**
 * Trapezoid step in x = ln u. The integrands are positive mixtures of u·e^(−r·u), for which the
 * trapezoid rule in x has the relative error ≈ (4π/√h)·e^(−π²/h) whatever r (docs/model.md §2b):
 * about 5e-8 at h = 0.5, far below what a standard error needs.
 */
const STEP = 0.5;
/** Head and tail truncation, relative to the smallest conditional loss (≥ 1). */
const TOLERANCE = 1e-8;

/**
 * The conditional expected losses h_j = E[X_W(n) | W_1 = v_j] for every support value v_j of
 * `dist` (ascending distinct non-negative integers, probabilities summing to 1), each ≥ 1, with
 * Σ_j f_j·h_j = E[X_W(n)]. With M′ and S′ the maximum and the sum of the n − 1 other draws:
 *
 *     h_j = n ∫_0^∞ e^(−t·v_j)·G_t(j) dt + [v_j = 0]·f(0)^(n−1),
 *     G_t(j) = E[max(v_j, M′)·e^(−t·S′)] = v_j·A^m + Σ_{i ≥ j} (v_{i+1} − v_i)·(A^m − P_i^m),
 *
 * m = n − 1, P_i = Σ_{k ≤ i} f_k e^(−t v_k), A = P_{K−1} (the summation by parts of the fast
 * method, docs/model.md §2b), so one pass per quadrature node gives every h_j: O(nodes·|supp|)
 * with about 50–90 nodes. Quadrature in u = t·n·E[W] = e^x, trapezoid step 0.5 (relative error
 * ~5e-8); head below u_0 by the value at t = 0 (its error bounded by the slope there), tail cut
 * by the bound ∫_T^∞ J ≤ J(T)/v_min⁺ (every term of J decays at least at the rate of the smallest
 * positive value); both ≤ 1e-8.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example conditionalLosses(CategoricalDistribution.fromCounts({ 1: 1, 3: 1 }), 2) // [1.25, 1.25]
 */
export function conditionalLosses(dist: SupportArrays, n: number): Float64Array {
  assertGroupSize(n);
  const size = dist.values.length;
  const h = new Float64Array(size);
  if (size === 1 || n === 1) return h.fill(1);
  // Typed copies: the loops below read them once per node.
  const values = Float64Array.from(dist.values);
  const probabilities = Float64Array.from(dist.probabilities);
  const m = n - 1;
  let mean = 0;
  for (let j = 0; j < size; j++) mean += probabilities[j]! * values[j]!;
  const scale = 1 / (n * mean); // t = u·scale
  const largest = values[size - 1]!;
  const smallestPositive = values[0] === 0 ? values[1]! : values[0]!;
  const zeroMass = values[0] === 0 ? probabilities[0]! : 0;
  // Head: the nodes below u_0 are added at their value at t = 0, J_j(0) = G_0(j). The error is at
  // most Σ_{k<first} h·n·s·u_k²·|J_j′(0)| with |J_j′(0)| ≤ s·v_max·(v_max + n·E[W]) per unit u, i.e.
  // ≤ 1.2·u_0²·v_max·(v_max + n·E[W])/(n·E[W]²) (h = 0.5), kept ≤ TOLERANCE (h_j ≥ 1) by u_0.
  const headU = Math.sqrt((TOLERANCE * n * mean * mean) / (1.2 * largest * (largest + n * mean)));
  const first = Math.floor(Math.log(headU) / STEP);
  const weights = new Float64Array(size); // f_k·e^(−t v_k)
  const share = new Float64Array(size); // 1 − (1 − x_i)^m, x_i = Σ_{k>i} w_k / A
  {
    // G_0(j) = v_j + Σ_{i ≥ j} gap_i·(1 − F_i^m), times n·s·Σ_{k<first} h·u_k (a geometric series).
    const headSum = (STEP * Math.exp((first - 1) * STEP)) / -Math.expm1(-STEP);
    let cumulative = 0;
    let tail = 0;
    const cdf = weights; // scratch until the nodes start
    for (let j = 0; j < size; j++) cdf[j] = Math.min(1, (cumulative += probabilities[j]!));
    for (let j = size - 1; j >= 0; j--) {
      if (j < size - 1) tail += (values[j + 1]! - values[j]!) * (1 - powInteger(cdf[j]!, m));
      h[j] = n * scale * headSum * (values[j]! + tail);
    }
  }
  // e^(−g·t) for the gaps g < 16 (a running product between exact exps re-anchored every 32 values).
  const gapFactors = new Float64Array(16);
  let cut = size; // values from `cut` on have e^(−t·v) < 1e-20 at this node and every later one
  for (let k = first; k < first + 4000; k++) {
    const u = Math.exp(k * STEP);
    const t = u * scale;
    const unit = Math.exp(-t);
    gapFactors[0] = 1;
    for (let g = 1; g < 16; g++) gapFactors[g] = gapFactors[g - 1]! * unit;
    let total = 0;
    let factor = 1;
    let j = 0;
    for (; j < cut; j++) {
      if ((j & 31) === 0) factor = Math.exp(-t * values[j]!);
      else {
        const gap = values[j]! - values[j - 1]!;
        factor *= gap < 16 ? gapFactors[gap]! : Math.exp(-t * gap);
      }
      if (factor < 1e-20) break;
      total += weights[j] = probabilities[j]! * factor;
    }
    cut = j;
    if (!(total > 0)) break;
    const power = powInteger(total, m); // A^m
    const inverse = 1 / total;
    // Suffix shares from the top, without cancellation: the series of 1 − (1 − x)^m for tiny x,
    // else the power of the complement; once that power is below 1e-18 every lower share is 1.
    // Shares from cut − 1 on are 0 (no weight above them).
    let suffix = 0;
    let i = cut - 2;
    for (; i >= 0; i--) {
      suffix += weights[i + 1]!;
      const x = suffix * inverse;
      if (m * x < 1e-4) {
        share[i] = m * x * (1 - ((m - 1) * x) / 2);
        continue;
      }
      const rest = powInteger(1 - x, m);
      if (rest < 1e-18) break;
      share[i] = 1 - rest;
    }
    for (; i >= 0; i--) share[i] = 1;
    let gathered = 0; // Σ_{i ≥ j} gap_i·share_i
    let largestTerm = 0;
    const scaled = n * scale * STEP * u;
    // Values from `cut` on: J_j(T) < 1e-20·v_max·A^m, nothing a standard error can see.
    for (let j = cut - 1; j >= 0; j--) {
      if (j < cut - 1) gathered += (values[j + 1]! - values[j]!) * share[j]!;
      const integrand = (weights[j]! / probabilities[j]!) * power * (values[j]! + gathered); // J_j(t) = e^(−t v_j)·G_t(j)
      h[j] = h[j]! + scaled * integrand;
      if (integrand > largestTerm) largestTerm = integrand;
    }
    // Tail: ∫_T^∞ J_j ≤ J_j(T)/v_min⁺ (times n), against h_j ≥ 1; not before u = 1, the main scale.
    if (k > 0 && (n * largestTerm) / smallestPositive <= TOLERANCE) break;
  }
  if (zeroMass > 0) h[0] = h[0]! + powInteger(zeroMass, m); // the all-zero group counts as loss 1
  return h;
}

/**
 * The standard error of E[X_W(n)] estimated from a histogram of `total` lanes (or any positive
 * weights summing to `total`) whose normalised weights are `dist`: the delta method of a Poisson
 * bootstrap (each weight c_j redrawn as Poisson(c_j)), exact to first order,
 *
 *     SE² = Σ_j c_j·(∂μ/∂c_j)² = (n²/total)·Σ_j f_j·(h_j − μ)²,    μ = Σ_j f_j·h_j,
 *
 * since ∂μ/∂c_j = n·(h_j − μ)/total with h_j = E[X | W_1 = v_j] ({@link conditionalLosses}).
 * Cost O(nodes·|supp|), one quadrature; relative error below 1e-5 (against enumeration:
 * loss-influence.test.ts).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example lossStandardError(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32, 8192) // ≈ 0.006
 */
export function lossStandardError(dist: SupportArrays, n: number, total: number): number {
  const h = conditionalLosses(dist, n);
  if (!(total > 0) || h.length < 2) return 0;
  let mu = 0;
  for (let j = 0; j < h.length; j++) mu += dist.probabilities[j]! * h[j]!;
  let spread = 0;
  for (let j = 0; j < h.length; j++) spread += dist.probabilities[j]! * (h[j]! - mu) ** 2;
  return n * Math.sqrt(spread / total);
}
