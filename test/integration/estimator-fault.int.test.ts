// Fault tolerance of `warpwatch estimate` against real Kafka and InfluxDB:
// SIGKILL mid-stream and restart; two instances in one group with one of them killed.
// In both cases the windows in InfluxDB must equal those of an uninterrupted run on the
// same input (same frames, same partitions), field by field.
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../protocol/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import {
  cleanedUpAfterAll,
  committedMessages,
  connectedProducer,
  createDatabase,
  createTopic,
  estimatorEnv,
  influxQuery,
  measurementRows,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
  type EstimatorChild,
} from './estimator-support.ts';

const STREAMS = 8;
const LAUNCHES = 100;
const WINDOWS = STREAMS * 10; // 100 launches 100 ms apart per stream = 10 one-second windows
const { children, databases } = cleanedUpAfterAll();

async function windowCount(database: string): Promise<number> {
  const series = await influxQuery(database, `SELECT count(loss_counts) FROM "${MEASUREMENTS.window}"`);
  return Number(series[0]?.values[0]?.[1] ?? 0);
}


function start(env: Record<string, string>, instance: string): EstimatorChild {
  const child = spawnEstimator(env, instance);
  children.push(child);
  return child;
}

describe('warpwatch estimate (fault tolerance)', () => {
  it('after SIGKILL and restart, and after losing one of two instances, writes the same windows as an uninterrupted run', async () => {
    const id = uniqueId('wwfault');
    const [dbA, dbB, dbC] = [`${id}a`, `${id}b`, `${id}c`];
    databases.push(dbA, dbB, dbC);
    for (const db of databases.slice(-3)) await createDatabase(db);
    const idC = `${id}-two`;
    await createTopic(`${id}.frames`, 4);
    await createTopic(`${idC}.frames`, 4);

    const launches = generateLaunches({ streams: STREAMS, launchesPerStream: LAUNCHES, launchIntervalMillis: 100, startMillis: 1_700_000_000_000, groups: 32, groupSize: 8, seed: 2024 });
    const messages = launches.map((l) => ({ key: l.key, value: Buffer.from(encodeFrame(l.frame)) }));

    const envB = estimatorEnv(id, dbB, `${id}-b`);
    const envC = estimatorEnv(idC, dbC, `${id}-c`);
    const b1 = start(envB, 'b1');
    const c1 = start(envC, 'c1');
    const c2 = start(envC, 'c2');
    await Promise.all([b1, c1, c2].map((child) => child.waitForLog(/assigned partitions \[/, 60_000)));

    const producer = await connectedProducer();
    const chunk = 50;
    // The input arrives as from a live job, a chunk per INPUT_INTERVAL_MILLIS: a rate, not a
    // wait. (A stream idle longer than WARPWATCH_IDLE_CLOSE_MILLIS in a caught-up partition has
    // its window closed early, which the uninterrupted reference run never does, so the feed
    // must not stall while the test waits.)
    let sent = 0;
    const feeding = (async () => {
      for (let i = 0; i < messages.length; i += chunk) {
        const part = messages.slice(i, i + chunk);
        await producer.send({ topic: `${id}.frames`, acks: -1, messages: part });
        await producer.send({ topic: `${idC}.frames`, acks: -1, messages: part });
        sent = i + part.length;
        if (sent < messages.length) await new Promise((resolve) => setTimeout(resolve, INPUT_INTERVAL_MILLIS));
      }
    })();
    // Mid-stream: both victims have processed and checkpointed part of the input (committed
    // offsets: the estimator checkpoints before it commits) and closed windows were written.
    await waitUntil(
      async () =>
        sent >= messages.length / 2 &&
        (await committedMessages(`${id}-b`, `${id}.frames`)) >= messages.length / 4 &&
        (await committedMessages(`${id}-c`, `${idC}.frames`)) >= messages.length / 4 &&
        (await windowCount(dbB)) > 0,
      90_000,
      'half the input sent, a quarter committed by both groups and a window in ' + dbB,
    );
    b1.process.kill('SIGKILL');
    c1.process.kill('SIGKILL');
    await Promise.all([b1.exited, c1.exited]);
    const killedAt = await windowCount(dbB);
    const sentAtKill = sent;
    start(envB, 'b2');
    await feeding;
    expect(sentAtKill).toBeLessThan(messages.length);
    await producer.disconnect();
    expect(killedAt).toBeGreaterThan(0);
    expect(killedAt).toBeLessThan(WINDOWS);

    await waitUntil(async () => (await windowCount(dbB)) >= WINDOWS && (await windowCount(dbC)) >= WINDOWS, 90_000, `${WINDOWS} windows in ${dbB} and ${dbC}`);
    // The survivor took over all partitions of the killed instance.
    await c2.waitForLog(/assigned partitions \[0, 1, 2, 3\]/, 1_000);

    const reference = start(estimatorEnv(id, dbA, `${id}-a`), 'a');
    await waitUntil(async () => (await windowCount(dbA)) >= WINDOWS, 60_000, `${WINDOWS} windows in ${dbA}`);
    // The reference has processed and checkpointed every message (its writes precede its commits); then stop everybody cleanly.
    await waitUntil(async () => (await committedMessages(`${id}-a`, `${id}.frames`)) >= messages.length, 60_000, `group ${id}-a to commit all ${messages.length} messages`);
    await Promise.all(children.map((child) => stopChild(child)));

    for (const measurement of [MEASUREMENTS_WINDOW, MEASUREMENTS.sweep, MEASUREMENTS.histogram]) {
      const rowsA = await measurementRows(dbA, measurement);
      expect(rowsA.length).toBeGreaterThanOrEqual(measurement === MEASUREMENTS_WINDOW ? WINDOWS : 1);
      expect(await measurementRows(dbB, measurement)).toEqual(rowsA);
      expect(await measurementRows(dbC, measurement)).toEqual(rowsA);
    }
    expect(reference.log.join('\n')).not.toMatch(/checkpoint postponed/);
  });
});

const MEASUREMENTS_WINDOW = MEASUREMENTS.window;
const INPUT_INTERVAL_MILLIS = 400;
