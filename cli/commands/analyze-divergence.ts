/**
 * The divergence-extended prediction of `loss_measured` for `warpwatch analyze` (issue 9,
 * docs/model.md §4): on the sampled groups of a stream (GroupSamples frames: lane counts and
 * clocks), fit or take the divergence-management costs, predict the loss with them and say how
 * much of the measured-vs-counts gap they explain.
 */
import {
  divergenceArchitecture,
  divergenceObservationOfGroup,
  extendedMeasuredLoss,
  fitDivergenceCost,
  solveLeastSquares,
  type DivergenceObservation,
} from '../../model/index.ts';
import type { GroupSample } from '../../protocol/index.ts';

/**
 * How `analyze` obtains the divergence costs: `fit` them from the sampled groups' clocks, take
 * fixed `parameters` (an architecture preset and/or explicit δ and spill cost, in clock ticks;
 * T is then fitted from the clocks), or `off`.
 */
export type DivergenceSettings =
  | { readonly mode: 'off' }
  | { readonly mode: 'fit' }
  | { readonly mode: 'parameters'; readonly architecture: string | undefined; readonly deltaCycles: number; readonly spillCycles: number };

/** The least-squares fit behind `mode: 'fit'`, as fitted (before clamping) and as used. */
export interface DivergenceFitSummary {
  /** Unconstrained least-squares estimates (ticks): T, δ, spill cost (undefined when no sampled group spilled). */
  readonly rawIterationCycles: number;
  readonly rawDeltaCycles: number;
  readonly rawSpillCycles: number | undefined;
  /** Standard errors of the unconstrained estimates, by parameter name; undefined with as many groups as parameters. */
  readonly standardErrors: Readonly<Record<string, number>> | undefined;
  /** Parameters whose unconstrained estimate was negative (not a cost): fixed at 0 and the others refitted. */
  readonly clampedToZero: readonly string[];
  /** Parameters no sampled group varies (spillCycles when no group spilled); used as 0. */
  readonly unidentified: readonly string[];
  /** |rawDeltaCycles| ≥ 2 standard errors: the data distinguish δ from 0. */
  readonly deltaSignificant: boolean;
  /** Divergence term with the unconstrained estimates (may be negative), and its standard error (delta method). */
  readonly rawDivergenceTerm: number;
  readonly rawDivergenceTermStandardError: number | undefined;
  /** 1 − SSres/SStot of the unconstrained fit, and its RMSE in ticks. */
  readonly rSquared: number;
  readonly rmseCycles: number;
  /** Groups in the fit (groups with every count zero carry no feature and are left out; at most {@link MAX_FIT_OBSERVATIONS}). */
  readonly observations: number;
}

/** The extended prediction on a stream's sampled groups. */
export interface DivergenceAnalysis {
  readonly mode: 'fit' | 'parameters';
  /** Preset name when the costs came from `--divergence-arch`. */
  readonly architecture: string | undefined;
  /** Tick rate of the clocks the costs are expressed in (cycles on CUDA, ns on the CPU backend: 1e9). */
  readonly clockHz: number;
  /** Sampled groups the prediction averages over. */
  readonly groups: number;
  /** Costs used, in ticks: T per issued iteration, δ per diverging exit, per spill chunk. */
  readonly iterationCycles: number;
  readonly deltaCycles: number;
  readonly spillCycles: number;
  /** Present in `fit` mode. */
  readonly fit: DivergenceFitSummary | undefined;
  /** Mean H from counts and mean measured H (n·(c_end − c0)/Σ(c_i − c0)) of the sampled groups. */
  readonly lossCounts: number;
  readonly lossMeasured: number;
  /** Mean divergence-extended H of the sampled groups (model/ extendedMeasuredLoss). */
  readonly lossExtended: number;
  /** lossExtended − lossCounts. */
  readonly divergenceTerm: number;
  /**
   * Standard error of the fitted divergence term (of the unconstrained fit: it says how well the
   * data pin the term down, also when a negative estimate was fixed at 0); undefined in `parameters` mode.
   */
  readonly divergenceTermStandardError: number | undefined;
  /** lossMeasured − lossCounts of the sampled groups: the gap to explain. */
  readonly measuredGap: number;
  /** divergenceTerm / measuredGap; null when the gap is exactly 0. */
  readonly gapExplainedFraction: number | null;
}

/** Either the analysis, or why there is none. */
export type DivergenceOutcome = { readonly analysis: DivergenceAnalysis } | { readonly note: string };

