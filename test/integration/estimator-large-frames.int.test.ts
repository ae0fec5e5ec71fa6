// The largest GroupSamples frames SPEC.md allows (MAX_GROUP_SAMPLES groups of 32 lanes, ~1.7 MB
// each), each in a record batch of its own between batches of small frames, through a real
// `warpwatch estimate` process with real Kafka and InfluxDB: every sampled group is counted in
// its window's warpwatch_samples point, the small frames' windows are exact, every offset is
// committed, and nothing is logged as an error.
import { describe, expect, it } from 'vitest';
import { FIELDS, MAX_GROUP_SIZE, MEASUREMENTS } from '../../contracts/index.ts';
import { encodeFrame, MAX_GROUP_SAMPLES } from '../../protocol/index.ts';
import { groupSamplesFromLanes, laneFrameIdentity } from '../../protocol/testing/launch-summaries.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import {
  addToTable,
  cleanedUpAfterAll,
  committedMessages,
  connectedProducer,
  createDatabase,
  createFramesTopic,
  estimatorEnv,
  influxQuery,
  spawnEstimator,
  uniqueId,
  waitUntil,
  writtenWindows,
  type WindowTable,
} from './estimator-support.ts';

const STREAMS = 3;
const LAUNCHES = 30; // 100 ms apart: 3 one-second windows per stream
const GROUPS = 16;
const START = 1_700_000_000_000;
const { children, databases } = cleanedUpAfterAll();

/** A GroupSamples frame of stream big/k with MAX_GROUP_SAMPLES clocked groups of 32 lanes, dated `endMillis`. */
function largestSamplesFrame(launch: number, endMillis: number): Buffer {
  const groups = Array.from({ length: MAX_GROUP_SAMPLES }, (_, g) => Array.from({ length: MAX_GROUP_SIZE }, (_, lane) => 1 + ((g * 7 + lane * 3 + launch) % 23)));
  const identity = laneFrameIdentity({ job: 'big', groupSize: MAX_GROUP_SIZE, startUnixNanos: BigInt(endMillis - 1) * 1_000_000n, endUnixNanos: BigInt(endMillis) * 1_000_000n });
  return Buffer.from(encodeFrame({ ...groupSamplesFromLanes(BigInt(launch), groups, true, identity), frameSequence: launch }));
}

describe('warpwatch estimate (the largest GroupSamples frames)', () => {
  it('reads them between small frames: every sampled group counted, every window written, every offset committed', async () => {
    const id = uniqueId('wwlarge');
    const db = `${id}db`;
    databases.push(db);
    await createDatabase(db);
    await createFramesTopic(`${id}.frames`, 1);
    const groupId = `${id}-g`;
    const estimator = spawnEstimator(estimatorEnv(id, db, groupId), 'l1');
    children.push(estimator);
    await estimator.waitForLog(/assigned partitions \[0\]/, 60_000);

    const launches = generateLaunches({ streams: STREAMS, launchesPerStream: LAUNCHES, launchIntervalMillis: 100, startMillis: START, groups: GROUPS, groupSize: 8, seed: 31 });
    const small = launches.map((l) => ({ key: l.key, partition: 0, value: Buffer.from(encodeFrame(l.frame)) }));
    // The windows the small frames make (launches and groups per stream and window start).
    const sent: WindowTable = new Map();
    for (const { frame } of launches) addToTable(sent, frame.job, Number(frame.endUnixNanos / 1_000_000n), frame.groupsCounted, 1_000);
    // One frame of the big stream per window; the third one's event time closes the first two.
    const large = [START + 100, START + 1_100, START + 2_100].map((endMillis, launch) => ({ key: 'big/k', partition: 0, value: largestSamplesFrame(launch, endMillis) }));
    for (const record of large) expect(record.value.length).toBeGreaterThan(1_600_000);
    const producer = await connectedProducer();
    const third = Math.floor(small.length / 3);
    try {
      // Each send is a record batch of its own: small, large, small, large, large, small.
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: small.slice(0, third) });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: [large[0]!] });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: small.slice(third, 2 * third) });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: [large[1]!] });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: [large[2]!] });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: small.slice(2 * third) });
    } finally {
      await producer.disconnect();
    }
    const total = small.length + large.length;

    const smallWindows = async (): Promise<number> => [...(await writtenWindows(db, 'job', MEASUREMENTS.window)).values()].reduce((sum, windows) => sum + windows.size, 0);
    const sampleRows = async () => (await influxQuery(db, `SELECT "${FIELDS.samples.groups}", "${FIELDS.samples.invalidGroups}" FROM "${MEASUREMENTS.samples}" WHERE "job" = 'big'`)).flatMap((series) => series.values.map((row) => [row[1], row[2]]));
    await waitUntil(
      async () => {
        if (estimator.process.exitCode !== null) throw new Error(`the estimator exited (${estimator.process.exitCode}):\n${estimator.log.join('\n')}`);
        // The big stream's third window closes at the idle close (1.5 s without frames).
        return (await smallWindows()) >= STREAMS * 3 && (await sampleRows()).length >= 3 && (await committedMessages(groupId, `${id}.frames`)) === total;
      },
      90_000,
      'all windows written and all offsets committed',
    );
    expect(estimator.process.exitCode, estimator.log.join('\n')).toBeNull();
    // What was sent: 3 one-second windows of 10 launches per stream; InfluxDB holds exactly that.
    expect(sent.size).toBe(STREAMS);
    for (const windows of sent.values()) expect([...windows.values()]).toEqual(Array.from({ length: 3 }, () => ({ launches: 10, groups: 10 * GROUPS })));
    expect(await writtenWindows(db, 'job', MEASUREMENTS.window)).toEqual(sent);
    expect(await sampleRows()).toEqual([
      [MAX_GROUP_SAMPLES, 0],
      [MAX_GROUP_SAMPLES, 0],
      [MAX_GROUP_SAMPLES, 0],
    ]);
    expect(estimator.log.join('\n')).not.toMatch(/WW_ERR_/);
  }, 150_000);
});
