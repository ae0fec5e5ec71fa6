/**
 * The exact method (docs/model.md §2a): the distribution of X_W(n) = n·max/sum as exact
 * outcome → probability pairs, grouped by the reduced fraction n·a/s. The correctness reference.
 */
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { assertGroupSize } from './group-size.ts';
import { gcd } from '../numerics/gcd.ts';

/** One outcome of X_W(n): the reduced fraction numerator/denominator, its value and probability. */
export interface LossOutcome {
  readonly numerator: number;
  readonly denominator: number;
  readonly value: number;
  readonly probability: number;
}

/** The exact distribution of X_W(n): outcomes by ascending value, and E[X_W(n)]. */
export interface ExactLossDistribution {
  readonly outcomes: LossOutcome[];
  readonly mean: number;
}

/** Work limit of the exact method in multiply-adds (≈ 1–3 s here); beyond it the method refuses. */
export const EXACT_WORK_LIMIT = 2e9;
/** Memory limit of the exact method in double cells (8 bytes each). */
export const EXACT_CELL_LIMIT = 2.5e7;

/** Cost estimate of the exact method for a distribution and n. */
export interface ExactCost {
  /** Multiply-adds of the convolution tables, about n³/6 · Σ_a a/g over the support (g = gcd of values). */
  readonly operations: number;
  /** Double cells held, about n²/2 · max/g. */
  readonly cells: number;
  /** Whether both are within {@link EXACT_WORK_LIMIT} and {@link EXACT_CELL_LIMIT}. */
  readonly feasible: boolean;
}

function reducedSupport(dist: CategoricalDistribution): { scaled: number[]; divisor: number } {
  let divisor = 0;
  for (const v of dist.values) divisor = gcd(v, divisor);
  if (divisor === 0) divisor = 1;
  return { scaled: dist.values.map((v) => v / divisor), divisor };
}

/**
 * Estimates the work and memory of the exact method (scale-free: values are divided by their gcd).
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE unless n is an integer 1..1024.
 * @example exactCost(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32).feasible // true
 */
export function exactCost(dist: CategoricalDistribution, n: number): ExactCost {
  assertGroupSize(n);
  const { scaled } = reducedSupport(dist);
  let valueSum = 0;
  for (const a of scaled) valueSum += a;
  const operations = ((n * n * n) / 6) * valueSum + n * scaled.length;
  const cells = ((n * (n + 1)) / 2) * scaled[scaled.length - 1]! + n + 1;
  return { operations, cells, feasible: operations <= EXACT_WORK_LIMIT && cells <= EXACT_CELL_LIMIT };
}

/**
 * Core of the exact method. G[i][s] holds g(s; i, m) of docs/model.md §2a, the unnormalised
 * probability that i draws, each ≤ the current maximum m, sum to s. Adding the next support
 * value a with probability f expands (P_{<a} + f·z^a)^i binomially:
 *
 *     G_a[i][s] = Σ_k C(i,k) f^k G_{a−}[i−k][s − k·a],
 *
 * updated in place for i descending. For i = n the k ≥ 1 terms are exactly
 * P(max = a, sum = s) = g(s; n, a) − g(s; n, a−), computed as a sum of non-negative terms
 * instead of the subtraction (no cancellation), and G[n] itself is never needed.
 *
 * Only cells that can be non-zero are read: i draws of values v_0 ≤ … ≤ current sum to
 * i·v_0 plus a multiple of the gcd of the differences v_j − v_0 of the values added so far, so
 * the source row G[i−k] is walked from (i−k)·v_0 in steps of that gcd (a multiple of the gcd of
 * the values: a three-point support {3, 14, 30} walks the rows of {3, 14} in steps of 11, not
 * 1). The cells skipped hold exactly +0 (every update lands on that lattice), a skipped addend
 * would be +0 (x + 0 = x for every x ≥ +0), and every visited cell receives the same products
 * in the same order (k ascending) as a walk over every cell, so the tables hold the same bits.
 * Rows i < n hold sums of values below the largest only (the largest updates the joint row
 * alone), so they are i·v_{K−2} + 1 cells long.
 *
 * The tables live in one scratch array reused between calls (see {@link exactScratch}); the
 * callback must not keep `joint` beyond its call.
 */
