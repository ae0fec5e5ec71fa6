/**
 * The moment form of the stationary sorting programme (docs/model.md §2d, sorting): the same
 * windows and Poisson run lengths as the quadrature form in sorted-grouping-loss.ts, but 1/Σ is
 * expanded around the window's smallest possible sum instead of being integrated on ~50
 * quadrature nodes, so the backward recursion carries 2K + 5 moments per state instead of ~50
 * Laplace columns and needs no exponentials in its inner loop.
 *
 * A window that starts d units before the end of the run of v_j holds d copies of v_j and n − d
 * units from later runs. With Y = Σ over the window of (w − v_j) ≥ 0 and M = max − v_j ≥ 0, its
 * excess is n·max/Σ − 1 = Z/(c + Y) with Z = n·M − Y ≥ 0 and c = n·v_j. For y ≥ 0 the series
 * 1/(c + y) = Σ_{k ≤ K} (−y)^k/c^{k+1} + R has |R| ≤ y^{K+1}/c^{K+2}, so
 *   E[Z/(c + Y)] = Σ_{k ≤ K} (−1)^k E[Z·Y^k]/c^{k+1}, with error ≤ E[Z·Y^{K+1}]/c^{K+2},
 * a bound computed from the same moments: it is a proven bound, not an estimate. Start values
 * where it exceeds {@link MOMENT_RELATIVE_TOLERANCE} of their excess (v_j = 0, or v_j small
 * against the spread of the values a window reaches) are reported as hard; the caller evaluates
 * them with the quadrature form.
 */

/**
 * Order K of the expansion of 1/(c + Y): terms k = 0..K are summed, k = K + 1 bounds the rest.
 * The recursion's inner loops are written out for K = 2 (9 columns); changing K means rewriting them.
 */
export const MOMENT_ORDER = 2;

/** A start value uses the expansion when its remainder bound is at most this share of its excess. */
export const MOMENT_RELATIVE_TOLERANCE = 1e-6;

/** Poisson run-length terms below this probability are skipped (their effect on E[H] is below 1e-16). */
export const NEGLIGIBLE_RUN = 1e-20;

/**
 * Run-length probabilities of a value with Poisson(λ) copies in a launch: `pmf[l]` = P(L = l) for
 * l = 0..n−1 and `tail[r]` = P(L ≥ r) for r = 0..n (arrays of length n and n + 1, filled in place).
 *
 * @param lambda expected copies N·f(v) (≥ 0).
 * @param n group size (≥ 1).
 * @example poissonRunLengths(10.5, 32, new Float64Array(32), new Float64Array(33));
 */
export function poissonRunLengths(lambda: number, n: number, pmf: Float64Array, tail: Float64Array): void {
  let head = 0;
  if (lambda < 700) {
    // e^{−λ} is a normal double: the terms by the ratio λ/(l + 1) (relative drift ≤ n ulp).
    let term = Math.exp(-lambda);
    for (let l = 0; l < n; l++) {
      pmf[l] = term;
      tail[l] = Math.max(0, 1 - head);
      head += term;
      term *= lambda / (l + 1);
    }
  } else {
    let logTerm = -lambda;
    const logLambda = Math.log(lambda);
    for (let l = 0; l < n; l++) {
      const term = Math.exp(logTerm);
      pmf[l] = term;
      tail[l] = Math.max(0, 1 - head);
      head += term;
      logTerm += logLambda - Math.log(l + 1);
    }
  }
  tail[n] = Math.max(0, 1 - head);
}

/** Result of {@link stationaryMomentExcess}. */
export interface StationaryMomentPart {
  /** Σ over the easy start values of the expected group excess (already divided by n). */
  readonly excess: number;
  /** Σ over the easy start values of the expected mixed groups (already divided by n). */
  readonly mixed: number;
  /** Σ of the remainder bounds of the easy start values (divided by n): |error of excess| ≤ this. */
  readonly bound: number;
  /** hard[j] = 1 for stationary start values left to the quadrature form. */
  readonly hard: Uint8Array;
  /** Largest hard index, −1 when none. */
  readonly lastHard: number;
}

