/**
 * Special functions the families and fits need (JavaScript's Math has no log-gamma).
 */

// Lanczos approximation, g = 7, 9 coefficients (Numerical Recipes 3rd ed. §6.1 / Godfrey):
// relative error of Γ below 2e-15 for x > 0.5; reflection covers x ≤ 0.5.
const LANCZOS_G = 7;
const LANCZOS_COEFFICIENTS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
  12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
];
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/**
 * Natural logarithm of the gamma function, ln Γ(x), for x > 0.
 * Cost O(1); absolute error about 1e-15·max(1, |ln Γ(x)|).
 *
 * @throws {RangeError} when x is not a positive finite number.
 * @example logGamma(5) // ln 24 ≈ 3.1780538303479458
 */
export function logGamma(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) throw new RangeError(`logGamma needs a positive finite argument, got ${String(x)}`);
  if (x < 0.5) {
    // Reflection: Γ(x)Γ(1−x) = π / sin(πx).
    return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  }
  const z = x - 1;
  let series = LANCZOS_COEFFICIENTS[0]!;
  for (let i = 1; i < LANCZOS_COEFFICIENTS.length; i++) series += LANCZOS_COEFFICIENTS[i]! / (z + i);
  const t = z + LANCZOS_G + 0.5;
  return HALF_LOG_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(series);
}

const LOG_FACTORIAL_TABLE: number[] = (() => {
  const table = [0];
  for (let k = 1; k <= 256; k++) table.push(table[k - 1]! + Math.log(k));
  return table;
})();

/**
 * ln(k!) for a non-negative integer k: an exact running sum up to 256, ln Γ(k + 1) beyond.
 *
 * @throws {RangeError} when k is not a non-negative integer.
 * @example logFactorial(10) // ln 3628800
 */
export function logFactorial(k: number): number {
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`logFactorial needs a non-negative integer, got ${String(k)}`);
  return k < LOG_FACTORIAL_TABLE.length ? LOG_FACTORIAL_TABLE[k]! : logGamma(k + 1);
}

/**
 * x^k for a non-negative integer k by repeated squaring: exact for k = 0, 1, and within
 * about 2·log2(k) roundings otherwise; several times faster than Math.pow in inner loops.
 *
 * @example powInteger(0.5, 32) // 2^-32
 */
export function powInteger(x: number, k: number): number {
  let result = 1;
  let base = x;
  let e = k;
  while (e > 0) {
    if (e & 1) result *= base;
    e >>>= 1;
    if (e > 0) base *= base;
  }
  return result;
}
