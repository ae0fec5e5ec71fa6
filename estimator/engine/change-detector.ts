/**
 * One-sided-or-two-sided CUSUM change detector (Page 1954) on a per-window series, as a
 * small pure state object with `update`. The baseline level μ0 and noise σ are estimated
 * from the first `warmupWindows` values (Welford); σ is floored at
 * max(`minRelativeSigma`·|μ0|, `minAbsoluteSigma`) so a near-noiseless series (loss_predicted from millions of
 * lanes) does not alarm on changes too small to matter. Standardised values
 * z = (x − μ0)/σ feed
 *
 *     S⁺ ← max(0, S⁺ + z − k),   S⁻ ← max(0, S⁻ − z − k),   alarm when S > h.
 *
 * With k = 0.5 and h = 8, Siegmund's approximation gives an in-control run length of
 * about 1.9·10^4 windows for Gaussian noise; a shift of δσ is found after about
 * (h + 1.166)/(δ − k) windows (bench/results/estimator-detector.json has measured figures).
 * After an alarm the baseline moves to the new level (the mean since the CUSUM last left
 * zero, the change-point estimate) and monitoring continues.
 */

/** Detector parameters. */
export interface CusumOptions {
  /** Windows used to estimate the baseline level and noise. */
  readonly warmupWindows: number;
  /** Reference value k in units of σ (half the smallest shift worth detecting fast). */
  readonly referenceSigmas: number;
  /** Decision threshold h in units of σ. */
  readonly thresholdSigmas: number;
  /** Floor of σ relative to the baseline level. */
  readonly minRelativeSigma: number;
  /** Absolute floor of σ (for series near 0, such as a log ratio). */
  readonly minAbsoluteSigma: number;
  /** Watch increases only, or both directions. */
  readonly direction: 'up' | 'both';
}

/** Detector state (plain data: serialisable into a checkpoint). */
export interface CusumState {
  warmupCount: number;
  warmupMean: number;
  warmupSquares: number;
  baselineMean: number;
  baselineSigma: number;
  upperSum: number;
  lowerSum: number;
  /** Windows since S⁺ (resp. S⁻) was last 0, and the sum of x over them. */
  upperRunLength: number;
  upperRunSum: number;
  lowerRunLength: number;
  lowerRunSum: number;
}

/** An alarm: the level moved from oldLevel to newLevel. */
export interface CusumAlarm {
  readonly direction: 'up' | 'down';
  readonly oldLevel: number;
  readonly newLevel: number;
  /** The CUSUM statistic S that crossed h (in σ units). */
  readonly statistic: number;
  /** Windows since the estimated change point (including this one). */
  readonly windowsSinceChange: number;
  readonly baselineSigma: number;
}

/** Defaults: 16 warm-up windows, k = 0.5σ, h = 8σ, σ ≥ 1 % of the level, rising only. */
export const DEFAULT_CUSUM_OPTIONS: CusumOptions = Object.freeze({
  warmupWindows: 16,
  referenceSigmas: 0.5,
  thresholdSigmas: 8,
  minRelativeSigma: 0.01,
  minAbsoluteSigma: 0,
  direction: 'up',
});

/** Largest |z| the CUSUM adds (in σ units): keeps S finite whatever σ and the input are. */
const MAX_STANDARDISED_VALUE = 1e9;

/**
 * A fresh detector in warm-up.
 *
 * @example
 * let state = createCusumState();
 * const { alarm } = updateCusum(state, 1.42, DEFAULT_CUSUM_OPTIONS);
 */
export function createCusumState(): CusumState {
  return {
    warmupCount: 0,
    warmupMean: 0,
    warmupSquares: 0,
    baselineMean: 0,
    baselineSigma: 0,
    upperSum: 0,
    lowerSum: 0,
    upperRunLength: 0,
    upperRunSum: 0,
    lowerRunLength: 0,
    lowerRunSum: 0,
  };
}

/** Whether the detector has finished its warm-up. */
export function isMonitoring(state: CusumState, options: CusumOptions): boolean {
  return state.warmupCount >= options.warmupWindows;
}

/**
 * Feeds one window's value (mutates `state`) and returns an alarm when the CUSUM crosses h.
 *
 * @throws RangeError when `value` is not finite.
 */
export function updateCusum(state: CusumState, value: number, options: CusumOptions): { alarm: CusumAlarm | undefined } {
  if (!Number.isFinite(value)) throw new RangeError(`CUSUM input must be a finite number, got ${value}`);
  if (state.warmupCount < options.warmupWindows) {
    state.warmupCount += 1;
    const delta = value - state.warmupMean;
    state.warmupMean += delta / state.warmupCount;
    state.warmupSquares += delta * (value - state.warmupMean);
    if (state.warmupCount === options.warmupWindows) {
      const sampleSigma = state.warmupCount > 1 ? Math.sqrt(state.warmupSquares / (state.warmupCount - 1)) : 0;
      state.baselineMean = state.warmupMean;
      state.baselineSigma = Math.max(
        sampleSigma,
        options.minRelativeSigma * Math.abs(state.warmupMean),
        options.minAbsoluteSigma,
        Number.MIN_VALUE,
      );
    }
    return { alarm: undefined };
  }
  // Clamped: σ may be as small as Number.MIN_VALUE, and an unbounded z would make S infinite.
  // Any |z| this large crosses every threshold h allowed (≤ 1000) at once, so the clamp changes no alarm.
  const z = Math.max(-MAX_STANDARDISED_VALUE, Math.min(MAX_STANDARDISED_VALUE, (value - state.baselineMean) / state.baselineSigma));
  const k = options.referenceSigmas;
  const h = options.thresholdSigmas;

  state.upperSum = Math.max(0, state.upperSum + z - k);
  if (state.upperSum > 0) {
    state.upperRunLength += 1;
    state.upperRunSum += value;
  } else {
    state.upperRunLength = 0;
    state.upperRunSum = 0;
  }
  if (options.direction === 'both') {
    state.lowerSum = Math.max(0, state.lowerSum - z - k);
    if (state.lowerSum > 0) {
      state.lowerRunLength += 1;
      state.lowerRunSum += value;
    } else {
      state.lowerRunLength = 0;
      state.lowerRunSum = 0;
    }
  }

  const upper = state.upperSum > h;
  const lower = options.direction === 'both' && state.lowerSum > h;
  if (!upper && !lower) return { alarm: undefined };
  const direction = upper ? 'up' : 'down';
  const runLength = upper ? state.upperRunLength : state.lowerRunLength;
  const runSum = upper ? state.upperRunSum : state.lowerRunSum;
  const alarm: CusumAlarm = {
    direction,
    oldLevel: state.baselineMean,
    newLevel: runLength > 0 ? runSum / runLength : value,
    statistic: upper ? state.upperSum : state.lowerSum,
    windowsSinceChange: runLength,
    baselineSigma: state.baselineSigma,
  };
  // Re-baseline at the new level; σ keeps its warm-up estimate (floored relative to the new level).
  state.baselineMean = alarm.newLevel;
  state.baselineSigma = Math.max(state.baselineSigma, options.minRelativeSigma * Math.abs(alarm.newLevel));
  state.upperSum = 0;
  state.lowerSum = 0;
  state.upperRunLength = 0;
  state.upperRunSum = 0;
  state.lowerRunLength = 0;
  state.lowerRunSum = 0;
  return { alarm };
}