/**
 * Most groups one fit uses (an even-stride subset beyond it): the model's QR solver passes a
 * column to Math.hypot as arguments, which overflows the call stack past ~120 000 values.
 */
export const MAX_FIT_OBSERVATIONS = 65_536;

const PARAMETER_NAMES = ['iterationCycles', 'deltaCycles', 'spillCycles'] as const;
type ParameterName = (typeof PARAMETER_NAMES)[number];
const featureOf = (o: DivergenceObservation, name: ParameterName): number =>
  name === 'iterationCycles' ? o.issuedIterations : name === 'deltaCycles' ? o.divergingExits : o.spills;

/** (XᵀX)⁻¹ of a small design by Gauss–Jordan on the column-scaled matrix; undefined when singular. */
function inverseGram(design: readonly (readonly number[])[], columns: number): number[][] | undefined {
  const scale = Array.from({ length: columns }, (_, j) => Math.sqrt(design.reduce((s, row) => s + (row[j] as number) ** 2, 0)) || 1);
  const a = Array.from({ length: columns }, (_, i) =>
    Array.from({ length: 2 * columns }, (_, j) =>
      j < columns ? design.reduce((s, row) => s + ((row[i] as number) / (scale[i] as number)) * ((row[j] as number) / (scale[j] as number)), 0) : j - columns === i ? 1 : 0,
    ),
  );
  for (let c = 0; c < columns; c += 1) {
    let pivot = c;
    for (let r = c + 1; r < columns; r += 1) if (Math.abs((a[r] as number[])[c] as number) > Math.abs((a[pivot] as number[])[c] as number)) pivot = r;
    [a[c], a[pivot]] = [a[pivot] as number[], a[c] as number[]];
    const row = a[c] as number[];
    const p = row[c] as number;
    if (Math.abs(p) < 1e-13) return undefined;
    for (let j = 0; j < 2 * columns; j += 1) row[j] = (row[j] as number) / p;
    for (let r = 0; r < columns; r += 1) {
      if (r === c) continue;
      const other = a[r] as number[];
      const f = other[c] as number;
      for (let j = 0; j < 2 * columns; j += 1) other[j] = (other[j] as number) - f * (row[j] as number);
    }
  }
  return Array.from({ length: columns }, (_, i) => Array.from({ length: columns }, (_, j) => ((a[i] as number[])[columns + j] as number) / ((scale[i] as number) * (scale[j] as number))));
}

interface ConstrainedFit {
  readonly values: Record<ParameterName, number>;
  /** Covariance of the free parameters (names in `free`), undefined without residual degrees of freedom. */
  readonly covariance: number[][] | undefined;
  readonly free: readonly ParameterName[];
}

/** Least squares with the named parameters fixed at 0 (the others free). */
function fitWithFixed(observations: readonly DivergenceObservation[], fixed: readonly ParameterName[]): ConstrainedFit {
  const free = PARAMETER_NAMES.filter((name) => !fixed.includes(name));
  const design = observations.map((o) => free.map((name) => featureOf(o, name)));
  const solution = solveLeastSquares(
    design,
    observations.map((o) => o.cycles),
    free,
  );
  const values: Record<ParameterName, number> = { iterationCycles: 0, deltaCycles: 0, spillCycles: 0 };
  free.forEach((name, j) => (values[name] = solution.coefficients[j] as number));
  const dof = observations.length - free.length;
  const inverse = dof > 0 ? inverseGram(design, free.length) : undefined;
  const variance = solution.residualSumOfSquares / Math.max(dof, 1);
  return { values, covariance: inverse?.map((row) => row.map((v) => v * variance)), free };
}

/** Even-stride subset of at most `limit` items (all of them when fewer). */
function thinned<T>(items: readonly T[], limit: number): readonly T[] {
  if (items.length <= limit) return items;
  return Array.from({ length: limit }, (_, i) => items[Math.floor((i * items.length) / limit)] as T);
}

/**
 * Fits T, δ and the spill cost to the sampled groups' (c_end − c0) and predicts their loss with
 * the divergence term (model/ extendedMeasuredLoss), or uses the given δ and spill cost with T
 * fitted from the same clocks (T = Σ m·(y − δD − s·spills)/Σ m², m = max count). In `fit` mode
 * the unconstrained least-squares estimate is reported as is; a negative δ or spill cost (not a
 * cost: noise, or an effect the model does not have) is fixed at 0 and the rest refitted
 * (non-negative least squares for these two parameters) before predicting.
 *
 * @param samples sampled groups of one stream (one group size); clocks in ticks of `clockHz`
 * @returns the analysis, or a note saying why none could be made (no samples, no diverging exit, T ≤ 0, …)
 * @throws RangeError from model/ for invalid counts (e.g. unsafe integers)
 * @example analyzeDivergence(samples, 1e9, { mode: 'fit' })
 */
