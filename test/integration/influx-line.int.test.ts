// Line protocol against the real InfluxDB 1.8 of the local stack: every text the stream identity
// rules allow (contracts/stream-identity.ts) is stored unchanged as a tag value and as a string
// field; a point whose tag InfluxDB cannot store is never sent; a partial write (HTTP 400, the
// other points stored) is counted exactly; and /healthz says `influx-rejected` meanwhile.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityCharactersProblem } from '../../contracts/index.ts';
import { estimatorStatus } from '../../estimator/estimator-service.ts';
import { loadEstimatorConfig, startEstimator } from '../../estimator/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { createInfluxWriter, INFLUX_DROP_REASONS, Secret, type InfluxPoint, type InfluxWriter, type InfluxWriterStats } from '../../service/index.ts';
import { brokers, connectedProducer, createDatabase, createTopic, dropDatabase, influxQuery, influxUrl, uniqueId, waitUntil } from './estimator-support.ts';

const database = uniqueId('wwline');
beforeAll(() => createDatabase(database));
afterAll(() => dropDatabase(database).catch(() => undefined));

function writerOf(): InfluxWriter {
  return createInfluxWriter({
    url: influxUrl(),
    token: new Secret(''),
    org: '-',
    bucket: `${database}/autogen`,
    batchSize: 500,
    flushIntervalMillis: 0,
    maxBufferPoints: 10_000,
    retry: { initialMillis: 50, maxMillis: 200, jitter: 0.5 },
    requestTimeoutMillis: 10_000,
  });
}

function expectBalanced(stats: InfluxWriterStats): void {
  expect(stats.pointsDropped).toBe(INFLUX_DROP_REASONS.reduce((sum, reason) => sum + stats.dropped[reason], 0));
  expect(stats.pointsIn).toBe(stats.pointsWritten + stats.pointsDropped + stats.buffered);
}

/** Printable text rich in what line protocol escapes: backslash, comma, equals, quote, space, and non-ASCII. */
const printable = fc
  .array(
    fc.oneof(
      fc.constantFrom('\\', ',', '=', '"', ' ', "'", '/', '|', '#', 'a', 'Z', '0', 'é', 'ü', '€', '✓', '日', '𝄞', '\u00a0'),
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }),
    ),
    { minLength: 1, maxLength: 24 },
  )
  .map((parts) => parts.join(''))
  // The identity rule: no control character, no backslash before `,`, `=`, a space or the end.
  .filter((text) => identityCharactersProblem(text) === undefined);

