// The estimator's adapters against the real servers: influx-writer.ts (write,
// read back with InfluxQL, outage buffering with counted drops, non-retriable refusals) and
// kafka.ts (compacted topics created), plus /metrics and /healthz of a running service.
import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createEstimatorKafka, createEstimatorInfluxWriter, EstimatorError, loadEstimatorConfig, startEstimator, type EstimatorInfluxOptions, type SeriesPoint } from '../../estimator/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { Secret } from '../../service/index.ts';
import { brokers, createDatabase, dropDatabase, influxQuery, influxUrl, kafkaClient, uniqueId } from './estimator-support.ts';

const databases: string[] = [];
afterAll(async () => {
  await Promise.all(databases.map((db) => dropDatabase(db).catch(() => undefined)));
});

function writerOptions(database: string, overrides: Partial<EstimatorInfluxOptions> = {}): EstimatorInfluxOptions {
  return {
    url: influxUrl(),
    database,
    retentionPolicy: 'autogen',
    token: new Secret(''),
    org: '-',
    batchSize: 100,
    flushIntervalMillis: 50,
    maxBufferLines: 1_000,
    minRetryDelayMillis: 50,
    maxRetryDelayMillis: 200,
    requestTimeoutMillis: 2_000,
    ...overrides,
  };
}

function point(i: number): SeriesPoint {
  return {
    measurement: MEASUREMENTS.window,
    tags: { stream: 'job/k', job: 'job', kernel: 'k', device: 'dev with space', n: '32', source: 'cpu' },
    fields: { loss_predicted: 1 + i / 1000, groups: 10 },
    timestampMillis: 1_700_000_000_000 + i * 1000,
  };
}

describe('influx-writer (real InfluxDB 1.8)', () => {
  it('writes batches that InfluxQL reads back exactly', async () => {
    const db = uniqueId('wwinflux');
    databases.push(db);
    await createDatabase(db);
    const writer = createEstimatorInfluxWriter(writerOptions(db), () => {});
    writer.write(Array.from({ length: 250 }, (_, i) => point(i)));
    await writer.flush();
    expect(writer.stats()).toMatchObject({ pointsIn: 250, pointsWritten: 250, pointsDropped: 0, buffered: 0 });
    const series = await influxQuery(db, `SELECT count("loss_predicted"), max("loss_predicted"), sum("groups") FROM "${MEASUREMENTS.window}" WHERE device = 'dev with space'`);
    expect(series[0]?.values[0]?.slice(1)).toEqual([250, 1.249, 2500]);
    expect((await writer.close(1_000)).dropped.closed).toBe(0);
  });

  it('keeps lines in a bounded buffer while InfluxDB is unreachable, counts what it drops, and reports a retriable error', async () => {
    const errors: EstimatorError[] = [];
    // A port nobody listens on: the real client gets ECONNREFUSED.
    const writer = createEstimatorInfluxWriter(writerOptions('nothing', { url: 'http://127.0.0.1:9', maxBufferLines: 300 }), (error) => errors.push(error));
    writer.write(Array.from({ length: 200 }, (_, i) => point(i)));
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EstimatorError);
    expect((failure as EstimatorError).code).toBe('WW_ERR_ESTIMATOR_INFLUX_WRITE');
    expect((failure as EstimatorError).retriable).toBe(true);
    writer.write(Array.from({ length: 200 }, (_, i) => point(1000 + i)));
    expect(writer.stats()).toMatchObject({ pointsIn: 400, pointsWritten: 0, pointsDropped: 100, dropped: { overflow: 100 }, buffered: 300 });
    // Close gives the buffer one more attempt, then counts it as dropped: every point accounted for.
    expect(await writer.close(300)).toMatchObject({ pointsIn: 400, pointsWritten: 0, buffered: 0, dropped: { overflow: 100, rejected: 0, 'no-fields': 0, closed: 300 } });
  });

  it('drops and counts a batch InfluxDB refuses for good (missing database, HTTP 404)', async () => {
    const writer = createEstimatorInfluxWriter(writerOptions(uniqueId('wwmissing')), () => {});
    writer.write([point(1), point(2)]);
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect((failure as EstimatorError).retriable).toBe(false);
    expect(writer.stats()).toMatchObject({ pointsIn: 2, pointsDropped: 2, dropped: { rejected: 2 }, buffered: 0 });
    await writer.close(100);
  });
});

