import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFrame, HISTOGRAM_BIN_COUNT, MAX_COUNT, MAX_GROUP_SAMPLES, type Frame, type GroupSample, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import type { AlertEvent } from './alert-detector.ts';
import { decodeStreamCheckpoint } from './checkpoint-codec.ts';
import { createEstimatorEngine, type FrameOutcome, type QuarantineRecord } from './estimator-engine.ts';
import { modelFitter } from '../estimator-service.ts';
import { encodeWireRecord, MEASUREMENTS } from '../../contracts/index.ts';
import type { SeriesPoint } from './series-points.ts';
import { toLineProtocol } from '../adapters/influx-writer.ts';
import { testEngineOptions } from '../testing/test-support.ts';
import type { WindowResult } from './window-result.ts';

/**
 * Every numeric field of both frame types at its SPEC.md limits (0, 1, the largest value of its
 * type, Number.MAX_VALUE and the smallest positive double for the f64 sums, 2^53 − 1 for counts),
 * alone and summed over many frames, through decode → engine → window close → detectors →
 * writers (points as line protocol, distribution and alert records, checkpoints): nothing
 * throws, nothing is quarantined (no frame reaches the last line of defence), every frame is
 * accounted for, and everything emitted is finite (docs/estimator.md, Overflow).
 */

const U64_MAX = (1n << 64n) - 1n;
const WALL = 1_800_000_000_000;
/** Event time of the frames that land in a window (well before WALL: not from the future). */
const T0 = 1_700_000_000_000;

const u64Limit = fc.constantFrom(0n, 1n, BigInt(MAX_COUNT), U64_MAX);
const countLimit = fc.constantFrom(0, 1, MAX_COUNT);
const doubleLimit = fc.constantFrom(0, Number.MIN_VALUE, 1, MAX_COUNT, Number.MAX_VALUE / 2, Number.MAX_VALUE);
const groupSize = fc.constantFrom(1, 2, 31, 32);
/** Event times: in the test's windows (most), at the u64 limits (1970, and year 2554: from the future). */
const endNanos = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 3_999 }).map((ms) => BigInt(T0 + ms) * 1_000_000n) },
  { weight: 1, arbitrary: fc.constantFrom(0n, 1n, U64_MAX) },
);

/** Identity fields at their limits; launch ids and sequences are made unique by the caller. */
const identity = (n: number) =>
  fc.record({
    source: fc.constantFrom('cuda' as const, 'cpu' as const),
    sync: fc.boolean(),
    startUnixNanos: u64Limit,
    endUnixNanos: endNanos,
    clockHz: fc.constantFrom(1, MAX_COUNT),
    cc: fc.constantFrom(0, 255),
    groupSize: fc.constant(n),
  });

/** A valid LaunchSummary with every numeric field at a limit (the histogram sums to groupsCounted·n). */
const launchSummaryAtLimits: fc.Arbitrary<Omit<LaunchSummaryFrame, 'launchId' | 'frameSequence' | 'job' | 'kernel'>> = groupSize.chain((n) =>
  fc
    .record({
      id: identity(n),
      counted: fc.constantFrom('zero', 'one', 'max'),
      extraGroups: fc.constantFrom<0 | 1 | 'max'>(0, 1, 'max'),
      bins: fc.uniqueArray(fc.constantFrom(0, 1, 1023, 1024, 2047, HISTOGRAM_BIN_COUNT - 1), { minLength: 1, maxLength: 4 }),
      sumSimtClocks: u64Limit,
      sumMimdClocks: u64Limit,
      sumMeasuredLoss: doubleLimit,
      sumCountsLoss: doubleLimit,
      sumMaxCounts: countLimit,
      sumCounts: countLimit,
      droppedSamples: countLimit,
    })
    .map(({ id, counted, extraGroups, bins, ...sums }) => {
      const groupsCounted = counted === 'zero' ? 0 : counted === 'one' ? 1 : Math.floor(MAX_COUNT / n);
      const groupCount = extraGroups === 'max' ? MAX_COUNT : Math.min(MAX_COUNT, groupsCounted + extraGroups);
      const lanes = groupsCounted * n;
      const sorted = [...bins].sort((a, b) => a - b).slice(0, Math.max(1, Math.min(bins.length, lanes)));
      // Every count ≥ 1, the last takes the rest: the largest is close to 2^53 − 1 for 'max'.
      const histogram = lanes === 0 ? [] : sorted.map((bin, i) => ({ bin, count: i < sorted.length - 1 ? 1 : lanes - (sorted.length - 1) }));
      return {
        type: 'launch-summary' as const,
        source: id.source,
        groupSize: n,
        sync: id.sync,
        device: { name: 'limits', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: id.cc, minor: id.cc }, clockHz: id.clockHz },
        startUnixNanos: id.startUnixNanos,
        endUnixNanos: id.endUnixNanos,
        groupCount,
        groupsCounted,
        ...sums,
        histogram,
      };
    }),
);

