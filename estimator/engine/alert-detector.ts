import { createCusumState, DEFAULT_CUSUM_OPTIONS, updateCusum, type CusumOptions, type CusumState } from './change-detector.ts';
import { ALERT_KINDS, FIELDS, type AlertEvidence, type AlertKind, type AlertSeries, type StreamIdentity } from '../../contracts/index.ts';
import type { WindowResult } from './window-result.ts';

/**
 * Per-stream alerting on closed windows: CUSUM change detectors on loss_measured and
 * loss_predicted (rising imbalance), a two-sided CUSUM on log(loss_measured/loss_predicted)
 * (drift: the model stops explaining the job), and fixed thresholds. Pure: state in, events out.
 */

/**
 * The alerting settings: the `alerts` slice of the estimator config (EstimatorConfig['alerts'],
 * WARPWATCH_ALERT_*; docs/estimator.md, Alerts), read by the engine as it is.
 */
export interface AlertSettings {
  /** Windows that form a detector's reference before it alerts. */
  readonly warmupWindows: number;
  /** Slack k of the change detectors (σ). */
  readonly referenceSigmas: number;
  /** Threshold h of the change detectors (σ). */
  readonly thresholdSigmas: number;
  /** Relative σ floor of the rising-imbalance detectors. */
  readonly minRelativeSigma: number;
  /** Absolute σ floor of the drift detector's log ratio. */
  readonly driftMinSigma: number;
  /** Alert when loss_measured exceeds this (undefined: no threshold). */
  readonly lossMeasuredThreshold: number | undefined;
  /** Alert when η(loss_predicted, loss_measured) exceeds this (undefined: none). */
  readonly driftThreshold: number | undefined;
  /** A stream silent this long (processing time, ms) raises a `stale` alert; undefined = off. */
  readonly staleAfterMillis: number | undefined;
}

/**
 * The detectors' parameters from the alerting settings: the rising-imbalance CUSUM (one-sided,
 * relative σ floor) and the drift CUSUM (two-sided on the log ratio, absolute σ floor), both
 * from DEFAULT_CUSUM_OPTIONS with the settings' warm-up, slack and threshold.
 *
 * @example alertOptionsOf(config.alerts).drift.direction // 'both'
 */
export function alertOptionsOf(settings: AlertSettings): AlertOptions {
  const shared = { warmupWindows: settings.warmupWindows, referenceSigmas: settings.referenceSigmas, thresholdSigmas: settings.thresholdSigmas };
  return {
    rising: { ...DEFAULT_CUSUM_OPTIONS, ...shared, minRelativeSigma: settings.minRelativeSigma },
    drift: { ...DEFAULT_CUSUM_OPTIONS, direction: 'both', ...shared, minRelativeSigma: 0, minAbsoluteSigma: settings.driftMinSigma },
    lossMeasuredThreshold: settings.lossMeasuredThreshold,
    driftThreshold: settings.driftThreshold,
    staleAfterMillis: settings.staleAfterMillis,
  };
}

/** The detectors' parameters ({@link alertOptionsOf} of the alerting settings). */
export interface AlertOptions {
  /** Detector for loss_measured and loss_predicted (rising imbalance). */
  readonly rising: CusumOptions;
  /** Detector for the log ratio measured/predicted (drift), used two-sided. */
  readonly drift: CusumOptions;
  /** Alert when loss_measured exceeds this (undefined: no threshold). Hysteresis: re-arms below 0.98·threshold. */
  readonly lossMeasuredThreshold: number | undefined;
  /** Alert when η(loss_predicted, loss_measured) exceeds this (undefined: none). Re-arms below 0.9·threshold. */
  readonly driftThreshold: number | undefined;
  /** Alert (kind stale) when a stream sent nothing for this long, processing time (undefined: none). Re-arms on the next frame. */
  readonly staleAfterMillis: number | undefined;
}

/** One alert event (also the JSON value on warpwatch.alerts, see docs/estimator.md). */
export interface AlertEvent {
  readonly kind: AlertKind;
  readonly identity: StreamIdentity;
  /** Time of the evidence: end of the window that triggered the alert (ms since epoch). */
  readonly timeMillis: number;
  readonly series: AlertSeries;
  readonly oldLevel: number;
  readonly newLevel: number;
  /** CUSUM statistic in σ units, or the value that crossed a threshold. */
  readonly statistic: number;
  readonly evidence: AlertEvidence;
  readonly message: string;
}

