/**
 * Independent references for tests: full enumeration of all |supp|^n samples (tiny cases only).
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';

/** Result of {@link bruteForceLoss}: E[X], E[max], and P(X = x) keyed by the reduced fraction "p/q". */
export interface BruteForceResult {
  readonly expectedLoss: number;
  readonly expectedMaximum: number;
  /** E[max·S] and E[max·S²], S the sum of the n draws. */
  readonly maximumTimesSum: number;
  readonly maximumTimesSumSquared: number;
  readonly byFraction: Map<string, number>;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * Enumerates every sample (w_1..w_n) of the support with its probability and computes
 * H = n·max/Σ (1 when all zero) directly. Cost |supp|^n·n: keep |supp|^n ≤ ~1e5.
 */
export function bruteForceLoss(dist: CategoricalDistribution, n: number): BruteForceResult {
  const size = dist.size;
  const index = new Array<number>(n).fill(0);
  const byFraction = new Map<string, number>();
  let expectedLoss = 0;
  let expectedMaximum = 0;
  let maximumTimesSum = 0;
  let maximumTimesSumSquared = 0;
  for (;;) {
    let probability = 1;
    let max = 0;
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const v = dist.values[index[i]!]!;
      probability *= dist.probabilities[index[i]!]!;
      if (v > max) max = v;
      sum += v;
    }
    const numerator = sum === 0 ? 1 : n * max;
    const denominator = sum === 0 ? 1 : sum;
    const divisor = gcd(numerator, denominator);
    const key = `${numerator / divisor}/${denominator / divisor}`;
    byFraction.set(key, (byFraction.get(key) ?? 0) + probability);
    expectedLoss += probability * (numerator / denominator);
    expectedMaximum += probability * max;
    maximumTimesSum += probability * max * sum;
    maximumTimesSumSquared += probability * max * sum * sum;
    let position = 0;
    while (position < n && ++index[position]! === size) index[position++] = 0;
    if (position === n) break;
  }
  return { expectedLoss, expectedMaximum, maximumTimesSum, maximumTimesSumSquared, byFraction };
}
