/**
 * Least-squares fit of divergence-management costs (T, δ, spill cost) from micro-benchmark
 * measurements (docs/model.md §4), and the CSV format of the kernels `divergence` workload.
 */
import { divergencePatternBounds } from './divergence-cost.ts';
import { emulateReconvergenceStack, type LoopSpec, type ReconvergenceStackOptions } from './reconvergence-stack.ts';
import { solveLeastSquares } from './least-squares.ts';

/** One measurement reduced to the model's features. */
export interface DivergenceObservation {
  /** Row label (pattern name). */
  readonly label: string;
  /** Loop iterations issued by the warp. */
  readonly issuedIterations: number;
  /** Diverging exits. */
  readonly divergingExits: number;
  /** Spill chunks. */
  readonly spills: number;
  /** Measured cycles. */
  readonly cycles: number;
}

/** One row of the divergence CSV. */
export interface DivergenceMeasurement {
  readonly pattern: string;
  readonly loop: 'single' | 'nested';
  readonly k: number | undefined;
  /** Lane trip counts (outer loop for nested). */
  readonly bounds: readonly number[];
  /** Inner-loop trip counts (nested only). */
  readonly innerBounds: readonly number[] | undefined;
  readonly cycles: number;
  /** 1-based line in the file. */
  readonly line: number;
}

/** Fitted parameters with diagnostics. */
export interface DivergenceFit {
  /** T: cycles per issued loop iteration. */
  readonly iterationCycles: number;
  /** δ: cycles per diverging exit. */
  readonly deltaCycles: number;
  /** Cycles per spill chunk (spill+reload); undefined when no observation spilled. */
  readonly spillCycles: number | undefined;
  /** Constant per measurement; 0 unless fitted with `intercept: true`. */
  readonly overheadCycles: number;
  /** Standard errors by parameter name; absent when observations = parameters. */
  readonly standardErrors: Readonly<Record<string, number>> | undefined;
  /** Parameters left out because no observation varies them. */
  readonly unidentified: readonly string[];
  readonly residuals: readonly { label: string; measuredCycles: number; fittedCycles: number; residualCycles: number }[];
  /** 1 − SSres/SStot, SStot about the mean of the measured cycles. */
  readonly rSquared: number;
  /** √(SSres/observations). */
  readonly rmseCycles: number;
  readonly observations: number;
}

/**
 * Reduces a measurement to model features with the reconvergence-stack emulator.
 *
 * @throws RangeError for invalid bounds (see emulateReconvergenceStack)
 * @example divergenceObservationOf({ pattern: 'k2', loop: 'single', k: 2, bounds: [4, 4, 3, 2], innerBounds: undefined, cycles: 500, line: 2 })
 */
export function divergenceObservationOf(measurement: DivergenceMeasurement, options: ReconvergenceStackOptions = {}): DivergenceObservation {
  const loop: LoopSpec =
    measurement.loop === 'nested'
      ? { bounds: measurement.bounds, body: [{ bounds: measurement.innerBounds ?? measurement.bounds }] }
      : { bounds: measurement.bounds };
  const trace = emulateReconvergenceStack(loop, options);
  return {
    label: measurement.pattern,
    issuedIterations: trace.issuedIterations,
    divergingExits: trace.divergingExits,
    spills: trace.spills,
    cycles: measurement.cycles,
  };
}

/**
 * Reduces one measured work group (lane iteration counts w and its measured cycles
 * c_end − c0) to model features, treating the group as one loop with trip counts w. Feed many
 * groups of one device to {@link fitDivergenceCost} to fit T and δ from production data
 * (docs/model.md §4).
 *
 * @throws RangeError for invalid counts (see emulateReconvergenceStack) or cycles < 0
 * @example divergenceObservationOfGroup([4, 4, 3, 2], 530).divergingExits // → 2
 */
