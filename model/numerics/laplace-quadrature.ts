/**
 * The quadrature shared by the what-if programmes (docs/model.md §2d): nodes t_i and weights w_i
 * with Σ_i w_i·e^{−t_i·s} = 1/s (= ∫₀^∞ e^{−t·s} dt) for every sum s in [smallestSum, largestSum].
 */

/** Nodes and weights of {@link laplaceQuadrature}. */
export interface Quadrature {
  readonly times: Float64Array;
  readonly weights: Float64Array;
}

// Trapezoidal rule for 1/s = ∫₀^∞ e^{−st} dt: relative error ≤ 5e-10 for s/smallest ≤ 4e4.
const QUADRATURE_STEP = 0.4;
const UPPER_EXPONENT = 38;

/**
 * Trapezoidal rule in u with ln t = u − e^{−(u − u_c)}: uniform in ln t where the integrands of
 * all sums s ∈ [smallestSum, largestSum] live, doubly exponential decay below u_c; nodes up to
 * t = 38/smallestSum (e^{−t·s} < e^{−38} beyond).
 *
 * @param smallestSum the smallest positive sum the rule must integrate (> 0).
 * @param largestSum the largest sum (≥ smallestSum).
 * @returns nodes ascending in t with their weights; about (ln(largest/smallest) + 11.6)/0.4 nodes.
 * @example const { times, weights } = laplaceQuadrature(1, 320); // Σ w_i e^{−t_i·7} ≈ 1/7
 */
export function laplaceQuadrature(smallestSum: number, largestSum: number): Quadrature {
  const centre = Math.log(1 / largestSum) - 3;
  const uMin = centre - 5;
  const uMax = Math.log(UPPER_EXPONENT / smallestSum);
  const count = Math.ceil((uMax - uMin) / QUADRATURE_STEP) + 1;
  const times = new Float64Array(count);
  const weights = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    const u = uMin + i * QUADRATURE_STEP;
    const squeeze = Math.exp(-(u - centre));
    const t = Math.exp(u - squeeze);
    times[i] = t;
    weights[i] = QUADRATURE_STEP * t * (1 + squeeze);
  }
  return { times, weights };
}
