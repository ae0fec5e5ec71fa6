/**
 * CategoricalDistribution: a finite distribution over non-negative integers (iteration
 * counts), the input of every model computation.
 */
import { ModelError } from '../errors.ts';
import { formatDistributionSpec, generateFamilyPmf, type FamilySpec } from './family.ts';

/** Inputs accepted for value → weight pairs: a Map, a plain object {"3": 10}, or [value, weight] pairs. */
export type WeightInput = ReadonlyMap<number, number> | Readonly<Record<string, number>> | Iterable<readonly [number, number]>;

/** Where a family's right tail was cut: the last kept value, the mass cut (before renormalising), and ε. */
export interface Truncation {
  readonly point: number;
  readonly tailMass: number;
  readonly epsilon: number;
}

function formatSmall(x: number): string {
  return x < 1e-3 ? x.toExponential() : String(x);
}

function invalid(message: string): ModelError {
  return new ModelError('WW_ERR_MODEL_INVALID_DISTRIBUTION', message);
}

function entriesOf(input: WeightInput): [unknown, unknown][] {
  if (input instanceof Map) return [...(input as Map<unknown, unknown>).entries()];
  if (input !== null && typeof input === 'object' && Symbol.iterator in input) {
    const pairs: [unknown, unknown][] = [];
    for (const pair of input as Iterable<readonly [unknown, unknown]>) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw invalid(`each entry must be a [value, weight] pair, got ${JSON.stringify(pair)}`);
      }
      pairs.push([pair[0], pair[1]]);
    }
    return pairs;
  }
  if (input !== null && typeof input === 'object') {
    return Object.entries(input).map(([key, weight]) => [key.trim() === '' ? Number.NaN : Number(key), weight]);
  }
  throw invalid(`expected a Map, an object {value: weight} or [value, weight] pairs, got ${typeof input}`);
}

function normaliseWeights(input: WeightInput): { values: number[]; weights: number[]; total: number } {
  const merged = new Map<number, number>();
  const entries = entriesOf(input);
  if (entries.length === 0) throw invalid('distribution is empty: at least one value with a positive weight is required');
  for (const [value, weight] of entries) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
      throw invalid(`values must be non-negative integers (iteration counts), got ${String(value)}`);
    }
    if (typeof weight !== 'number' || !Number.isFinite(weight)) {
      throw invalid(`weights must be finite numbers, got ${String(weight)} for value ${value}`);
    }
    if (weight < 0) throw invalid(`weights must be non-negative, got ${weight} for value ${value}`);
    if (weight > 0) merged.set(value, (merged.get(value) ?? 0) + weight);
  }
  if (merged.size === 0) throw invalid('all weights are zero: at least one value needs a positive weight');
  const values = [...merged.keys()].sort((a, b) => a - b);
  const weights = values.map((v) => merged.get(v)!);
  const total = weights.reduce((sum, w) => sum + w, 0);
  if (!Number.isFinite(total)) throw invalid(`weights sum to ${total}; the total must be finite`);
  return { values, weights, total };
}

/**
 * An immutable distribution over non-negative integers: ascending support `values` (each with
 * probability > 0) and `probabilities` (summing to 1). Build it with {@link fromCounts},
 * {@link fromPmf} or {@link fromFamily}.
 *
 * @example
 * const w = CategoricalDistribution.fromCounts({ 1: 30, 4: 10 });
 * w.mean(); // 1.75
 */
export class CategoricalDistribution {
  /** Ascending support, each value with positive probability. */
  readonly values: readonly number[];
  /** Probability of each value (same order as values), summing to 1. */
  readonly probabilities: readonly number[];
  /** The right-tail truncation of a family (docs/model.md §2a), undefined when nothing was cut. */
  readonly truncation: Truncation | undefined;
  /** Sum of the input weights: the number of observations for {@link fromCounts}, 1 for families. */
  readonly totalWeight: number;
  /** The family this distribution was generated from, if any. */
  readonly spec: FamilySpec | undefined;

  private constructor(values: number[], probabilities: number[], totalWeight: number, truncation?: Truncation, spec?: FamilySpec) {
    this.values = Object.freeze(values);
    this.probabilities = Object.freeze(probabilities);
    this.totalWeight = totalWeight;
    this.truncation = truncation === undefined ? undefined : Object.freeze({ ...truncation });
    this.spec = spec;
    Object.freeze(this);
  }

  /**
   * From observed counts per value (e.g. iteration count → number of lanes). Duplicate values
   * are added; zero counts are dropped. Counts may be fractional (decayed windows).
   *
   * @throws {ModelError} (a RangeError) for an empty input, a negative or non-integer value,
   *   a non-finite or negative count, or all-zero counts.
   * @example CategoricalDistribution.fromCounts(new Map([[0, 5], [3, 15]])).probabilities // [0.25, 0.75]
   */
  static fromCounts(counts: WeightInput): CategoricalDistribution {
    const { values, weights, total } = normaliseWeights(counts);
    return new CategoricalDistribution(values, weights.map((w) => w / total), total);
  }

