// Round trip through the real servers brought up by global-setup.ts (deploy/local):
// Kafka with kafkajs, InfluxDB 1.8 with the v2 write API of @influxdata/influxdb-client
// read back with InfluxQL.
import { randomUUID } from 'node:crypto';
import { InfluxDB, Point } from '@influxdata/influxdb-client';
import { Kafka, Partitioners, logLevel, type EachMessagePayload } from 'kafkajs';
import { describe, expect, inject, it } from 'vitest';
import { requiredEnv } from './stack-env.ts';


describe('local stack', () => {
  it('exports the stack addresses to test workers through process.env and provide()', () => {
    expect(requiredEnv('WARPWATCH_KAFKA_BROKERS')).toBe(inject('warpwatchKafkaBrokers'));
    expect(requiredEnv('WARPWATCH_INFLUX_URL')).toBe(inject('warpwatchInfluxUrl'));
    expect(requiredEnv('WARPWATCH_INFLUX_DATABASE')).toBe(inject('warpwatchInfluxDatabase'));
  });

  describe('kafka', () => {
    it('delivers a produced message with key and headers to a consumer group', async () => {
      const kafka = new Kafka({ clientId: 'warpwatch-stack-it', brokers: requiredEnv('WARPWATCH_KAFKA_BROKERS').split(','), logLevel: logLevel.WARN });
      const topic = `warpwatch.it.stack-${randomUUID()}`;
      const admin = kafka.admin();
      const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
      const consumer = kafka.consumer({ groupId: `warpwatch-stack-it-${randomUUID()}` });
      try {
        await admin.connect();
        await admin.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 1 }], waitForLeaders: true });
        const value = `payload ${randomUUID()}`;
        await producer.connect();
        const [record] = await producer.send({ topic, messages: [{ key: 'job-1/kernel-a', value, headers: { 'ww-source': 'stdin' } }] });
        expect(record?.errorCode).toBe(0);

        await consumer.connect();
        await consumer.subscribe({ topic, fromBeginning: true });
        const received = new Promise<EachMessagePayload>((resolveMessage, rejectMessage) => {
          consumer.run({ eachMessage: async (payload) => resolveMessage(payload) }).catch(rejectMessage);
        });
        const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no message within 60 s')), 60_000).unref());
        const payload = await Promise.race([received, timeout]);

        expect(payload.topic).toBe(topic);
        expect(payload.message.key?.toString()).toBe('job-1/kernel-a');
        expect(payload.message.value?.toString()).toBe(value);
        expect(payload.message.headers?.['ww-source']?.toString()).toBe('stdin');
        expect(payload.partition).toBe(record?.partition);
      } finally {
        await consumer.disconnect();
        await producer.disconnect();
        await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
        await admin.disconnect();
      }
    });
  });

  describe('influxdb', () => {
    it('answers /health as InfluxDB 1.8', async () => {
      const response = await fetch(`${requiredEnv('WARPWATCH_INFLUX_URL')}/health`);
      const body = (await response.json()) as { status: string; version: string };
      expect(response.status).toBe(200);
      expect(body.status).toBe('pass');
      expect(body.version).toMatch(/^1\.8\./);
    });

    it('keeps points for the one retention default of every deployment (30d on the default policy)', async () => {
      const url = requiredEnv('WARPWATCH_INFLUX_URL');
      const database = requiredEnv('WARPWATCH_INFLUX_DATABASE');
      const response = await fetch(`${url}/query?${new URLSearchParams({ q: `SHOW RETENTION POLICIES ON "${database}"` }).toString()}`);
      const body = (await response.json()) as { results: { series?: { values: unknown[][] }[] }[] };
      const autogen = body.results[0]?.series?.[0]?.values.find((row) => row[0] === 'autogen');
      expect(autogen?.[1]).toBe('720h0m0s'); // INFLUX_RETENTION = 30d
      expect(autogen?.[4]).toBe(true);
    });

    it('stores points written through the v2 write API and returns them to InfluxQL', async () => {
      const url = requiredEnv('WARPWATCH_INFLUX_URL');
      const database = requiredEnv('WARPWATCH_INFLUX_DATABASE');
      const measurement = `it_stack_${randomUUID().replaceAll('-', '')}`;
      // InfluxDB 1.8's v2 API: no token needed (auth off), org '-', bucket '<database>/<retention policy>'.
      const writeApi = new InfluxDB({ url, token: '' }).getWriteApi('-', `${database}/autogen`, 'ms');
      // Within the retention default (30d): an hour ago, on a whole second.
      const baseMillis = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
      const written = [
        { stream: 'job-1/kernel-a', n: '32', loss: 1.25, groups: 10, timeMillis: baseMillis },
        { stream: 'job-1/kernel-a', n: '32', loss: 1.5, groups: 12, timeMillis: baseMillis + 1_000 },
        { stream: 'job-2/kernel-b', n: '16', loss: 2.0, groups: 3, timeMillis: baseMillis + 2_000 },
      ];
      for (const w of written) {
        writeApi.writePoint(new Point(measurement).tag('stream', w.stream).tag('n', w.n).floatField('loss_predicted', w.loss).intField('groups', w.groups).timestamp(new Date(w.timeMillis)));
      }
      await writeApi.close();

      const query = new URLSearchParams({ db: database, epoch: 'ms', q: `SELECT "loss_predicted", "groups", "stream", "n" FROM "${measurement}" ORDER BY time ASC` });
      const response = await fetch(`${url}/query?${query.toString()}`);
      const body = (await response.json()) as { results: { series?: { columns: string[]; values: unknown[][] }[] }[] };
      const series = body.results[0]?.series?.[0];
      expect(series?.columns).toEqual(['time', 'loss_predicted', 'groups', 'stream', 'n']);
      expect(series?.values).toEqual(written.map((w) => [w.timeMillis, w.loss, w.groups, w.stream, w.n]));

      const mean = new URLSearchParams({ db: database, q: `SELECT MEAN("loss_predicted") FROM "${measurement}" WHERE "stream" = 'job-1/kernel-a'` });
      const meanBody = (await (await fetch(`${url}/query?${mean.toString()}`)).json()) as { results: { series: { values: [string, number][] }[] }[] };
      expect(meanBody.results[0]?.series[0]?.values[0]?.[1]).toBeCloseTo((1.25 + 1.5) / 2, 12);

      await fetch(`${url}/query`, { method: 'POST', body: new URLSearchParams({ db: database, q: `DROP MEASUREMENT "${measurement}"` }) });
    });
  });
});