export function analyzeDivergence(samples: readonly GroupSample[], clockHz: number, settings: DivergenceSettings): DivergenceOutcome {
  if (settings.mode === 'off') return { note: DIVERGENCE_OFF_NOTE };
  if (samples.length === 0) return { note: 'no GroupSamples in the file: the divergence term needs sampled groups (run with --sample-rate > 0)' };
  let sumMeasured = 0;
  // Per group: features from the stack emulator, with (c_end − c0) as the measured cycles.
  const perGroup: DivergenceObservation[] = [];
  for (const group of samples) {
    const n = group.laneCounts.length;
    const ticks = Number(group.endClock - group.startClock);
    if (ticks < 0) return { note: `sampled group ${group.groupIndex} has its end clock before its start clock: clocks unusable for the divergence term` };
    const mimd = group.laneFinishClocks.reduce((s, c) => s + Number(c - group.startClock), 0);
    sumMeasured += mimd === 0 ? 1 : (n * ticks) / mimd;
    perGroup.push(divergenceObservationOfGroup(group.laneCounts, ticks, `group ${group.groupIndex}`));
  }
  const observations = perGroup.filter((o) => o.issuedIterations > 0);
  const lossMeasured = sumMeasured / samples.length;
  if (observations.length === 0) return { note: 'every sampled group has all counts zero: nothing to fit the divergence term on' };

  // The term is linear in δ/T and s/T: term = (δ·A + s·B)/T, A = mean n·D/Σw, B = mean n·spills/Σw
  // over all sampled groups (all-zero groups add 0).
  let a = 0;
  let b = 0;
  samples.forEach((g, i) => {
    const total = g.laneCounts.reduce((sum, w) => sum + w, 0);
    const o = perGroup[i] as DivergenceObservation;
    if (total === 0) return;
    a += (g.laneCounts.length * o.divergingExits) / total;
    b += (g.laneCounts.length * o.spills) / total;
  });
  a /= samples.length;
  b /= samples.length;

  let iterationCycles: number;
  let deltaCycles: number;
  let spillCycles: number;
  let fit: DivergenceFitSummary | undefined;
  if (settings.mode === 'parameters') {
    ({ deltaCycles, spillCycles } = settings);
    let numerator = 0;
    let denominator = 0;
    for (const o of observations) {
      numerator += o.issuedIterations * (o.cycles - deltaCycles * o.divergingExits - spillCycles * o.spills);
      denominator += o.issuedIterations ** 2;
    }
    iterationCycles = numerator / denominator;
    if (!(iterationCycles > 0)) {
      return { note: `T fitted from the sampled clocks with δ = ${deltaCycles} and spill = ${spillCycles} ticks is ${iterationCycles.toPrecision(4)} ≤ 0: these costs exceed the measured group times` };
    }
  } else {
    const used = thinned(observations, MAX_FIT_OBSERVATIONS);
    if (used.every((o) => o.divergingExits === 0)) {
      return { note: 'δ cannot be fitted: no sampled group has a diverging exit (all lanes of every sampled group ran equally long)' };
    }
    const spillsVary = used.some((o) => o.spills > 0);
    const parameters = spillsVary ? 3 : 2;
    if (used.length <= parameters) return { note: `the fit needs more than ${parameters} sampled groups with work, got ${used.length}` };
    let raw;
    try {
      raw = fitDivergenceCost(used);
    } catch (error) {
      if (error instanceof RangeError) return { note: `divergence fit impossible on these samples: ${error.message}` };
      throw error;
    }
    const fixed: ParameterName[] = spillsVary ? [] : ['spillCycles'];
    const unconstrained = fitWithFixed(used, fixed);
    // Non-negative least squares for δ and s: fix the most negative at 0, refit, repeat.
    const clampedToZero: ParameterName[] = [];
    let current = unconstrained;
    for (;;) {
      const negative = (['deltaCycles', 'spillCycles'] as const).filter((name) => !fixed.includes(name) && current.values[name] < 0);
      if (negative.length === 0) break;
      const worst = negative.reduce((x, y) => (current.values[y] < current.values[x] ? y : x));
      fixed.push(worst);
      clampedToZero.push(worst);
      current = fitWithFixed(used, fixed);
    }
    ({ iterationCycles, deltaCycles, spillCycles } = current.values);
    if (!(iterationCycles > 0)) return { note: `fitted T = ${iterationCycles.toPrecision(4)} ticks per iteration ≤ 0: the sampled clocks do not grow with the iteration count` };
    const u = unconstrained.values;
    const gradient: Record<ParameterName, number> = {
      iterationCycles: -(u.deltaCycles * a + u.spillCycles * b) / u.iterationCycles ** 2,
      deltaCycles: a / u.iterationCycles,
      spillCycles: b / u.iterationCycles,
    };
    let rawDivergenceTermStandardError: number | undefined;
    if (unconstrained.covariance !== undefined) {
      const g = unconstrained.free.map((name) => gradient[name]);
      let variance = 0;
      g.forEach((gi, i) => g.forEach((gj, j) => (variance += gi * gj * (((unconstrained.covariance as number[][])[i] as number[])[j] as number))));
      rawDivergenceTermStandardError = Math.sqrt(Math.max(variance, 0));
    }
    const deltaError = raw.standardErrors?.deltaCycles;
    fit = {
      rawIterationCycles: raw.iterationCycles,
      rawDeltaCycles: raw.deltaCycles,
      rawSpillCycles: raw.spillCycles,
      standardErrors: raw.standardErrors,
      clampedToZero,
      unidentified: raw.unidentified,
      deltaSignificant: deltaError !== undefined && Math.abs(raw.deltaCycles) >= 2 * deltaError,
      rawDivergenceTerm: (u.deltaCycles * a + u.spillCycles * b) / u.iterationCycles,
      rawDivergenceTermStandardError,
      rSquared: raw.rSquared,
      rmseCycles: raw.rmseCycles,
      observations: used.length,
    };
  }

  const extended = extendedMeasuredLoss(
    samples.map((g) => g.laneCounts),
    { iterationCycles, deltaCycles, spillCycles, lossMeasured },
  );
  return {
    analysis: {
      mode: settings.mode,
      architecture: settings.mode === 'parameters' ? settings.architecture : undefined,
      clockHz,
      groups: extended.groups,
      iterationCycles,
      deltaCycles,
      spillCycles,
      fit,
      lossCounts: extended.lossCounts,
      lossMeasured,
      lossExtended: extended.lossExtended,
      divergenceTerm: extended.divergenceTerm,
      divergenceTermStandardError: fit?.rawDivergenceTermStandardError,
      measuredGap: lossMeasured - extended.lossCounts,
      gapExplainedFraction: extended.gapExplainedFraction ?? null,
    },
  };
}