  /**
   * From a probability mass function; weights are normalised to sum to 1 (same validation as
   * {@link fromCounts}).
   *
   * @throws {ModelError} (a RangeError) as for fromCounts.
   * @example CategoricalDistribution.fromPmf([[1, 0.5], [2, 0.5]]).mean() // 1.5
   */
  static fromPmf(pmf: WeightInput): CategoricalDistribution {
    const { values, weights, total } = normaliseWeights(pmf);
    return new CategoricalDistribution(values, weights.map((w) => w / total), 1);
  }

  /**
   * From a parametric family (docs/model.md §2d), right tail cut at the smallest m with
   * P(W > m) ≤ epsilon and renormalised; the cut is reported in `truncation`.
   *
   * @param options.epsilon tail mass that may be cut, in (0, 0.5); default 1e-6.
   * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC for parameters outside the family's domain.
   * @example CategoricalDistribution.fromFamily({ family: 'nbinom', r: 5, p: 0.3 }).truncation?.point
   */
  static fromFamily(spec: FamilySpec, options: { epsilon?: number } = {}): CategoricalDistribution {
    const pmf = generateFamilyPmf(spec, options.epsilon ?? 1e-6);
    return new CategoricalDistribution(pmf.values, pmf.probabilities, 1, pmf.truncation, spec);
  }

  /** Number of support values. */
  get size(): number {
    return this.values.length;
  }

  /** Smallest support value. */
  get min(): number {
    return this.values[0]!;
  }

  /** Largest support value. */
  get max(): number {
    return this.values[this.values.length - 1]!;
  }

  /** E[W]. Cost O(size). */
  mean(): number {
    let sum = 0;
    for (let i = 0; i < this.values.length; i++) sum += this.values[i]! * this.probabilities[i]!;
    return sum;
  }

  /** Var[W] = E[(W − E[W])²] (two-pass, no cancellation). Cost O(size). */
  variance(): number {
    const mu = this.mean();
    let sum = 0;
    for (let i = 0; i < this.values.length; i++) sum += (this.values[i]! - mu) ** 2 * this.probabilities[i]!;
    return sum;
  }

  /** P(W ≤ x) for any real x. Cost O(log size + index). */
  cdf(x: number): number {
    if (Number.isNaN(x)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'cdf(x): x must be a number, got NaN');
    let sum = 0;
    for (let i = 0; i < this.values.length && this.values[i]! <= x; i++) sum += this.probabilities[i]!;
    return Math.min(1, sum);
  }

  /**
   * The quantile function Q(p) = min { v : P(W ≤ v) ≥ p } for p in [0, 1] (Q(0) = min value).
   * A relative slack of 1e-12 on the cumulative sum keeps rounding from skipping a value.
   *
   * @throws {ModelError} WW_ERR_MODEL_INVALID_ARGUMENT when p is outside [0, 1].
   * @example CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }).quantile(0.5) // 1
   */
  quantile(p: number): number {
    if (!(p >= 0 && p <= 1)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `quantile(p): p must be in [0, 1], got ${String(p)}`);
    let sum = 0;
    for (let i = 0; i < this.values.length; i++) {
      sum += this.probabilities[i]!;
      if (sum >= p - 1e-12) return this.values[i]!;
    }
    return this.max;
  }

  /**
   * The distribution of k·W (every value multiplied by k); the loss is invariant under it.
   *
   * @throws {ModelError} WW_ERR_MODEL_INVALID_ARGUMENT unless k is a positive integer keeping values safe integers.
   */
  scaled(k: number): CategoricalDistribution {
    if (!Number.isSafeInteger(k) || k < 1 || !Number.isSafeInteger(this.max * k)) {
      throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `scaled(k): k must be a positive integer keeping values below 2^53, got ${String(k)}`);
    }
    return new CategoricalDistribution(
      this.values.map((v) => v * k),
      [...this.probabilities],
      this.totalWeight,
      undefined,
      undefined,
    );
  }

  /**
   * One line for people: the family (if any), support, mean and truncation.
   *
   * @example 'nbinom(5,0.3): 52 values in [0, 51], mean 11.667, truncated at 51 (tail mass 9.2e-7 <= epsilon 1e-6)'
   */
  describe(): string {
    const head = this.spec === undefined ? 'categorical' : formatDistributionSpec(this.spec);
    const support = `${this.size} value${this.size === 1 ? '' : 's'} in [${this.min}, ${this.max}]`;
    const cut =
      this.truncation === undefined
        ? ''
        : `, truncated at ${this.truncation.point} (tail mass ${this.truncation.tailMass.toPrecision(2)} <= epsilon ${formatSmall(this.truncation.epsilon)})`;
    return `${head}: ${support}, mean ${Number(this.mean().toPrecision(6))}${cut}`;
  }
}