/** Alert state of one stream. */
export interface AlertState {
  readonly lossMeasured: CusumState;
  readonly lossPredicted: CusumState;
  readonly drift: CusumState;
  lossThresholdArmed: boolean;
  driftThresholdArmed: boolean;
  /** A stale alert was raised and no frame arrived since. */
  staleRaised: boolean;
}

/** A fresh alert state. */
export function createAlertState(): AlertState {
  return {
    lossMeasured: createCusumState(),
    lossPredicted: createCusumState(),
    drift: createCusumState(),
    lossThresholdArmed: true,
    driftThresholdArmed: true,
    staleRaised: false,
  };
}

/**
 * Largest magnitude a detector takes (docs/estimator.md, Overflow). The CUSUM's warm-up sums
 * squared differences of its inputs, which stay finite for inputs up to this over any number of
 * windows; a window value beyond it (finite, but only possible from absurd frames) is written
 * but not fed to the detectors, so their state never becomes non-finite.
 */
export const MAX_DETECTOR_INPUT = 1e100;

/**
 * `value` when a detector can take it (finite, |value| ≤ MAX_DETECTOR_INPUT), else undefined.
 *
 * @example detectorInput(1.4) // 1.4; detectorInput(Number.MAX_VALUE) // undefined
 */
export function detectorInput(value: number | undefined): number | undefined {
  return value !== undefined && Number.isFinite(value) && Math.abs(value) <= MAX_DETECTOR_INPUT ? value : undefined;
}

function format(value: number): string {
  return value.toPrecision(4);
}

/**
 * Feeds one closed window (mutates `state`) and returns the alerts it raises.
 *
 * @example
 * for (const alert of evaluateAlerts(state, result, options)) publish(alert);
 */
export function evaluateAlerts(state: AlertState, result: WindowResult, options: AlertOptions): AlertEvent[] {
  const alerts: AlertEvent[] = [];
  const windowMillis = result.endMillis - result.startMillis;
  const base = { identity: result.identity, timeMillis: result.endMillis };
  const stream = result.identity.stream;

  const rising = (series: 'loss_measured' | 'loss_predicted', cusum: CusumState, windowValue: number | undefined): void => {
    const value = detectorInput(windowValue);
    if (value === undefined) return;
    const { alarm } = updateCusum(cusum, value, options.rising);
    if (alarm === undefined || alarm.direction !== 'up') return;
    alerts.push({
      ...base,
      kind: ALERT_KINDS.risingImbalance,
      series,
      oldLevel: alarm.oldLevel,
      newLevel: alarm.newLevel,
      statistic: alarm.statistic,
      evidence: {
        detector: 'cusum',
        windowsSinceChange: alarm.windowsSinceChange,
        changeStartMillis: result.endMillis - alarm.windowsSinceChange * windowMillis,
        baselineSigma: alarm.baselineSigma,
        threshold: options.rising.thresholdSigmas,
        windowMillis,
      },
      message: `${stream}: ${series} rose from ${format(alarm.oldLevel)} to ${format(alarm.newLevel)} over the last ${alarm.windowsSinceChange} window(s) (CUSUM ${format(alarm.statistic)}σ > ${options.rising.thresholdSigmas}σ)`,
    });
  };
  rising(FIELDS.window.lossMeasured, state.lossMeasured, result.lossMeasured);
  rising(FIELDS.window.lossPredicted, state.lossPredicted, result.lossPredicted);

  // The prediction the measurement is held to: the locality-aware one where the window has
  // sampled groups (model.md §11), else the independent-lanes one. A kernel whose neighbouring
  // lanes do alike work sits far below the independent-lanes prediction for good; that is not drift.
  const prediction = detectorInput(result.lossLocality ?? result.lossPredicted);
  const measured = detectorInput(result.lossMeasured);
  if (measured !== undefined && prediction !== undefined && measured > 0 && prediction > 0) {
    // A difference of logs: finite for any two inputs in range (their ratio may not be).
    const logRatio = Math.log(measured) - Math.log(prediction);
    const { alarm } = updateCusum(state.drift, logRatio, options.drift);
    if (alarm !== undefined) {
      alerts.push({
        ...base,
        kind: ALERT_KINDS.drift,
        series: 'measured_over_predicted',
        oldLevel: Math.exp(alarm.oldLevel),
        newLevel: Math.exp(alarm.newLevel),
        statistic: alarm.statistic,
        evidence: {
          detector: 'cusum',
          windowsSinceChange: alarm.windowsSinceChange,
          changeStartMillis: result.endMillis - alarm.windowsSinceChange * windowMillis,
          baselineSigma: alarm.baselineSigma,
          threshold: options.drift.thresholdSigmas,
          windowMillis,
        },
        message: `${stream}: loss_measured/${result.lossLocality === undefined ? 'loss_predicted' : 'loss_locality'} moved from ${format(Math.exp(alarm.oldLevel))} to ${format(Math.exp(alarm.newLevel))} (CUSUM ${format(alarm.statistic)}σ > ${options.drift.thresholdSigmas}σ): prediction and measurement drift apart`,
      });
    }
  }

  if (options.lossMeasuredThreshold !== undefined && measured !== undefined) {
    const threshold = options.lossMeasuredThreshold;
    if (state.lossThresholdArmed && measured > threshold) {
      state.lossThresholdArmed = false;
      alerts.push(thresholdAlert(base, ALERT_KINDS.risingImbalance, 'loss_measured', threshold, measured, windowMillis,
        `${stream}: loss_measured ${format(measured)} exceeds the threshold ${format(threshold)}`));
    } else if (measured < 0.98 * threshold) {
      state.lossThresholdArmed = true;
    }
  }
  if (options.driftThreshold !== undefined) {
    const eta = detectorInput(result.etaDrift ?? result.etaPredictedMeasured);
    const threshold = options.driftThreshold;
    if (eta !== undefined && state.driftThresholdArmed && eta > threshold) {
      state.driftThresholdArmed = false;
      alerts.push(thresholdAlert(base, ALERT_KINDS.drift, 'measured_over_predicted', threshold, eta, windowMillis,
        `${stream}: relative error between ${result.lossLocality === undefined ? 'loss_predicted' : 'loss_locality'} and loss_measured is ${format(eta)}, above ${format(threshold)}`));
    } else if (eta !== undefined && eta < 0.9 * threshold) {
      state.driftThresholdArmed = true;
    }
  }
  return alerts;
}

