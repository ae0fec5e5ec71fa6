import { describe, expect, it } from 'vitest';
import { encodeFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { syntheticLaunchSummary } from '../../protocol/testing/launch-summaries.ts';
import { DLQ_HEADERS } from '../../contracts/index.ts';
import { createEstimatorEngine, type EngineOutputs, type EngineTelemetry, type FrameOutcome, type QuarantineRecord } from './estimator-engine.ts';
import { dlqRecordOf } from '../adapters/quarantine.ts';
import { FIELDS, MEASUREMENTS } from '../../contracts/index.ts';
import type { SeriesPoint } from './series-points.ts';
import { testEngineOptions } from '../testing/test-support.ts';

/**
 * Frames that SPEC.md allows but whose sums cannot be used (docs/estimator.md, Overflow), and
 * the last line of defence (Quarantine): nothing stops the engine, everything is accounted for.
 */

const WALL = 1_800_000_000_000;
const T0 = 1_700_000_000_000;

/** A valid LaunchSummary of one group of one lane (count 1) in stream `job`/k at `endMillis`. */
function summary(job: string, launch: number, endMillis: number, sumMeasuredLoss: number): LaunchSummaryFrame {
  return syntheticLaunchSummary({ job, deviceName: 'd', launch, endMillis, sumMeasuredLoss });
}

function harness(outputOverrides: Partial<EngineOutputs> = {}) {
  const points: SeriesPoint[] = [];
  const quarantined: QuarantineRecord[] = [];
  const outcomes: FrameOutcome[] = [];
  const overflowed: string[][] = [];
  const telemetry: EngineTelemetry = {
    frame: (outcome) => outcomes.push(outcome),
    windowClosed: () => {},
    modelError: () => {},
    alertRaised: () => {},
    windowOverflowed: (_key, _start, sums) => overflowed.push([...sums]),
  };
  const options = testEngineOptions();
  const engine = createEstimatorEngine(
    // Two warm-up windows: the detectors are monitoring by the third window.
    { ...options, alerts: { ...options.alerts, warmupWindows: 2 } },
    {
      writePoints: (p) => points.push(...p),
      publishDistribution: () => {},
      publishAlert: () => {},
      quarantine: (record) => quarantined.push(record),
      ...outputOverrides,
    },
    telemetry,
  );
  return { engine, points, quarantined, outcomes, overflowed };
}

const windowsOf = (points: readonly SeriesPoint[], job: string) =>
  points.filter((p) => p.measurement === MEASUREMENTS.window && p.tags.job === job).sort((a, b) => a.timestampMillis - b.timestampMillis);

describe('frames whose sums overflow (SPEC-valid)', () => {
  it('two frames with sumMeasuredLoss = Number.MAX_VALUE in one window: written without loss_measured, flagged and counted; the detectors never see it', () => {
    const { engine, points, outcomes, overflowed } = harness();
    let offset = 0;
    // 6 windows of a normal stream and of the poisoned stream, 2 frames each; the poison sits in window 3.
    for (let w = 0; w < 6; w += 1) {
      for (let j = 0; j < 2; j += 1) {
        const launch = w * 2 + j;
        const at = T0 + w * 1_000 + 100 * j;
        engine.handleMessage(0, String(offset++), encodeFrame(summary('normal', launch, at, 1.5)), WALL);
        engine.handleMessage(0, String(offset++), encodeFrame(summary('poison', launch, at, w === 3 ? Number.MAX_VALUE : 1.5)), WALL);
      }
    }
    engine.closeAll();
    expect(outcomes).toEqual(new Array(24).fill('recorded'));
    const poison = windowsOf(points, 'poison');
    const normal = windowsOf(points, 'normal');
    expect(normal.map((p) => [p.fields[FIELDS.window.launches], p.fields[FIELDS.window.groups], p.fields[FIELDS.window.lossMeasured]])).toEqual(new Array(6).fill([2, 2, 1.5]));
    expect(poison.map((p) => [p.fields[FIELDS.window.launches], p.fields[FIELDS.window.groups]])).toEqual(new Array(6).fill([2, 2]));
    const third = poison[3]!;
    expect(third.fields[FIELDS.window.lossMeasured]).toBeUndefined();
    expect(third.fields[FIELDS.window.etaCountsMeasured]).toBeUndefined();
    expect(third.fields[FIELDS.window.overflowedSums]).toBe(1);
    expect(third.fields[FIELDS.window.lossCounts]).toBe(1);
    expect(poison.filter((p) => p !== third).every((p) => p.fields[FIELDS.window.lossMeasured] === 1.5 && p.fields[FIELDS.window.overflowedSums] === undefined)).toBe(true);
    expect(overflowed).toEqual([['sumLossMeasured']]);
    for (const point of points) for (const value of Object.values(point.fields)) if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
  });

  it('one frame with sumMeasuredLoss = Number.MAX_VALUE: loss_measured is finite but out of the detectors range, so they skip it and stay finite', () => {
    const { engine, points } = harness();
    let offset = 0;
    for (let w = 0; w < 5; w += 1) {
      engine.handleMessage(0, String(offset++), encodeFrame(summary('one', w, T0 + w * 1_000, w === 2 ? Number.MAX_VALUE : 1.5)), WALL);
    }
    engine.closeAll();
    const windows = windowsOf(points, 'one');
    expect(windows.map((p) => p.fields[FIELDS.window.lossMeasured])).toEqual([1.5, 1.5, Number.MAX_VALUE, 1.5, 1.5]);
    // The checkpoint (alert state included) holds only finite numbers.
    const checkpoint = engine.checkpoint(0)!;
    for (const record of checkpoint.records) expect(record.value ?? '').not.toMatch(/null|Infinity|NaN/i);
  });

  it('an overflowed sum survives a checkpoint and restore: the restored window is still written without it', () => {
    const first = harness();
    first.engine.handleMessage(0, '0', encodeFrame(summary('p', 0, T0, Number.MAX_VALUE)), WALL);
    first.engine.handleMessage(0, '1', encodeFrame(summary('p', 1, T0 + 1, Number.MAX_VALUE)), WALL);
    const checkpoint = first.engine.checkpoint(0)!;
    const records = new Map(checkpoint.records.filter((r) => r.streamKey !== undefined && r.value !== null).map((r) => [r.streamKey!, r.value!]));
    const marker = checkpoint.records.find((r) => r.streamKey === undefined)?.value ?? undefined;
    const second = harness();
    second.engine.restorePartition(0, records, marker ?? undefined, WALL);
    second.engine.handleMessage(0, '2', encodeFrame(summary('p', 2, T0 + 2, 1)), WALL);
    second.engine.closeAll();
    const [window] = windowsOf(second.points, 'p');
    expect([window?.fields[FIELDS.window.launches], window?.fields[FIELDS.window.lossMeasured], window?.fields[FIELDS.window.overflowedSums]]).toEqual([3, undefined, 1]);
    expect(second.overflowed).toEqual([['sumLossMeasured']]);
  });

  it('a weighted frame (groupCount / groupsCounted = 2^53 − 1) whose loss sum times its weight overflows alone', () => {
    const { engine, points, overflowed } = harness();
    const frame = { ...summary('weighted', 1, T0, Number.MAX_VALUE / 2), groupCount: Number.MAX_SAFE_INTEGER };
    expect(engine.handleMessage(0, '0', encodeFrame(frame), WALL)).toBe('recorded');
    engine.closeAll();
    const [window] = windowsOf(points, 'weighted');
    expect(window?.fields[FIELDS.window.groups]).toBe(Number.MAX_SAFE_INTEGER);
    expect(window?.fields[FIELDS.window.lossMeasured]).toBeUndefined();
    expect(overflowed).toEqual([['sumLossMeasured']]);
  });
});

describe('the last line of defence: quarantine', () => {
  it('a window whose close throws is quarantined with its stream, partition and offset; the other streams and windows are written', () => {
    const { engine, points, quarantined } = harness({
      writePoints: (p) => {
        if (p.some((point) => point.tags.job === 'bad')) throw new TypeError('sink exploded');
        points.push(...p);
      },
    });
    let offset = 0;
    for (let w = 0; w < 3; w += 1) {
      expect(engine.handleMessage(2, String(offset++), encodeFrame(summary('bad', w, T0 + w * 1_000, 1.5)), WALL)).toBe('recorded');
      expect(engine.handleMessage(2, String(offset++), encodeFrame(summary('good', w, T0 + w * 1_000, 1.5)), WALL)).toBe('recorded');
    }
    expect(engine.closeAll()).toBe(2);
    expect(windowsOf(points, 'good').map((p) => p.fields[FIELDS.window.launches])).toEqual([1, 1, 1]);
    expect(quarantined.map((r) => [r.kind, r.reason, r.code, r.partition])).toEqual(new Array(3).fill(['window', 'quarantined', 'WW_ERR_ESTIMATOR_WINDOW_QUARANTINED', 2]));
    // Windows 0 and 1 were closed by frames 2 and 4 (the 'bad' stream's offsets), window 2 at the end (its last frame, offset 4).
    expect(quarantined.map((r) => r.offset)).toEqual(['2', '4', '4']);
    expect(JSON.parse(quarantined[0]!.value as string)).toMatchObject({ schema: 'warpwatch.quarantined-window/v1', startMillis: T0, launches: 1, groups: 1 });
    expect(quarantined[0]!.message).toContain('sink exploded');
    // Offsets go on: the checkpoint covers every message.
    expect(engine.checkpoint(2)?.nextOffset).toBe('6');
  });

  it('a frame whose handling throws unexpectedly is quarantined (outcome quarantined) and the next frames are recorded', () => {
    const { engine, quarantined, outcomes } = harness();
    const exploding = Object.defineProperty({}, 'ww-host', { enumerable: true, get: () => { throw new TypeError('header getter exploded'); } }) as Record<string, string>;
    const raw = encodeFrame(summary('s', 1, T0, 1.5));
    expect(engine.handleMessage(0, '7', raw, WALL, exploding)).toBe('quarantined');
    expect(engine.handleMessage(0, '8', encodeFrame(summary('s', 2, T0, 1.5)), WALL)).toBe('recorded');
    expect(outcomes).toEqual(['quarantined', 'recorded']);
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]).toMatchObject({ kind: 'frame', reason: 'quarantined', code: 'WW_ERR_ESTIMATOR_FRAME_QUARANTINED', partition: 0, offset: '7' });
    expect(quarantined[0]!.value).toBe(raw);
    expect(engine.checkpoint(0)?.nextOffset).toBe('9');
  });

  it('a frame rejected at decode goes to the DLQ with its protocol code', () => {
    const { engine, quarantined, outcomes } = harness();
    const garbage = new TextEncoder().encode('not a frame at all, just bytes');
    const corrupted = encodeFrame(summary('s', 1, T0, 1.5));
    corrupted[corrupted.length - 1] = (corrupted[corrupted.length - 1] ?? 0) ^ 0xff;
    expect(engine.handleMessage(1, '0', garbage, WALL, { 'ww-host': 'h1' })).toBe('rejected');
    expect(engine.handleMessage(1, '1', corrupted, WALL)).toBe('rejected');
    expect(outcomes).toEqual(['rejected', 'rejected']);
    expect(quarantined.map((r) => [r.kind, r.reason, r.code, r.offset, r.streamKey])).toEqual([
      ['frame', 'rejected', 'WW_ERR_FRAME_BAD_MAGIC', '0', undefined],
      ['frame', 'rejected', 'WW_ERR_FRAME_CRC_MISMATCH', '1', undefined],
    ]);
    const dlq = dlqRecordOf(quarantined[0]!, 'warpwatch.frames');
    expect(dlq.headers).toMatchObject({
      'ww-host': 'h1',
      [DLQ_HEADERS.errorCode]: 'WW_ERR_FRAME_BAD_MAGIC',
      [DLQ_HEADERS.originalTopic]: 'warpwatch.frames',
      [DLQ_HEADERS.originalPartition]: '1',
      [DLQ_HEADERS.originalOffset]: '0',
      [DLQ_HEADERS.originalBytes]: String(garbage.byteLength),
      [DLQ_HEADERS.quarantinedBy]: 'estimator',
      [DLQ_HEADERS.quarantinedKind]: 'frame',
    });
    expect(Buffer.from(dlq.value as Buffer).equals(Buffer.from(garbage))).toBe(true);
  });

  it('caps a large frame in its DLQ record and says its full length', () => {
    const record: QuarantineRecord = { kind: 'frame', reason: 'quarantined', code: 'WW_ERR_ESTIMATOR_FRAME_QUARANTINED', message: 'x', partition: 0, offset: '1', streamKey: 'j/k', value: new Uint8Array(100_000) };
    const dlq = dlqRecordOf(record, 'warpwatch.frames');
    expect((dlq.value as Buffer).byteLength).toBe(64 * 1024);
    expect(dlq.headers[DLQ_HEADERS.originalBytes]).toBe('100000');
    expect(dlq.headers[DLQ_HEADERS.quarantinedBy]).toBe('estimator-quarantine');
  });
});
