import type { Consumer, Kafka } from 'kafkajs';
import type { EstimatorKafkaSecurity } from '../estimator/index.ts';
import { createKafkaClient, retryTransientKafka } from '../service/index.ts';
import { decodeDistributionRecord, type DistributionRecord } from '../contracts/index.ts';

/**
 * The distributions topic could not be read: no broker, a failed TLS handshake, a read that did
 * not reach the end in time. It carries no code of its own: each command that reads the topic
 * says it with its own (`demo --kafka`: WW_ERR_DEMO_TRANSPORT, `advise --stream`:
 * WW_ERR_ADVISE_KAFKA; docs/errors.md), keeping this message.
 *
 * @example
 * try { await scanDistributions(options, accept, 20_000); } catch (e) { if (e instanceof DistributionsReadError) console.error(e.message); }
 */
export class DistributionsReadError extends Error {
  /** True when trying again later may succeed (always, for a read that failed on the way). */
  readonly retriable: boolean;

  constructor(message: string, options: { readonly cause?: unknown; readonly retriable: boolean }) {
    super(message, { cause: options.cause });
    this.name = 'DistributionsReadError';
    this.retriable = options.retriable;
  }
}

/**
 * The CLI's one Kafka reader (kafkajs): tails or scans the estimator's compacted
 * warpwatch.distributions topic. The demo's Kafka route tails it for its own streams;
 * `warpwatch advise --stream` scans it for the latest record of one stream.
 */

/** Connection settings. */
export interface DistributionsReaderOptions {
  readonly brokers: readonly string[];
  readonly topic: string;
  readonly clientId: string;
  readonly connectionTimeoutMillis?: number;
  /** SASL/TLS (the estimator's Kafka slice, credentials as Secrets); absent = plaintext. */
  readonly security?: EstimatorKafkaSecurity | undefined;
}

/** A running tail of the topic. */
export interface DistributionsTail {
  stop(): Promise<void>;
}

function parseRecord(value: Buffer | null): DistributionRecord | undefined {
  return decodeDistributionRecord(value === null ? null : value.toString('utf8'));
}

function clientOf(options: DistributionsReaderOptions): Kafka {
  return createKafkaClient({
    clientId: options.clientId,
    brokers: options.brokers,
    security: options.security,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 3_000,
    retry: { retries: 5, initialRetryTime: 200 },
  });
}

/**
 * Starts reading the topic from its current end: every record published after this call
 * resolves is passed to `onRecord`. The consumer group (`groupId`) gets its offsets set to
 * the current high watermarks before it joins, so nothing published after the call is missed
 * however long the join takes.
 *
 * @throws DistributionsReadError when the broker cannot be reached.
 * @example
 * const tail = await tailDistributions({ brokers, topic, clientId: 'demo' }, 'demo-reader-1', (r) => results.push(r));
 */
export async function tailDistributions(
  options: DistributionsReaderOptions,
  groupId: string,
  onRecord: (record: DistributionRecord) => void,
): Promise<DistributionsTail> {
  const kafka = clientOf(options);
  const admin = kafka.admin();
  let consumer: Consumer | undefined;
  try {
    await admin.connect();
    const offsets = await retryTransientKafka(() => admin.fetchTopicOffsets(options.topic));
    await retryTransientKafka(() => admin.setOffsets({ groupId, topic: options.topic, partitions: offsets.map((o) => ({ partition: o.partition, offset: o.high })) }));
    consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: options.topic, fromBeginning: false });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ message }) => {
        const record = parseRecord(message.value);
        if (record !== undefined) onRecord(record);
        await Promise.resolve();
      },
    });
  } catch (error) {
    await consumer?.disconnect().catch(() => undefined);
    throw new DistributionsReadError(`cannot read ${options.topic} on ${options.brokers.join(',')}: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
  const running = consumer;
  return {
    async stop() {
      await running.disconnect().catch(() => undefined);
      const cleanup = kafka.admin();
      // The group was only a cursor for this process: delete it so brokers do not keep it.
      try {
        await cleanup.connect();
        await cleanup.deleteGroups([groupId]);
      } catch {
        // Deleting is a courtesy; the broker expires empty groups on its own.
      } finally {
        await cleanup.disconnect().catch(() => undefined);
      }
    },
  };
}

/**
 * Reads the whole (compacted) topic once, up to its high watermarks at the time of the call,
 * and returns the last record per key that `accept` keeps, in offset order per partition.
 *
 * @throws DistributionsReadError when the broker cannot be reached or the read does
 *   not reach the end within `timeoutMillis`.
 * @example
 * const latest = await scanDistributions({ brokers, topic, clientId: 'advise' }, (r) => r.stream === 'job/kernel', 20_000);
 */
export async function scanDistributions(
  options: DistributionsReaderOptions,
  accept: (record: DistributionRecord) => boolean,
  timeoutMillis: number,
): Promise<DistributionRecord[]> {
  const kafka = clientOf(options);
  const admin = kafka.admin();
  const groupId = `${options.clientId}-scan-${process.pid}-${Date.now()}`;
  const latest = new Map<string, DistributionRecord>();
  let consumer: Consumer | undefined;
  try {
    await admin.connect();
    const offsets = await retryTransientKafka(() => admin.fetchTopicOffsets(options.topic));
    const remaining = new Map(offsets.filter((o) => BigInt(o.high) > BigInt(o.low)).map((o) => [o.partition, BigInt(o.high)]));
    if (remaining.size === 0) return [];
    consumer = kafka.consumer({ groupId, allowAutoTopicCreation: false, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic: options.topic, fromBeginning: true });
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        const record = parseRecord(message.value);
        const key = message.key?.toString('utf8') ?? '';
        if (record !== undefined && accept(record)) latest.set(`${key}|${record.groupSize}|${record.device}|${record.source}`, record);
        const high = remaining.get(partition);
        if (high !== undefined && BigInt(message.offset) + 1n >= high) remaining.delete(partition);
        if (remaining.size === 0) finish();
        await Promise.resolve();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      done.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMillis);
      }),
    ]);
    if (timer !== undefined) clearTimeout(timer);
    if (timedOut) throw new Error(`read did not reach the end of ${options.topic} within ${timeoutMillis} ms`);
    return [...latest.values()];
  } catch (error) {
    if (error instanceof DistributionsReadError) throw error;
    throw new DistributionsReadError(`cannot read ${options.topic} on ${options.brokers.join(',')}: ${(error as Error).message}`, { cause: error, retriable: true });
  } finally {
    await consumer?.disconnect().catch(() => undefined);
    try {
      await admin.deleteGroups([groupId]);
    } catch {
      // The group may not exist (empty topic) or is still leaving; brokers expire empty groups.
    }
    await admin.disconnect().catch(() => undefined);
  }
}
