/**
 * The conditional method for quantiles of X_W(n) (docs/model.md §2e): condition on the maximum
 * and on how many draws reach it, and approximate the sum of the other draws by a three-moment
 * (Wilson–Hilferty) law. Cost O(|support| · a few) per evaluation of the cdf, independent of the
 * values' size; the accuracy is the one measured in docs/model.md §8.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { logFactorial } from '../numerics/special-functions.ts';
import { assertGroupSize } from './group-size.ts';
import { gcd } from '../numerics/gcd.ts';

/** Terms below this probability are left out (their total, reported as `omittedMass`, is at most ~1e-5). */
const TERM_FLOOR = 1e-9;

/**
 * The cdf of X_W(n) as a sum of terms: term t holds when the maximum is v_k and exactly j draws
 * equal it, with probability weight[t] = C(n, j)·f(v_k)^j·F(v_{k−1})^(n−j). Given that, the other
 * m = n − j draws are i.i.d. from W conditioned on W < v_k, so S = j·v_k + T with T their sum,
 * and X ≤ x ⇔ T ≥ n·v_k/x − j·v_k. T's mean, standard deviation and skewness are exact
 * (m times the truncated law's cumulants); only its shape is approximated.
 */
export interface ConditionalLossTerms {
  readonly count: number;
  readonly weight: Float64Array;
  /** n·v_k and j·v_k of each term. */
  readonly top: Float64Array;
  readonly shift: Float64Array;
  /** Mean, standard deviation and skewness of T (0, 0, 0 when m = 0). */
  readonly mean: Float64Array;
  readonly deviation: Float64Array;
  readonly skewness: Float64Array;
  /** Half the lattice step of T (continuity correction; 0 when T is a point). */
  readonly halfStep: Float64Array;
  /** Probability of the terms left out (each below 1e-9). */
  readonly omittedMass: number;
}

/**
 * Builds the terms of {@link ConditionalLossTerms} in one pass over the support: the truncated
 * law's weight, mean and central moments are updated value by value (the pairwise update of
 * Chan et al., so no moment is formed as a difference of large raw moments).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example conditionalLossTerms(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2).count // 3
 */
export function conditionalLossTerms(dist: CategoricalDistribution, n: number): ConditionalLossTerms {
  assertGroupSize(n);
  const values = dist.values;
  const probabilities = dist.probabilities;
  const capacity = values.length * 4 + 16;
  let weight: Float64Array = new Float64Array(capacity);
  let top: Float64Array = new Float64Array(capacity);
  let shift: Float64Array = new Float64Array(capacity);
  let mean: Float64Array = new Float64Array(capacity);
  let deviation: Float64Array = new Float64Array(capacity);
  let skewness: Float64Array = new Float64Array(capacity);
  let halfStep: Float64Array = new Float64Array(capacity);
  let count = 0;
  let omitted = 0;
  const grow = (): void => {
    const size = weight.length * 2;
    const copy = (a: Float64Array): Float64Array => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    weight = copy(weight);
    top = copy(top);
    shift = copy(shift);
    mean = copy(mean);
    deviation = copy(deviation);
    skewness = copy(skewness);
    halfStep = copy(halfStep);
  };
  const logFactorialN = logFactorial(n);
  // The law of W below the current value: total probability, mean, Σ f·(v − mean)², Σ f·(v − mean)³.
  let below = 0;
  let belowMean = 0;
  let c2 = 0;
  let c3 = 0;
  let spread = 0; // gcd of v_i − v_0 over the values below
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    const f = probabilities[k]!;
    if (f > 0) {
      // P(max = v_k) = F_k^n − F_{k−1}^n: the terms of this k sum to it.
      const atMost = below + f;
      const maxMass = Math.pow(atMost, n) - Math.pow(below, n);
      if (maxMass < TERM_FLOOR) {
        omitted += Math.max(0, maxMass);
      } else {
        const variance = below > 0 ? c2 / below : 0;
        const sd = Math.sqrt(Math.max(0, variance));
        const skew = sd > 0 ? c3 / below / (sd * sd * sd) : 0;
        const logF = Math.log(f);
        const logBelow = below > 0 ? Math.log(below) : -Infinity;
        for (let j = 1; j <= n; j++) {
          const m = n - j;
          const logWeight = logFactorialN - logFactorial(j) - logFactorial(m) + j * logF + (m > 0 ? m * logBelow : 0);
          const w = Math.exp(logWeight);
          if (!(w >= TERM_FLOOR)) {
            omitted += w;
            // Past the mode the terms fall at least geometrically (ratio ≤ 1/2): the rest is below w.
            if ((m * f) / ((j + 1) * below) <= 0.5) {
              omitted += w;
              break;
            }
            continue;
          }
          if (count === weight.length) grow();
          weight[count] = w;
          top[count] = n * v;
          shift[count] = j * v;
          mean[count] = m * belowMean;
          deviation[count] = m > 0 ? Math.sqrt(m) * sd : 0;
          skewness[count] = m > 0 && sd > 0 ? skew / Math.sqrt(m) : 0;
          halfStep[count] = m > 0 && spread > 0 ? spread / 2 : 0;
          count += 1;
        }
      }
      // Add v_k to the law below (pairwise update of weight, mean, second and third central moments).
      if (below === 0) {
        below = f;
        belowMean = v;
      } else {
        const total = below + f;
        const delta = v - belowMean;
        const nextC3 = c3 + (delta * delta * delta * below * f * (below - f)) / (total * total) - (3 * delta * f * c2) / total;
        c2 += (delta * delta * below * f) / total;
        c3 = nextC3;
        belowMean += (delta * f) / total;
        below = total;
      }
      spread = gcd(v - values[0]!, spread);
    }
  }
  return { count, weight, top, shift, mean, deviation, skewness, halfStep, omittedMass: omitted };
}

