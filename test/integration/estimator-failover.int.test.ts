// The estimator on real Kafka and InfluxDB: failover time with the default
// session/heartbeat settings, a frame dated a year ahead in the middle of a stream, and a
// corrupt record in the real checkpoint topic.
import { describe, expect, it } from 'vitest';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import { encodeFrame } from '../../protocol/index.ts';
import {
  cleanedUpAfterAll,
  connectedProducer,
  createDatabase,
  createFramesTopic,
  createTopic,
  defaultsEnv,
  estimatorEnv,
  produceLaunches,
  healthOf,
  influxQuery,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
  type EstimatorChild,
} from './estimator-support.ts';

const { children, databases } = cleanedUpAfterAll();

function start(env: Record<string, string>, instance: string): EstimatorChild {
  const child = spawnEstimator(env, instance);
  children.push(child);
  return child;
}

async function windowsPerStream(database: string): Promise<Map<string, number>> {
  const series = await influxQuery(database, `SELECT count(loss_counts) FROM "${MEASUREMENTS.window}" GROUP BY "stream"`);
  return new Map(series.map((s) => [s.tags?.['stream'] ?? '', Number(s.values[0]?.[1] ?? 0)]));
}

describe('warpwatch estimate on real servers: failover, future-dated frames, corrupt checkpoints', () => {
  it('serves a SIGKILLed instance\'s partitions again within 10 s with the default session and heartbeat', async () => {
    const id = uniqueId('wwfailover');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    await createTopic(`${id}.frames`, 2);
    const env = defaultsEnv(id, database, `${id}-g`);
    const a = start(env, 'a');
    await a.waitForLog(/assigned partitions \[0, 1\] of/, 60_000);
    const b = start(env, 'b');
    // The group rebalances: each instance holds one partition.
    await b.waitForLog(/assigned partitions \[\d\] of/, 60_000);
    await a.waitForLog(/assigned partitions \[\d\] of/, 60_000);
    const heldByA = Number(/assigned partitions \[(\d)\] of/.exec(a.log.filter((l) => /assigned partitions \[\d\] of/.test(l)).at(-1) ?? '')?.[1]);
    const killedAt = Date.now();
    a.process.kill('SIGKILL');
    await a.exited;
    await b.waitForLog(new RegExp(`partition ${heldByA} restored`), 30_000);
    const failoverMillis = Date.now() - killedAt;
    process.stderr.write(`[failover] partition ${heldByA} served by the survivor ${failoverMillis} ms after SIGKILL\n`);
    expect(failoverMillis).toBeLessThan(10_000);

    // And it is really served: frames of every stream (both partitions) become windows.
    const launches = generateLaunches({ streams: 6, launchesPerStream: 30, launchIntervalMillis: 100, startMillis: Date.now() - 60_000, groups: 16, groupSize: 8, seed: 77 });
    await produceLaunches(`${id}.frames`, launches);
    await waitUntil(async () => (await windowsPerStream(database)).size === 6, 60_000, 'windows of all 6 streams');
  }, 180_000);

  it('restores every partition when three instances run under one name (each checkpoint reader has a group of its own)', async () => {
    const id = uniqueId('wwtwins');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    await createFramesTopic(`${id}.frames`, 3);
    const env = estimatorEnv(id, database, `${id}-g`);
    // A checkpoint topic with records in it: one instance records every stream's windows and
    // stops cleanly (a last checkpoint).
    const first = start(env, 'first');
    await first.waitForLog(/assigned partitions \[0, 1, 2\] of/, 60_000);
    const launches = generateLaunches({ streams: 6, launchesPerStream: 10, launchIntervalMillis: 100, startMillis: Date.now() - 60_000, groups: 16, groupSize: 8, seed: 78 });
    await produceLaunches(`${id}.frames`, launches);
    await waitUntil(async () => (await windowsPerStream(database)).size === 6, 60_000, 'windows of all 6 streams');
    await stopChild(first, 'SIGTERM');

    // Three instances, one name: each holds one partition and must restore it. With one checkpoint
    // reader group per name, the checkpoint topic's partitions would be shared out among the three
    // readers, and an instance could wait a minute for a partition its reader was never given.
    const twins = [start(env, 'twin'), start(env, 'twin'), start(env, 'twin')];
    await waitUntil(
      async () => {
        const health = await Promise.all(twins.map((twin) => healthOf(twin).catch(() => undefined)));
        return health.every((h) => h?.status === 'ok' && h.partitions.length === 1);
      },
      40_000,
      'the three instances named "twin" to hold one restored partition each',
    ).catch(async (error: unknown) => {
      const health = await Promise.all(twins.map((twin) => healthOf(twin).then((h) => `${h.status} ${JSON.stringify(h.partitions)}`, (e: unknown) => String(e))));
      throw new Error(`${String(error)}: ${health.join('; ')}\n${twins.map((twin) => twin.log.join('\n')).join('\n')}`);
    });
    const held = (await Promise.all(twins.map((twin) => healthOf(twin)))).flatMap((h) => h.partitions).sort();
    expect(held).toEqual([0, 1, 2]);
    for (const twin of twins) expect(twin.log.join('\n')).not.toMatch(/restoring partition \d failed/);
  }, 180_000);

  it('keeps recording a stream after a frame dated a year ahead, and restores past a corrupt checkpoint record', async () => {
    const id = uniqueId('wwsilent');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    await createTopic(`${id}.frames`, 1);
    const groupId = `${id}-g`;
    const env = estimatorEnv(id, database, groupId);
    const base = Math.floor((Date.now() - 120_000) / 1000) * 1000; // whole seconds: 40 launches 100 ms apart fill 4 windows
    const launches = generateLaunches({ streams: 2, launchesPerStream: 40, launchIntervalMillis: 100, startMillis: base, groups: 16, groupSize: 8, seed: 5 });
    const [streamA, streamB] = [...new Set(launches.map((l) => l.key))];
    const ofStream = (key: string | undefined) => launches.filter((l) => l.key === key);
    // Stream A gets a valid frame dated a year ahead after its 5th launch.
    const firstA = ofStream(streamA)[0]!.frame;
    const year = 31_536_000_000_000_000n;
    const future = { ...firstA, frameSequence: 900_000, startUnixNanos: firstA.startUnixNanos + year, endUnixNanos: firstA.endUnixNanos + year };
    const messages = launches.flatMap((l, i) => [
      { key: l.key, value: Buffer.from(encodeFrame(l.frame)) },
      ...(l.key === streamA && i === 10 ? [{ key: l.key, value: Buffer.from(encodeFrame(future)) }] : []),
    ]);
    // A corrupt checkpoint record for stream B in the real checkpoint topic, before any estimator ran.
    const producer = await connectedProducer();
    await createTopic(`${id}.checkpoints`, 1);
    await producer.send({ topic: `${id}.checkpoints`, acks: -1, messages: [{ key: `${groupId}|${id}.frames|0|${streamB}`, value: '{"v":2,"identity":' }] });
    const estimator = start(env, 'one');
    await estimator.waitForLog(/partition 0 restored/, 60_000);
    await estimator.waitForLog(/WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT: checkpoint record /, 5_000);
    await producer.send({ topic: `${id}.frames`, acks: -1, messages });
    await producer.disconnect();
    await estimator.waitForLog(/WW_ERR_ESTIMATOR_FRAME_FROM_FUTURE: stream /, 30_000);
    // 40 launches 100 ms apart = 4 one-second windows per stream (the last closed by idleness).
    await waitUntil(async () => {
      const counts = await windowsPerStream(database);
      return (counts.get(streamA!) ?? 0) >= 4 && (counts.get(streamB!) ?? 0) >= 4;
    }, 60_000, '4 windows of each stream');
    const counts = await windowsPerStream(database);
    expect(counts.get(streamA!)).toBeGreaterThanOrEqual(4);
    expect(counts.get(streamB!)).toBeGreaterThanOrEqual(4);
    const launchesInWindows = await influxQuery(database, `SELECT sum(launches) FROM "${MEASUREMENTS.window}" GROUP BY "stream"`);
    for (const series of launchesInWindows) expect(Number(series.values[0]?.[1]), series.tags?.['stream']).toBe(40);
    // No window dated next year.
    const latest = await influxQuery(database, `SELECT last(loss_counts) FROM "${MEASUREMENTS.window}"`);
    expect(Date.parse(String(latest[0]?.values[0]?.[0]))).toBeLessThan(Date.now() + 300_000);
  }, 180_000);
});