function runExact(dist: CategoricalDistribution, n: number, onMaximum: (a: number, joint: Float64Array, high: number) => void): void {
  const cost = exactCost(dist, n);
  if (!cost.feasible) {
    throw new ModelError(
      'WW_ERR_MODEL_EXACT_TOO_LARGE',
      `exact method for n=${n} on ${dist.size} values up to ${dist.max} needs about ${cost.operations.toPrecision(2)} operations and ${cost.cells.toPrecision(2)} cells (limits ${EXACT_WORK_LIMIT.toPrecision(2)} and ${EXACT_CELL_LIMIT.toPrecision(2)}); use the fast method for the mean`,
    );
  }
  const { scaled } = reducedSupport(dist);
  const probabilities = dist.probabilities;
  const maxValue = scaled[scaled.length - 1]!;
  const rowTop = scaled.length > 1 ? scaled[scaled.length - 2]! : 0; // the largest value rows i < n see
  // Row i (i = 0..n−1, i·rowTop + 1 cells) starts at rowStart[i]; the joint row follows them.
  const rowStart = new Array<number>(n);
  let cells = 0;
  for (let i = 0; i < n; i++) {
    rowStart[i] = cells;
    cells += i * rowTop + 1;
  }
  const jointStart = cells;
  const jointLength = n * maxValue + 1;
  const tables = exactScratch(cells + jointLength);
  tables.fill(0, 0, cells); // the joint row is cleared per value below
  tables[0] = 1;
  const joint = tables.subarray(jointStart, jointStart + jointLength);
  const smallest = scaled[0]!;
  let current = 0; // largest support value added so far (tables hold sums up to i·current)
  let spread = 0; // gcd of v_j − v_0 over the values added so far (0 while none or only v_0 is)
  let step = 1; // spread, or 1 while it is 0 (a row then has one cell that can be non-zero)
  for (let index = 0; index < scaled.length; index++) {
    const a = scaled[index]!;
    const f = probabilities[index]!;
    const last = index === scaled.length - 1;
    for (let i = n; i >= 1; i--) {
      if (last && i < n) break; // the last value only needs the joint row
      const target = i === n ? jointStart : rowStart[i]!;
      if (i === n) tables.fill(0, jointStart, jointStart + n * a + 1);
      let coefficient = 1;
      const ratios = i <= RATIO_ROWS ? binomialRatios : undefined;
      const ratioRow = (i * (i - 1)) / 2 - 1; // (i, k) at ratioRow + k
      for (let k = 1; k <= i; k++) {
        coefficient *= (ratios === undefined ? (i - k + 1) / k : ratios[ratioRow + k]!) * f;
        if (coefficient === 0) break;
        const source = rowStart[i - k]!;
        const length = (i - k) * current + 1;
        const offset = target + k * a;
        for (let s = (i - k) * smallest; s < length; s += step) tables[s + offset]! += coefficient * tables[source + s]!;
      }
    }
    onMaximum(a, joint, n * a);
    current = a;
    spread = gcd(a - smallest, spread);
    step = spread || 1;
  }
}

/** Rows i of {@link binomialRatios}: 1..RATIO_ROWS. */
const RATIO_ROWS = 128;

/**
 * (i − k + 1)/k for 1 ≤ k ≤ i ≤ {@link RATIO_ROWS} at i·(i − 1)/2 − 1 + k, the very quotients the
 * binomial coefficients C(i, k)·f^k of runExact are built from (a quotient is the same double
 * wherever it is computed), computed once instead of once per support value and row.
 */
