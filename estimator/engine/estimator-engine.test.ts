import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, ModelError, expectedLoss, workloadLoss } from '../../model/index.ts';
import { crc32c, decodeFrame, encodeFrame, FrameError, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { attributionFromHeaders, StreamIdentityError, streamKeyOf } from '../../contracts/index.ts';
import { createEstimatorEngine, type EngineTelemetry, type FrameOutcome } from './estimator-engine.ts';
import { encodeWireRecord, MEASUREMENTS, type DistributionRecord } from '../../contracts/index.ts';
import type { SeriesPoint } from './series-points.ts';
import { toLineProtocol } from '../adapters/influx-writer.ts';
import { generateLaunches, lastWriteWins, testEngineOptions } from '../testing/test-support.ts';

/** The key the engine publishes a test stream's distribution under (no collector headers: empty host). */
function distributionKey(job: string, kernel: string): string {
  const frame = launches.find((l) => l.frame.job === job && l.frame.kernel === kernel)!.frame;
  return streamKeyOf({ job, kernel, groupSize: frame.groupSize, source: frame.source, deviceUuid: frame.device.uuid, host: '' });
}

/** The wall clock the tests run at: after every frame they send (frames from the future are rejected). */
const WALL = 1_800_000_000_000;

const quietTelemetry: EngineTelemetry = { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} };

function collector() {
  const points: SeriesPoint[] = [];
  const distributions = new Map<string, string>();
  return {
    points,
    distributions,
    outputs: {
      writePoints: (p: readonly SeriesPoint[]) => points.push(...p),
      publishDistribution: (key: string, record: DistributionRecord) => distributions.set(key, encodeWireRecord(record)),
      publishAlert: () => {},
    },
  };
}


/** A GroupSamples frame for a launch: 6 groups with 1..8 distinct counts, clocks 10 ticks per iteration plus 3 per distinct exit. */
function samplesFor(frame: LaunchSummaryFrame, salt: number): GroupSamplesFrame {
  const groups = Array.from({ length: 6 }, (_, g) => {
    const laneCounts = Array.from({ length: frame.groupSize }, (_, i) => ((i * 7 + g * 3 + salt) % (3 + g * 3)) + (g % 2) * (i % 2));
    const start = BigInt(1000 * g);
    const exits = new Set(laneCounts).size - 1;
    return {
      groupIndex: g * 4,
      startClock: start,
      endClock: start + BigInt(10 * Math.max(...laneCounts) + 3 * exits + 5),
      laneCounts,
      laneFinishClocks: laneCounts.map((w) => start + BigInt(10 * w + 1)),
    };
  });
  return { ...frame, type: 'group-samples', frameSequence: frame.frameSequence + 1_000_000, selection: 'stride', samplingStride: 4, groups };
}

const launches = generateLaunches({ streams: 6, launchesPerStream: 40, launchIntervalMillis: 300, startMillis: 1_700_000_000_000, groups: 32, groupSize: 8, seed: 9 });
// Every third launch also sends a GroupSamples frame, right after its summary.
const messages = launches.flatMap((l, i) => [
  { partition: 0, key: l.key, value: encodeFrame(l.frame) },
  ...(i % 3 === 0 ? [{ partition: 0, key: l.key, value: encodeFrame(samplesFor(l.frame, i)) }] : []),
]);
// Kafka keeps one stream in one partition: derive the partition from the stream.
for (const m of messages) m.partition = Number(m.key.slice(3, 4)) % 2;
const offsets = new Map<number, number>();
const withOffsets = messages.map((m) => {
  const offset = offsets.get(m.partition) ?? 0;
  offsets.set(m.partition, offset + 1);
  return { ...m, offset: String(offset) };
});