/**
 * The stationary programme in moment form (see the file comment) over the start values with
 * stationary[j] = 1. Backward over the values, with reference value v_j, the state
 * B_j(r) = (E[Y^k; the first r units from runs j, j+1, … exist], k = 0..K+2;
 * E[M·Y^k; they exist], k = 0..K+1) obeys
 *   B_j(r) = Σ_{l<r} P(L_j = l)·shift(B_{j+1}(r − l)) + P(L_j ≥ r)·(1, 0, …),
 * where shift re-references the moments from v_{j+1} to v_j (Y += (r − l)·δ, M += δ,
 * δ = v_{j+1} − v_j; a binomial expansion of nonnegative terms, so no cancellation). Values are
 * scaled by 1/max so the moments stay below n^{K+2}.
 * Cost O(|support|·n²·(2K + 5)) additions, against O(|support|·n²·50) multiplications for the
 * quadrature form.
 *
 * @param values ascending support values (≥ 0, at least one positive).
 * @param p their weights, `total` their sum.
 * @param units launch size N.
 * @param n group size.
 * @param stationary stationary[j] = 1 for the start values to evaluate.
 * @example stationaryMomentExcess([1, 2, 3], [1, 1, 1], 3, 1 << 20, 32, new Uint8Array([1, 1, 0])).excess
 */
