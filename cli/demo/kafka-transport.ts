import { hostname } from 'node:os';
import { CollectorConfigError, createKafkaProducer, loadCollectorKafkaConfig } from '../../collector/index.ts';
import type { EstimatorConfig } from '../../estimator/index.ts';
import { startEstimator, type RunningEstimator } from '../../estimator/index.ts';
import type { DistributionRecord } from '../../contracts/index.ts';
import { createEstimatorKafka } from '../../estimator/index.ts';
import type { ParametricFitter } from '../../estimator/index.ts';
import { KAFKA_HEADERS, streamKeyOf } from '../../contracts/index.ts';
import { summarizeFrame } from '../../protocol/index.ts';
import { createKafkaClient, retryTransientKafka } from '../../service/index.ts';
import { DistributionsReadError, tailDistributions, type DistributionsTail } from '../distributions-reader.ts';
import { streamRefKey, type DemoStreamRef, type DemoTransport } from './demo-transport.ts';
import { UsageError } from '../usage-error.ts';
import { DemoError } from './errors.ts';

/**
 * The demo through the real servers: frames are produced to warpwatch.frames by the
 * collector's Kafka producer (raw bytes, key = stream id, as the collector does), the
 * estimator service (`warpwatch estimate`'s code, started in this process with its own
 * consumer group) consumes them, closes each run's window after it went idle, writes its
 * points to InfluxDB when configured, and publishes warpwatch.distributions records, which
 * are read back here.
 *
 * @throws DemoError WW_ERR_DEMO_TRANSPORT when Kafka cannot be reached.
 * @example
 * const transport = await createKafkaDemoTransport(config, demoFitter, (line) => console.error(line));
 */
export async function createKafkaDemoTransport(
  config: EstimatorConfig,
  fitter: ParametricFitter | undefined,
  log: (line: string) => void,
): Promise<DemoTransport> {
  const records = new Map<string, DistributionRecord[]>();
  const problems: string[] = [];
  const brokers = config.kafka.brokers;
  let tail: DistributionsTail | undefined;
  let estimator: RunningEstimator | undefined;
  // The producer settings of the collector's Kafka slice (SASL/TLS included), on the estimator's brokers and frames topic.
  let producerConfig;
  try {
    producerConfig = { ...loadCollectorKafkaConfig({ env: process.env }), brokers, framesTopic: config.kafka.framesTopic };
  } catch (error) {
    if (error instanceof CollectorConfigError) throw new UsageError(`${error.code}: ${error.message}`, { cause: error });
    throw error;
  }
  const producer = createKafkaProducer(producerConfig, (level, message) => {
    if (level === 'error') problems.push(`Kafka producer: ${message}`);
  });
  try {
    // Topics first (as the estimator creates them), then the estimator group starts at the
    // current end of warpwatch.frames: its offsets are set before it joins, so frames
    // produced from now on are all consumed and older ones are not.
    const estimatorKafka = createEstimatorKafka({ ...config.kafka, instanceId: config.instanceId });
    try {
      await estimatorKafka.ensureTopics();
    } finally {
      await estimatorKafka.stop();
    }
    const admin = createKafkaClient({ clientId: `${config.kafka.clientId}-demo`, brokers, security: config.kafka.security }).admin();
    try {
      await admin.connect();
      const offsets = await retryTransientKafka(() => admin.fetchTopicOffsets(config.kafka.framesTopic));
      await retryTransientKafka(() =>
        admin.setOffsets({
          groupId: config.kafka.groupId,
          topic: config.kafka.framesTopic,
          partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })),
        }),
      );
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    tail = await tailDistributions(
      { brokers, topic: config.kafka.distributionsTopic, clientId: `${config.kafka.clientId}-demo`, security: config.kafka.security },
      `${config.kafka.groupId}.results`,
      (record) => {
        const key = streamRefKey(record.stream, record.groupSize);
        const list = records.get(key) ?? [];
        list.push(record);
        records.set(key, list);
      },
    );
    estimator = await startEstimator(config, (line) => log(line), { ...(fitter === undefined ? {} : { fitter }) });
  } catch (error) {
    await tail?.stop();
    await estimator?.stop();
    await producer.close();
    if (error instanceof DemoError) throw error;
    if (error instanceof DistributionsReadError) throw new DemoError('WW_ERR_DEMO_TRANSPORT', error.message, { cause: error, retriable: error.retriable });
    throw new DemoError('WW_ERR_DEMO_TRANSPORT', `cannot start the demo's Kafka route on ${brokers.join(',')}: ${(error as Error).message}`, { cause: error, retriable: true });
  }
  const host = hostname();
  const running = estimator;
  const reader = tail;

  return {
    kind: 'kafka',
    async deliver(raw, streamId) {
      try {
        await producer.send([
          {
            topic: config.kafka.framesTopic,
            // As the collector does (collector/stream-validator.ts): key = the full stream key, contract headers.
            key: streamKeyOf({ ...summarizeFrame(raw), host }),
            value: raw,
            headers: { [KAFKA_HEADERS.source]: 'stdin', [KAFKA_HEADERS.host]: host, [`${KAFKA_HEADERS.labelPrefix}origin`]: 'demo' },
            timestampMillis: Date.now(),
          },
        ]);
      } catch (error) {
        throw new DemoError('WW_ERR_DEMO_TRANSPORT', `producing a frame of ${streamId} to ${config.kafka.framesTopic}: ${(error as Error).message}`, { cause: error, retriable: true });
      }
    },
    endRun() {
      // The service closes the run's window once the stream was idle for idleCloseMillis.
    },
    async collect(streams: readonly DemoStreamRef[], timeoutMillis: number) {
      const deadline = Date.now() + timeoutMillis;
      const complete = (stream: DemoStreamRef): boolean =>
        (records.get(streamRefKey(stream.stream, stream.groupSize)) ?? []).reduce((sum, r) => sum + r.window.groups, 0) >= stream.groups;
      while (!streams.every(complete)) {
        if (Date.now() > deadline) {
          const missing = streams.filter((s) => !complete(s)).map((s) => `${s.stream} n=${s.groupSize}`);
          throw new DemoError(
            'WW_ERR_DEMO_NO_RESULT',
            `no complete window result on ${config.kafka.distributionsTopic} within ${timeoutMillis} ms for ${missing.length} runs (${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ', ...' : ''}); is the estimator consuming ${config.kafka.framesTopic}?`,
            { retriable: true },
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return streams.map((s) => records.get(streamRefKey(s.stream, s.groupSize)) ?? []);
    },
    problems: () => [...problems],
    async close() {
      await reader.stop();
      await running.stop();
      await producer.close();
    },
  };
}
