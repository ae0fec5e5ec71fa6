// The estimator's adapters against the real servers: influx-writer.ts (write,
// read back with InfluxQL, outage buffering with counted drops, non-retriable refusals) and
// kafka.ts (compacted topics created), plus /metrics and /healthz of a running service.
import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { createEstimatorKafka, createEstimatorInfluxWriter, EstimatorError, loadEstimatorConfig, startEstimator, type EstimatorInfluxOptions, type SeriesPoint } from '../../estimator/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { Secret } from '../../service/index.ts';
import { brokers, createDatabase, dropDatabase, influxQuery, influxUrl, kafkaClient, uniqueId, waitUntil } from './estimator-support.ts';

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
    // The checkpoint topic has as many partitions as the service creates the frames topic with.
    const offsets = await admin.fetchTopicOffsets(`${id}.checkpoints`);
    expect(offsets.length).toBe(config.kafka.partitions);
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
  it('says WW_ERR_ESTIMATOR_CHECKPOINT_MISSING for a partition with a committed offset but no checkpoint (a checkpoint topic recreated or its partition count changed), and consumes from that offset', async () => {
    const id = uniqueId('wwmissing');
    const env = { WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`, WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`, WARPWATCH_ALERTS_TOPIC: `${id}.alerts` };
    const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${id}-g`, metricsPort: 'off' } });
    const admin = kafkaClient().admin();
    await admin.connect();
    const lines: string[] = [];
    try {
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 2 }], waitForLeaders: true });
      const producer = kafkaClient().producer();
      await producer.connect();
      // Offsets 0..6 of partition 1, none of them a frame: each one consumed goes to the DLQ.
      await producer.send({ topic: `${id}.frames`, acks: -1, messages: Array.from({ length: 7 }, (_, i) => ({ value: `not a frame ${i}`, partition: 1 })) });
      await producer.disconnect();
      // What a group that had checkpointed and committed 5 on partition 1 leaves once its checkpoints are gone.
      await admin.setOffsets({ groupId: `${id}-g`, topic: `${id}.frames`, partitions: [{ partition: 1, offset: '5' }] });
      const dlqRecords = async (): Promise<number> => (await admin.fetchTopicOffsets(`${id}.dlq`)).reduce((sum, o) => sum + Number(o.high), 0);
      const estimator = await startEstimator(config, (line) => lines.push(line));
      try {
        await waitUntil(() => Promise.resolve(lines.some((line) => /partition 1 restored/.test(line)) && lines.some((line) => /partition 0 restored/.test(line))), 30_000, 'both partitions restored');
        // Consumed from the committed offset: offsets 5 and 6 reach the DLQ, 0..4 are not read again.
        await waitUntil(async () => (await dlqRecords()) >= 2, 30_000, 'two records in the DLQ');
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(await dlqRecords()).toBe(2);
      } finally {
        await estimator.stop();
      }
      const missing = lines.filter((line) => line.includes('WW_ERR_ESTIMATOR_CHECKPOINT_MISSING'));
      expect(missing).toHaveLength(1);
      expect(missing[0]).toContain(`partition 1 of ${id}.frames has offset 5 committed by group ${id}-g but no checkpoint in ${id}.checkpoints`);
    } finally {
      await admin.disconnect();
    }
  });

  it("writes a frames partition's checkpoint records to partition p mod the topic's count, and a read returns that partition's latest records only, compressed or not", async () => {
    const id = uniqueId('wwreader');
    // Three checkpoint partitions: frames partitions 0 and 3 share checkpoint partition 0.
    const env = { WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`, WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_KAFKA_PARTITIONS: '3' };
    const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${id}-g`, metricsPort: '0' } });
    const kafka = createEstimatorKafka({ ...config.kafka, instanceId: 'test' });
    const admin = kafkaClient().admin();
    await admin.connect();
    try {
      await kafka.ensureTopics();
      const prefix = (partition: number): string => `${id}-g|${id}.frames|${partition}`;
      const [p0, p1, p3] = [prefix(0), prefix(1), prefix(3)];
      await kafka.writeCheckpoint(0, [
        { key: `${p0}|job/k|n=32`, value: 'p0 stream' },
        { key: `${p0}|job/gone|n=32`, value: 'forgotten below' },
        { key: p0, value: '{"v":1,"nextOffset":"5"}' },
      ]);
      // Another consumer group and another frames topic share the topic: never returned.
      await kafka.writeCheckpoint(0, [{ key: `${id}-other|${id}.frames|0|job/k|n=32`, value: 'another group' }]);
      await kafka.writeCheckpoint(0, [{ key: `${id}-g|${id}.frames2|0|job/k|n=32`, value: 'another frames topic' }]);
      await kafka.writeCheckpoint(3, [
        { key: `${p3}|job/k|n=32`, value: 'p3 stream' },
        { key: p3, value: '{"v":1,"nextOffset":"7"}' },
      ]);
      await kafka.writeCheckpoint(1, [{ key: `${p1}|job/k|n=32`, value: 'p1 stream' }, { key: p1, value: '{"v":1,"nextOffset":"2"}' }]);
      await kafka.writeCheckpoint(0, [
        { key: `${p0}|job/gone|n=32`, value: null },
        { key: `${p0}|job/k|n=32`, value: 'p0 stream, later' },
      ]);
      // WARPWATCH_CHECKPOINT_COMPRESSION=gzip: read the same way.
      const gzip = createEstimatorKafka({ ...config.kafka, checkpointCompression: 'gzip', instanceId: 'test-gzip' });
      try {
        await gzip.writeCheckpoint(0, [{ key: `${p0}|job/z|n=32`, value: 'gzip stream' }]);
      } finally {
        await gzip.stop();
      }
      // The last record of partition 0 is not returned, yet the read must reach it to finish.
      await kafka.writeCheckpoint(0, [{ key: `${id}-other|${id}.frames|0`, value: 'another group, last' }]);

      // Where the records went: 0 and 3 to partition 0, 1 to partition 1, nothing to partition 2.
      const highs = Object.fromEntries((await admin.fetchTopicOffsets(`${id}.checkpoints`)).map((o) => [o.partition, o.high]));
      expect(highs).toEqual({ 0: '11', 1: '2', 2: '0' });

      const reader = await kafka.startCheckpointReader(`${id}-g|${id}.frames|`);
      try {
        const expected0 = new Map([
          [`${p0}|job/k|n=32`, 'p0 stream, later'],
          [p0, '{"v":1,"nextOffset":"5"}'],
          [`${p0}|job/z|n=32`, 'gzip stream'],
        ]);
        const expected3 = new Map([
          [`${p3}|job/k|n=32`, 'p3 stream'],
          [p3, '{"v":1,"nextOffset":"7"}'],
        ]);
        // Reads of one checkpoint partition at once, and of another, and of an empty one.
        const [read0, read3, read1, read2] = await Promise.all([reader.read(0, p0, 20_000), reader.read(3, p3, 20_000), reader.read(1, p1, 20_000), reader.read(2, prefix(2), 20_000)]);
        expect(read0).toEqual(expected0);
        expect(read3).toEqual(expected3);
        expect(read1).toEqual(new Map([[`${p1}|job/k|n=32`, 'p1 stream'], [p1, '{"v":1,"nextOffset":"2"}']]));
        expect(read2).toEqual(new Map());
        // A later read starts again from the first record and sees what was written since.
        await kafka.writeCheckpoint(3, [{ key: `${p3}|job/k|n=32`, value: 'p3 stream, later' }]);
        expect(await reader.read(3, p3, 20_000)).toEqual(new Map([...expected3, [`${p3}|job/k|n=32`, 'p3 stream, later']]));
        expect(await reader.read(0, p0, 20_000)).toEqual(expected0);
      } finally {
        await reader.stop();
      }
      await expect(reader.read(0, p0, 1_000)).rejects.toMatchObject({ code: 'WW_ERR_ESTIMATOR_CHECKPOINT_READ' });
    } finally {
      await admin.disconnect();
      await kafka.stop();
    }
  });
});