export function stationaryMomentExcess(
  values: readonly number[],
  p: readonly number[],
  total: number,
  units: number,
  n: number,
  stationary: Uint8Array,
): StationaryMomentPart {
  const m = values.length;
  const K = MOMENT_ORDER;
  const yCount = K + 3; // E[Y^k], k = 0..K+2
  const mCount = K + 2; // E[M·Y^k], k = 0..K+1
  const width = yCount + mCount;
  const scale = 1 / values[m - 1]!;
  let next = new Float64Array(n * width); // B_{j+1}(r) column k at [k·n + r], r = 1..n−1, reference v_{j+1}
  let current = new Float64Array(n * width);
  const shifted = new Float64Array(n * width); // B_{j+1}(r) re-referenced to v_j
  const runPmf = new Float64Array(n);
  const runTail = new Float64Array(n + 1);
  const hard = new Uint8Array(m);
  let lastHard = -1;
  let excess = 0;
  let mixed = 0;
  let bound = 0;

  // Moments of (Y + a, M + δ) from those of (Y, M), row `row` of `next` into the same row of
  // `shifted`: E[(Y + a)^k] = Σ_i C(k, i)·a^{k−i}·E[Y^i], E[(M + δ)(Y + a)^k] = Σ_i C(k, i)·a^{k−i}·E[M·Y^i] + δ·E[(Y + a)^k].
  // Written out for K = 2: E[Y^0..4] in columns 0..4, E[M·Y^0..3] in columns 5..8.
  const shift = (row: number, a: number, delta: number): void => {
    const a2 = a * a;
    const a3 = a2 * a;
    const a4 = a2 * a2;
    const y0 = next[row]!;
    const y1 = next[n + row]!;
    const y2 = next[2 * n + row]!;
    const y3 = next[3 * n + row]!;
    const y4 = next[4 * n + row]!;
    const m0 = next[5 * n + row]!;
    const m1 = next[6 * n + row]!;
    const m2 = next[7 * n + row]!;
    const m3 = next[8 * n + row]!;
    const z0 = y0;
    const z1 = y1 + a * y0;
    const z2 = y2 + 2 * a * y1 + a2 * y0;
    const z3 = y3 + 3 * a * y2 + 3 * a2 * y1 + a3 * y0;
    shifted[row] = z0;
    shifted[n + row] = z1;
    shifted[2 * n + row] = z2;
    shifted[3 * n + row] = z3;
    shifted[4 * n + row] = y4 + 4 * a * y3 + 6 * a2 * y2 + 4 * a3 * y1 + a4 * y0;
    shifted[5 * n + row] = m0 + delta * z0;
    shifted[6 * n + row] = m1 + a * m0 + delta * z1;
    shifted[7 * n + row] = m2 + 2 * a * m1 + a2 * m0 + delta * z2;
    shifted[8 * n + row] = m3 + 3 * a * m2 + 3 * a2 * m1 + a3 * m0 + delta * z3;
  };

  // B_j is needed down to the first start value only.
  const firstStart = Math.max(0, stationary.indexOf(1));
  for (let j = m - 1; j >= firstStart; j--) {
    poissonRunLengths((units * p[j]!) / total, n, runPmf, runTail);
    const delta = j < m - 1 ? (values[j + 1]! - values[j]!) * scale : 0;
    if (j < m - 1) for (let r = 1; r < n; r++) shift(r, r * delta, delta);
    if (stationary[j] === 1 && j < m - 1) {
      // Windows that start d units before the end of run j: d copies of v_j, then B_{j+1}(n − d).
      const c = n * values[j]! * scale;
      let startExcess = 0;
      let startMixed = 0;
      let startBound = 0;
      for (let d = 1; d < n; d++) {
        const startWeight = runTail[d]!;
        if (startWeight <= NEGLIGIBLE_RUN) break;
        const r = n - d;
        // shifted(r) has Y += r·δ; the d copies of v_j add nothing to Y: it is the window.
        const fill = shifted[r]!;
        if (fill === 0) continue;
        if (c === 0) {
          startBound = Infinity;
          break;
        }
        let series = 0;
        let inverse = 1 / c;
        for (let k = 0; k <= K; k++) {
          const z = n * shifted[(yCount + k) * n + r]! - shifted[(k + 1) * n + r]!; // E[Z·Y^k]
          series += (k % 2 === 0 ? inverse : -inverse) * z;
          inverse /= c;
        }
        const remainder = Math.max(0, n * shifted[(yCount + K + 1) * n + r]! - shifted[(K + 2) * n + r]!) * inverse;
        startExcess += startWeight * series;
        startMixed += startWeight * fill;
        startBound += startWeight * remainder;
      }
      if (startBound <= MOMENT_RELATIVE_TOLERANCE * startExcess) {
        excess += startExcess;
        mixed += startMixed;
        bound += startBound;
      } else {
        hard[j] = 1;
        lastHard = Math.max(lastHard, j);
      }
    }
    if (j === firstStart) break;
    if (j < m - 1) {
      // B_j(r) = Σ_{l<r} P(L_j = l)·shifted(r − l) + P(L_j ≥ r)·(1, 0, …); runs shorter than
      // `first` are negligible (P < 1e-20), and so are runs longer than `last`.
      let first = 0;
      while (first < n - 1 && runPmf[first]! <= NEGLIGIBLE_RUN) first++;
      let last = n - 2;
      while (last > first && runPmf[last]! <= NEGLIGIBLE_RUN) last--;
      // The 9 columns (K = 2) in one pass: one load of P(L_j = l) serves all of them.
      const n2 = 2 * n;
      const n3 = 3 * n;
      const n4 = 4 * n;
      const n5 = 5 * n;
      const n6 = 6 * n;
      const n7 = 7 * n;
      const n8 = 8 * n;
      for (let r = 1; r < n; r++) {
        const top = Math.min(last, r - 1);
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        let s4 = 0;
        let s5 = 0;
        let s6 = 0;
        let s7 = 0;
        let s8 = 0;
        for (let l = first, q = r - first; l <= top; l++, q--) {
          const weight = runPmf[l]!;
          s0 += weight * shifted[q]!;
          s1 += weight * shifted[n + q]!;
          s2 += weight * shifted[n2 + q]!;
          s3 += weight * shifted[n3 + q]!;
          s4 += weight * shifted[n4 + q]!;
          s5 += weight * shifted[n5 + q]!;
          s6 += weight * shifted[n6 + q]!;
          s7 += weight * shifted[n7 + q]!;
          s8 += weight * shifted[n8 + q]!;
        }
        current[r] = s0 + runTail[r]!;
        current[n + r] = s1;
        current[n2 + r] = s2;
        current[n3 + r] = s3;
        current[n4 + r] = s4;
        current[n5 + r] = s5;
        current[n6 + r] = s6;
        current[n7 + r] = s7;
        current[n8 + r] = s8;
      }
    } else {
      current.fill(0);
      for (let r = 1; r < n; r++) current[r] = runTail[r]!;
    }
    const swap = next;
    next = current;
    current = swap;
  }
  return { excess: excess / n, mixed: mixed / n, bound: bound / n, hard, lastHard };
}
