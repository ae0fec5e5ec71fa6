// An earlier owner's checkpoint write that lands late (docs/estimator.md, Fault tolerance): a
// member that lost its partition can have a checkpoint request in flight, and it can reach the
// checkpoint topic after the new owner's own checkpoint and commit. The topic then holds the older
// stream records and marker, while the group's committed offset is the newer one. The next owner
// must consume again from the marker: from the committed offset, the frames in between would be
// missing from its windows. Real `warpwatch estimate` processes, real Kafka and InfluxDB.
import { describe, expect, it } from 'vitest';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import {
  cleanedUpAfterAll,
  connectedProducer,
  createDatabase,
  createFramesTopic,
  checkpointTopicRecords,
  estimatorEnv,
  produceLaunches,
  settledWindowsOf,
  kafkaClient,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
} from './estimator-support.ts';

const WINDOW_MILLIS = 60_000;
const { children, databases } = cleanedUpAfterAll();

/** The marker's nextOffset for partition 0 of the frames topic, from the checkpoint records. */
function markerOffset(records: Map<string, string | null>, markerKey: string): number | undefined {
  const text = records.get(markerKey);
  return typeof text === 'string' ? Number((JSON.parse(text) as { nextOffset: string }).nextOffset) : undefined;
}

describe('warpwatch estimate after a late checkpoint write of an earlier owner (real Kafka and InfluxDB)', () => {
  it('consumes again from the checkpoint marker when it is before the committed offset: the window holds every launch', async () => {
    const id = uniqueId('wwstale');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    const framesTopic = `${id}.frames`;
    await createFramesTopic(framesTopic, 1);
    const groupId = `${id}-g`;
    const env = estimatorEnv(id, database, groupId, {
      WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS),
      WARPWATCH_IDLE_CLOSE_MILLIS: '10000',
      WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '300',
    });
    const checkpointTopic = env['WARPWATCH_CHECKPOINT_TOPIC'] as string;
    const markerKey = `${groupId}|${framesTopic}|0`;

    // 40 launches of one stream, all in one window that lies in the past (so it closes by idleness).
    const windowStart = Math.floor((Date.now() - 3 * WINDOW_MILLIS) / WINDOW_MILLIS) * WINDOW_MILLIS;
    const launches = generateLaunches({ streams: 1, launchesPerStream: 40, launchIntervalMillis: 100, startMillis: windowStart + 1_000, groups: 16, groupSize: 8, seed: 79 });

    const first = spawnEstimator(env, 'first');
    children.push(first);
    await first.waitForLog(/partition 0 restored/, 60_000);
    await produceLaunches(framesTopic, launches.slice(0, 20));
    // The first owner's checkpoint after 20 frames: what a late write will bring back.
    let early = new Map<string, string | null>();
    await waitUntil(
      async () => {
        early = await checkpointTopicRecords(checkpointTopic);
        return markerOffset(early, markerKey) === 20;
      },
      30_000,
      'a checkpoint at offset 20',
    );
    await produceLaunches(framesTopic, launches.slice(20));
    await waitUntil(async () => markerOffset(await checkpointTopicRecords(checkpointTopic), markerKey) === 40, 30_000, 'a checkpoint at offset 40');
    // Its offset is committed too (checkpoint, then commit): the broker says 40.
    const admin = kafkaClient().admin();
    await admin.connect();
    await waitUntil(
      async () => (await admin.fetchOffsets({ groupId, topics: [framesTopic] }))[0]?.partitions.find((p) => p.partition === 0)?.offset === '40',
      30_000,
      'offset 40 committed',
    );
    await admin.disconnect();
    // The owner dies before the window closes (idle close 10 s), and its earlier checkpoint
    // lands after the later one, as a late request would.
    await stopChild(first, 'SIGKILL');
    const producer = await connectedProducer();
    await producer.send({
      topic: checkpointTopic,
      acks: -1,
      messages: [...early].filter(([key]) => key.startsWith(`${groupId}|${framesTopic}|0`)).map(([key, value]) => ({ key, value, partition: 0 })),
    });
    await producer.disconnect();
    expect(markerOffset(await checkpointTopicRecords(checkpointTopic), markerKey)).toBe(20);

    const second = spawnEstimator(env, 'second');
    children.push(second);
    await second.waitForLog(/partition 0 restored/, 60_000);
    const windows = await settledWindowsOf(database, 'job0');
    expect(second.log.join('\n')).toMatch(/before the committed offset 40 .*consuming again from 20/);
    expect(windows).toEqual([[windowStart, { launches: 40, groups: 40 * 16 }]]);
  }, 240_000);
});
