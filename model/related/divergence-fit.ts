/**
 * Least-squares fit of divergence-management costs (T, δ, spill cost) from micro-benchmark
 * measurements and sampled groups (docs/model.md §4). (The CSV format of the kernels
 * `divergence` workload is read in cli/divergence-csv.ts.)
 */
import { emulateReconvergenceStack, type LoopSpec, type ReconvergenceStackOptions } from './reconvergence-stack.ts';
import { addRegressionRow, createRegressionMoments, solveRegressionMoments, type RegressionMoments } from './streaming-regression.ts';

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

/** One micro-benchmark measurement: a loop (or nest) with per-lane bounds and its measured cycles (a row of the divergence CSV). */
export interface DivergenceMeasurement {
  readonly pattern: string;
  readonly loop: 'single' | 'nested';
  readonly k: number | undefined;
  /** Lane trip counts (outer loop for nested). */
  readonly bounds: readonly number[];
  /** Inner-loop trip counts (nested only). */
  readonly innerBounds: readonly number[] | undefined;
  readonly cycles: number;
  /** 1-based line in the file it was read from (0 when it was not read from a file). */
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

/** The fitted parameters, in the order of the regression's features (then the constant). */
const FEATURE_PARAMETERS = ['iterationCycles', 'deltaCycles', 'spillCycles'] as const;

/** A parameter of the divergence-cost model. */
export type DivergenceParameter = (typeof FEATURE_PARAMETERS)[number] | 'overheadCycles';

/**
 * How the divergence cost is fitted (docs/model.md §4).
 *
 * - `intercept`: also fit a constant c per observation (default false).
 * - `nonNegative`: δ and the spill cost are costs: a negative estimate is fixed at 0 and the
 *   others refitted (most negative first, until none is negative): non-negative least squares
 *   for these two.
 * - `fixed`: δ and/or the spill cost held at a given value (ticks); the rest is fitted.
 */
export interface DivergenceFitOptions {
  readonly intercept?: boolean;
  readonly nonNegative?: boolean;
  readonly fixed?: { readonly deltaCycles?: number; readonly spillCycles?: number };
}

/**
 * The one model for sampled groups (c_end − c0 of a group against its counts), used by the
 * estimator, `warpwatch analyze` and so the dashboards: with a constant per group (clock reads,
 * the end-of-group synchronisation), δ and the spill cost as estimated (docs/model.md §4).
 */
export const SAMPLED_GROUP_DIVERGENCE_FIT: DivergenceFitOptions = { intercept: true };

/** The divergence-cost fit from moments (ticks of the observations' clock). */
export interface DivergenceMomentsFit {
  /** T: ticks per issued loop iteration; undefined when unidentified. */
  readonly iterationCycles: number | undefined;
  /** δ: ticks per diverging exit; undefined when unidentified (no observation has one, or D does not vary apart from the others). */
  readonly deltaCycles: number | undefined;
  /** Ticks per spill chunk; undefined when unidentified (typically: no observation spilled). */
  readonly spillCycles: number | undefined;
  /** The constant per observation; 0 without `intercept`. */
  readonly overheadCycles: number;
  /** Standard errors of the estimated parameters by name (not of fixed or unidentified ones); undefined without residual degrees of freedom. */
  readonly standardErrors: Readonly<Partial<Record<DivergenceParameter, number>>> | undefined;
  /** Covariance of T, δ and the spill cost by name (estimated ones only); undefined without residual degrees of freedom. */
  readonly covariance: Readonly<Partial<Record<DivergenceParameter, Readonly<Partial<Record<DivergenceParameter, number>>>>>> | undefined;
  /** Parameters the observations cannot separate (left out, see the fields above). */
  readonly unidentified: readonly DivergenceParameter[];
  /** With `nonNegative`: the parameters whose estimate was negative and that were fixed at 0. */
  readonly clampedToZero: readonly ('deltaCycles' | 'spillCycles')[];
  /** 1 − SSres/SStot (SStot about the mean of the measured ticks), and √(SSres/observations). */
  readonly rSquared: number;
  readonly rmseCycles: number;
  readonly observations: number;
}

/**
 * Empty mergeable moments of divergence observations (model/related/streaming-regression.ts: merge
 * with mergeRegressionMoments; plain JSON, checkpointable).
 *
 * @example const moments = createDivergenceMoments();
 */
export function createDivergenceMoments(): RegressionMoments {
  return createRegressionMoments(FEATURE_PARAMETERS.length);
}

/**
 * Adds one observation to divergence moments (mutates `moments`).
 *
 * @throws RangeError for a value that is not finite
 * @example addDivergenceObservation(moments, divergenceObservationOfGroup([4, 4, 3, 2], 530));
 */
export function addDivergenceObservation(moments: RegressionMoments, observation: DivergenceObservation): void {
  addRegressionRow(moments, [observation.issuedIterations, observation.divergingExits, observation.spills], observation.cycles);
}

/**
 * Fits cycles ≈ T·issuedIterations + δ·divergingExits + s·spills (+ c with `intercept`) by least
 * squares from the moments of the observations (the one fit of the divergence cost: the
 * estimator's windows, `warpwatch analyze` and {@link fitDivergenceCost} all come here). Never
 * throws for data: what the observations cannot separate is listed in `unidentified`.
 *
 * @throws RangeError with no observation (fewer than 2 with `intercept`), or a fixed value that is not finite
 * @example solveDivergenceMoments(moments, SAMPLED_GROUP_DIVERGENCE_FIT).deltaCycles
 */
export function solveDivergenceMoments(moments: RegressionMoments, options: DivergenceFitOptions = {}): DivergenceMomentsFit {
  const intercept = options.intercept === true;
  const fixed: Record<number, number> = {};
  if (options.fixed?.deltaCycles !== undefined) fixed[1] = options.fixed.deltaCycles;
  if (options.fixed?.spillCycles !== undefined) fixed[2] = options.fixed.spillCycles;
  let fit = solveRegressionMoments(moments, { intercept, fixed });
  const clampedToZero: ('deltaCycles' | 'spillCycles')[] = [];
  if (options.nonNegative === true) {
    for (;;) {
      const current = fit;
      const negative = ([1, 2] as const).filter((j) => !(j in fixed) && (current.coefficients[j] as number) < 0);
      if (negative.length === 0) break;
      const worst = negative.reduce((x, y) => ((current.coefficients[y] as number) < (current.coefficients[x] as number) ? y : x));
      fixed[worst] = 0;
      clampedToZero.push(FEATURE_PARAMETERS[worst]);
      fit = solveRegressionMoments(moments, { intercept, fixed });
    }
  }
  const unidentified: DivergenceParameter[] = fit.unidentified.map((j) => FEATURE_PARAMETERS[j] as DivergenceParameter);
  const value = (j: number): number | undefined => (fit.unidentified.includes(j) ? undefined : (fit.coefficients[j] as number));
  const estimated = FEATURE_PARAMETERS.filter((_, j) => !fit.unidentified.includes(j) && !(j in fixed));
  let standardErrors: Partial<Record<DivergenceParameter, number>> | undefined;
  let covariance: Partial<Record<DivergenceParameter, Partial<Record<DivergenceParameter, number>>>> | undefined;
  if (fit.standardErrors !== undefined && fit.covariance !== undefined) {
    const se = fit.standardErrors;
    const cov = fit.covariance;
    const indexOf = (name: (typeof FEATURE_PARAMETERS)[number]): number => FEATURE_PARAMETERS.indexOf(name);
    standardErrors = Object.fromEntries(estimated.map((name) => [name, se[indexOf(name)] as number]));
    if (intercept && fit.interceptStandardError !== undefined) standardErrors.overheadCycles = fit.interceptStandardError;
    covariance = Object.fromEntries(estimated.map((a) => [a, Object.fromEntries(estimated.map((b) => [b, (cov[indexOf(a)] as readonly number[])[indexOf(b)] as number]))]));
  }
  return {
    iterationCycles: value(0),
    deltaCycles: value(1),
    spillCycles: value(2),
    overheadCycles: fit.intercept,
    standardErrors,
    covariance,
    unidentified,
    clampedToZero,
    rSquared: fit.rSquared,
    rmseCycles: fit.rmse,
    observations: fit.rows,
  };
}

/**
 * Fits cycles ≈ T·issuedIterations + δ·divergingExits + s·spills (+ c with `intercept`) to a
 * list of observations ({@link solveDivergenceMoments} on their moments) and adds every
 * residual. A feature that is zero in every observation (typically spills when k ≤ 14) is
 * dropped and its parameter reported as unidentified.
 *
 * @throws RangeError with fewer observations than parameters, or when a parameter cannot be
 *   separated from the others (e.g. `intercept` with a constant iteration count)
 * @example fitDivergenceCost(observations).deltaCycles
 */
export function fitDivergenceCost(observations: readonly DivergenceObservation[], options: { intercept?: boolean } = {}): DivergenceFit {
  if (observations.length === 0) throw new RangeError('fit needs at least one observation, got none');
  const allZero = (value: (o: DivergenceObservation) => number): boolean => observations.every((o) => value(o) === 0);
  if (allZero((o) => o.issuedIterations) || allZero((o) => o.divergingExits)) {
    const missing = [...(allZero((o) => o.issuedIterations) ? ['iterationCycles'] : []), ...(allZero((o) => o.divergingExits) ? ['deltaCycles'] : [])];
    throw new RangeError(`cannot fit ${missing.join(', ')}: no observation has ${missing.includes('deltaCycles') ? 'a diverging exit' : 'an issued iteration'}`);
  }
  const spillsVary = !allZero((o) => o.spills);
  const parameters = (spillsVary ? 3 : 2) + (options.intercept === true ? 1 : 0);
  if (observations.length < parameters) throw new RangeError(`least squares needs at least as many observations as parameters (${parameters}), got ${observations.length}`);
  const moments = createDivergenceMoments();
  for (const o of observations) addDivergenceObservation(moments, o);
  const fit = solveDivergenceMoments(moments, { intercept: options.intercept === true });
  const inseparable = fit.unidentified.filter((name) => name !== 'spillCycles' || spillsVary);
  if (inseparable.length > 0 || fit.iterationCycles === undefined || fit.deltaCycles === undefined) {
    const name = inseparable[0] ?? (options.intercept === true ? 'overheadCycles' : 'iterationCycles');
    throw new RangeError(`parameter '${name}' cannot be determined: its column is a combination of the others in these data`);
  }
  const { iterationCycles, deltaCycles, spillCycles, overheadCycles } = fit;
  const residuals = observations.map((o) => {
    const fitted = overheadCycles + iterationCycles * o.issuedIterations + deltaCycles * o.divergingExits + (spillCycles ?? 0) * o.spills;
    return { label: o.label, measuredCycles: o.cycles, fittedCycles: fitted, residualCycles: o.cycles - fitted };
  });
  const standardErrors = fit.standardErrors === undefined ? undefined : (fit.standardErrors as Readonly<Record<string, number>>);
  return {
    iterationCycles,
    deltaCycles,
    spillCycles,
    overheadCycles,
    standardErrors,
    unidentified: fit.unidentified,
    residuals,
    rSquared: fit.rSquared,
    rmseCycles: fit.rmseCycles,
    observations: observations.length,
  };
}
