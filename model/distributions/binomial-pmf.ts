/**
 * Accurate binomial probabilities for large trial counts (Loader's saddle-point form), used by
 * the sorted-grouping what-if where launches hold up to 2^40 units and ln Γ(N) differences
 * would lose all precision.
 */
import { logFactorial } from '../numerics/special-functions.ts';

const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI);

/** stirlerr(k) = ln k! − (k + ½) ln k + k − ½ ln 2π (k ≥ 1), the error of Stirling's formula. */
function stirlingError(k: number): number {
  if (k > 15) {
    const inverse = 1 / k;
    const inverseSquare = inverse * inverse;
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - inverseSquare / 1188) * inverseSquare) * inverseSquare) * inverseSquare) * inverse;
  }
  return logFactorial(k) - (k + 0.5) * Math.log(k) + k - HALF_LOG_TWO_PI;
}

/** bd0(x, np) = x ln(x/np) + np − x, computed without cancellation when x ≈ np. */
function deviance(x: number, mean: number): number {
  if (Math.abs(x - mean) < 0.1 * (x + mean)) {
    let v = (x - mean) / (x + mean);
    const square = v * v;
    let sum = (x - mean) * v;
    let ej = 2 * x * v;
    v = square;
    for (let j = 1; j < 1000; j++) {
      ej *= square;
      const next = sum + ej / (2 * j + 1);
      if (next === sum) return next;
      sum = next;
    }
    return sum;
  }
  return x * Math.log(x / mean) + mean - x;
}

/**
 * P(Bin(trials, p) = x), relative error about 1e-14 for any trials up to 2^53.
 * `q` is 1 − p, passed separately so that tail probabilities keep their precision.
 *
 * @example binomialPmf(3, 10, 0.5, 0.5) // 120/1024
 */
export function binomialPmf(x: number, trials: number, p: number, q: number): number {
  if (x < 0 || x > trials) return 0;
  if (p <= 0) return x === 0 ? 1 : 0;
  if (q <= 0) return x === trials ? 1 : 0;
  if (x === 0) return Math.exp(trials * (q < 0.5 ? Math.log(q) : Math.log1p(-p)));
  if (x === trials) return Math.exp(trials * (p < 0.5 ? Math.log(p) : Math.log1p(-q)));
  const rest = trials - x;
  const logPmf = stirlingError(trials) - stirlingError(x) - stirlingError(rest) - deviance(x, trials * p) - deviance(rest, trials * q);
  return Math.exp(logPmf) * Math.sqrt(trials / (2 * Math.PI * x * rest));
}

/**
 * P(Bin(trials, p) = d) for d = 0..count−1 into `out` (by the ratio recurrence from d = 0, in
 * log space so that a tiny P(0) does not underflow the later terms). Returns Σ of those terms.
 */
export function binomialHead(trials: number, p: number, q: number, count: number, out: Float64Array): number {
  let sum = 0;
  if (p <= 0) {
    for (let d = 0; d < count; d++) out[d] = d === 0 ? 1 : 0;
    return count > 0 ? 1 : 0;
  }
  if (q <= 0) {
    for (let d = 0; d < count; d++) out[d] = d === trials ? 1 : 0;
    return count > trials ? 1 : 0;
  }
  let logTerm = trials * (q < 0.5 ? Math.log(q) : Math.log1p(-p));
  const logOdds = Math.log(p) - Math.log(q);
  for (let d = 0; d < count; d++) {
    if (d > trials) {
      out[d] = 0;
      continue;
    }
    const term = Math.exp(logTerm);
    out[d] = term;
    sum += term;
    logTerm += Math.log((trials - d) / (d + 1)) + logOdds;
  }
  return sum;
}
