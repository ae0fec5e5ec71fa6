import { describe, expect, it } from 'vitest';
import type { EstimatorCounters } from './estimator-telemetry.ts';
import { PROGRESS_LOG_MILLIS, progressLine } from './progress-log.ts';

const counters = (framesIn: number, framesRejected: number, windowsClosed: number, consumerLag: number): EstimatorCounters => ({
  framesIn,
  framesOut: framesIn - framesRejected,
  framesRejected,
  framesQuarantined: 0,
  windowsQuarantined: 0,
  windowsOverflowed: 0,
  dlqRecords: 0,
  framesFuture: 0,
  framesDropped: 0,
  checkpointsCorrupt: 0,
  outgoingDropped: 0,
  streamsEvicted: 0,
  windowsClosed,
  modelErrors: 0,
  sinkErrors: 0,
  consumerLag,
  lastWindowLatencyMillis: undefined,
  heapCollections: 0,
  heapCollectionMillis: 0,
});

describe('progressLine', () => {
  it('says what arrived since the previous line and in all, once a minute', () => {
    expect(PROGRESS_LOG_MILLIS).toBe(60_000);
    const line = progressLine({ framesIn: 1000, framesRejected: 2, windowsClosed: 7 }, counters(1450, 5, 9, 12), 3, 2);
    expect(line).toBe('warpwatch estimate: last minute 450 frames (3 rejected), 2 windows closed; in all 1450 frames, 9 windows; 3 streams on 2 partition(s), consumer lag 12');
  });

  it('says so when nothing arrived', () => {
    expect(progressLine({ framesIn: 0, framesRejected: 0, windowsClosed: 0 }, counters(0, 0, 0, 0), 0, 1)).toMatch(/last minute 0 frames \(0 rejected\), 0 windows closed/);
  });
});