function thresholdAlert(
  base: { identity: StreamIdentity; timeMillis: number },
  kind: AlertKind,
  series: AlertSeries,
  threshold: number,
  value: number,
  windowMillis: number,
  message: string,
): AlertEvent {
  return {
    ...base,
    kind,
    series,
    oldLevel: threshold,
    newLevel: value,
    statistic: value,
    evidence: {
      detector: 'threshold',
      windowsSinceChange: 1,
      changeStartMillis: base.timeMillis - windowMillis,
      baselineSigma: undefined,
      threshold,
      windowMillis,
    },
    message,
  };
}

/**
 * A `stale` alert when the stream has been silent for `staleAfterMillis` (processing time),
 * once until the stream reports again (the caller clears `staleRaised` on the next frame).
 * Mutates `state`; returns undefined when nothing is to be raised.
 *
 * The alert's new level and statistic are the silence in seconds.
 *
 * @param lastRecordWallMillis processing time of the stream's last frame (ms since epoch).
 */
export function evaluateStale(
  state: AlertState,
  identity: StreamIdentity,
  wallMillis: number,
  lastRecordWallMillis: number,
  options: AlertOptions,
): AlertEvent | undefined {
  const limit = options.staleAfterMillis;
  if (limit === undefined || state.staleRaised || wallMillis - lastRecordWallMillis < limit) return undefined;
  state.staleRaised = true;
  const silentSeconds = (wallMillis - lastRecordWallMillis) / 1000;
  return {
    kind: ALERT_KINDS.stale,
    identity,
    timeMillis: wallMillis,
    series: 'frames',
    oldLevel: 0,
    newLevel: silentSeconds,
    statistic: silentSeconds,
    evidence: {
      detector: 'threshold',
      windowsSinceChange: 0,
      changeStartMillis: lastRecordWallMillis,
      baselineSigma: undefined,
      threshold: limit / 1000,
      windowMillis: 0,
    },
    message: `${identity.stream}: no frames for ${silentSeconds.toFixed(0)} s (threshold ${(limit / 1000).toFixed(0)} s)`,
  };
}