const binomialRatios: Float64Array = (() => {
  const table = new Float64Array((RATIO_ROWS * (RATIO_ROWS + 1)) / 2);
  for (let i = 1; i <= RATIO_ROWS; i++) for (let k = 1; k <= i; k++) table[(i * (i - 1)) / 2 - 1 + k] = (i - k + 1) / k;
  return table;
})();

/** Cells of the merge's scratch arrays kept between calls ({@link mergedOutcomes}); larger ones are allocated per call and dropped. */
const MERGE_SCRATCH_CELLS = 1 << 18;
let mergeReals: Float64Array | undefined;
let mergeIntegers: Int32Array | undefined;

function mergeScratchReals(cells: number): Float64Array {
  if (cells > MERGE_SCRATCH_CELLS) return new Float64Array(cells);
  if (mergeReals === undefined || mergeReals.length < cells) mergeReals = new Float64Array(Math.min(MERGE_SCRATCH_CELLS, Math.max(cells, 4096)));
  return mergeReals;
}

function mergeScratchIntegers(cells: number): Int32Array {
  if (cells > MERGE_SCRATCH_CELLS) return new Int32Array(cells);
  if (mergeIntegers === undefined || mergeIntegers.length < cells) mergeIntegers = new Int32Array(Math.min(MERGE_SCRATCH_CELLS, Math.max(cells, 4096)));
  return mergeIntegers;
}

/** Cells of the scratch array kept between calls of the exact method (2 MiB); larger tables are allocated per call and dropped. */
const EXACT_SCRATCH_CELLS = 1 << 18;
let scratch: Float64Array | undefined;

/**
 * A Float64Array of at least `cells` cells for the exact method's tables (contents arbitrary).
 * One array of up to {@link EXACT_SCRATCH_CELLS} cells is kept and reused (the model is
 * single-threaded and runExact does not re-enter), so a window close does not allocate ~n²·max/2
 * cells for the garbage collector each time; a larger request gets an array of its own.
 */
function exactScratch(cells: number): Float64Array {
  if (cells > EXACT_SCRATCH_CELLS) return new Float64Array(cells);
  if (scratch === undefined || scratch.length < cells) scratch = new Float64Array(Math.min(EXACT_SCRATCH_CELLS, Math.max(cells, 4096)));
  return scratch;
}

/**
 * The exact distribution of X_W(n) (docs/model.md §2a) with outcomes grouped by reduced fraction
 * n·a/s and sorted by value; an all-zero group counts as X = 1 (fraction 1/1). Probabilities
 * sum to 1 within rounding (about 1e-14). Cost: see {@link exactCost}.
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_EXACT_TOO_LARGE when
 *   the support is too large for the exact method (use the fast method).
 * @example exactLossDistribution(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2).mean // 1 + 1/6
 */
export function exactLossDistribution(dist: CategoricalDistribution, n: number): ExactLossDistribution {
  const { scaled } = reducedSupport(dist);
  const keyBase = n * scaled[scaled.length - 1]! + 2; // numerator and denominator (≤ n·max, or 1/1) are both below keyBase
  if (keyBase > MERGE_KEY_LIMIT) return groupedOutcomes(dist, n, scaled, keyBase);
  const table = mergedOutcomes(dist, n, scaled, true);
  const outcomes: LossOutcome[] = [];
  for (let i = 0; i < table.count; i++) {
    const divisor = gcd(table.tops[i]!, table.sums[i]!);
    const numerator = table.tops[i]! / divisor;
    const denominator = table.sums[i]! / divisor;
    outcomes.push({ numerator, denominator, value: numerator / denominator, probability: table.probabilities[i]! });
  }
  return { outcomes, mean: table.mean };
}

/** The outcomes of X_W(n) as {@link exactLossDistribution} gives them, in arrays: values ascending, their probabilities, E[X_W(n)]. */
export interface ExactLossTable {
  readonly count: number;
  readonly values: Float64Array;
  readonly probabilities: Float64Array;
  readonly mean: number;
}