describe('kafka adapter and service (real Kafka)', () => {
  it('creates the distributions and checkpoint topics compacted, and serves /metrics and /healthz', async () => {
    const id = uniqueId('wwkafka');
    const db = `${id}db`;
    databases.push(db);
    await createDatabase(db);
    const env = {
      WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
      WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`,
      WARPWATCH_ALERTS_TOPIC: `${id}.alerts`,
      WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`,
      WARPWATCH_DLQ_TOPIC: `${id}.dlq`, // its own: the shared stack's DLQ topic may carry another test's settings (topic-config)
      WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
      WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '500',
    };
    const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${id}-g`, influxUrl: influxUrl(), influxDatabase: db, metricsPort: '0' } });
    const kafka = createEstimatorKafka({ ...config.kafka, instanceId: 'test' });
    await kafka.ensureTopics();
    await kafka.ensureTopics(); // idempotent
    await kafka.stop();

    const admin = kafkaClient().admin();
    await admin.connect();
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: [`${id}.distributions`, `${id}.checkpoints`, `${id}.alerts`].map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['cleanup.policy'] })),
    });
    const policies = Object.fromEntries(described.resources.map((r) => [r.resourceName, r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue]));
    expect(policies).toEqual({ [`${id}.distributions`]: 'compact', [`${id}.checkpoints`]: 'compact', [`${id}.alerts`]: 'delete' });
    const offsets = await admin.fetchTopicOffsets(`${id}.checkpoints`);
    expect(offsets.length).toBe(1);
    await admin.disconnect();

    const estimator = await startEstimator(config, () => {});
    try {
      const port = estimator.metricsPort;
      expect(port).toBeGreaterThan(0);
      const metricsText = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
      expect(metricsText).toContain('warpwatch_estimator_consumer_lag');
      const health = (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.json())) as { status: string; instance: string };
      expect(['ok', 'starting']).toContain(health.status);
      expect(health.instance).toBe(config.instanceId);
    } finally {
      await estimator.stop();
    }
  });
  it('mirrors only the checkpoint records of its own group and frames topic, compressed or not, and still catches up past the others', async () => {
    const id = uniqueId('wwmirror');
    const env = { WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`, WARPWATCH_DLQ_TOPIC: `${id}.dlq` };
    const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${id}-g`, metricsPort: '0' } });
    const kafka = createEstimatorKafka({ ...config.kafka, instanceId: 'test' });
    try {
      await kafka.ensureTopics();
      const own = `${id}-g|${id}.frames|0`;
      const records = [
        { key: `${own}|job/k|n=32`, value: 'own stream' },
        { key: `${id}-other|${id}.frames|0|job/k|n=32`, value: 'another group' },
        { key: `${id}-g|${id}.frames2|0|job/k|n=32`, value: 'another frames topic' },
        { key: `${own}|job/gone|n=32`, value: 'forgotten below' },
        { key: own, value: '{"v":1,"nextOffset":"5"}' },
        { key: `${own}|job/gone|n=32`, value: null },
        // The last record is not kept, yet the mirror must read past it to catch up.
        { key: `${id}-other|${id}.frames|1`, value: 'another group, last' },
      ];
      for (const record of records) await kafka.produce(`${id}.checkpoints`, [record]);
      // WARPWATCH_CHECKPOINT_COMPRESSION=gzip: the mirror reads gzip batches too.
      const gzip = createEstimatorKafka({ ...config.kafka, checkpointCompression: 'gzip', instanceId: 'test-gzip' });
      try {
        await gzip.produce(`${id}.checkpoints`, [{ key: `${own}|job/z|n=32`, value: 'gzip stream' }]);
      } finally {
        await gzip.stop();
      }
      const mirror = await kafka.startCheckpointMirror(`${id}-g|${id}.frames|`);
      try {
        await mirror.catchUp(20_000);
        expect(mirror.entries(id)).toEqual(
          new Map([
            [`${own}|job/k|n=32`, 'own stream'],
            [own, '{"v":1,"nextOffset":"5"}'],
            [`${own}|job/z|n=32`, 'gzip stream'],
          ]),
        );
      } finally {
        await mirror.stop();
      }
    } finally {
      await kafka.stop();
    }
  });
});
