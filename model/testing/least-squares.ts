/**
 * Independent reference for tests: ordinary least squares by Householder QR (no normal equations:
 * forming XᵀX squares the condition number, QR does not), against which the streaming moments of
 * model/related/streaming-regression.ts and the divergence fit are checked.
 */

/** Result of {@link solveLeastSquares}. */
export interface LeastSquaresSolution {
  /** β minimising ‖Xβ − y‖², one per column. */
  readonly coefficients: readonly number[];
  /** Standard error of each coefficient, √(s²·[(XᵀX)⁻¹]_jj) with s² = SSres/(rows − columns); NaN-free: undefined when rows = columns. */
  readonly standardErrors: readonly number[] | undefined;
  /** y − Xβ per row. */
  readonly residuals: readonly number[];
  /** Σ residual². */
  readonly residualSumOfSquares: number;
}

/**
 * Solves min ‖Xβ − y‖² for a full-column-rank design matrix X (rows ≥ columns).
 * Cost O(rows·columns²).
 *
 * @param design rows of X (all the same length)
 * @param observations y, one per row
 * @param columnNames names used in error messages
 * @throws RangeError when shapes disagree, values are not finite, there are fewer rows than
 *   columns, or a column is (numerically) a combination of the others — the message names it
 * @example solveLeastSquares([[1, 0], [1, 1], [1, 2]], [1, 3, 5]).coefficients // → [1, 2]
 */
export function solveLeastSquares(
  design: readonly (readonly number[])[],
  observations: readonly number[],
  columnNames?: readonly string[],
): LeastSquaresSolution {
  const rows = design.length;
  const columns = rows === 0 ? 0 : (design[0] as readonly number[]).length;
  if (columns === 0) throw new RangeError('design matrix must have at least one column and one row');
  if (observations.length !== rows) throw new RangeError(`observations must have one value per design row (${rows}), got ${observations.length}`);
  if (rows < columns) throw new RangeError(`least squares needs at least as many rows as parameters (${columns}), got ${rows}`);
  const a: number[][] = design.map((row, i) => {
    if (row.length !== columns) throw new RangeError(`design row ${i} must have ${columns} values, got ${row.length}`);
    return row.map((v, j) => {
      if (!Number.isFinite(v)) throw new RangeError(`design[${i}][${j}] must be finite, got ${String(v)}`);
      return v;
    });
  });
  const b = observations.map((v, i) => {
    if (!Number.isFinite(v)) throw new RangeError(`observations[${i}] must be finite, got ${String(v)}`);
    return v;
  });
  // Pairwise Math.hypot, not Math.hypot(...column): spreading a column of ~10^5 values as
  // arguments overflows the call stack.
  const columnNorms = Array.from({ length: columns }, (_, j) => a.reduce((norm, row) => Math.hypot(norm, row[j] as number), 0));
  const diagonal: number[] = [];
  for (let j = 0; j < columns; j += 1) {
    let norm = 0;
    for (let i = j; i < rows; i += 1) norm = Math.hypot(norm, (a[i] as number[])[j] as number);
    // A pivot this small relative to the column's own size means the column lies in the span of
    // the previous ones: the parameter is not identifiable from these data.
    if (norm <= 1e-10 * ((columnNorms[j] as number) || 1) || norm === 0) {
      const name = columnNames?.[j] ?? `column ${j}`;
      throw new RangeError(`parameter '${name}' cannot be determined: its column is a combination of the others in these data`);
    }
    const pivot = (a[j] as number[])[j] as number;
    const alpha = pivot > 0 ? -norm : norm;
    const v: number[] = [];
    for (let i = j; i < rows; i += 1) v.push((a[i] as number[])[j] as number);
    v[0] = (v[0] as number) - alpha;
    const vNormSquared = v.reduce((s, x) => s + x * x, 0);
    if (vNormSquared > 0) {
      for (let k = j; k < columns; k += 1) {
        let dot = 0;
        for (let i = j; i < rows; i += 1) dot += (v[i - j] as number) * ((a[i] as number[])[k] as number);
        const f = (2 * dot) / vNormSquared;
        for (let i = j; i < rows; i += 1) (a[i] as number[])[k] = ((a[i] as number[])[k] as number) - f * (v[i - j] as number);
      }
      let dot = 0;
      for (let i = j; i < rows; i += 1) dot += (v[i - j] as number) * (b[i] as number);
      const f = (2 * dot) / vNormSquared;
      for (let i = j; i < rows; i += 1) b[i] = (b[i] as number) - f * (v[i - j] as number);
    }
    diagonal.push((a[j] as number[])[j] as number);
  }
  // Back substitution R β = (Qᵀy)[0..columns).
  const coefficients = new Array<number>(columns).fill(0);
  for (let j = columns - 1; j >= 0; j -= 1) {
    let s = b[j] as number;
    for (let k = j + 1; k < columns; k += 1) s -= ((a[j] as number[])[k] as number) * (coefficients[k] as number);
    coefficients[j] = s / (diagonal[j] as number);
  }
  const residuals = design.map((row, i) => (observations[i] as number) - row.reduce((s, x, j) => s + x * (coefficients[j] as number), 0));
  const residualSumOfSquares = residuals.reduce((s, r) => s + r * r, 0);
  let standardErrors: number[] | undefined;
  if (rows > columns) {
    // (XᵀX)⁻¹ = R⁻¹R⁻ᵀ: invert the upper-triangular R column by column.
    const rInverse: number[][] = Array.from({ length: columns }, () => new Array<number>(columns).fill(0));
    for (let c = 0; c < columns; c += 1) {
      for (let j = columns - 1; j >= 0; j -= 1) {
        let s = j === c ? 1 : 0;
        for (let k = j + 1; k < columns; k += 1) s -= ((a[j] as number[])[k] as number) * ((rInverse[k] as number[])[c] as number);
        (rInverse[j] as number[])[c] = s / (diagonal[j] as number);
      }
    }
    const variance = residualSumOfSquares / (rows - columns);
    standardErrors = rInverse.map((row) => Math.sqrt(variance * row.reduce((s, x) => s + x * x, 0)));
  }
  return { coefficients, standardErrors, residuals, residualSumOfSquares };
}