/**
 * The values and probabilities of {@link exactLossDistribution}'s outcomes, the same bits in
 * the same order, without the reduced fractions (no gcd, no object per outcome); quantiles
 * (loss-quantiles.ts) visit them without the table ({@link visitExactLossOutcomes}).
 *
 * @throws {ModelError} as {@link exactLossDistribution}.
 * @example exactLossTable(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2).values // [1, 4/3]
 */
export function exactLossTable(dist: CategoricalDistribution, n: number): ExactLossTable {
  const { scaled } = reducedSupport(dist);
  const keyBase = n * scaled[scaled.length - 1]! + 2;
  if (keyBase <= MERGE_KEY_LIMIT) return mergedOutcomes(dist, n, scaled, false);
  const { outcomes, mean } = groupedOutcomes(dist, n, scaled, keyBase);
  const values = new Float64Array(outcomes.length);
  const probabilities = new Float64Array(outcomes.length);
  outcomes.forEach((outcome, i) => {
    values[i] = outcome.value;
    probabilities[i] = outcome.probability;
  });
  return { count: outcomes.length, values, probabilities, mean };
}

/**
 * Largest numerator/denominator bound (n·max + 2, max after the gcd reduction) for which
 * {@link mergedOutcomes} is used: two different fractions p/q ≠ p'/q' with q, q' ≤ 2^20 differ by
 * at least 1/(q·q') ≥ 2^−40, more than the spacing of doubles up to 1024 (2^−42), so their
 * values are different doubles and equal values mean equal fractions.
 */
const MERGE_KEY_LIMIT = 2 ** 20;

/**
 * The outcomes grouped by reduced fraction in a Map and then sorted by value (any n·max). A
 * group's probability is the sum of its cells in the order (a ascending, s ascending).
 */
function groupedOutcomes(dist: CategoricalDistribution, n: number, scaled: readonly number[], keyBase: number): ExactLossDistribution {
  const groups = new Map<number, number>();
  const others = (n - 1) * scaled[0]!; // the other n − 1 draws sum to at least this: joint cells below a + others are 0
  let mean = 0;
  runExact(dist, n, (a, joint, high) => {
    if (a === 0) {
      const p = joint[0]!;
      if (p > 0) {
        groups.set(keyBase + 1, (groups.get(keyBase + 1) ?? 0) + p);
        mean += p;
      }
      return;
    }
    const top = n * a;
    for (let s = a + others; s <= high; s++) {
      const p = joint[s]!;
      if (p === 0) continue;
      const divisor = gcd(top, s);
      const key = (top / divisor) * keyBase + s / divisor;
      groups.set(key, (groups.get(key) ?? 0) + p);
      mean += (p * top) / s;
    }
  });
  const outcomes: LossOutcome[] = [];
  for (const [key, probability] of groups) {
    const numerator = Math.floor(key / keyBase);
    const denominator = key - numerator * keyBase;
    outcomes.push({ numerator, denominator, value: numerator / denominator, probability });
  }
  outcomes.sort((x, y) => x.value - y.value);
  return { outcomes, mean };
}

/** The cells of the joint rows as {@link collectedCells} returns them. */
interface CollectedCells {
  /** Per cell: X = top/s, its probability, and the fraction top/s (1/1 for the all-zero group). */
  readonly values: Float64Array;
  readonly probabilities: Float64Array;
  readonly tops: Int32Array;
  readonly sums: Int32Array;
  /** Where the run of each support value (ascending) ends; each run rises in value. */
  readonly runEnds: readonly number[];
  readonly cells: number;
  /** E[X_W(n)] summed in cell order (0 when not asked for). */
  readonly mean: number;
  /** The scratch integers (4·capacity) whose first half holds tops and sums: the merge uses the rest. */
  readonly integers: Int32Array;
  readonly capacity: number;
}

