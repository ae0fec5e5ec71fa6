// The dedupe memory's checkpoint records (docs/estimator.md, Checkpoints of the dedupe memory):
// a stream record carries the identities added since its base record, a full copy written
// before it whenever that delta passes DEDUPE_DELTA_LIMIT. Whatever prefix of a round's records
// reached the topic before a crash, a restore followed by consuming again from the committed
// offset writes the same windows as a run without the crash: no frame is taken for a duplicate
// that was not one (an identity newer than its stream record would do that), and the collector's
// re-sends stay duplicates.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../protocol/index.ts';
import { generateLaunches, lastWriteWins, testEngineOptions } from '../testing/test-support.ts';
import { DEDUPE_DELTA_LIMIT } from './checkpoint-codec.ts';
import { createEstimatorEngine, type CheckpointRecord, type EngineTelemetry, type FrameOutcome } from './estimator-engine.ts';
import type { SeriesPoint } from './series-points.ts';

const WALL = 1_800_000_000_000;
const CAPACITY = 1_024;

/** Two streams × 700 launches, 64-bit launchIds as a recorder makes them, and re-sends of recent frames (new offsets) as a collector makes them. */
function messagesOf(seed: number): Uint8Array[] {
  const launches = generateLaunches({ streams: 2, launchesPerStream: 700, launchIntervalMillis: 100, startMillis: 1_700_000_000_000, groups: 4, groupSize: 8, seed });
  let state = BigInt(seed) * 0x9e3779b97f4a7c15n + 1n;
  const next64 = (): bigint => {
    state = (state * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    return state;
  };
  const frames = launches.map((l) => encodeFrame({ ...l.frame, launchId: next64() }));
  const messages: Uint8Array[] = [];
  frames.forEach((frame, i) => {
    messages.push(frame);
    // Every 37th frame, a re-send of a frame up to 40 back (well within the memory's horizon).
    if (i % 37 === 36) messages.push(frames[i - 1 - (i % 40)]!);
  });
  return messages;
}


function engineWith(points: SeriesPoint[], outcomes?: FrameOutcome[]) {
  const telemetry: EngineTelemetry = { frame: (o) => outcomes?.push(o), windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} };
  const options = testEngineOptions();
  return createEstimatorEngine(
    { ...options, window: { ...options.window, dedupeCapacity: CAPACITY } },
    { writePoints: (p) => points.push(...p), publishDistribution: () => {}, publishAlert: () => {} },
    telemetry,
  );
}

/** The compacted topic's key of a record (the service's layout: marker, stream record, base record never collide). */
function keyOf(record: CheckpointRecord): string {
  return record.streamKey === undefined ? 'marker' : `${record.dedupeBase === true ? 'base' : 'stream'}\u0000${record.streamKey}`;
}

describe('dedupe checkpoints across a crash (property)', () => {
  const messages = messagesOf(11);

  it('writes base records once the delta passes the limit, and far fewer dedupe bytes than the whole memory every round', () => {
    const engine = engineWith([]);
    let bases = 0;
    let streamBytes = 0;
    let streamRecords = 0;
    messages.forEach((m, offset) => {
      engine.handleMessage(0, String(offset), m, WALL);
      if (offset % 40 !== 39) return;
      for (const record of engine.checkpoint(0)?.records ?? []) {
        if (record.dedupeBase === true) bases += 1;
        else if (record.streamKey !== undefined && record.value !== null) {
          streamBytes += record.value.length;
          streamRecords += 1;
        }
      }
    });
    // 2 streams × 700 launches: a base each time 256 more identities are held beyond the last one.
    expect(bases).toBeGreaterThanOrEqual(2 * Math.floor((700 - DEDUPE_DELTA_LIMIT) / DEDUPE_DELTA_LIMIT));
    // A full memory is 1,024 × 16 characters of base64; the stream records stay far below that.
    expect(streamBytes / streamRecords).toBeLessThan(DEDUPE_DELTA_LIMIT * 16 + 4_000);
  });

  it('a restore from any prefix of a round, consuming again from the committed offset, writes the windows of an uninterrupted run', () => {
    const reference: SeriesPoint[] = [];
    const referenceOutcomes: FrameOutcome[] = [];
    const uninterrupted = engineWith(reference, referenceOutcomes);
    messages.forEach((m, offset) => uninterrupted.handleMessage(0, String(offset), m, WALL));
    uninterrupted.closeAll();
    const expected = lastWriteWins(reference);
    expect(referenceOutcomes.filter((o) => o === 'duplicate').length).toBeGreaterThan(30);

    let restoresWithBases = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 15, max: 160 }),
        fc.double({ min: 0.35, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        fc.boolean(),
        (every, crashShare, prefixShare, afterBase, commitLost) => {
          // The crash comes in the first round at or after this share of the messages that writes a
          // base record (or after the last message). `afterBase`: the part of that round that
          // reached the topic ends right after a base record, before the stream record that refers to it.
          const crashFrom = Math.ceil((crashShare * messages.length) / every);
          const points: SeriesPoint[] = [];
          const first = engineWith(points);
          const topic = new Map<string, CheckpointRecord>();
          let committed = '0';
          let previousCommitted = '0';
          let round = 0;
          let crashed = false;
          for (let offset = 0; offset < messages.length && !crashed; offset += 1) {
            first.handleMessage(0, String(offset), messages[offset]!, WALL);
            if (offset % every !== every - 1) continue;
            round += 1;
            const snapshot = first.checkpoint(0)!;
            const baseAt = snapshot.records.flatMap((record, i) => (record.dedupeBase === true && record.value !== null ? [i] : []));
            crashed = round >= crashFrom && baseAt.length > 0;
            const cut = afterBase ? baseAt[Math.floor(prefixShare * baseAt.length)]! + 1 : Math.floor(prefixShare * snapshot.records.length);
            const written = crashed ? cut : snapshot.records.length;
            for (const record of snapshot.records.slice(0, written)) topic.set(keyOf(record), record);
            if (written === snapshot.records.length) {
              previousCommitted = committed;
              committed = snapshot.nextOffset;
            }
          }
          // A commit lost after its checkpoint was written: consume again from the one before.
          const resumeFrom = commitLost ? previousCommitted : committed;
          const records = new Map<string, string>();
          const bases = new Map<string, string>();
          let marker: string | undefined;
          for (const record of topic.values()) {
            if (record.value === null) continue;
            if (record.streamKey === undefined) marker = record.value;
            else (record.dedupeBase === true ? bases : records).set(record.streamKey, record.value);
          }
          if (bases.size > 0) restoresWithBases += 1;
          const second = engineWith(points);
          second.restorePartition(0, records, marker, WALL, bases);
          for (let offset = Number(resumeFrom); offset < messages.length; offset += 1) second.handleMessage(0, String(offset), messages[offset]!, WALL);
          second.closeAll();
          expect(lastWriteWins(points)).toEqual(expected);
        },
      ),
      { numRuns: 60, seed: 27 },
    );
    // Most restores had base records to use (not only the records' own identities).
    expect(restoresWithBases).toBeGreaterThan(30);
  });
});
