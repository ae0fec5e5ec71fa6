/**
 * Divergence-management cost (docs/model.md §4): cycles of a warp running a loop nest with
 * per-lane trip counts, predicted from the reconvergence-stack counts, and the extended
 * prediction of `loss_measured` from per-group iteration counts.
 */
import { emulateReconvergenceStack, type LoopSpec, type ReconvergenceStackOptions, type ReconvergenceStackTrace } from './reconvergence-stack.ts';

/** Cost parameters of divergence management on one device, in cycles. */
export interface DivergenceCostParameters {
  /** Extra cycles per diverging exit (δ). */
  readonly deltaCycles: number;
  /** Cycles per spill of one chunk of stack entries, including its later reload. */
  readonly spillCycles: number;
  /** Cycles per issued loop iteration (T); kernel-dependent, so presets leave it undefined. */
  readonly iterationCycles?: number;
  /** Constant cycles per loop nest (set up, clock reads); default 0. */
  readonly overheadCycles?: number;
}

/** A named parameter set with where its numbers come from. */
export interface DivergenceArchitecture extends DivergenceCostParameters {
  readonly name: string;
  readonly source: string;
}

/**
 * Architecture presets. Kepler and Maxwell are the published micro-benchmark values
 * (Bialas & Strzelecki: δ ≈ 32 / 26 cycles per diverging exit, ≈ 84 / 176 cycles per
 * spill+reload of 4 entries). `generic` is the midpoint of the two, with no measurement
 * behind it: fit your own device with `fitDivergenceCost`.
 */
export const DIVERGENCE_ARCHITECTURES: Readonly<Record<'kepler' | 'maxwell' | 'generic', DivergenceArchitecture>> = Object.freeze({
  kepler: Object.freeze({ name: 'kepler', deltaCycles: 32, spillCycles: 84, source: 'Bialas & Strzelecki, Kepler micro-benchmarks' }),
  maxwell: Object.freeze({ name: 'maxwell', deltaCycles: 26, spillCycles: 176, source: 'Bialas & Strzelecki, Maxwell micro-benchmarks' }),
  generic: Object.freeze({ name: 'generic', deltaCycles: 29, spillCycles: 130, source: 'midpoint of the Kepler and Maxwell values (unmeasured default)' }),
});

/** Names accepted by {@link divergenceArchitecture}. */
export type DivergenceArchitectureName = keyof typeof DIVERGENCE_ARCHITECTURES;

/**
 * Looks up an architecture preset by name (case-insensitive).
 *
 * @throws RangeError for an unknown name, listing the known ones
 * @example divergenceArchitecture('kepler').deltaCycles // → 32
 */
export function divergenceArchitecture(name: string): DivergenceArchitecture {
  const key = name.toLowerCase();
  if (!Object.hasOwn(DIVERGENCE_ARCHITECTURES, key)) {
    throw new RangeError(`architecture must be one of ${Object.keys(DIVERGENCE_ARCHITECTURES).join(', ')}, got '${name}'`);
  }
  return DIVERGENCE_ARCHITECTURES[key as DivergenceArchitectureName];
}

/**
 * Lane trip counts of the micro-benchmark pattern (maxBound, …, maxBound, maxBound−1, …,
 * maxBound−k): the first `lanes − k` lanes run `maxBound` iterations, the last k lanes one
 * fewer each, so the pattern has exactly k diverging exits.
 *
 * @param k number of lanes with decreasing bounds, 0..min(lanes − 1, maxBound)
 * @param lanes warp width; default 32
 * @param maxBound trip count of the deepest lanes; default `lanes`
 * @throws RangeError when k, lanes or maxBound are out of range
 * @example divergencePatternBounds(2, 4) // → [4, 4, 3, 2]
 */
export function divergencePatternBounds(k: number, lanes = 32, maxBound = lanes): number[] {
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > 1024) throw new RangeError(`lanes must be an integer 1..1024, got ${String(lanes)}`);
  if (!Number.isSafeInteger(maxBound) || maxBound < 0) throw new RangeError(`maxBound must be a non-negative integer, got ${String(maxBound)}`);
  const kMax = Math.min(lanes - 1, maxBound);
  if (!Number.isInteger(k) || k < 0 || k > kMax) throw new RangeError(`k must be an integer 0..${kMax}, got ${String(k)}`);
  return Array.from({ length: lanes }, (_, lane) => (lane < lanes - k ? maxBound : maxBound - (lane - (lanes - k) + 1)));
}

/** Predicted cycles of a loop nest, split by cause. */
export interface DivergenceCyclePrediction {
  readonly trace: ReconvergenceStackTrace;
  /** T · issuedIterations + overhead; undefined when T was not given. */
  readonly baseCycles: number | undefined;
  /** δ · divergingExits. */
  readonly divergenceCycles: number;
  /** spill cost · spills. */
  readonly spillCycles: number;
  /** base + divergence + spill; undefined when T was not given. */
  readonly totalCycles: number | undefined;
}

function checkCost(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
    throw new RangeError(`${name} must be a finite number ≥ 0 cycles, got ${String(value)}`);
  }
}

/**
 * Predicts the cycles of a warp running a loop nest: base + δ·(diverging exits) + spill cost·spills,
 * from the reconvergence-stack emulation.
 *
 * @throws RangeError for invalid loops (see emulateReconvergenceStack) or negative/NaN costs
 * @example
 * predictDivergenceCycles({ bounds: divergencePatternBounds(5) }, { ...DIVERGENCE_ARCHITECTURES.kepler, iterationCycles: 10 })
 * // → divergenceCycles 160, spillCycles 0, totalCycles 480
 */