/**
 * Runs the exact method and keeps the non-zero cells of each maximum's joint row, s descending
 * (so each run rises in value), in scratch arrays reused between calls (read only until the next
 * call); with `withMean`, also sums E[X_W(n)] in the original cell order (a ascending, s
 * ascending). What {@link mergedOutcomes} and {@link visitExactLossOutcomes} merge.
 */
function collectedCells(dist: CategoricalDistribution, n: number, scaled: readonly number[], withMean: boolean): CollectedCells {
  const others = (n - 1) * scaled[0]!;
  let capacity = 0;
  for (const a of scaled) capacity += a === 0 ? 1 : n * a - a - others + 1;
  // The cells (value, probability, fraction tops/sums) and two index arrays for the merge, in
  // scratch arrays reused between calls (read only within this call).
  const reals = mergeScratchReals(2 * capacity);
  const integers = mergeScratchIntegers(4 * capacity);
  const values = reals.subarray(0, capacity);
  const probabilities = reals.subarray(capacity, 2 * capacity);
  const tops = integers.subarray(0, capacity); // the fraction top/s of each cell (1/1 for the all-zero group; both below 2^20)
  const sums = integers.subarray(capacity, 2 * capacity);
  const runEnds: number[] = [];
  let cells = 0;
  let mean = 0;
  runExact(dist, n, (a, joint, high) => {
    if (a === 0) {
      const p = joint[0]!;
      if (p > 0) {
        values[cells] = 1;
        probabilities[cells] = p;
        tops[cells] = 1;
        sums[cells] = 1;
        cells += 1;
        mean += p;
      }
      runEnds.push(cells);
      return;
    }
    const top = n * a;
    const low = a + others;
    if (withMean) {
      for (let s = low; s <= high; s++) {
        const p = joint[s]!;
        if (p !== 0) mean += (p * top) / s;
      }
    }
    for (let s = high; s >= low; s--) {
      const p = joint[s]!;
      if (p === 0) continue;
      values[cells] = top / s;
      probabilities[cells] = p;
      tops[cells] = top;
      sums[cells] = s;
      cells += 1;
    }
    runEnds.push(cells);
  });
  return { values, probabilities, tops, sums, runEnds, cells, mean: withMean ? mean : 0, integers, capacity };
}

/**
 * The same outcomes as {@link groupedOutcomes}, bit for bit, without a Map or a comparison sort
 * (when n·max + 2 ≤ {@link MERGE_KEY_LIMIT}): the cells of one maximum a have values n·a/s that
 * rise as s falls, so each a gives a sorted run; the runs are merged stably (a ascending among
 * equal values), and equal values, which are equal fractions there, are added in that order —
 * the order in which the Map added them. The mean is summed in the original cell order.
 * Returns the outcomes in place of the cells: value, probability and, when `fractions` is set,
 * an unreduced fraction tops[i]/sums[i] of each (else tops and sums are empty: the table of
 * quantiles needs no fractions).
 */
