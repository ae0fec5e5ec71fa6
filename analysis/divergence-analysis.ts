/**
 * The divergence-extended prediction of `loss_measured` for `warpwatch analyze`
 * (docs/model.md §4): on the sampled groups of a stream (GroupSamples frames: lane counts and
 * clocks), fit or take the divergence-management costs, predict the loss with them and say how
 * much of the measured-vs-counts gap they explain.
 */
import {
  createSampledGroups,
  divergenceArchitecture,
  divergenceObservationOfGroup,
  extendedMeasuredLoss,
  MIN_DIVERGENCE_FIT_GROUPS,
  recordSampledGroup,
  SAMPLED_GROUP_DIVERGENCE_FIT,
  solveDivergenceMoments,
  type DivergenceObservation,
  type DivergenceParameter,
} from '../model/index.ts';
import { sampledGroupInputOf } from '../estimator/index.ts';
import type { GroupSample } from '../protocol/index.ts';

/**
 * How `analyze` obtains the divergence costs: `fit` them from the sampled groups' clocks, take
 * fixed `parameters` (an architecture preset and/or explicit δ and spill cost, in clock ticks;
 * T and the per-group constant are then fitted from the clocks), or `off`. Both fit the one
 * model for sampled groups (model/ SAMPLED_GROUP_DIVERGENCE_FIT), as the estimator does.
 */
export type DivergenceSettings =
  | { readonly mode: 'off' }
  | { readonly mode: 'fit' }
  | { readonly mode: 'parameters'; readonly architecture: string | undefined; readonly deltaCycles: number; readonly spillCycles: number };