/** A valid GroupSamples frame with clocks, counts, indices, strides and block sizes at their limits. */
const groupSamplesAtLimits: fc.Arbitrary<Omit<GroupSamplesFrame, 'launchId' | 'frameSequence' | 'job' | 'kernel'>> = groupSize.chain((n) =>
  fc
    .record({
      id: identity(n),
      groupCount: fc.constantFrom(1, 2, MAX_COUNT),
      selection: fc.constantFrom('stride' as const, 'hash' as const, 'block' as const),
      groupsPerBlock: fc.constantFrom(1, 2, 0xffff),
      samplingStride: fc.constantFrom(1, 0xffffffff),
      groups: fc.array(
        fc.record({
          last: fc.boolean(),
          startClock: u64Limit,
          endClock: u64Limit,
          laneCounts: fc.array(fc.constantFrom(0, 1, 0xffffffff), { minLength: n, maxLength: n }),
          laneFinishClocks: fc.array(u64Limit, { minLength: n, maxLength: n }),
        }),
        { maxLength: 4 },
      ),
    })
    .map(({ id, groupCount, selection, groupsPerBlock, samplingStride, groups }) => ({
      type: 'group-samples' as const,
      source: id.source,
      groupSize: n,
      sync: id.sync,
      device: { name: 'limits', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: id.cc, minor: id.cc }, clockHz: id.clockHz },
      startUnixNanos: id.startUnixNanos,
      endUnixNanos: id.endUnixNanos,
      groupCount,
      selection,
      samplingStride,
      ...(selection === 'block' ? { groupsPerBlock } : {}),
      groups: groups.map(({ last, ...g }): GroupSample => ({ groupIndex: last ? groupCount - 1 : 0, ...g })),
    })),
);

/** Frame bodies, each repeated 1..`maxRepeat` times (sums of many such frames in one window). */
const frameRuns = (maxRepeat: number) =>
  fc.array(
    fc.record({ body: fc.oneof(launchSummaryAtLimits, groupSamplesAtLimits), repeat: fc.integer({ min: 1, max: maxRepeat }), stream: fc.integer({ min: 0, max: 2 }) }),
    { minLength: 1, maxLength: 8 },
  );

/** Every number in a value (recursively): what a writer or record builder could emit. */
function numbersIn(value: unknown, path = '$', out: [string, number][] = []): [string, number][] {
  if (typeof value === 'number') out.push([path, value]);
  else if (Array.isArray(value)) value.forEach((item, i) => numbersIn(item, `${path}[${i}]`, out));
  else if (typeof value === 'object' && value !== null) for (const [key, item] of Object.entries(value)) numbersIn(item, `${path}.${key}`, out);
  return out;
}

