import { createSeededRandom, type RandomSource } from '../../model/index.ts';
import { createCusumState, updateCusum, type CusumOptions } from './change-detector.ts';
import { normalDeviate } from './random-deviates.ts';

/**
 * Operating characteristics of the CUSUM detector on synthetic per-window series (seeded):
 * false alarms per 10^4 stationary windows, detection delay (in windows) after a step up,
 * and after the start of a slow linear drift. The series model a window's loss: level μ with
 * Gaussian relative noise of coefficient of variation `noiseCv`.
 */

/** Figures of one noise level. */
export interface DetectorFigures {
  readonly noiseCv: number;
  /** Monitored stationary windows and the alarms among them (detector restarted after each alarm). */
  readonly stationaryWindows: number;
  readonly falseAlarms: number;
  readonly falseAlarmsPer10kWindows: number;
  /** Windows from a step to its alarm (1 = the first window after the step): median, 95th percentile, share detected within 3 windows. */
  readonly steps: readonly { readonly relativeStep: number; readonly medianDelayWindows: number; readonly p95DelayWindows: number; readonly detectedWithin3: number; readonly trials: number }[];
  /** Slow drift: +`relativeDriftPerWindow` per window from a point; delay median / p95 and the level reached at detection. */
  readonly drift: { readonly relativeDriftPerWindow: number; readonly medianDelayWindows: number; readonly p95DelayWindows: number; readonly medianRelativeChangeAtDetection: number };
}

function percentile(sorted: readonly number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}

function delayUntilAlarm(random: RandomSource, options: CusumOptions, level: number, noiseCv: number, levelAt: (t: number) => number, limit: number): number {
  const state = createCusumState();
  // Warm-up plus some in-control windows before the change.
  for (let t = 0; t < options.warmupWindows + 20; t += 1) updateCusum(state, level * (1 + noiseCv * normalDeviate(random)), options);
  for (let t = 1; t <= limit; t += 1) {
    if (updateCusum(state, levelAt(t) * (1 + noiseCv * normalDeviate(random)), options).alarm !== undefined) return t;
  }
  return limit + 1;
}

/**
 * Computes the figures for one noise level.
 *
 * @example
 * evaluateDetector({ options: DEFAULT_CUSUM_OPTIONS, noiseCv: 0.02, seed: 1, stationaryWindows: 100_000, trials: 400 });
 */
export function evaluateDetector(input: {
  options: CusumOptions;
  noiseCv: number;
  seed: number;
  stationaryWindows: number;
  trials: number;
  level?: number;
  steps?: readonly number[];
  relativeDriftPerWindow?: number;
}): DetectorFigures {
  const level = input.level ?? 1.5;
  const random = createSeededRandom(input.seed);
  let monitored = 0;
  let alarms = 0;
  let state = createCusumState();
  while (monitored < input.stationaryWindows) {
    const wasMonitoring = state.warmupCount >= input.options.warmupWindows;
    const { alarm } = updateCusum(state, level * (1 + input.noiseCv * normalDeviate(random)), input.options);
    if (wasMonitoring) monitored += 1;
    if (alarm !== undefined) {
      alarms += 1;
      state = createCusumState();
    }
  }
  const steps = (input.steps ?? [0.05, 0.2]).map((relativeStep) => {
    const delays: number[] = [];
    for (let trial = 0; trial < input.trials; trial += 1) {
      delays.push(delayUntilAlarm(random, input.options, level, input.noiseCv, () => level * (1 + relativeStep), 1000));
    }
    delays.sort((a, b) => a - b);
    return {
      relativeStep,
      medianDelayWindows: percentile(delays, 0.5),
      p95DelayWindows: percentile(delays, 0.95),
      detectedWithin3: delays.filter((d) => d <= 3).length / delays.length,
      trials: delays.length,
    };
  });
  const slope = input.relativeDriftPerWindow ?? 0.002;
  const driftDelays: number[] = [];
  for (let trial = 0; trial < input.trials; trial += 1) {
    driftDelays.push(delayUntilAlarm(random, input.options, level, input.noiseCv, (t) => level * (1 + slope * t), 5000));
  }
  driftDelays.sort((a, b) => a - b);
  const medianDrift = percentile(driftDelays, 0.5);
  return {
    noiseCv: input.noiseCv,
    stationaryWindows: monitored,
    falseAlarms: alarms,
    falseAlarmsPer10kWindows: (alarms / monitored) * 1e4,
    steps,
    drift: {
      relativeDriftPerWindow: slope,
      medianDelayWindows: medianDrift,
      p95DelayWindows: percentile(driftDelays, 0.95),
      medianRelativeChangeAtDetection: slope * medianDrift,
    },
  };
}