/** The least-squares fit behind `mode: 'fit'`, as fitted (before clamping) and as used. */
export interface DivergenceFitSummary {
  /** Unconstrained least-squares estimates (ticks): T, δ, spill cost (undefined when no sampled group spilled), the per-group constant. */
  readonly rawIterationCycles: number;
  readonly rawDeltaCycles: number;
  readonly rawSpillCycles: number | undefined;
  readonly rawOverheadCycles: number;
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
  /** Groups in the fit: every sampled group (as the estimator's window fit). */
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
  /** Costs used, in ticks: T per issued iteration, δ per diverging exit, per spill chunk, constant per group. */
  readonly iterationCycles: number;
  readonly deltaCycles: number;
  readonly spillCycles: number;
  readonly overheadCycles: number;
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
 * Fits T, δ and the spill cost to the sampled groups' (c_end − c0) and predicts their loss with
 * the divergence term (model/ extendedMeasuredLoss), or uses the given δ and spill cost with T
 * fitted from the same clocks. The fit is the estimator's (model/ solveDivergenceMoments with
 * SAMPLED_GROUP_DIVERGENCE_FIT: a constant per group; docs/model.md §4), on every sampled
 * group, so `analyze` and the dashboards report the same δ for the same frames. In `fit` mode
 * the unconstrained estimate is reported as is; for the prediction a negative δ or spill cost
 * (not a cost: noise, or an effect the model does not have) is fixed at 0 and the rest refitted
 * (the same fit with `nonNegative`).
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
  // The fit's moments come from the same accumulation as the estimator's windows (same rows,
  // same validity rules), so both report the same δ for the same frames.
  const accumulation = createSampledGroups();
  for (const group of samples) {
    const n = group.laneCounts.length;
    const ticks = Number(group.endClock - group.startClock);
    if (ticks < 0) return { note: `sampled group ${group.groupIndex} has its end clock before its start clock: clocks unusable for the divergence term` };
    const mimd = group.laneFinishClocks.reduce((s, c) => s + Number(c - group.startClock), 0);
    sumMeasured += mimd === 0 ? 1 : (n * ticks) / mimd;
    const observation = divergenceObservationOfGroup(group.laneCounts, ticks, `group ${group.groupIndex}`);
    perGroup.push(observation);
    recordSampledGroup(accumulation, sampledGroupInputOf(group));
  }
  const moments = accumulation.divergence;
  const lossMeasured = sumMeasured / samples.length;
  if (perGroup.every((o) => o.issuedIterations === 0)) return { note: 'every sampled group has all counts zero: nothing to fit the divergence term on' };

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

  const notSeparable = 'T cannot be separated from the per-group constant: every sampled group issued the same number of iterations';
  let iterationCycles: number;
  let deltaCycles: number;
  let spillCycles: number;
  let overheadCycles: number;
  let fit: DivergenceFitSummary | undefined;
  if (settings.mode === 'parameters') {
    ({ deltaCycles, spillCycles } = settings);
    if (moments.count < 2) return { note: `T and the per-group constant need at least 2 valid sampled groups, got ${moments.count}` };
    const given = solveDivergenceMoments(moments, { ...SAMPLED_GROUP_DIVERGENCE_FIT, fixed: { deltaCycles, spillCycles } });
    if (given.iterationCycles === undefined) return { note: notSeparable };
    iterationCycles = given.iterationCycles;
    overheadCycles = given.overheadCycles;
    if (!(iterationCycles > 0)) {
      return { note: `T fitted from the sampled clocks with δ = ${deltaCycles} and spill = ${spillCycles} ticks is ${iterationCycles.toPrecision(4)} ≤ 0: these costs exceed the measured group times` };
    }
  } else {
    if (perGroup.every((o) => o.divergingExits === 0)) {
      return { note: 'δ cannot be fitted: no sampled group has a diverging exit (all lanes of every sampled group ran equally long)' };
    }
    if (moments.count < MIN_DIVERGENCE_FIT_GROUPS) return { note: `the fit needs at least ${MIN_DIVERGENCE_FIT_GROUPS} valid sampled groups (as the estimator's), got ${moments.count}` };
    const raw = solveDivergenceMoments(moments, SAMPLED_GROUP_DIVERGENCE_FIT);
    if (raw.iterationCycles === undefined) return { note: notSeparable };
    if (raw.deltaCycles === undefined) return { note: 'δ cannot be fitted: the diverging exits vary only together with the issued iterations' };
    const used = solveDivergenceMoments(moments, { ...SAMPLED_GROUP_DIVERGENCE_FIT, nonNegative: true });
    iterationCycles = used.iterationCycles ?? Number.NaN;
    deltaCycles = used.deltaCycles ?? 0;
    spillCycles = used.spillCycles ?? 0;
    overheadCycles = used.overheadCycles;
    if (!(iterationCycles > 0)) return { note: `fitted T = ${iterationCycles.toPrecision(4)} ticks per iteration ≤ 0: the sampled clocks do not grow with the iteration count` };
    const rawT = raw.iterationCycles;
    const rawDelta = raw.deltaCycles;
    const rawSpill = raw.spillCycles ?? 0;
    const gradient: Partial<Record<DivergenceParameter, number>> = {
      iterationCycles: -(rawDelta * a + rawSpill * b) / rawT ** 2,
      deltaCycles: a / rawT,
      spillCycles: b / rawT,
    };
    let rawDivergenceTermStandardError: number | undefined;
    if (raw.covariance !== undefined) {
      const covariance = raw.covariance;
      const names = Object.keys(covariance) as DivergenceParameter[];
      let variance = 0;
      for (const i of names) for (const j of names) variance += (gradient[i] ?? 0) * (gradient[j] ?? 0) * (covariance[i]?.[j] ?? 0);
      rawDivergenceTermStandardError = Math.sqrt(Math.max(variance, 0));
    }
    const deltaError = raw.standardErrors?.deltaCycles;
    fit = {
      rawIterationCycles: rawT,
      rawDeltaCycles: rawDelta,
      rawSpillCycles: raw.spillCycles,
      rawOverheadCycles: raw.overheadCycles,
      standardErrors: raw.standardErrors as Readonly<Record<string, number>> | undefined,
      clampedToZero: used.clampedToZero,
      unidentified: raw.unidentified,
      deltaSignificant: deltaError !== undefined && Math.abs(rawDelta) >= 2 * deltaError,
      rawDivergenceTerm: (rawDelta * a + rawSpill * b) / rawT,
      rawDivergenceTermStandardError,
      rSquared: raw.rSquared,
      rmseCycles: raw.rmseCycles,
      observations: raw.observations,
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
      overheadCycles,
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