function mergedOutcomes(
  dist: CategoricalDistribution,
  n: number,
  scaled: readonly number[],
  fractions: boolean,
): ExactLossTable & { readonly tops: Int32Array; readonly sums: Int32Array } {
  const { values, probabilities, tops, sums, runEnds, cells, mean, integers, capacity } = collectedCells(dist, n, scaled, true);
  if (runEnds.length <= FEW_RUNS) return mergedFewRuns(values, probabilities, tops, sums, runEnds, cells, fractions, mean);
  // Bottom-up stable merge of adjacent runs (left first among equal values) into `order`.
  let order = integers.subarray(2 * capacity, 2 * capacity + cells);
  for (let i = 0; i < cells; i++) order[i] = i;
  let spare = integers.subarray(3 * capacity, 3 * capacity + cells);
  let bounds = [0, ...runEnds];
  while (bounds.length > 2) {
    const next = [0];
    for (let r = 0; r + 1 < bounds.length; r += 2) {
      const from = bounds[r]!;
      const middle = bounds[r + 1]!;
      const to = r + 2 < bounds.length ? bounds[r + 2]! : middle;
      let left = from;
      let right = middle;
      let out = from;
      while (left < middle && right < to) {
        const leftIndex = order[left]!;
        const rightIndex = order[right]!;
        if (values[rightIndex]! < values[leftIndex]!) {
          spare[out++] = rightIndex;
          right++;
        } else {
          spare[out++] = leftIndex;
          left++;
        }
      }
      while (left < middle) spare[out++] = order[left++]!;
      while (right < to) spare[out++] = order[right++]!;
      next.push(to);
    }
    const merged = spare;
    spare = order;
    order = merged;
    bounds = next;
  }
  // One outcome per run of equal values (equal fractions), its cells added in merged order.
  const outValues = new Float64Array(cells);
  const outProbabilities = new Float64Array(cells);
  const outTops = new Int32Array(fractions ? cells : 0);
  const outSums = new Int32Array(fractions ? cells : 0);
  let count = 0;
  for (let i = 0; i < cells; ) {
    const first = order[i]!;
    const value = values[first]!;
    let probability = 0;
    for (; i < cells && values[order[i]!] === value; i++) probability += probabilities[order[i]!]!;
    outValues[count] = value;
    outProbabilities[count] = probability;
    if (fractions) {
      outTops[count] = tops[first]!;
      outSums[count] = sums[first]!;
    }
    count += 1;
  }
  return { count, values: outValues, probabilities: outProbabilities, tops: outTops, sums: outSums, mean };
}

/**
 * The run (of at most four, sorted ascending, each `heads[r]` up to `ends[r]`) whose next cell
 * holds the smallest value, the lowest run among equal values; -1 when every run is used up.
 * Shared by {@link visitExactLossOutcomes} and mergedFewRuns.
 *
 * @example smallestHeadRun(Float64Array.of(1, 3, 2), [0, 2], [2, 3], 2) // 0 (value 1)
 */
function smallestHeadRun(values: Float64Array, heads: readonly number[], ends: readonly number[], runs: number): number {
  let best = -1;
  let bestValue = 0;
  for (let r = 0; r < runs; r++) {
    if (heads[r]! < ends[r]!) {
      const value = values[heads[r]!]!;
      if (best < 0 || value < bestValue) {
        best = r;
        bestValue = value;
      }
    }
  }
  return best;
}

/**
 * Calls `visit` with the outcomes of {@link exactLossTable} in order (value ascending, each
 * value's probability), the same bits, until it returns false: what quantiles need, without
 * the table. For up to {@link FEW_RUNS} support values (and n·max + 2 ≤ 2^20) the runs are merged
 * as they are visited, so the outcomes after the last one wanted are never merged, and the mean
 * (which quantiles do not read) is not summed; otherwise the table is built and walked.
 *
 * @throws {ModelError} as {@link exactLossDistribution}.
 * @example visitExactLossOutcomes(CategoricalDistribution.fromCounts({ 1: 1, 2: 1 }), 2, (value, p) => (console.log(value, p), true)) // 1 0.5, then 4/3 0.5
 */
