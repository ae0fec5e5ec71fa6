/**
 * The parametric families of docs/model.md §2d, exactly as this project defines them, and the
 * generation of their (tail-truncated) probability mass functions.
 */
import { ModelError } from '../errors.ts';
import { logFactorial, logGamma } from '../numerics/special-functions.ts';

/**
 * A distribution given by family and parameters (docs/model.md §2d):
 * - `binom`: B(trials, p) on {0..trials}.
 * - `geo`: Geo(p) on {1, 2, ...}: P(k) = (1−p)^(k−1)·p (number of trials up to the first success).
 * - `pois`: Poisson(lambda) on {0, 1, ...}.
 * - `unif`: discrete uniform on {low..high}, both inclusive.
 * - `nbinom`: NB(r, p), failures before the r-th success: C(k+r−1, k)·p^r·(1−p)^k on {0, 1, ...};
 *   r may be any positive real (Γ replaces the factorials).
 * - `cat`: an explicit categorical, entries [value, weight] (weights normalised).
 */
export type FamilySpec =
  | { readonly family: 'binom'; readonly trials: number; readonly p: number }
  | { readonly family: 'geo'; readonly p: number }
  | { readonly family: 'pois'; readonly lambda: number }
  | { readonly family: 'unif'; readonly low: number; readonly high: number }
  | { readonly family: 'nbinom'; readonly r: number; readonly p: number }
  | { readonly family: 'cat'; readonly entries: readonly (readonly [number, number])[] };

/** The family names {@link FamilySpec} accepts, in documentation order. */
export const FAMILY_NAMES = ['binom', 'geo', 'pois', 'unif', 'nbinom', 'cat'] as const;

/** The largest support a family may generate before truncation (guards against geo(1e-12)). */
export const MAX_FAMILY_SUPPORT = 2_000_000;

/** Result of {@link generateFamilyPmf}: the support, its (normalised) weights and the truncation. */
export interface FamilyPmf {
  readonly values: number[];
  readonly probabilities: number[];
  readonly truncation: { readonly point: number; readonly tailMass: number; readonly epsilon: number } | undefined;
}

function invalid(message: string): ModelError {
  return new ModelError('WW_ERR_MODEL_INVALID_SPEC', message);
}

function checkProbability(name: string, p: number, allowZero: boolean): void {
  const ok = Number.isFinite(p) && p <= 1 && (allowZero ? p >= 0 : p > 0);
  if (!ok) throw invalid(`${name}: p must be a number in ${allowZero ? '[0, 1]' : '(0, 1]'}, got ${String(p)}`);
}

function checkInteger(name: string, label: string, x: number, max: number): void {
  if (!Number.isInteger(x) || x < 0 || x > max) {
    throw invalid(`${name}: ${label} must be an integer 0..${max}, got ${String(x)}`);
  }
}

/**
 * Checks a family spec's parameters against the family's domain.
 *
 * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC naming the parameter, what arrived and what is allowed.
 * @example validateFamilySpec({ family: 'geo', p: 1.5 }) // throws "geo(p): p must be a number in (0, 1], got 1.5"
 */
export function validateFamilySpec(spec: FamilySpec): void {
  switch (spec.family) {
    case 'binom':
      checkInteger('binom(N,p)', 'N', spec.trials, MAX_FAMILY_SUPPORT - 1);
      checkProbability('binom(N,p)', spec.p, true);
      return;
    case 'geo':
      checkProbability('geo(p)', spec.p, false);
      return;
    case 'pois':
      if (!Number.isFinite(spec.lambda) || spec.lambda < 0 || spec.lambda > 1e6) {
        throw invalid(`pois(lambda): lambda must be a number in [0, 1e6], got ${String(spec.lambda)}`);
      }
      return;
    case 'unif':
      checkInteger('unif(a,b)', 'a', spec.low, Number.MAX_SAFE_INTEGER);
      checkInteger('unif(a,b)', 'b', spec.high, Number.MAX_SAFE_INTEGER);
      if (spec.low > spec.high) throw invalid(`unif(a,b): a must be <= b, got a=${spec.low}, b=${spec.high}`);
      if (spec.high - spec.low + 1 > MAX_FAMILY_SUPPORT) {
        throw invalid(`unif(a,b): at most ${MAX_FAMILY_SUPPORT} values allowed, got ${spec.high - spec.low + 1}`);
      }
      return;
    case 'nbinom':
      if (!Number.isFinite(spec.r) || !(spec.r > 0) || spec.r > 1e6) {
        throw invalid(`nbinom(r,p): r must be a number in (0, 1e6], got ${String(spec.r)}`);
      }
      checkProbability('nbinom(r,p)', spec.p, false);
      return;
    case 'cat': {
      if (spec.entries.length === 0) throw invalid('cat(v:w,...): at least one value:weight entry is required, got none');
      let total = 0;
      for (const [value, weight] of spec.entries) {
        if (!Number.isSafeInteger(value) || value < 0) {
          throw invalid(`cat(v:w,...): values must be non-negative integers, got ${String(value)}`);
        }
        if (!Number.isFinite(weight) || weight < 0) {
          throw invalid(`cat(v:w,...): weights must be finite and non-negative, got ${String(weight)} for value ${value}`);
        }
        total += weight;
      }
      if (!(total > 0)) throw invalid('cat(v:w,...): weights are all zero; at least one must be positive');
      return;
    }
    default: {
      const unknown: { family?: unknown } = spec;
      throw invalid(`unknown family '${String(unknown.family)}'; allowed: ${FAMILY_NAMES.join(', ')}`);
    }
  }
}

