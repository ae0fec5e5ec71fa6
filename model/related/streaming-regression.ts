/**
 * Ordinary least squares with an intercept from streaming, mergeable moments: means and
 * centred co-moments of (x_1..x_k, y) updated one row at a time (Welford) and merged
 * pairwise (Chan et al.), so a fit over millions of rows keeps O(k²) numbers, can be split
 * across windows, partitions and checkpoints, and is exact up to rounding (no raw sums of
 * squares, whose cancellation loses digits at GPU clock magnitudes).
 *
 * The state is a plain JSON-friendly object.
 */

/** Means and centred co-moments of the rows (x_1..x_k, y) seen so far. */
export interface RegressionMoments {
  /** Number of features k. */
  readonly features: number;
  /** Rows added. */
  count: number;
  /** Means of x_1..x_k, y (length k + 1). */
  readonly means: number[];
  /** Co-moments Σ (z_i − z̄_i)(z_j − z̄_j) for i ≤ j, row-major upper triangle of the (k+1)×(k+1) matrix. */
  readonly comoments: number[];
}

/** Result of {@link solveRegressionMoments}. */
export interface StreamingRegressionFit {
  /** β_j per feature: the estimate, the given value for a fixed feature, NaN for a feature left out (see `unidentified`). */
  readonly coefficients: readonly number[];
  /** Intercept ȳ − Σ β_j x̄_j; 0 when fitted without one. */
  readonly intercept: number;
  /** Standard error per coefficient, √(s²·[G⁻¹]_jj), s² = SSres/(rows − estimated parameters); undefined without residual degrees of freedom; NaN for left-out and fixed features. */
  readonly standardErrors: readonly number[] | undefined;
  /** Standard error of the intercept, √(s²/rows + x̄ᵀ·Cov(β)·x̄); undefined without residual degrees of freedom or without an intercept. */
  readonly interceptStandardError: number | undefined;
  /** Covariance of the coefficients, s²·G⁻¹ (k×k); NaN in rows and columns of left-out and fixed features; undefined without residual degrees of freedom. */
  readonly covariance: readonly (readonly number[])[] | undefined;
  /** Indices of features that do not vary, or vary only as a combination of earlier features: left out (coefficient NaN). */
  readonly unidentified: readonly number[];
  /** 1 − SSres/SStot, SStot about the mean of y (1 when y is constant and fitted exactly). */
  readonly rSquared: number;
  /** √(SSres/rows). */
  readonly rmse: number;
  readonly rows: number;
}

/** How {@link solveRegressionMoments} fits. */
export interface RegressionOptions {
  /** Fit a constant term (default true). Without one the fit goes through the origin. */
  readonly intercept?: boolean;
  /** Features held at a given value instead of estimated, by index (e.g. `{ 1: 0 }` fixes β_1 = 0). */
  readonly fixed?: Readonly<Record<number, number>>;
}

const triangleIndex = (size: number, i: number, j: number): number => (i <= j ? i * size - (i * (i - 1)) / 2 + (j - i) : triangleIndex(size, j, i));

/**
 * Creates empty moments for k features.
 *
 * @throws RangeError when k is not an integer 1..16.
 * @example const moments = createRegressionMoments(2);
 */
export function createRegressionMoments(features: number): RegressionMoments {
  if (!Number.isInteger(features) || features < 1 || features > 16) throw new RangeError(`features must be an integer 1..16, got ${String(features)}`);
  const size = features + 1;
  return { features, count: 0, means: new Array<number>(size).fill(0), comoments: new Array<number>((size * (size + 1)) / 2).fill(0) };
}

/**
 * Adds one row (mutates `moments`): x has k values, y one.
 *
 * @throws RangeError when x has the wrong length or a value is not finite.
 * @example addRegressionRow(moments, [maxCount, divergingExits], cycles);
 */
export function addRegressionRow(moments: RegressionMoments, x: readonly number[], y: number): void {
  const size = moments.features + 1;
  if (x.length !== moments.features) throw new RangeError(`row must have ${moments.features} feature values, got ${x.length}`);
  const z = [...x, y];
  for (let i = 0; i < size; i += 1) if (!Number.isFinite(z[i])) throw new RangeError(`row value ${i} must be finite, got ${String(z[i])}`);
  moments.count += 1;
  const delta = new Array<number>(size);
  for (let i = 0; i < size; i += 1) {
    delta[i] = (z[i] as number) - (moments.means[i] as number);
    moments.means[i] = (moments.means[i] as number) + (delta[i] as number) / moments.count;
  }
  for (let i = 0; i < size; i += 1) {
    for (let j = i; j < size; j += 1) {
      const index = triangleIndex(size, i, j);
      moments.comoments[index] = (moments.comoments[index] as number) + (delta[i] as number) * ((z[j] as number) - (moments.means[j] as number));
    }
  }
}