/** Runs the frames through one engine and checks everything it emits. */
function drive(frames: readonly Frame[]): void {
  const points: SeriesPoint[] = [];
  const results: WindowResult[] = [];
  const alerts: AlertEvent[] = [];
  const records: string[] = [];
  const quarantined: QuarantineRecord[] = [];
  const outcomes: FrameOutcome[] = [];
  const modelErrors: unknown[] = [];
  const options = testEngineOptions({ compute: { ...testEngineOptions().compute, fit: true }, fitter: modelFitter });
  const engine = createEstimatorEngine(
    // Two warm-up windows, loss threshold on: the detectors are monitoring early and every branch runs.
    { ...options, alerts: { ...options.alerts, warmupWindows: 2, lossMeasuredThreshold: 2, driftThreshold: 0.5 } },
    {
      writePoints: (p) => points.push(...p),
      publishDistribution: (_key, record) => records.push(encodeWireRecord(record)),
      publishAlert: (_key, record) => records.push(encodeWireRecord(record)),
      recordWindow: (result) => results.push(result),
      recordAlert: (alert) => alerts.push(alert),
      quarantine: (record) => quarantined.push(record),
    },
    { frame: (outcome) => outcomes.push(outcome), windowClosed: () => {}, modelError: (error) => modelErrors.push(error), alertRaised: () => {} },
  );
  frames.forEach((frame, offset) => engine.handleMessage(0, String(offset), encodeFrame(frame), WALL));
  engine.closeAll();

  // Accounted: one outcome per frame, none quarantined (an unexpected error), no failed model.
  expect(quarantined).toEqual([]);
  expect(modelErrors).toEqual([]);
  expect(outcomes).toHaveLength(frames.length);
  const recordedSummaries = frames.filter((frame, i) => frame.type === 'launch-summary' && outcomes[i] === 'recorded').length;
  expect(outcomes.every((o) => o === 'recorded' || o === 'future' || o === 'late')).toBe(true);
  // Every recorded summary is in exactly one written window.
  expect(results.reduce((sum, r) => sum + r.launches, 0)).toBe(recordedSummaries);

  // Emitted values are finite: window results, alerts, points (valid line protocol), records.
  for (const [path, value] of [...numbersIn(results.map(({ identity: _, ...r }) => r)), ...numbersIn(alerts)]) {
    if (!Number.isFinite(value)) throw new Error(`${path} = ${value}`);
  }
  for (const point of points) {
    const line = toLineProtocol(point);
    expect(line).not.toMatch(/NaN|Infinity/);
    for (const [key, value] of Object.entries(point.fields)) if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`${point.measurement} ${key} = ${value}`);
  }
  expect(points.filter((p) => p.measurement === MEASUREMENTS.window)).toHaveLength(results.length);
  for (const text of records) expect(text).not.toMatch(/NaN|Infinity/);
  // The state a restart resumes from (alert detectors included) holds only finite numbers.
  for (const record of engine.checkpoint(0)?.records ?? []) {
    if (record.streamKey === undefined || record.value === null) continue;
    const checkpoint = decodeStreamCheckpoint(record.value, record.streamKey, WALL);
    for (const [path, value] of numbersIn(checkpoint.alerts)) if (!Number.isFinite(value)) throw new Error(`alert state ${path} = ${value}`);
  }
}

/** Frames of the runs with unique (launchId, frameSequence) per stream, in order. */
function framesOf(runs: readonly { body: Omit<Frame, 'launchId' | 'frameSequence' | 'job' | 'kernel'>; repeat: number; stream: number }[]): Frame[] {
  const frames: Frame[] = [];
  let sequence = 0;
  for (const run of runs) {
    for (let r = 0; r < run.repeat; r += 1) {
      frames.push({ ...run.body, job: `limits${run.stream}`, kernel: 'k', launchId: BigInt(sequence), frameSequence: sequence } as Frame);
      sequence += 1;
    }
  }
  return frames;
}

describe('frames at the SPEC limits through the whole estimator', () => {
  it('every numeric field of LaunchSummary and GroupSamples at its limits, alone and summed: no throw, all accounted, all finite', () => {
    fc.assert(
      fc.property(frameRuns(6), (runs) => drive(framesOf(runs))),
      { numRuns: 80 },
    );
  });

  it('sums of many frames at the limits in one window (1,000 LaunchSummaries each, 2,000 in all)', () => {
    fc.assert(
      fc.property(launchSummaryAtLimits, launchSummaryAtLimits, (a, b) => {
        const at = (body: typeof a) => ({ ...body, endUnixNanos: BigInt(T0) * 1_000_000n });
        drive(framesOf([{ body: at(a), repeat: 1_000, stream: 0 }, { body: at(b), repeat: 1_000, stream: 0 }]));
      }),
      { numRuns: 6 },
    );
  });

  it('a GroupSamples frame with the most groups (4,096) at the clock and count limits', () => {
    const group = (g: number): GroupSample => ({ groupIndex: g, startClock: 0n, endClock: U64_MAX, laneCounts: new Array(32).fill(0xffffffff), laneFinishClocks: new Array(32).fill(U64_MAX) });
    const body = {
      type: 'group-samples' as const,
      source: 'cuda' as const,
      groupSize: 32,
      sync: true,
      device: { name: 'limits', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 9, minor: 0 }, clockHz: MAX_COUNT },
      startUnixNanos: 0n,
      endUnixNanos: BigInt(T0) * 1_000_000n,
      groupCount: MAX_COUNT,
      selection: 'block' as const,
      groupsPerBlock: 0xffff,
      samplingStride: 0xffffffff,
      groups: Array.from({ length: MAX_GROUP_SAMPLES }, (_, g) => group(g)),
    };
    drive(framesOf([{ body, repeat: 3, stream: 0 }]));
  });
});