/**
 * ln P(W = k) of a family (−Infinity outside the support). `cat` is not parametric and is
 * rejected here. Cost O(1).
 *
 * @throws {ModelError} for `cat` or an invalid spec.
 * @example familyLogPmf({ family: 'pois', lambda: 2 }, 0) // −2
 */
export function familyLogPmf(spec: FamilySpec, k: number): number {
  if (!Number.isInteger(k) || k < 0) return -Infinity;
  switch (spec.family) {
    case 'binom': {
      const { trials: n, p } = spec;
      if (k > n) return -Infinity;
      if (p === 0) return k === 0 ? 0 : -Infinity;
      if (p === 1) return k === n ? 0 : -Infinity;
      return logFactorial(n) - logFactorial(k) - logFactorial(n - k) + k * Math.log(p) + (n - k) * Math.log1p(-p);
    }
    case 'geo':
      if (k < 1) return -Infinity;
      if (spec.p === 1) return k === 1 ? 0 : -Infinity;
      return (k - 1) * Math.log1p(-spec.p) + Math.log(spec.p);
    case 'pois':
      if (spec.lambda === 0) return k === 0 ? 0 : -Infinity;
      return k * Math.log(spec.lambda) - spec.lambda - logFactorial(k);
    case 'unif':
      return k >= spec.low && k <= spec.high ? -Math.log(spec.high - spec.low + 1) : -Infinity;
    case 'nbinom': {
      const { r, p } = spec;
      if (p === 1) return k === 0 ? 0 : -Infinity;
      return logGamma(k + r) - logGamma(r) - logFactorial(k) + r * Math.log(p) + k * Math.log1p(-p);
    }
    case 'cat':
      throw invalid('familyLogPmf: cat is not a parametric family');
  }
}

interface Walker {
  readonly lowest: number;
  readonly highest: number; // Infinity for unbounded families
  readonly mode: number;
  /** P(k)/P(k−1) for k above the lowest support point. */
  ratio(k: number): number;
  /** lim sup of ratio(k) as k grows; bounds the ratio from some point on (see tail bound). */
  readonly limitRatio: number;
}

function walkerOf(spec: Exclude<FamilySpec, { family: 'cat' } | { family: 'unif' }>): Walker {
  switch (spec.family) {
    case 'binom': {
      const { trials: n, p } = spec;
      const odds = p / (1 - p);
      return { lowest: 0, highest: n, mode: Math.min(n, Math.floor((n + 1) * p)), ratio: (k) => ((n - k + 1) / k) * odds, limitRatio: 0 };
    }
    case 'geo':
      return { lowest: 1, highest: Infinity, mode: 1, ratio: () => 1 - spec.p, limitRatio: 1 - spec.p };
    case 'pois':
      return { lowest: 0, highest: Infinity, mode: Math.floor(spec.lambda), ratio: (k) => spec.lambda / k, limitRatio: 0 };
    case 'nbinom': {
      const { r, p } = spec;
      const mode = r > 1 ? Math.floor(((r - 1) * (1 - p)) / p) : 0;
      return { lowest: 0, highest: Infinity, mode, ratio: (k) => ((k + r - 1) / k) * (1 - p), limitRatio: 1 - p };
    }
  }
}

/**
 * Generates the pmf of a family on its support, truncating the right tail at the smallest m
 * with P(W > m) ≤ epsilon (docs/model.md §2a) and renormalising. Probabilities are computed from
 * ln P at the mode and the exact ratio P(k)/P(k−1) walking outwards (the recurrences keep the
 * relative error near k·1e-16 and avoid the underflow of P(0) for large means). Values left of
 * the mode with probability below 1e-300 are left out (they would underflow). `unif` and `cat` are never truncated; `binom` is
 * truncated like the unbounded families when its right tail is that small.
 *
 * @param epsilon tail mass allowed to be cut, 0 < epsilon < 0.5 (default 1e-6).
 * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC for a bad spec or epsilon, or when more than
 *   {@link MAX_FAMILY_SUPPORT} values would be needed.
 * @example generateFamilyPmf({ family: 'geo', p: 0.5 }).truncation // { point: 20, tailMass: 9.5e-7, epsilon: 1e-6 }
 */