export function divergenceObservationOfGroup(
  counts: ArrayLike<number>,
  cycles: number,
  label = 'group',
  options: ReconvergenceStackOptions = {},
): DivergenceObservation {
  if (!Number.isFinite(cycles) || cycles < 0) throw new RangeError(`cycles must be a finite number ≥ 0, got ${String(cycles)}`);
  const trace = emulateReconvergenceStack({ bounds: Array.from(counts) }, options);
  return { label, issuedIterations: trace.issuedIterations, divergingExits: trace.divergingExits, spills: trace.spills, cycles };
}

/**
 * Fits cycles ≈ T·issuedIterations + δ·divergingExits + s·spills (+ c with `intercept`) by least
 * squares (QR). A feature that is zero in every observation (typically spills when k ≤ 14) is
 * dropped and its parameter reported as unidentified.
 *
 * @throws RangeError with fewer observations than parameters, or when a parameter cannot be
 *   separated from the others (e.g. `intercept` with a constant iteration count)
 * @example fitDivergenceCost(observations).deltaCycles
 */
export function fitDivergenceCost(observations: readonly DivergenceObservation[], options: { intercept?: boolean } = {}): DivergenceFit {
  if (observations.length === 0) throw new RangeError('fit needs at least one observation, got none');
  const features: { name: string; value: (o: DivergenceObservation) => number }[] = [
    { name: 'iterationCycles', value: (o) => o.issuedIterations },
    { name: 'deltaCycles', value: (o) => o.divergingExits },
    { name: 'spillCycles', value: (o) => o.spills },
  ];
  if (options.intercept === true) features.push({ name: 'overheadCycles', value: () => 1 });
  const unidentified = features.filter((f) => observations.every((o) => f.value(o) === 0)).map((f) => f.name);
  const used = features.filter((f) => !unidentified.includes(f.name));
  if (used.length === 0) throw new RangeError('every feature is zero in every observation: nothing to fit');
  if (unidentified.includes('iterationCycles') || unidentified.includes('deltaCycles')) {
    throw new RangeError(`cannot fit ${unidentified.join(', ')}: no observation has ${unidentified.includes('deltaCycles') ? 'a diverging exit' : 'an issued iteration'}`);
  }
  const design = observations.map((o) => used.map((f) => f.value(o)));
  const measured = observations.map((o) => o.cycles);
  const solution = solveLeastSquares(design, measured, used.map((f) => f.name));
  const byName = new Map(used.map((f, j) => [f.name, solution.coefficients[j] as number]));
  const mean = measured.reduce((s, v) => s + v, 0) / measured.length;
  const totalSumOfSquares = measured.reduce((s, v) => s + (v - mean) ** 2, 0);
  const standardErrors =
    solution.standardErrors === undefined
      ? undefined
      : Object.fromEntries(used.map((f, j) => [f.name, solution.standardErrors?.[j] as number]));
  return {
    iterationCycles: byName.get('iterationCycles') as number,
    deltaCycles: byName.get('deltaCycles') as number,
    spillCycles: byName.get('spillCycles'),
    overheadCycles: byName.get('overheadCycles') ?? 0,
    standardErrors,
    unidentified,
    residuals: observations.map((o, i) => ({
      label: o.label,
      measuredCycles: o.cycles,
      fittedCycles: o.cycles - (solution.residuals[i] as number),
      residualCycles: solution.residuals[i] as number,
    })),
    rSquared: totalSumOfSquares === 0 ? (solution.residualSumOfSquares === 0 ? 1 : 0) : 1 - solution.residualSumOfSquares / totalSumOfSquares,
    rmseCycles: Math.sqrt(solution.residualSumOfSquares / observations.length),
    observations: observations.length,
  };
}

function parseBoundsList(text: string, where: string): number[] {
  const parts = text.trim().split(/[\s;]+/).filter((p) => p.length > 0);
  return parts.map((p) => {
    const v = Number(p);
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(v)) throw new RangeError(`${where}: bounds must be non-negative integers separated by spaces or ';', got '${p}'`);
    return v;
  });
}