/**
 * P(X_W(n) ≤ x) from the terms (approximate: docs/model.md §2e), and its derivative in log x
 * when `slope` is given (slope[0] receives it). Non-decreasing in x. Each term's P(T ≥ y) is
 * the Wilson–Hilferty form of the shifted gamma law with T's three moments,
 * P(T ≥ y) ≈ 1 − Φ(z), z = (6/γ)·(∛(1 + γ·d/2) − 1) + γ/6 with d = (y − mean)/sd (z = d when
 * γ ≈ 0; 1 or 0 beyond the gamma law's end), and Φ the A&S 7.1.26 normal cdf (error < 1.5e-7).
 *
 * @example conditionalLossCdf(conditionalLossTerms(dist, 32), 1.5)
 */
export function conditionalLossCdf(terms: ConditionalLossTerms, x: number, slope?: Float64Array): number {
  let sum = 0;
  let derivative = 0;
  const { count, weight, top, shift, mean, deviation, skewness, halfStep } = terms;
  for (let t = 0; t < count; t++) {
    const sd = deviation[t]!;
    const y = top[t]! / x - shift[t]! - halfStep[t]!;
    const mu = mean[t]!;
    if (sd === 0) {
      // T is a point (m = 0, or one value below v_k): X is an atom.
      if (y <= mu + 1e-9 * (mu + 1)) sum += weight[t]!;
      continue;
    }
    const d = (y - mu) / sd;
    const skew = skewness[t]!;
    let z = d;
    let dz = 1; // dz/dd
    if (skew > 1e-6 || skew < -1e-6) {
      const w = 1 + 0.5 * skew * d;
      if (w <= 0) {
        if (skew > 0) sum += weight[t]!;
        continue;
      }
      const root = Math.cbrt(w);
      z = (6 / skew) * (root - 1) + skew / 6;
      dz = 1 / (root * root);
    }
    // 1 − Φ(z) (A&S 7.1.26), and the normal density from the same exponential.
    if (z > 8.3) continue;
    if (z < -8.3) {
      sum += weight[t]!;
      continue;
    }
    const a = Math.abs(z) * Math.SQRT1_2;
    const u = 1 / (1 + 0.3275911 * a);
    const e = Math.exp(-a * a);
    const half = 0.5 * u * (0.254829592 + u * (-0.284496736 + u * (1.421413741 + u * (-1.453152027 + u * 1.061405429)))) * e;
    sum += weight[t]! * (z >= 0 ? half : 1 - half);
    // d/d(log x) of P(T ≥ y(x)) = φ(z)·(dz/dd)/sd · top/x.
    derivative += (weight[t]! * 0.3989422804014327 * e * dz * (top[t]! / x)) / sd;
  }
  if (slope !== undefined) slope[0] = derivative;
  return sum;
}

/**
 * The p-quantile of X_W(n) under {@link conditionalLossCdf}: the x in [1, n] where the cdf
 * reaches p, by Newton's method on log x safeguarded by bisection, to |Δ log x| ≤ 1e-7; `from`
 * (a smaller quantile already found) narrows the start.
 */
export function conditionalLossQuantile(terms: ConditionalLossTerms, n: number, p: number, from = 1): number {
  let low = Math.log(Math.max(1, from));
  let high = Math.log(n);
  if (conditionalLossCdf(terms, Math.exp(low)) >= p) return Math.exp(low);
  const slope = new Float64Array(1);
  let u = (low + high) / 2;
  for (let iteration = 0; iteration < 100; iteration++) {
    const value = conditionalLossCdf(terms, Math.exp(u), slope) - p;
    if (value >= 0) high = u;
    else low = u;
    let next = slope[0]! > 0 ? u - value / slope[0]! : (low + high) / 2;
    if (!(next > low && next < high)) next = (low + high) / 2;
    if (Math.abs(next - u) <= 1e-7 || high - low <= 1e-7) return Math.exp(next);
    u = next;
  }
  return Math.exp(high);
}