/**
 * New moments of the union of both row sets (neither argument changes). Associative and
 * commutative up to rounding.
 *
 * @throws RangeError when the feature counts differ.
 * @example const all = mergeRegressionMoments(windowA, windowB);
 */
export function mergeRegressionMoments(a: RegressionMoments, b: RegressionMoments): RegressionMoments {
  if (a.features !== b.features) throw new RangeError(`cannot merge moments of ${a.features} and ${b.features} features`);
  if (b.count === 0) return { features: a.features, count: a.count, means: [...a.means], comoments: [...a.comoments] };
  if (a.count === 0) return { features: b.features, count: b.count, means: [...b.means], comoments: [...b.comoments] };
  const size = a.features + 1;
  const count = a.count + b.count;
  const delta = a.means.map((mean, i) => (b.means[i] as number) - mean);
  const means = a.means.map((mean, i) => mean + ((delta[i] as number) * b.count) / count);
  const comoments = a.comoments.map((value, index) => value + (b.comoments[index] as number));
  for (let i = 0; i < size; i += 1) {
    for (let j = i; j < size; j += 1) {
      const index = triangleIndex(size, i, j);
      comoments[index] = (comoments[index] as number) + ((delta[i] as number) * (delta[j] as number) * a.count * b.count) / count;
    }
  }
  return { features: a.features, count, means, comoments };
}

/**
 * Least-squares fit y ≈ intercept + Σ β_j x_j from the moments (with `intercept: false`,
 * y ≈ Σ β_j x_j through the origin; features in `fixed` are held at their value). A free
 * feature whose variance (about the mean with an intercept, about 0 without) is zero, or that
 * is (to 1e-9 relative) a linear combination of the free features before it, is left out and
 * listed in `unidentified`; the others are fitted without it. Solves the normal equations of
 * the centred moments by Cholesky; through the origin, of the raw moments G = S + rows·x̄x̄ᵀ
 * (residuals always from the centred moments, so no raw sum of squares cancels).
 *
 * @throws RangeError with fewer than two rows (one without an intercept), or a fixed index or value that is not a finite feature index/number.
 * @example solveRegressionMoments(moments).coefficients[1] // δ, cycles per diverging exit
 */