export function visitExactLossOutcomes(dist: CategoricalDistribution, n: number, visit: (value: number, probability: number) => boolean): void {
  const { scaled } = reducedSupport(dist);
  const keyBase = n * scaled[scaled.length - 1]! + 2;
  if (keyBase > MERGE_KEY_LIMIT || scaled.length > FEW_RUNS) {
    const table = exactLossTable(dist, n);
    for (let i = 0; i < table.count; i++) if (!visit(table.values[i]!, table.probabilities[i]!)) return;
    return;
  }
  const { values, probabilities, runEnds, cells } = collectedCells(dist, n, scaled, false);
  // mergedFewRuns, handing each group to `visit` once its last equal value is added.
  const runs = runEnds.length;
  const heads = [0, 0, 0, 0];
  const ends = [0, 0, 0, 0];
  for (let r = 0; r < runs; r++) {
    heads[r] = r === 0 ? 0 : runEnds[r - 1]!;
    ends[r] = runEnds[r]!;
  }
  let open = false;
  let groupValue = 0;
  let probability = 0;
  for (let taken = 0; taken < cells; taken++) {
    const best = smallestHeadRun(values, heads, ends, runs);
    const cell = heads[best]!;
    const bestValue = values[cell]!;
    heads[best] = cell + 1;
    if (open && bestValue === groupValue) {
      probability += probabilities[cell]!;
      continue;
    }
    if (open && !visit(groupValue, probability)) return;
    open = true;
    groupValue = bestValue;
    probability = 0;
    probability += probabilities[cell]!;
  }
  if (open) visit(groupValue, probability);
}

/** Up to this many runs (support values) {@link mergedOutcomes} merges them in one pass ({@link mergedFewRuns}). */
const FEW_RUNS = 4;

/**
 * The outcomes of {@link mergedOutcomes} from at most {@link FEW_RUNS} sorted runs of cells
 * (run r ends at runEnds[r]) in one pass: each step takes the smallest head value, the
 * lowest run among equal ones, which is the order of the stable bottom-up merge (by value, then
 * by cell index: cells within a run have distinct, rising values), and adds equal values'
 * probabilities in that order from 0, as the grouping after the merge does. Same bits, without
 * the index arrays and the passes.
 */
function mergedFewRuns(
  values: Float64Array,
  probabilities: Float64Array,
  tops: Int32Array,
  sums: Int32Array,
  runEnds: readonly number[],
  cells: number,
  fractions: boolean,
  mean: number,
): ExactLossTable & { readonly tops: Int32Array; readonly sums: Int32Array } {
  const runs = runEnds.length;
  const heads = [0, 0, 0, 0];
  const ends = [0, 0, 0, 0];
  for (let r = 0; r < runs; r++) {
    heads[r] = r === 0 ? 0 : runEnds[r - 1]!;
    ends[r] = runEnds[r]!;
  }
  const outValues = new Float64Array(cells);
  const outProbabilities = new Float64Array(cells);
  const outTops = new Int32Array(fractions ? cells : 0);
  const outSums = new Int32Array(fractions ? cells : 0);
  let count = 0;
  let groupValue = 0;
  let probability = 0;
  for (let taken = 0; taken < cells; taken++) {
    const best = smallestHeadRun(values, heads, ends, runs);
    const cell = heads[best]!;
    const bestValue = values[cell]!;
    heads[best] = cell + 1;
    if (count > 0 && bestValue === groupValue) {
      probability += probabilities[cell]!;
      continue;
    }
    if (count > 0) outProbabilities[count - 1] = probability;
    groupValue = bestValue;
    probability = 0;
    probability += probabilities[cell]!;
    outValues[count] = bestValue;
    if (fractions) {
      outTops[count] = tops[cell]!;
      outSums[count] = sums[cell]!;
    }
    count += 1;
  }
  if (count > 0) outProbabilities[count - 1] = probability;
  return { count, values: outValues, probabilities: outProbabilities, tops: outTops, sums: outSums, mean };
}

/**
 * E[X_W(n)] by the exact method without building the outcome list (same sums, less memory).
 *
 * @throws {ModelError} as {@link exactLossDistribution}.
 * @example exactExpectedLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32)
 */
export function exactExpectedLoss(dist: CategoricalDistribution, n: number): number {
  let mean = 0;
  runExact(dist, n, (a, joint, high) => {
    if (a === 0) {
      mean += joint[0]!;
      return;
    }
    const top = n * a;
    let partial = 0;
    for (let s = a; s <= high; s++) {
      const p = joint[s]!;
      if (p !== 0) partial += p / s;
    }
    mean += partial * top;
  });
  return mean;
}