/** The note of a stream when the divergence term was not asked for (the table then prints nothing about it). */
export const DIVERGENCE_OFF_NOTE = 'divergence term not computed (off by default; --divergence fit computes it)';

/**
 * Builds {@link DivergenceSettings} from the analyze flags (values already parsed):
 * `--divergence fit|off`, `--divergence-arch NAME`, `--delta C`, `--spill C`. Fixed costs
 * (arch, delta, spill) select `parameters` mode; an explicit preset supplies δ and spill, and
 * `--delta`/`--spill` override it; without a preset a missing one is 0.
 *
 * @throws RangeError for an unknown preset or mode, or `--divergence fit|off` together with fixed costs
 * @example divergenceSettingsOf({ architecture: 'kepler' }) // → { mode: 'parameters', deltaCycles: 32, spillCycles: 84, … }
 */
export function divergenceSettingsOf(flags: { mode?: string; architecture?: string; deltaCycles?: number; spillCycles?: number }): DivergenceSettings {
  const fixed = flags.architecture !== undefined || flags.deltaCycles !== undefined || flags.spillCycles !== undefined;
  if (flags.mode !== undefined && flags.mode !== 'fit' && flags.mode !== 'off') throw new RangeError(`--divergence must be fit or off, got '${flags.mode}'`);
  if (fixed && flags.mode !== undefined) {
    throw new RangeError(`--divergence ${flags.mode} cannot be combined with --divergence-arch, --delta or --spill (those give fixed costs; drop one)`);
  }
  if (!fixed) return { mode: flags.mode === 'off' ? 'off' : 'fit' };
  const preset = flags.architecture === undefined ? undefined : divergenceArchitecture(flags.architecture);
  return {
    mode: 'parameters',
    architecture: preset?.name,
    deltaCycles: flags.deltaCycles ?? preset?.deltaCycles ?? 0,
    spillCycles: flags.spillCycles ?? preset?.spillCycles ?? 0,
  };
}