describe('InfluxDB line protocol (real InfluxDB 1.8)', () => {
  it('stores every text the identity rules allow unchanged, as a tag value (SHOW TAG VALUES) and as a string field (SELECT)', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(printable, { minLength: 1, maxLength: 25 }), async (values) => {
        const measurement = `roundtrip_${run++}`;
        const writer = writerOf();
        writer.write(values.map((value, i): InfluxPoint => ({ measurement, tags: { v: value, host: value }, fields: { s: value, i }, timestampMillis: 1_700_000_000_000 + i })));
        await writer.flush();
        const stats = await writer.close(5_000);
        expect(stats).toMatchObject({ pointsIn: values.length, pointsWritten: values.length, pointsDropped: 0 });
        const tagValues = await influxQuery(database, `SHOW TAG VALUES FROM "${measurement}" WITH KEY = "v"`);
        expect((tagValues[0]?.values ?? []).map((row) => row[1]).sort()).toEqual([...values].sort());
        const rows = await influxQuery(database, `SELECT "i", "s", "v", "host" FROM "${measurement}"`);
        const columns = rows[0]?.columns ?? [];
        const got = (rows[0]?.values ?? []).map((row) => Object.fromEntries(columns.map((c, k) => [c, row[k]])));
        expect(got.map((row) => [row['i'], row['s'], row['v'], row['host']])).toEqual(values.map((value, i) => [i, value, value, value]));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it("one host 'hostB\\' among 102 points: 101 stored, 1 dropped as unwritable (not sent), /healthz degraded influx-rejected", async () => {
    const writer = writerOf();
    const points = Array.from({ length: 102 }, (_, i): InfluxPoint => ({
      measurement: 'hostb',
      tags: { stream: 'bs/k', host: i === 50 ? 'hostB\\' : 'hostA', n: '32' },
      fields: { i },
      timestampMillis: 1_700_000_000_000 + i,
    }));
    writer.write(points);
    await writer.flush();
    const stats = writer.stats();
    expect(stats).toMatchObject({ pointsIn: 102, pointsWritten: 101, pointsDropped: 1, dropped: { unwritable: 1, rejected: 0 }, buffered: 0 });
    expectBalanced(stats);
    const count = await influxQuery(database, 'SELECT count("i") FROM "hostb"');
    expect(count[0]?.values[0]?.[1]).toBe(101);
    expect(await influxQuery(database, 'SHOW MEASUREMENTS')).not.toContainEqual(expect.objectContaining({ values: expect.arrayContaining([['zz']]) }));
    expect(estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: stats })).toEqual({ status: 'degraded', reasons: ['influx-rejected'] });
    await writer.close(5_000);
  });

  it('a partial write (HTTP 400, some points refused, the others stored) is counted exactly and makes /healthz degraded influx-rejected', async () => {
    const writer = writerOf();
    // `f` is a float in this measurement; points with `f` as a string are refused by InfluxDB
    // (field type conflict) while the others of the same request are stored.
    writer.write([{ measurement: 'conflict', tags: { k: 'a' }, fields: { f: 1 }, timestampMillis: 1_700_000_000_000 }]);
    await writer.flush();
    expect(estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: writer.stats() })).toEqual({ status: 'ok', reasons: [] });
    writer.write(Array.from({ length: 10 }, (_, i): InfluxPoint => ({ measurement: 'conflict', tags: { k: 'a' }, fields: { f: i % 4 === 0 ? 'text' : i }, timestampMillis: 1_700_000_000_001 + i })));
    await expect(writer.flush()).rejects.toThrow(/HTTP 400: .*partial write.*; 3 of 10 points dropped \(InfluxDB refused them\), the others written/s);
    const stats = writer.stats();
    expect(stats).toMatchObject({ pointsIn: 11, pointsWritten: 8, pointsDropped: 3, dropped: { rejected: 3 }, buffered: 0 });
    expectBalanced(stats);
    const count = await influxQuery(database, 'SELECT count("f") FROM "conflict"');
    expect(count[0]?.values[0]?.[1]).toBe(8);
    expect(estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: stats }).reasons).toContain('influx-rejected');
    // A later request that works ends `influx-write`, not `influx-rejected` (the points are lost).
    writer.write([{ measurement: 'conflict', tags: { k: 'a' }, fields: { f: 99 }, timestampMillis: 1_700_000_000_100 }]);
    await writer.flush();
    expect(estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: writer.stats() })).toEqual({ status: 'degraded', reasons: ['influx-rejected'] });
    await writer.close(5_000);
  });

  it('a running estimator whose window points InfluxDB refuses says degraded influx-rejected in /healthz, with the refused points counted', async () => {
    const id = uniqueId('wwrej');
    const db = `${id}db`;
    await createDatabase(db);
    try {
      await createTopic(`${id}.frames`, 1);
      const env = {
        WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
        WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`,
        WARPWATCH_ALERTS_TOPIC: `${id}.alerts`,
        WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`,
        WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
        WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '500',
        WARPWATCH_WINDOW_MILLIS: '1000',
        // The sweep with every window, so that each refused window point has sweep points in its request.
        WARPWATCH_SWEEP_INTERVAL_MILLIS: '0',
        WARPWATCH_IDLE_CLOSE_MILLIS: '1000',
        WARPWATCH_BOOTSTRAP_REPLICATES: '8',
        WARPWATCH_QUANTILE_SAMPLES: '2000',
      };
      const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${id}-g`, influxUrl: influxUrl(), influxDatabase: db, metricsPort: '0' } });
      const logs: string[] = [];
      const estimator = await startEstimator(config, (line) => logs.push(line));
      try {
        const start = Math.floor((Date.now() - 30_000) / 1000) * 1000;
        // `loss_measured` already holds strings in this shard (the seed point's time is the
        // windows'): every window point the estimator writes (a float there) is refused by
        // InfluxDB, while its other measurements are stored.
        const seed = await fetch(`${influxUrl()}/write?db=${db}&precision=ms`, { method: 'POST', body: `${MEASUREMENTS.window},stream=seed/k loss_measured="text" ${start}` });
        expect(seed.status).toBe(204);
        const frames = generateLaunches({ streams: 1, launchesPerStream: 30, launchIntervalMillis: 100, startMillis: start, groups: 32, groupSize: 32, seed: 5 }).map((l) => l.frame);
        const producer = await connectedProducer();
        await producer.send({ topic: `${id}.frames`, messages: frames.map((frame) => ({ key: `${frame.job}/${frame.kernel}`, value: Buffer.from(encodeFrame(frame)) })) });
        await producer.disconnect();
        type Health = {
          status: string;
          reasons: string[];
          influx: { pointsIn: number; pointsWritten: number; pointsDropped: number; buffered: number; dropped: Record<string, number> };
          counters: { windowsClosed: number };
        };
        let health: Health | undefined;
        await waitUntil(
          async () => {
            health = (await fetch(`http://127.0.0.1:${estimator.metricsPort}/healthz`).then((r) => r.json())) as Health;
            return health.reasons.includes('influx-rejected') && health.counters.windowsClosed === 3 && health.influx.buffered === 0;
          },
          60_000,
          '/healthz to say influx-rejected',
        ).catch((error: unknown) => {
          throw new Error(`${String(error)}; last /healthz ${JSON.stringify(health)}; log:\n${logs.join('\n')}`);
        });
        expect(health?.status).toBe('degraded');
        const influx = health!.influx;
        // 30 launches 100 ms apart: three 1 s windows, one warpwatch_window point each, all refused.
        expect(influx.dropped['rejected']).toBe(3);
        expect(influx.pointsWritten).toBeGreaterThan(0); // the other measurements of the same requests
        expect(influx.pointsIn).toBe(influx.pointsWritten + influx.pointsDropped + influx.buffered);
        const windows = await influxQuery(db, `SELECT count("loss_measured") FROM "${MEASUREMENTS.window}" WHERE "stream" = 'job0/k'`);
        expect(windows).toEqual([]);
        const sweeps = await influxQuery(db, `SELECT count(*) FROM "${MEASUREMENTS.sweep}"`);
        expect(sweeps.length).toBe(1);
      } finally {
        await estimator.stop();
      }
    } finally {
      await dropDatabase(db).catch(() => undefined);
    }
  }, 120_000);
});
