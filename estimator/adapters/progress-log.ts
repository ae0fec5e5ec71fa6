import { estimatorLogLine } from '../estimator-log.ts';
import type { EstimatorCounters } from './estimator-telemetry.ts';

/** How often the estimator service logs its progress line (docs/estimator.md "Self-telemetry"), ms. */
export const PROGRESS_LOG_MILLIS = 60_000;

/** The counters a progress line compares with the previous one. */
export type ProgressSnapshot = Pick<EstimatorCounters, 'framesIn' | 'framesRejected' | 'windowsClosed'>;

/**
 * The estimator's once-a-minute progress line: frames and windows since the previous line
 * (and in all), streams held, consumer lag — so a quiet log after "partition N restored" still
 * says that the service works, or that nothing arrives.
 *
 * @param previous the counters at the previous line (zeros at start)
 * @param now the counters now
 * @param streams streams held in memory (engine.liveStreams())
 * @param partitions partitions assigned to this instance
 * @example progressLine({ framesIn: 0, framesRejected: 0, windowsClosed: 0 }, counters, 3, 2)
 * // 'warpwatch estimate: last minute 1200 frames (0 rejected), 4 windows closed; in all 1200 frames, 4 windows; 3 streams on 2 partition(s), consumer lag 0'
 */
export function progressLine(previous: ProgressSnapshot, now: EstimatorCounters, streams: number, partitions: number): string {
  return estimatorLogLine(progressMessage(previous, now, streams, partitions));
}

/**
 * The message of {@link progressLine}, without the service's prefix (its logger adds it).
 *
 * @example progressMessage({ framesIn: 0, framesRejected: 0, windowsClosed: 0 }, counters, 3, 2)
 * // 'last minute 1200 frames (0 rejected), 4 windows closed; in all 1200 frames, 4 windows; 3 streams on 2 partition(s), consumer lag 0'
 */
export function progressMessage(previous: ProgressSnapshot, now: EstimatorCounters, streams: number, partitions: number): string {
  const frames = now.framesIn - previous.framesIn;
  const rejected = now.framesRejected - previous.framesRejected;
  const windows = now.windowsClosed - previous.windowsClosed;
  return (
    `last minute ${frames} frames (${rejected} rejected), ${windows} windows closed; ` +
    `in all ${now.framesIn} frames, ${now.windowsClosed} windows; ${streams} streams on ${partitions} partition(s), consumer lag ${now.consumerLag ?? 'unknown'}`
  );
}
