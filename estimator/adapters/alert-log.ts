/**
 * The estimator's log line for each alert it raises, so that an operator reading the log sees
 * what InfluxDB and /metrics already hold: which stream, which rule, the evidence, and where the
 * alert went. Rate-limited: one line per stream and alert kind per `perStreamMillis`, and at most
 * `perMinute` lines a minute in all; what is left out is counted and said with the next line.
 */
import { MEASUREMENTS, streamKeyOf } from '../../contracts/index.ts';
import type { AlertEvent } from '../engine/alert-detector.ts';

/** Limits of {@link createAlertLog}. */
export interface AlertLogOptions {
  /** Least time between two lines of one stream and kind (ms; default 10 min). */
  readonly perStreamMillis?: number;
  /** Most lines in any minute (default 20). */
  readonly perMinute?: number;
  /** The alerts topic the records go to, named in the line. */
  readonly alertsTopic: string;
  /** Clock (ms; default Date.now). */
  readonly now?: () => number;
}

/**
 * A function that logs an alert, within the limits.
 *
 * @example const logAlert = createAlertLog(log, { alertsTopic: 'warpwatch.alerts' }); logAlert(alert);
 * // "alert loss-rising on job/k (n=32, cuda, NVIDIA H100): <message>; statistic 140.8; written to warpwatch_alert and warpwatch.alerts"
 */
export function createAlertLog(log: (line: string) => void, options: AlertLogOptions): (alert: AlertEvent) => void {
  const perStreamMillis = options.perStreamMillis ?? 600_000;
  const perMinute = options.perMinute ?? 20;
  const now = options.now ?? Date.now;
  const lastLine = new Map<string, number>();
  let minuteStart = Number.NEGATIVE_INFINITY;
  let linesThisMinute = 0;
  let suppressed = 0;
  return (alert) => {
    const at = now();
    const key = `${alert.kind}|${streamKeyOf(alert.identity)}`;
    const last = lastLine.get(key);
    if (at - minuteStart >= 60_000) {
      minuteStart = at;
      linesThisMinute = 0;
    }
    if ((last !== undefined && at - last < perStreamMillis) || linesThisMinute >= perMinute) {
      suppressed += 1;
      return;
    }
    // Bounded: forget the oldest stream once 10,000 are remembered (a forgotten one may log again early).
    if (lastLine.size >= 10_000 && last === undefined) lastLine.delete(lastLine.keys().next().value!);
    lastLine.delete(key);
    lastLine.set(key, at);
    linesThisMinute += 1;
    const id = alert.identity;
    const left = suppressed === 0 ? '' : ` (${suppressed} earlier alert line(s) left out by the rate limit; every alert is in InfluxDB and on the topic)`;
    suppressed = 0;
    log(
      `alert ${alert.kind} on ${id.stream} (n=${id.groupSize}, ${id.source}, ${id.device}${id.host === '' ? '' : `, host ${id.host}`}) at ${new Date(alert.timeMillis).toISOString()}: ${alert.message}; statistic ${alert.statistic.toFixed(1)}; written to ${MEASUREMENTS.alert} and ${options.alertsTopic}${left}`,
    );
  };
}
