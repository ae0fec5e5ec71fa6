// A frame that SPEC.md allows but whose sums overflow, and a frame that does not decode, among
// normal streams, through a real `warpwatch estimate` process with real Kafka and InfluxDB
// (docs/estimator.md, Overflow and Quarantine): the process keeps running and commits every
// offset, every window of the normal streams is written exactly, the poisoned window is written
// without the field its overflowed sum would give and is counted, and the undecodable frame is
// in the DLQ topic with its error code, partition and offset.
import { describe, expect, it } from 'vitest';
import { DLQ_HEADERS } from '../../contracts/index.ts';
import { encodeFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { syntheticLaunchSummary } from '../../protocol/testing/launch-summaries.ts';
import { FIELDS, MEASUREMENTS } from '../../contracts/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import {
  cleanedUpAfterAll,
  committedMessages,
  connectedProducer,
  createDatabase,
  createTopic,
  estimatorEnv,
  influxQuery,
  kafkaClient,
  spawnEstimator,
  uniqueId,
  waitUntil,
} from './estimator-support.ts';

const STREAMS = 4;
const LAUNCHES = 30; // 100 ms apart: 3 one-second windows per stream
const GROUPS = 32;
const START = 1_700_000_000_000;
const { children, databases } = cleanedUpAfterAll();

/** The poison: a LaunchSummary of one group whose measured-loss sum is Number.MAX_VALUE (finite, ≥ 0: valid). */
function poisonFrame(launch: number, endMillis: number): LaunchSummaryFrame {
  return syntheticLaunchSummary({ job: 'poison', deviceName: 'synthetic', launch, endMillis, sumMeasuredLoss: Number.MAX_VALUE });
}


/** Every record of `topic` from its beginning, read until `count` arrived or the time is up. */
async function readTopic(topic: string, count: number, timeoutMillis: number): Promise<{ key: string; value: Buffer; headers: Record<string, string> }[]> {
  const consumer = kafkaClient().consumer({ groupId: uniqueId('dlq-reader') });
  const records: { key: string; value: Buffer; headers: Record<string, string> }[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        const headers: Record<string, string> = {};
        for (const [name, value] of Object.entries(message.headers ?? {})) headers[name] = String(Array.isArray(value) ? value[0] : value);
        records.push({ key: message.key?.toString('utf8') ?? '', value: message.value ?? Buffer.alloc(0), headers });
        await Promise.resolve();
      },
    });
    await waitUntil(() => Promise.resolve(records.length >= count), timeoutMillis, `${count} record(s) on ${topic}`);
    return records;
  } finally {
    await consumer.disconnect();
  }
}

