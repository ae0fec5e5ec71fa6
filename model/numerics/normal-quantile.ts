/**
 * The standard normal distribution: its cdf and the two-sided quantile of a confidence level,
 * for normal-approximation intervals (estimator windows, locality-aware predictions).
 */

/**
 * Φ(x), the standard normal cdf (Abramowitz & Stegun 7.1.26 erf, |error| < 1.5e-7: ample for
 * interval widths).
 *
 * @example normalCdf(1.959964) // ≈ 0.975
 */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  const erf = 1 - poly * Math.exp(-z * z);
  return x >= 0 ? 0.5 * (1 + erf) : 0.5 * (1 - erf);
}

/**
 * z such that P(|Z| ≤ z) = level for a standard normal Z (level 0.95 → 1.96), by bisection on
 * {@link normalCdf} (60 steps: full double precision of that cdf).
 *
 * @param level - confidence level in (0, 1)
 * @example normalQuantileTwoSided(0.95) // ≈ 1.95996
 */
export function normalQuantileTwoSided(level: number): number {
  // A pure function called with one level per window close (60 bisection steps of erf):
  // the last answer is remembered (docs/estimator.md, Performance).
  if (level === lastLevel) return lastQuantile;
  lastQuantile = bisectNormalQuantile(level);
  lastLevel = level;
  return lastQuantile;
}

let lastLevel = Number.NaN;
let lastQuantile = Number.NaN;

function bisectNormalQuantile(level: number): number {
  const target = 0.5 + level / 2;
  let low = 0;
  let high = 10;
  for (let i = 0; i < 60; i += 1) {
    const mid = (low + high) / 2;
    if (normalCdf(mid) < target) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}