export function predictDivergenceCycles(
  loops: LoopSpec | readonly LoopSpec[],
  parameters: DivergenceCostParameters,
  options: ReconvergenceStackOptions = {},
): DivergenceCyclePrediction {
  checkCost('deltaCycles', parameters.deltaCycles);
  checkCost('spillCycles', parameters.spillCycles);
  checkCost('iterationCycles', parameters.iterationCycles);
  checkCost('overheadCycles', parameters.overheadCycles);
  const trace = emulateReconvergenceStack(loops, options);
  const divergenceCycles = parameters.deltaCycles * trace.divergingExits;
  const spillCycles = parameters.spillCycles * trace.spills;
  const baseCycles =
    parameters.iterationCycles === undefined ? undefined : parameters.iterationCycles * trace.issuedIterations + (parameters.overheadCycles ?? 0);
  return {
    trace,
    baseCycles,
    divergenceCycles,
    spillCycles,
    totalCycles: baseCycles === undefined ? undefined : baseCycles + divergenceCycles + spillCycles,
  };
}

/** Result of {@link extendedMeasuredLoss}. */
export interface ExtendedMeasuredLoss {
  /** Groups averaged. */
  readonly groups: number;
  /** Mean of H(w) = n·max/Σ over groups (`loss_counts`, μ_S). */
  readonly lossCounts: number;
  /** Mean of the divergence-extended ratio (T·n·max + n·(δ·D + s·spills)) / (T·Σ): predicted `loss_measured`. */
  readonly lossExtended: number;
  /** lossExtended − lossCounts: what divergence management adds. */
  readonly divergenceTerm: number;
  /** (lossExtended − lossCounts)/(lossMeasured − lossCounts) when lossMeasured was given and differs from lossCounts. */
  readonly gapExplainedFraction: number | undefined;
}

/** Options of {@link extendedMeasuredLoss}: the cost parameters (T required) and stack shape. */
export interface ExtendedMeasuredLossOptions extends ReconvergenceStackOptions {
  readonly iterationCycles: number;
  readonly deltaCycles: number;
  readonly spillCycles: number;
  /** Measured mean loss of the same groups (`loss_measured`), to report the share of the gap explained. */
  readonly lossMeasured?: number;
}

/**
 * Extended prediction of `loss_measured` from per-group iteration counts (docs/model.md §4):
 * C_SIMT ≈ T·n·max(w) + n·(δ·D(w) + s·spills(w)), C_MIMD = T·Σw, where each group is treated
 * as one loop with trip counts w (D = distinct counts below the maximum). A group whose counts
 * are all zero contributes 1 to both means (no work, no loss). Report it beside `loss_counts`;
 * on CPU lockstep data divergence management does not exist, so the term explains nothing there.
 *
 * @param groups iteration counts of each group (one array per group, one entry per lane)
 * @throws RangeError when there are no groups, T ≤ 0, costs are negative, or counts are not non-negative integers
 * @example
 * extendedMeasuredLoss([[4, 4, 3, 2]], { iterationCycles: 100, deltaCycles: 30, spillCycles: 100 })
 * // lossCounts = 16/13 ≈ 1.2308, lossExtended = (100·4·4 + 4·60)/(100·13) ≈ 1.4154
 */
export function extendedMeasuredLoss(groups: Iterable<ArrayLike<number>>, options: ExtendedMeasuredLossOptions): ExtendedMeasuredLoss {
  if (!Number.isFinite(options.iterationCycles) || options.iterationCycles <= 0) {
    throw new RangeError(`iterationCycles must be a finite number > 0, got ${String(options.iterationCycles)}`);
  }
  checkCost('deltaCycles', options.deltaCycles);
  checkCost('spillCycles', options.spillCycles);
  let count = 0;
  let sumCounts = 0;
  let sumExtended = 0;
  for (const group of groups) {
    const bounds = Array.from(group);
    const n = bounds.length;
    if (n === 0) throw new RangeError(`group ${count} has no lanes`);
    let max = 0;
    let total = 0;
    for (const w of bounds) {
      if (!Number.isSafeInteger(w) || w < 0) throw new RangeError(`group ${count}: counts must be non-negative integers, got ${String(w)}`);
      if (w > max) max = w;
      total += w;
    }
    count += 1;
    if (total === 0) {
      sumCounts += 1;
      sumExtended += 1;
      continue;
    }
    const trace = emulateReconvergenceStack({ bounds }, options);
    const plain = (n * max) / total;
    sumCounts += plain;
    sumExtended += plain + (n * (options.deltaCycles * trace.divergingExits + options.spillCycles * trace.spills)) / (options.iterationCycles * total);
  }
  if (count === 0) throw new RangeError('groups must contain at least one group');
  const lossCounts = sumCounts / count;
  const lossExtended = sumExtended / count;
  let gapExplainedFraction: number | undefined;
  if (options.lossMeasured !== undefined) {
    if (!Number.isFinite(options.lossMeasured)) throw new RangeError(`lossMeasured must be finite, got ${String(options.lossMeasured)}`);
    const gap = options.lossMeasured - lossCounts;
    gapExplainedFraction = gap === 0 ? undefined : (lossExtended - lossCounts) / gap;
  }
  return { groups: count, lossCounts, lossExtended, divergenceTerm: lossExtended - lossCounts, gapExplainedFraction };
}