describe('warpwatch estimate (poison frames)', () => {
  it('keeps running on a valid frame whose sums overflow and on an undecodable one: normal windows exact, poison counted, garbage in the DLQ', async () => {
    const id = uniqueId('wwpoison');
    const db = `${id}db`;
    databases.push(db);
    await createDatabase(db);
    await createTopic(`${id}.frames`, 2);
    const groupId = `${id}-g`;
    const env = estimatorEnv(id, db, groupId, { WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_ALERT_WARMUP_WINDOWS: '2' });
    const estimator = spawnEstimator(env, 'p1');
    children.push(estimator);
    await estimator.waitForLog(/assigned partitions \[0, 1\]/, 60_000);

    const launches = generateLaunches({ streams: STREAMS, launchesPerStream: LAUNCHES, launchIntervalMillis: 100, startMillis: START, groups: GROUPS, groupSize: 8, seed: 24 });
    const normal = launches.map((l, i) => ({ key: l.key, partition: i % 2, value: Buffer.from(encodeFrame(l.frame)) }));
    const garbage = Buffer.from('not a frame: bytes a collector would never send');
    // The poison pair in the first window of the poisoned stream, then one frame per later window
    // (its watermark closes the poisoned window while the normal streams go on); all on partition 0
    // in the middle of the normal frames, the garbage on partition 1.
    const poison = [poisonFrame(0, START + 100), poisonFrame(1, START + 200), { ...poisonFrame(2, START + 1_100), sumMeasuredLoss: 1.5 }, { ...poisonFrame(3, START + 2_100), sumMeasuredLoss: 1.5 }].map((frame) => ({
      key: 'poison/k',
      partition: 0,
      value: Buffer.from(encodeFrame(frame)),
    }));
    const half = Math.floor(normal.length / 2);
    const producer = await connectedProducer();
    try {
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: normal.slice(0, half) });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: [...poison, { key: 'garbage', partition: 1, value: garbage }] });
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: normal.slice(half) });
    } finally {
      await producer.disconnect();
    }
    const total = normal.length + poison.length + 1;

    // Every window of every normal stream (3 each) and of the poisoned stream (3) is written, and every offset committed.
    const windowRows = async () =>
      (await influxQuery(db, `SELECT "${FIELDS.window.launches}", "${FIELDS.window.groups}", "${FIELDS.window.lossMeasured}", "${FIELDS.window.overflowedSums}" FROM "${MEASUREMENTS.window}" GROUP BY "job"`)).flatMap((series) =>
        series.values.map((row) => ({ job: series.tags?.['job'] ?? '', time: row[0], launches: row[1], groups: row[2], lossMeasured: row[3], overflowedSums: row[4] })),
      );
    await waitUntil(
      async () => {
        // A crashed estimator (the failure this guards against) fails at once, with its log.
        if (estimator.process.exitCode !== null) throw new Error(`the estimator exited (${estimator.process.exitCode}):\n${estimator.log.join('\n')}`);
        return (await windowRows()).length >= (STREAMS + 1) * 3 && (await committedMessages(groupId, `${id}.frames`)) === total;
      },
      90_000,
      'all windows written and all offsets committed',
    );

    expect(estimator.process.exitCode, estimator.log.join('\n')).toBeNull();
    const rows = await windowRows();
    const normalRows = rows.filter((row) => row.job !== 'poison');
    expect(normalRows).toHaveLength(STREAMS * 3);
    for (const row of normalRows) {
      expect([row.launches, row.groups, row.overflowedSums]).toEqual([10, 10 * GROUPS, null]);
      expect(typeof row.lossMeasured).toBe('number');
    }
    const poisonRows = rows.filter((row) => row.job === 'poison');
    expect(poisonRows.map((row) => [row.launches, row.groups, row.lossMeasured, row.overflowedSums])).toEqual([
      [2, 2, null, 1],
      [1, 1, 1.5, null],
      [1, 1, 1.5, null],
    ]);

    // Counted in /healthz and said once, with its code.
    const port = /metrics 127\.0\.0\.1:(\d+)/.exec(estimator.log.join('\n'))?.[1];
    const health = (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.json())) as { counters: Record<string, number> };
    expect(health.counters).toMatchObject({ framesIn: total, framesOut: total - 1, framesRejected: 1, framesQuarantined: 0, windowsOverflowed: 1, windowsQuarantined: 0, dlqRecords: 1 });
    expect(estimator.log.filter((line) => line.includes('WW_ERR_ESTIMATOR_WINDOW_OVERFLOW'))).toHaveLength(1);

    // The undecodable frame is in the DLQ with its code and where it came from.
    const [dlq] = await readTopic(`${id}.dlq`, 1, 30_000);
    expect(dlq?.headers).toMatchObject({
      [DLQ_HEADERS.errorCode]: 'WW_ERR_FRAME_BAD_MAGIC',
      [DLQ_HEADERS.originalTopic]: `${id}.frames`,
      [DLQ_HEADERS.originalPartition]: '1',
      [DLQ_HEADERS.quarantinedBy]: 'estimator',
      [DLQ_HEADERS.quarantinedKind]: 'frame',
      [DLQ_HEADERS.originalBytes]: String(garbage.byteLength),
    });
    expect(dlq?.value.equals(garbage)).toBe(true);
    expect(estimator.process.exitCode).toBeNull();
  }, 180_000);
});