export function generateFamilyPmf(spec: FamilySpec, epsilon = 1e-6): FamilyPmf {
  validateFamilySpec(spec);
  if (!(epsilon > 0 && epsilon < 0.5)) {
    throw invalid(`epsilon (tail truncation mass) must be a number in (0, 0.5), got ${String(epsilon)}`);
  }
  if (spec.family === 'cat') {
    const merged = new Map<number, number>();
    for (const [value, weight] of spec.entries) if (weight > 0) merged.set(value, (merged.get(value) ?? 0) + weight);
    const values = [...merged.keys()].sort((a, b) => a - b);
    const total = values.reduce((sum, v) => sum + merged.get(v)!, 0);
    return { values, probabilities: values.map((v) => merged.get(v)! / total), truncation: undefined };
  }
  if (spec.family === 'unif') {
    const count = spec.high - spec.low + 1;
    const values = Array.from({ length: count }, (_, i) => spec.low + i);
    return { values, probabilities: values.map(() => 1 / count), truncation: undefined };
  }
  const walker = walkerOf(spec);
  const modeMass = Math.exp(familyLogPmf(spec, walker.mode));
  // Left of the mode: walk down until the support ends or the mass underflows.
  const left: number[] = [];
  let mass = modeMass;
  for (let k = walker.mode; k > walker.lowest; k--) {
    mass /= walker.ratio(k);
    // Stop before subnormals: 5e-324 divided by a ratio near 1 rounds back to itself forever.
    if (!(mass > 1e-300) || !Number.isFinite(mass)) break;
    left.push(mass);
  }
  const firstValue = walker.mode - left.length;
  const masses: number[] = left.reverse();
  masses.push(modeMass);
  // Right of the mode: walk up until the remaining tail is negligible against epsilon. The bound
  // tail(>k) ≤ P(k)·q/(1−q), q = max(ratio(k+1), limitRatio), holds because each family's ratio is
  // either decreasing or increasing towards limitRatio.
  let remainder = 0;
  mass = modeMass;
  for (let k = walker.mode + 1; k <= walker.highest; k++) {
    const q = Math.max(walker.ratio(k), walker.limitRatio);
    if (q < 1) {
      const tailBound = (mass * q) / (1 - q);
      if (tailBound < epsilon * 1e-9) {
        remainder = tailBound;
        break;
      }
    }
    mass *= walker.ratio(k);
    masses.push(mass);
    if (masses.length > MAX_FAMILY_SUPPORT) {
      throw invalid(
        `${formatSpecName(spec)} needs more than ${MAX_FAMILY_SUPPORT} support values before its tail falls below epsilon=${epsilon}; use a larger epsilon or other parameters`,
      );
    }
  }
  // Suffix sums from the top give tail masses without cancellation.
  const tailAbove = new Float64Array(masses.length + 1);
  tailAbove[masses.length] = remainder;
  for (let i = masses.length - 1; i >= 0; i--) tailAbove[i] = tailAbove[i + 1]! + masses[i]!;
  let keep = masses.length;
  for (let i = 0; i < masses.length; i++) {
    if (tailAbove[i + 1]! / tailAbove[0]! <= epsilon) {
      keep = i + 1;
      break;
    }
  }
  const tailMass = tailAbove[keep]! / tailAbove[0]!;
  const truncated = tailMass > 0;
  const values: number[] = [];
  const probabilities: number[] = [];
  let kept = 0;
  for (let i = 0; i < keep; i++) kept += masses[i]!;
  for (let i = 0; i < keep; i++) {
    const p = masses[i]! / kept;
    if (p > 0) {
      values.push(firstValue + i);
      probabilities.push(p);
    }
  }
  return {
    values,
    probabilities,
    truncation: truncated ? { point: firstValue + keep - 1, tailMass, epsilon } : undefined,
  };
}

function formatSpecName(spec: FamilySpec): string {
  switch (spec.family) {
    case 'binom':
      return `binom(${spec.trials},${spec.p})`;
    case 'geo':
      return `geo(${spec.p})`;
    case 'pois':
      return `pois(${spec.lambda})`;
    case 'unif':
      return `unif(${spec.low},${spec.high})`;
    case 'nbinom':
      return `nbinom(${spec.r},${spec.p})`;
    case 'cat':
      return `cat(${spec.entries.map(([v, w]) => `${v}:${w}`).join(',')})`;
  }
}

/**
 * Formats a spec in the syntax {@link parseDistributionSpec} reads, e.g. `nbinom(5,0.3)`.
 *
 * @example formatDistributionSpec({ family: 'unif', low: 1, high: 6 }) // 'unif(1,6)'
 */
export function formatDistributionSpec(spec: FamilySpec): string {
  return formatSpecName(spec);
}