/**
 * Parses the divergence micro-benchmark CSV: header line with at least `loop`, `cycles` and
 * one of `k`/`bounds`; optional `pattern`, `inner_bounds`; other columns ignored; `#` lines and
 * blank lines skipped. `bounds` lists lane trip counts separated by spaces or `;`; when empty,
 * the (32,…,32,31,…,32−k) pattern of `k` is used. Nested rows run the inner loop with
 * `inner_bounds` (default: the same bounds).
 *
 * @throws RangeError naming the line and column of the first problem
 * @example parseDivergenceCsv('pattern,loop,k,bounds,cycles\nk0,single,0,,1234\n')
 */
export function parseDivergenceCsv(text: string): DivergenceMeasurement[] {
  const lines = text.split(/\r?\n/);
  let header: string[] | undefined;
  const rows: DivergenceMeasurement[] = [];
  lines.forEach((raw, index) => {
    const line = raw.trim();
    const lineNumber = index + 1;
    if (line.length === 0 || line.startsWith('#')) return;
    const cells = line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    if (header === undefined) {
      header = cells.map((c) => c.toLowerCase());
      for (const required of ['loop', 'cycles']) {
        if (!header.includes(required)) throw new RangeError(`line ${lineNumber}: header must name a '${required}' column, got '${line}'`);
      }
      if (!header.includes('k') && !header.includes('bounds')) throw new RangeError(`line ${lineNumber}: header must name a 'k' or 'bounds' column, got '${line}'`);
      return;
    }
    const columns = header;
    if (cells.length < columns.length) throw new RangeError(`line ${lineNumber}: expected ${columns.length} columns, got ${cells.length}`);
    const cell = (name: string): string => (columns.includes(name) ? (cells[columns.indexOf(name)] as string) : '');
    const loop = cell('loop').toLowerCase();
    if (loop !== 'single' && loop !== 'nested') throw new RangeError(`line ${lineNumber}: loop must be 'single' or 'nested', got '${cell('loop')}'`);
    const cycles = Number(cell('cycles'));
    if (cell('cycles') === '' || !Number.isFinite(cycles) || cycles < 0) throw new RangeError(`line ${lineNumber}: cycles must be a number ≥ 0, got '${cell('cycles')}'`);
    const kText = cell('k');
    const k = kText === '' ? undefined : Number(kText);
    if (k !== undefined && (!Number.isInteger(k) || k < 0)) throw new RangeError(`line ${lineNumber}: k must be a non-negative integer, got '${kText}'`);
    let bounds: number[];
    if (cell('bounds') !== '') bounds = parseBoundsList(cell('bounds'), `line ${lineNumber}`);
    else if (k !== undefined) {
      try {
        bounds = divergencePatternBounds(k);
      } catch (error) {
        throw new RangeError(`line ${lineNumber}: ${(error as Error).message}`);
      }
    } else throw new RangeError(`line ${lineNumber}: needs k or bounds, got neither`);
    if (bounds.length === 0) throw new RangeError(`line ${lineNumber}: bounds must list at least one lane`);
    const innerBounds = cell('inner_bounds') === '' ? undefined : parseBoundsList(cell('inner_bounds'), `line ${lineNumber}`);
    if (innerBounds !== undefined && innerBounds.length !== bounds.length) {
      throw new RangeError(`line ${lineNumber}: inner_bounds must have ${bounds.length} lanes like bounds, got ${innerBounds.length}`);
    }
    rows.push({ pattern: cell('pattern') || `${loop}-k${kText || '?'}`, loop, k, bounds, innerBounds: loop === 'nested' ? innerBounds : undefined, cycles, line: lineNumber });
  });
  if (header === undefined) throw new RangeError('divergence CSV is empty: expected a header line and at least one row');
  if (rows.length === 0) throw new RangeError('divergence CSV has a header but no rows');
  return rows;
}