describe('estimator-engine', () => {
  describe('handleMessage', () => {
    it('computes loss_predicted from the window distribution and loss_counts / loss_measured from the sums', () => {
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions(), out.outputs, quietTelemetry);
      const oneStream = launches.filter((l) => l.key === 'job0/k');
      oneStream.forEach((l, i) => engine.handleMessage(0, String(i), encodeFrame(l.frame), WALL));
      engine.closeAll();
      const windows = out.points.filter((p) => p.measurement === MEASUREMENTS.window);
      expect(windows.length).toBe(Math.ceil((39 * 300 + 1) / 1000));
      expect(out.points.some((p) => p.measurement === MEASUREMENTS.samples)).toBe(false); // no GroupSamples sent
      const first = windows[0]!;
      // Independent recomputation from the frames of that window.
      const inWindow = oneStream.filter((l) => Number(l.frame.endUnixNanos / 1_000_000n) < first.timestampMillis + 1000);
      const counts = new Map<number, number>();
      let groups = 0;
      let sumCounts = 0;
      let sumMeasured = 0;
      for (const l of inWindow) {
        for (const e of l.frame.histogram) counts.set(e.bin, (counts.get(e.bin) ?? 0) + e.count); // bins < 1024 are the values
        groups += l.frame.groupsCounted;
        sumCounts += l.frame.sumCountsLoss;
        sumMeasured += l.frame.sumMeasuredLoss;
      }
      const dist = CategoricalDistribution.fromCounts(counts);
      expect(first.fields.loss_predicted).toBeCloseTo(expectedLoss(dist, 8), 10);
      expect(first.fields.workload_loss_predicted).toBeCloseTo(workloadLoss(dist, 8), 10);
      expect(first.fields.loss_counts).toBeCloseTo(sumCounts / groups, 12);
      expect(first.fields.loss_measured).toBeCloseTo(sumMeasured / groups, 12);
      expect(first.fields.groups).toBe(groups);
      expect(first.fields.launches).toBe(inWindow.length);
      expect(first.fields.binning_error_bound).toBe(0);
      const low = first.fields.loss_predicted_low as number;
      const high = first.fields.loss_predicted_high as number;
      expect(low).toBeLessThan(first.fields.loss_predicted as number);
      expect(high).toBeGreaterThan(first.fields.loss_predicted as number);
      // loss_counts agrees with loss_predicted within sampling error (lanes are i.i.d. here).
      expect(Math.abs((first.fields.loss_counts as number) - (first.fields.loss_predicted as number))).toBeLessThan(0.15);
      const sweep = out.points.filter((p) => p.measurement === MEASUREMENTS.sweep && p.timestampMillis === first.timestampMillis);
      expect(sweep.map((p) => p.tags.group_size)).toEqual(['1', '2', '4', '8', '16', '32']);
      expect(sweep[0]!.fields.loss_predicted).toBeCloseTo(1, 12);
      const distribution = JSON.parse(out.distributions.get(distributionKey('job0', 'k')) ?? '{}') as { schema: string; cumulative: { launches: number } };
      expect(distribution.schema).toBe('warpwatch.distribution/v1');
      expect(distribution.cumulative.launches).toBe(40);
    });

    it('turns GroupSamples frames into a warpwatch_samples point of the launch window, counted once', () => {
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions(), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      const oneStream = launches.filter((l) => l.key === 'job1/k').slice(0, 3);
      let offset = 0;
      for (const l of oneStream) {
        engine.handleMessage(0, String(offset++), encodeFrame(l.frame), WALL);
        const samples = encodeFrame(samplesFor(l.frame, offset));
        engine.handleMessage(0, String(offset++), samples, WALL);
        engine.handleMessage(0, String(offset++), samples, WALL); // a producer retry
      }
      expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(6);
      expect(outcomes.filter((o) => o === 'duplicate')).toHaveLength(3);
      engine.closeAll();
      const samplePoints = out.points.filter((p) => p.measurement === MEASUREMENTS.samples);
      const windowPoints = out.points.filter((p) => p.measurement === MEASUREMENTS.window);
      expect(samplePoints.map((p) => p.timestampMillis)).toEqual(windowPoints.map((p) => p.timestampMillis));
      expect(samplePoints.reduce((s, p) => s + (p.fields.groups as number), 0)).toBe(18);
      // Clocks were made with 10 ticks per iteration and 3 per diverging exit (+5 overhead).
      const withFit = samplePoints.filter((p) => p.fields.divergence_delta_ticks !== undefined);
      expect(withFit.length).toBeGreaterThan(0);
      for (const p of withFit) {
        expect(p.fields.iteration_ticks).toBeCloseTo(10, 6);
        expect(p.fields.divergence_delta_ticks).toBeCloseTo(3, 6);
        expect(p.fields.overhead_ticks).toBeCloseTo(5, 5);
      }
      const record = JSON.parse(out.distributions.get(distributionKey('job1', 'k')) ?? '{}') as { sampled: { groups: number } | null };
      expect(record.sampled?.groups).toBeGreaterThan(0);
    });

    it('never counts a good frame as rejected when closing windows fails after it was decoded: the window is quarantined, the frame recorded', () => {
      const out = collector();
      let thrown = 0;
      const outcomes: FrameOutcome[] = [];
      const quarantined: string[] = [];
      const failingOutputs = {
        ...out.outputs,
        writePoints: () => {
          thrown += 1;
          // A RangeError subclass that is not about the frame (ModelError extends RangeError too).
          throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'simulated failure while writing a closed window');
        },
        quarantine: (record: { kind: string; code: string }) => quarantined.push(`${record.kind} ${record.code}`),
      };
      const engine = createEstimatorEngine(testEngineOptions(), failingOutputs, { ...quietTelemetry, frame: (outcome) => outcomes.push(outcome) });
      const oneStream = launches.filter((l) => l.key === 'job0/k');
      oneStream.forEach((l, i) => engine.handleMessage(0, String(i), encodeFrame(l.frame), WALL));
      expect(thrown).toBeGreaterThan(0);
      expect(quarantined).toEqual(new Array(thrown).fill('window WW_ERR_ESTIMATOR_WINDOW_QUARANTINED'));
      expect(outcomes).toEqual(new Array(oneStream.length).fill('recorded'));
    });

    it('counts duplicated and malformed messages without changing the windows', () => {
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions(), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      const frame = encodeFrame(launches[0]!.frame);
      engine.handleMessage(0, '0', frame, WALL);
      engine.handleMessage(0, '1', frame, WALL);
      engine.handleMessage(0, '2', new Uint8Array([1, 2, 3]), WALL);
      expect(outcomes).toEqual(['recorded', 'duplicate', 'rejected']);
    });
  });

  describe('identity rules (contracts/stream-identity.ts)', () => {
    /** The bytes of `frame` with the kernel's `X` replaced by `byte` and the CRC fixed: what a producer other than ours could write. */
    function withKernelByte(frame: LaunchSummaryFrame, byte: number): Uint8Array {
      const bytes = encodeFrame({ ...frame, kernel: 'kXzz' });
      const at = bytes.indexOf(0x58, 16 + 58);
      bytes[at] = byte;
      new DataView(bytes.buffer, bytes.byteOffset).setUint32(12, crc32c(bytes.subarray(16)), true);
      return bytes;
    }

    it('rejects a frame whose kernel has a newline or a C1 control, and a record whose host or label header breaks the rules; writes nothing for them', () => {
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions(), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      const base = launches[0]!.frame;
      expect(() => decodeFrame(withKernelByte(base, 0x0a))).toThrow(new FrameError('WW_ERR_FRAME_INVALID', 'kernel must not contain control characters (U+000A at byte 2)'));
      engine.handleMessage(0, '0', withKernelByte(base, 0x0a), WALL);
      engine.handleMessage(0, '1', withKernelByte(base, 0x7f), WALL);
      const good = encodeFrame(base);
      expect(() => attributionFromHeaders({ 'ww-host': 'hostB\\' })).toThrow(StreamIdentityError);
      expect(() => attributionFromHeaders({ 'ww-label-pod': 'p\nzz' })).toThrow("Kafka header ww-label-pod must not contain control characters (U+000A at character 2), got 'p\\u000azz'");
      expect(() => attributionFromHeaders({ 'ww-label-9x': 'v' })).toThrow(StreamIdentityError);
      engine.handleMessage(0, '2', good, WALL, { 'ww-host': 'hostB\\' });
      engine.handleMessage(0, '3', good, WALL, { 'ww-host': 'node7', 'ww-label-pod': 'p\nzz' });
      engine.handleMessage(0, '4', good, WALL, { 'ww-host': 'node7', 'ww-label-pod': 'p\\q' });
      expect(outcomes).toEqual(['rejected', 'rejected', 'rejected', 'rejected', 'recorded']);
      engine.closeAll();
      const lines = out.points.map(toLineProtocol);
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.every((line) => line.includes(',host=node7,') && !line.includes('zz') && !line.includes('hostB'))).toBe(true);
    });
  });

  describe('checkpoint and restorePartition', () => {
    it('a run killed after a checkpoint and resumed from an older committed offset writes the same windows as an uninterrupted run', () => {
      const reference = collector();
      const uninterrupted = createEstimatorEngine(testEngineOptions(), reference.outputs, quietTelemetry);
      for (const m of withOffsets) uninterrupted.handleMessage(m.partition, m.offset, m.value, WALL);
      uninterrupted.closeAll();

      const crashed = collector();
      const first = createEstimatorEngine(testEngineOptions(), crashed.outputs, quietTelemetry);
      const store = new Map<string, string | null>();
      const committed = new Map<number, string>();
      const checkpointAll = (engine: typeof first): void => {
        for (const partition of engine.partitions()) {
          const result = engine.checkpoint(partition);
          if (result === undefined) continue;
          for (const record of result.records) store.set(`${partition}|${record.streamKey ?? ''}`, record.value);
          committed.set(partition, result.nextOffset);
        }
      };
      const cut = Math.floor(withOffsets.length * 0.45);
      const checkpointAt = Math.floor(withOffsets.length * 0.3);
      withOffsets.slice(0, cut).forEach((m, i) => {
        first.handleMessage(m.partition, m.offset, m.value, WALL);
        if (i === checkpointAt) checkpointAll(first);
      });
      // A checkpoint written, then the commit "lost" for partition 1 (crash between the two): resume earlier there.
      const resumeFrom = new Map(committed);
      resumeFrom.set(1, '0');
      const second = createEstimatorEngine(testEngineOptions(), crashed.outputs, quietTelemetry);
      for (const partition of [0, 1]) {
        const records = new Map<string, string>();
        let marker: string | undefined;
        for (const [key, value] of store) {
          const [p, streamKey] = [Number(key.slice(0, key.indexOf('|'))), key.slice(key.indexOf('|') + 1)];
          if (p !== partition || value === null) continue;
          if (streamKey === '') marker = value;
          else records.set(streamKey, value);
        }
        second.restorePartition(partition, records, marker, 0);
      }
      for (const m of withOffsets) {
        if (BigInt(m.offset) < BigInt(resumeFrom.get(m.partition) ?? '0')) continue;
        second.handleMessage(m.partition, m.offset, m.value, WALL);
      }
      second.closeAll();
      expect(lastWriteWins(crashed.points)).toEqual(lastWriteWins(reference.points));
    });
  });

  describe('frames from the future', () => {
    it('rejects a frame dated more than maxFutureSkewMillis ahead, without moving the watermark: the frames after it are recorded', () => {
      const oneStream = launches.filter((l) => l.key === launches[0]!.key);
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions({ window: { ...testEngineOptions().window, maxFutureSkewMillis: 300_000 } }), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      const wallOf = (l: (typeof oneStream)[number]): number => Number(l.frame.endUnixNanos / 1_000_000n) + 50; // the host clock, just after the launch ended
      let offset = 0;
      const [first, ...rest] = oneStream;
      engine.handleMessage(0, String(offset++), encodeFrame(first!.frame), wallOf(first!));
      // A valid frame of the same stream dated a year ahead (a host with a wrong clock).
      const yearAhead = { ...first!.frame, frameSequence: 999_999, startUnixNanos: first!.frame.startUnixNanos + 31_536_000_000_000_000n, endUnixNanos: first!.frame.endUnixNanos + 31_536_000_000_000_000n };
      expect(engine.handleMessage(0, String(offset++), encodeFrame(yearAhead), wallOf(first!))).toBe('future');
      // Just inside the skew: accepted.
      const inside = { ...first!.frame, frameSequence: 999_998, endUnixNanos: first!.frame.endUnixNanos + 299_000_000_000n };
      for (const l of rest) engine.handleMessage(0, String(offset++), encodeFrame(l.frame), wallOf(l));
      expect(outcomes.filter((o) => o === 'late')).toEqual([]);
      expect(outcomes.filter((o) => o === 'recorded')).toHaveLength(oneStream.length);
      expect(engine.handleMessage(0, String(offset++), encodeFrame(inside), wallOf(first!))).not.toBe('future');
      engine.closeAll();
      // No window dated next year was written.
      const latest = Math.max(...out.points.map((p) => p.timestampMillis));
      expect(latest).toBeLessThan(wallOf(oneStream[oneStream.length - 1]!) + 300_000);
    });
  });

  describe('one frame dated ahead of its stream (record timestamps bound the watermark)', () => {
    // A steady stream: 200 launches 50 ms apart (20/s), each read by the collector 10 ms after
    // it ended (the Kafka record timestamp) and handled 20 ms after. Launch 100 is dated 240 s
    // ahead (inside the 5 min future skew), read at the same moment as its neighbours.
    const steady = generateLaunches({ streams: 1, launchesPerStream: 200, launchIntervalMillis: 50, startMillis: 1_700_000_000_000, groups: 8, groupSize: 8, seed: 31 }).map((l) => l.frame);
    const OUTLIER = 100;
    const AHEAD_NANOS = 240_000_000_000n;
    const endMillisOf = (f: LaunchSummaryFrame): number => Number(f.endUnixNanos / 1_000_000n);
    const sentOf = (i: number): number => endMillisOf(steady[i]!) + 10;
    const frames = steady.map((f, i) => (i === OUTLIER ? { ...f, startUnixNanos: f.startUnixNanos + AHEAD_NANOS, endUnixNanos: f.endUnixNanos + AHEAD_NANOS } : f));
    /** Launches per window start, counted from the frames' own event times (1 s windows). */
    const expectedLaunches = (indices: readonly number[]): Map<number, number> => {
      const table = new Map<number, number>();
      for (const i of indices) {
        const start = Math.floor(endMillisOf(frames[i]!) / 1000) * 1000;
        table.set(start, (table.get(start) ?? 0) + 1);
      }
      return table;
    };
    const writtenLaunches = (points: readonly SeriesPoint[]): Map<number, number> => {
      const table = new Map<number, number>();
      for (const p of points) if (p.measurement === MEASUREMENTS.window) table.set(p.timestampMillis, Number(p.fields['launches']));
      return table;
    };

    it('records every frame of the steady stream and places the outlier in its own window when the stream gets there', () => {
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions({ window: { ...testEngineOptions().window, maxFutureSkewMillis: 300_000 } }), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      frames.forEach((f, i) => engine.handleMessage(0, String(i), encodeFrame(f), sentOf(i) + 10, undefined, sentOf(i)));
      expect(outcomes.filter((o) => o !== 'recorded')).toEqual([]);
      expect(outcomes).toHaveLength(200);
      // Every window the steady stream passed was written, exact; the outlier's is still open.
      const steadyIndices = frames.map((_, i) => i).filter((i) => i !== OUTLIER);
      const closedSoFar = writtenLaunches(out.points);
      const lastStart = Math.floor(endMillisOf(frames[199]!) / 1000) * 1000;
      expect(closedSoFar).toEqual(new Map([...expectedLaunches(steadyIndices)].filter(([start]) => start < lastStart)));
      // The stream goes quiet: idle close writes its last window but holds the outlier's (it lies
      // ahead of the stream and of the clock) ...
      const quietFrom = sentOf(199) + 10;
      engine.tick(quietFrom + 1_000, () => quietFrom + 1_000);
      expect(writtenLaunches(out.points)).toEqual(expectedLaunches(steadyIndices));
      // ... until processing time passes its end: then it is written with its one launch.
      const outlierStart = Math.floor(endMillisOf(frames[OUTLIER]!) / 1000) * 1000;
      engine.tick(outlierStart + 999, () => outlierStart + 999);
      expect(writtenLaunches(out.points).has(outlierStart)).toBe(false);
      engine.tick(outlierStart + 1_000, () => outlierStart + 1_000);
      expect(writtenLaunches(out.points)).toEqual(expectedLaunches(frames.map((_, i) => i)));
    });

    it('keeps the outlier out of the way when the stream pauses and resumes before reaching it', () => {
      const outcomes: FrameOutcome[] = [];
      const engine = createEstimatorEngine(testEngineOptions({ window: { ...testEngineOptions().window, maxFutureSkewMillis: 300_000 } }), collector().outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      // The first 101 frames (with the outlier), a pause of 5 s (idle close at 1 s), then the rest 5 s later.
      const pause = 5_000;
      frames.forEach((f, i) => {
        const shift = i > OUTLIER ? pause : 0;
        if (i === OUTLIER + 1) engine.tick(sentOf(OUTLIER) + 10 + 2_000, () => sentOf(OUTLIER) + 10 + 2_000);
        const moved = shift === 0 ? f : { ...f, startUnixNanos: f.startUnixNanos + BigInt(shift) * 1_000_000n, endUnixNanos: f.endUnixNanos + BigInt(shift) * 1_000_000n };
        engine.handleMessage(0, String(i), encodeFrame(moved), sentOf(i) + shift + 10, undefined, sentOf(i) + shift);
      });
      expect(outcomes.filter((o) => o !== 'recorded')).toEqual([]);
    });

    it('without record timestamps (handleObservation, replays of old tests) the watermark is the largest event time, as before', () => {
      const outcomes: FrameOutcome[] = [];
      const engine = createEstimatorEngine(testEngineOptions({ window: { ...testEngineOptions().window, maxFutureSkewMillis: 300_000 } }), collector().outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      frames.forEach((f, i) => engine.handleMessage(0, String(i), encodeFrame(f), sentOf(i) + 10));
      // The outlier moved the watermark: of the 99 steady frames after it, only the first of each
      // window is recorded (and its window closed at once); the others are late.
      const windowsAfter = expectedLaunches(frames.map((_, i) => i).filter((i) => i > OUTLIER)).size;
      expect(outcomes.filter((o) => o === 'late')).toHaveLength(99 - windowsAfter);
    });
  });

  describe('idle close while the estimator is behind (docs/estimator.md, Late data)', () => {
    it('closes a stream by idleness only when it recorded nothing in the idle time before the partition was known caught up, so no frame of a busy stream is late', () => {
      // One stream, a launch every 100 ms, each handled 3 s after it was produced (an estimator behind by 3 s).
      const launches = generateLaunches({ streams: 1, launchesPerStream: 30, launchIntervalMillis: 100, startMillis: 1_700_000_000_000, groups: 4, groupSize: 8, seed: 11 });
      const outcomes: FrameOutcome[] = [];
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions(), out.outputs, { ...quietTelemetry, frame: (o) => outcomes.push(o) });
      const endOf = (i: number): number => Number(launches[i]!.frame.endUnixNanos / 1_000_000n);
      let closedEarly = 0;
      launches.forEach((launch, i) => {
        const handledAt = endOf(i) + 3_000;
        engine.handleMessage(0, String(i), encodeFrame(launch.frame), handledAt, undefined, endOf(i));
        // 1.5 s of processing time later the stream has recorded nothing (the estimator was busy
        // elsewhere), and the partition was last known caught up as of just after this launch was
        // produced: the stream was not idle then, so nothing closes.
        closedEarly += engine.tick(handledAt + 1_500, () => endOf(i) + 50);
      });
      expect(closedEarly).toBe(0);
      // Caught up as of a time the idle-close time after its last record: the stream is idle, its windows close.
      const last = endOf(29) + 3_000;
      expect(engine.tick(last + 1_000, () => last + 1_000)).toBeGreaterThan(0);
      expect(outcomes.filter((o) => o !== 'recorded')).toEqual([]);
      const written = out.points.filter((p) => p.measurement === MEASUREMENTS.window).reduce((sum, p) => sum + Number(p.fields['launches']), 0);
      expect(written).toBe(30);
    });
  });

  describe('restorePartition with a corrupt checkpoint record', () => {
    it('starts that stream empty, counts it, and restores the other streams', () => {
      const first = createEstimatorEngine(testEngineOptions(), collector().outputs, quietTelemetry);
      const partition0 = withOffsets.filter((m) => m.partition === 0);
      for (const m of partition0) first.handleMessage(m.partition, m.offset, m.value, WALL);
      const snapshot = first.checkpoint(0)!;
      const streams = snapshot.records.filter((r) => r.streamKey !== undefined);
      expect(streams.length).toBeGreaterThanOrEqual(2);
      const marker = snapshot.records.find((r) => r.streamKey === undefined)!.value!;
      const records = new Map(streams.map((r) => [r.streamKey!, r.value!]));
      const [broken, ...intact] = [...records.keys()];
      records.set(broken!, '{"v":2,"truncated');
      const corrupt: string[] = [];
      const second = createEstimatorEngine(testEngineOptions(), collector().outputs, { ...quietTelemetry, checkpointCorrupt: (key) => corrupt.push(key) });
      expect(() => second.restorePartition(0, records, marker, WALL)).not.toThrow();
      expect(corrupt).toEqual([broken]);
      expect(second.liveStreams()).toBe(intact.length);
      // The broken stream's next frame (past the marker) starts it afresh; a corrupt marker is also survived.
      const third = createEstimatorEngine(testEngineOptions(), collector().outputs, { ...quietTelemetry, checkpointCorrupt: (key) => corrupt.push(key) });
      expect(() => third.restorePartition(0, new Map(), 'not json', WALL)).not.toThrow();
      expect(corrupt).toEqual([broken, 'partition 0 marker']);
      // JSON that is not an object (a marker overwritten with `null`) was a TypeError here once.
      for (const text of ['null', '5', '"x"', '[]', '{"v":1,"nextOffset":"1e3"}']) {
        expect(() => third.restorePartition(1, new Map(), text, WALL)).not.toThrow();
      }
      expect(corrupt).toEqual([broken, 'partition 0 marker', ...Array<string>(5).fill('partition 1 marker')]);
    });
  });

  describe('stream identity (contracts/stream-identity.ts)', () => {
    const base = launches.filter((l) => l.key === launches[0]!.key).map((l) => l.frame);
    const uuidA = '11111111-1111-1111-1111-111111111111';
    const uuidB = '22222222-2222-2222-2222-222222222222';

    it('keeps two devices of the same model and two group sizes of one kernel apart, tagged with device UUID, host and allowlisted labels', () => {
      const out = collector();
      const engine = createEstimatorEngine(testEngineOptions({ tagLabels: ['pod', 'host'] }), out.outputs, quietTelemetry);
      const variants = [
        { uuid: uuidA, groupSize: base[0]!.groupSize },
        { uuid: uuidB, groupSize: base[0]!.groupSize },
        { uuid: uuidA, groupSize: 4 },
      ];
      let offset = 0;
      const headers = { 'ww-host': 'node7', 'ww-source': 'socket', 'ww-label-pod': 'trainer-0', 'ww-label-host': 'label-value', 'ww-label-team': 'ml' };
      for (const frame of base) {
        for (const v of variants) {
          // The same lanes regrouped: groups of 4 instead of 8 (twice as many groups).
          const scale = frame.groupSize / v.groupSize;
          const bytes = encodeFrame({ ...frame, groupSize: v.groupSize, groupCount: frame.groupCount * scale, groupsCounted: frame.groupsCounted * scale, device: { ...frame.device, uuid: v.uuid } });
          expect(engine.handleMessage(0, String(offset++), bytes, WALL, headers)).toBe('recorded');
        }
      }
      engine.closeAll();
      expect(engine.liveStreams()).toBe(3);
      const windows = out.points.filter((p) => p.measurement === MEASUREMENTS.window);
      const seen = new Set(windows.map((p) => `${p.tags['device_uuid']}|${p.tags['n']}`));
      expect([...seen].sort()).toEqual([`${uuidA}|4`, `${uuidA}|${base[0]!.groupSize}`, `${uuidB}|${base[0]!.groupSize}`].sort());
      for (const point of windows) {
        expect(point.tags['host']).toBe('node7');
        expect(point.tags['device']).toBe(base[0]!.device.name);
        expect(point.tags['pod']).toBe('trainer-0');
        expect(point.tags['label_host']).toBe('label-value'); // a label named like a tag does not overwrite it
        expect(point.tags['team']).toBeUndefined(); // not in the allowlist
      }
      // One distributions record per stream, under its full key.
      const keys = [...out.distributions.keys()].sort();
      expect(keys).toEqual(
        variants.map((v) => streamKeyOf({ job: base[0]!.job, kernel: base[0]!.kernel, groupSize: v.groupSize, source: base[0]!.source, deviceUuid: v.uuid, host: 'node7' })).sort(),
      );
      for (const key of keys) expect(JSON.parse(out.distributions.get(key)!).cumulative.launches).toBe(base.length);
    });

    it('evicts the least recently recorded stream beyond maxStreams, after writing its open windows', () => {
      const out = collector();
      const evicted: string[] = [];
      const engine = createEstimatorEngine(testEngineOptions({ maxLiveStreams: 2 }), out.outputs, { ...quietTelemetry, streamEvicted: (key) => evicted.push(key) });
      const frame = base[0]!;
      const uuids = [uuidA, uuidB, '33333333-3333-3333-3333-333333333333'];
      uuids.forEach((uuid, i) => engine.handleMessage(0, String(i), encodeFrame({ ...frame, device: { ...frame.device, uuid } }), WALL + i));
      expect(engine.liveStreams()).toBe(2);
      expect(evicted).toEqual([streamKeyOf({ job: frame.job, kernel: frame.kernel, groupSize: frame.groupSize, source: frame.source, deviceUuid: uuidA, host: '' })]);
      // The evicted stream's open window was written before it was forgotten.
      expect(out.points.filter((p) => p.measurement === MEASUREMENTS.window && p.tags['device_uuid'] === uuidA)).toHaveLength(1);
      // And its tombstone is in the next checkpoint.
      const snapshot = engine.checkpoint(0)!;
      expect(snapshot.records.filter((r) => r.value === null).map((r) => r.streamKey)).toEqual(evicted);
    });

    it('under churn evicts in order of last record (a stream that records again moves back), never a released partition’s stream, and counts every stream once', () => {
      const out = collector();
      const evicted: string[] = [];
      const engine = createEstimatorEngine(testEngineOptions({ maxLiveStreams: 3 }), out.outputs, { ...quietTelemetry, streamEvicted: (key) => evicted.push(key) });
      const frame = base[0]!;
      const uuid = (i: number): string => `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
      const keyOf = (i: number): string => streamKeyOf({ job: frame.job, kernel: frame.kernel, groupSize: frame.groupSize, source: frame.source, deviceUuid: uuid(i), host: '' });
      let offset = 0;
      const send = (partition: number, i: number, launch: number): FrameOutcome =>
        engine.handleMessage(partition, String(offset++), encodeFrame({ ...frame, launchId: BigInt(launch), frameSequence: launch, device: { ...frame.device, uuid: uuid(i) } }), WALL + offset);
      // Streams 1, 2, 3 (partition 0, 1, 0); stream 1 records again, so 2 is now the least recent.
      expect([send(0, 1, 1), send(1, 2, 1), send(0, 3, 1), send(0, 1, 2)]).toEqual(['recorded', 'recorded', 'recorded', 'recorded']);
      send(1, 4, 1);
      expect(evicted).toEqual([keyOf(2)]);
      // A duplicate does not count as recording: stream 3 stays the least recent.
      expect(send(0, 3, 1)).toBe('duplicate');
      send(1, 5, 1);
      expect(evicted).toEqual([keyOf(2), keyOf(3)]);
      // Partition 1 (streams 4 and 5) is revoked: only stream 1 is left, so two new streams evict nothing.
      engine.releasePartition(1);
      expect(engine.liveStreams()).toBe(1);
      send(0, 6, 1);
      send(0, 7, 1);
      expect(evicted).toEqual([keyOf(2), keyOf(3)]);
      send(0, 8, 1);
      expect(evicted).toEqual([keyOf(2), keyOf(3), keyOf(1)]);
      expect(engine.liveStreams()).toBe(3);
      // Every evicted stream's window was written once, before it was forgotten.
      for (const i of [1, 2, 3]) expect(out.points.filter((p) => p.measurement === MEASUREMENTS.window && p.tags['device_uuid'] === uuid(i))).toHaveLength(1);
    });
  });

  describe('launch sampling', () => {
    it('weights a summary that stands for sampled-out launches as if those launches had been recorded', () => {
      const oneStream = launches.filter((l) => l.key === launches[0]!.key).map((l) => l.frame);
      const [a, b] = [oneStream[0]!, oneStream[1]!];
      // Recorded with launch sampling: the summary of B stands for B and two launches like it (groupCount ×3).
      const outWeighted = collector();
      const engineWeighted = createEstimatorEngine(testEngineOptions(), outWeighted.outputs, quietTelemetry);
      engineWeighted.handleMessage(0, '0', encodeFrame(a), WALL);
      engineWeighted.handleMessage(0, '1', encodeFrame({ ...b, groupCount: b.groupCount * 3 }), WALL);
      engineWeighted.closeAll();
      // The same launches all recorded: B three times (distinct launch ids, same end time).
      const outAll = collector();
      const engineAll = createEstimatorEngine(testEngineOptions(), outAll.outputs, quietTelemetry);
      engineAll.handleMessage(0, '0', encodeFrame(a), WALL);
      for (let copy = 0; copy < 3; copy++) engineAll.handleMessage(0, String(1 + copy), encodeFrame({ ...b, launchId: b.launchId + BigInt(1000 * (copy + 1)) }), WALL);
      engineAll.closeAll();
      const windowOf = (points: readonly SeriesPoint[]) => points.filter((p) => p.measurement === MEASUREMENTS.window);
      const [w1, w2] = [windowOf(outWeighted.points), windowOf(outAll.points)];
      expect(w1.length).toBe(w2.length);
      for (let i = 0; i < w1.length; i++) {
        for (const field of ['loss_predicted', 'loss_counts', 'loss_measured', 'workload_loss_measured', 'groups', 'units']) {
          const [x, y] = [w1[i]!.fields[field], w2[i]!.fields[field]];
          expect(typeof x, field).toBe('number');
          expect(x as number, field).toBeCloseTo(y as number, 9);
        }
      }
    });
  });
});