export function solveRegressionMoments(moments: RegressionMoments, options: RegressionOptions = {}): StreamingRegressionFit {
  const k = moments.features;
  const size = k + 1;
  const rows = moments.count;
  const withIntercept = options.intercept ?? true;
  if (withIntercept && rows < 2) throw new RangeError(`a fit with an intercept needs at least 2 rows, got ${rows}`);
  if (!withIntercept && rows < 1) throw new RangeError('a fit needs at least 1 row, got 0');
  const fixed = new Map<number, number>();
  for (const [key, value] of Object.entries(options.fixed ?? {})) {
    const index = Number(key);
    if (!Number.isInteger(index) || index < 0 || index >= k || !Number.isFinite(value)) throw new RangeError(`fixed must map feature indices 0..${k - 1} to finite numbers, got ${key}: ${String(value)}`);
    fixed.set(index, value);
  }
  const raw = (i: number, j: number): number => moments.comoments[triangleIndex(size, i, j)] as number;
  // Centred moments of (x, y′) with y′ = y − Σ_fixed v_f x_f: the fixed part moved to the left.
  const centred = (i: number, j: number): number => {
    if (i === k && j === k) {
      let value = raw(k, k);
      for (const [f, v] of fixed) {
        value -= 2 * v * raw(f, k);
        for (const [g, w] of fixed) value += v * w * raw(f, g);
      }
      return value;
    }
    if (i === k || j === k) {
      const x = i === k ? j : i;
      let value = raw(x, k);
      for (const [f, v] of fixed) value -= v * raw(x, f);
      return value;
    }
    return raw(i, j);
  };
  let meanY = moments.means[k] as number;
  for (const [f, v] of fixed) meanY -= v * (moments.means[f] as number);
  const mean = (i: number): number => (i === k ? meanY : (moments.means[i] as number));
  // Normal-equation matrix: centred with an intercept, raw (about 0) without.
  const at = (i: number, j: number): number => (withIntercept ? centred(i, j) : centred(i, j) + rows * mean(i) * mean(j));
  // Cholesky of G_xx with pivot screening: a pivot ≤ 1e-9 of the feature's own variance means
  // the feature adds nothing beyond the earlier ones.
  const used: number[] = [];
  const unidentified: number[] = [];
  const lower: number[][] = [];
  for (let j = 0; j < k; j += 1) {
    if (fixed.has(j)) continue;
    const variance = at(j, j);
    const row: number[] = [];
    for (let p = 0; p < used.length; p += 1) {
      let sum = at(used[p] as number, j);
      for (let q = 0; q < p; q += 1) sum -= (lower[p]?.[q] as number) * (row[q] as number);
      row.push(sum / (lower[p]?.[p] as number));
    }
    const pivot = variance - row.reduce((s, v) => s + v * v, 0);
    if (!(variance > 0) || pivot <= 1e-9 * variance) {
      unidentified.push(j);
      continue;
    }
    row.push(Math.sqrt(pivot));
    lower.push(row);
    used.push(j);
  }
  const m = used.length;
  const solve = (rhs: number[]): number[] => {
    const forward = new Array<number>(m).fill(0);
    for (let i = 0; i < m; i += 1) {
      let sum = rhs[i] as number;
      for (let q = 0; q < i; q += 1) sum -= (lower[i]?.[q] as number) * (forward[q] as number);
      forward[i] = sum / (lower[i]?.[i] as number);
    }
    const back = new Array<number>(m).fill(0);
    for (let i = m - 1; i >= 0; i -= 1) {
      let sum = forward[i] as number;
      for (let q = i + 1; q < m; q += 1) sum -= (lower[q]?.[i] as number) * (back[q] as number);
      back[i] = sum / (lower[i]?.[i] as number);
    }
    return back;
  };
  const beta = m > 0 ? solve(used.map((j) => at(j, k))) : [];
  let intercept = 0;
  if (withIntercept) {
    intercept = meanY;
    used.forEach((j, i) => (intercept -= (beta[i] as number) * (moments.means[j] as number)));
  }
  // SSres = Σ (y′ − c − Σβx)² from centred moments: the centred part plus rows·(mean residual)².
  let centredResidual = centred(k, k);
  used.forEach((j, i) => {
    centredResidual -= 2 * (beta[i] as number) * centred(j, k);
    used.forEach((l, q) => (centredResidual += (beta[i] as number) * (beta[q] as number) * centred(j, l)));
  });
  let meanResidual = meanY - intercept;
  used.forEach((j, i) => (meanResidual -= (beta[i] as number) * (moments.means[j] as number)));
  const residualSumOfSquares = Math.max(0, centredResidual + (withIntercept ? 0 : rows * meanResidual * meanResidual));
  const coefficients = new Array<number>(k).fill(Number.NaN);
  for (const [f, v] of fixed) coefficients[f] = v;
  used.forEach((j, i) => (coefficients[j] = beta[i] as number));
  const degrees = rows - m - (withIntercept ? 1 : 0);
  let standardErrors: number[] | undefined;
  let covariance: number[][] | undefined;
  let interceptStandardError: number | undefined;
  if (degrees > 0) {
    const s2 = residualSumOfSquares / degrees;
    covariance = Array.from({ length: k }, () => new Array<number>(k).fill(Number.NaN));
    used.forEach((j, i) => {
      const unit = new Array<number>(m).fill(0);
      unit[i] = 1;
      const column = solve(unit);
      used.forEach((l, q) => ((covariance as number[][])[l] as number[])[j] = s2 * (column[q] as number));
    });
    standardErrors = new Array<number>(k).fill(Number.NaN);
    for (const j of used) (standardErrors as number[])[j] = Math.sqrt(Math.max(0, (covariance[j] as number[])[j] as number));
    if (withIntercept) {
      let variance = s2 / rows;
      for (const j of used) for (const l of used) variance += (moments.means[j] as number) * (moments.means[l] as number) * ((covariance[j] as number[])[l] as number);
      interceptStandardError = Math.sqrt(Math.max(0, variance));
    }
  }
  const syy = raw(k, k);
  return {
    coefficients,
    intercept,
    standardErrors,
    interceptStandardError,
    covariance,
    unidentified,
    rSquared: syy > 0 ? 1 - residualSumOfSquares / syy : residualSumOfSquares === 0 ? 1 : 0,
    rmse: Math.sqrt(residualSumOfSquares / rows),
    rows,
  };
}
