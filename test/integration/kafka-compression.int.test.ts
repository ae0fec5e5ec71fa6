// Every codec Kafka has, end to end on the shared stack's broker (docs/stack.md § Compression):
// for each of gzip, snappy, lz4 and zstd, a frames topic whose broker-side `compression.type` is
// that codec (the broker rewrites every batch in it, whatever the producer sent, as a cluster
// policy or a MirrorMaker copy does), the real collector producing with another codec, and a
// real estimator writing its checkpoints and result records with the topic's codec. Every
// window in InfluxDB must be exact, and the estimator's distribution records must read back.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installKafkaCompressionCodecs } from '../../service/kafka-compression.ts';
import { finishLoad, killPipelines, startLoad, startPipeline, type Agent } from './estimator-pipeline.ts';
import { brokers, uniqueId, waitUntil, windowsOf, type EstimatorChild } from './estimator-support.ts';

const WINDOW_MILLIS = 1_000;
const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;

/** The number of records of `topic` (every partition's end offset), and the first record's value as text, read with the codecs installed. */
async function readBack(topic: string): Promise<{ records: number; first: string | undefined }> {
  const kafka = new Kafka({ clientId: 'compression-it', brokers: brokers().split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const highs = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const records = highs.reduce((sum, o) => sum + Number(o.high), 0);
  let first: string | undefined;
  const consumer = kafka.consumer({ groupId: uniqueId('compression-it') });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      first ??= message.value?.toString('utf8');
      await Promise.resolve();
    },
  });
  await waitUntil(() => Promise.resolve(first !== undefined), 30_000, `a record of ${topic}`);
  await consumer.disconnect();
  return { records, first };
}

describe('every Kafka codec through collector, broker and estimator (shared stack broker)', () => {
  let directory: string;
  const cleanup = { databases: [] as string[], estimators: [] as EstimatorChild[], agents: [] as Agent[] };
  beforeAll(() => {
    installKafkaCompressionCodecs();
    directory = mkdtempSync(join(tmpdir(), 'ww-compression-it-'));
  });
  afterAll(async () => {
    await killPipelines(cleanup);
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  for (const [index, codec] of CODECS.entries()) {
    const producerCodec = CODECS[(index + 1) % CODECS.length] ?? 'gzip';
    it(`a frames topic with compression.type=${codec}, the collector producing ${producerCodec}, checkpoints and results in ${codec}: every window exact, the distributions read back`, async () => {
      const pipeline = await startPipeline({
        name: `wwcodec${codec}`,
        brokers: brokers(),
        directory,
        estimators: 1,
        cleanup,
        framesTopicConfig: [{ name: 'compression.type', value: codec }],
        collectorArgs: ['--compression', producerCodec],
        env: {
          WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS),
          WARPWATCH_CHECKPOINT_COMPRESSION: codec,
          WARPWATCH_RESULTS_COMPRESSION: codec,
          WARPWATCH_HISTOGRAM_POINTS: 'false',
          WARPWATCH_FIT: 'false',
          WARPWATCH_QUANTILES: 'false',
          WARPWATCH_SWEEP_GROUP_SIZES: 'off',
        },
      });
      const { id, group, socket } = pipeline;
      const jobs = Array.from({ length: 4 }, (_, s) => `${id}s${s}`);
      const load = await startLoad(socket, jobs, { everyMillis: 50, windowMillis: WINDOW_MILLIS, seed: 53 + index });
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const { written, late } = await finishLoad(pipeline, load, jobs, { deliveredMillis: 60_000, settledMillis: 30_000 });
      for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(load.sent, job));
      expect(late).toBe(0);
      const [estimator] = group as [EstimatorChild];
      expect(estimator.log.join('\n')).not.toMatch(/compression not implemented|consumer crashed/);
      const distributions = await readBack(`${id}.distributions`);
      expect(distributions.records).toBeGreaterThan(0);
      expect(JSON.parse(distributions.first ?? '{}')).toMatchObject({ schema: expect.stringMatching(/^warpwatch\.distribution\//) });
    }, 120_000);
  }
});
