// The dedupe memory across a restore, through the real service (docs/estimator.md, Checkpoints
// of the dedupe memory): a stream of more than 256 frames has its older identities in a dedupe
// base record (key `…|0#d|<stream>`) and only the newer ones in its stream record. After a
// SIGKILL the next instance restores both from the checkpoint topic, so frames a collector sends
// again (new offsets, the same identities) that only the base record remembers are still
// duplicates: the window counts every launch once. Real `warpwatch estimate` processes, real
// Kafka and InfluxDB.
import { describe, expect, it } from 'vitest';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import {
  checkpointTopicRecords,
  cleanedUpAfterAll,
  createDatabase,
  createFramesTopic,
  estimatorEnv,
  produceLaunches,
  settledWindowsOf,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
} from './estimator-support.ts';

const WINDOW_MILLIS = 600_000;
const { children, databases } = cleanedUpAfterAll();

describe('warpwatch estimate: the dedupe memory restored from its base record (real Kafka and InfluxDB)', () => {
  it('counts frames sent again after a SIGKILL and restore as duplicates, also those only the base record remembers', async () => {
    const id = uniqueId('wwdedupe');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    const framesTopic = `${id}.frames`;
    await createFramesTopic(framesTopic, 1);
    const groupId = `${id}-g`;
    const env = estimatorEnv(id, database, groupId, { WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS), WARPWATCH_IDLE_CLOSE_MILLIS: '10000' });
    const checkpointTopic = env['WARPWATCH_CHECKPOINT_TOPIC'] as string;
    const prefix = `${groupId}|${framesTopic}|0`;

    // 600 launches of one stream, 100 ms apart, in one window that lies in the past (it closes by idleness).
    const windowStart = Math.floor((Date.now() - 3 * WINDOW_MILLIS) / WINDOW_MILLIS) * WINDOW_MILLIS;
    const launches = generateLaunches({ streams: 1, launchesPerStream: 600, launchIntervalMillis: 100, startMillis: windowStart + 1_000, groups: 16, groupSize: 8, seed: 83 });

    const first = spawnEstimator(env, 'first');
    children.push(first);
    await first.waitForLog(/partition 0 restored/, 60_000);
    await produceLaunches(framesTopic, launches.slice(0, 400));
    // Checkpointed through offset 400, with a base record: its stream record then holds at most
    // the 256 newest identities, the older ones only the base record.
    let base: { total: number } | undefined;
    let record: { dedupe: { base: number; total: number; size: number } } | undefined;
    await waitUntil(
      async () => {
        const records = await checkpointTopicRecords(checkpointTopic);
        const marker = records.get(prefix);
        const baseText = [...records].find(([key, value]) => key.startsWith(`${prefix}#d|`) && typeof value === 'string')?.[1];
        const streamText = [...records].find(([key, value]) => key.startsWith(`${prefix}|`) && typeof value === 'string')?.[1];
        base = typeof baseText === 'string' ? (JSON.parse(baseText) as { total: number }) : undefined;
        record = typeof streamText === 'string' ? (JSON.parse(streamText) as typeof record) : undefined;
        return typeof marker === 'string' && (JSON.parse(marker) as { nextOffset: string }).nextOffset === '400' && base !== undefined;
      },
      30_000,
      'a checkpoint at offset 400 with a dedupe base record',
    );
    expect(record?.dedupe).toMatchObject({ total: 400, size: 400 });
    expect(record!.dedupe.base).toBeGreaterThan(256);
    expect(record!.dedupe.base).toBe(base!.total);
    await stopChild(first, 'SIGKILL');

    const second = spawnEstimator(env, 'second');
    children.push(second);
    await second.waitForLog(/partition 0 restored \(1 streams\)/, 60_000);
    // The collector sends launches 100..399 again (a replay after its own crash), then the rest.
    await produceLaunches(framesTopic, launches.slice(100, 400));
    await produceLaunches(framesTopic, launches.slice(400));
    const windows = await settledWindowsOf(database, 'job0');
    expect(windows).toEqual([[windowStart, { launches: 600, groups: 600 * 16 }]]);
  }, 240_000);
});
