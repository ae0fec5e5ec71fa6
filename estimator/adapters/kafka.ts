import { randomBytes } from 'node:crypto';
import { CompressionTypes, type Admin, type Consumer, type EachBatchPayload, type IHeaders, type Kafka, type KafkaMessage, type Message, type Producer } from 'kafkajs';
import { EstimatorError } from '../errors.ts';
import { encodeWireRecord, TOPIC_SPECS, type AlertRecord, type DistributionRecord } from '../../contracts/index.ts';
import {
  cachingDefaultPartitioner,
  createKafkaClient,
  ensureServiceTopics,
  KafkaAccessDenied,
  kafkaAuthorizationDenial,
  kafkaCompressionType,
  kafkaPrincipalOf,
  isUnreachableError,
  kafkaTlsFailure,
  missingAclText,
  retryTransientKafka,
  stoppedConsumerDenial,
  type KafkaAclNeed,
  type ServiceTopicsReport,
} from '../../service/index.ts';
import type { EstimatorConfig } from '../config.ts';

/**
 * The one adapter to Kafka (kafkajs) for the estimator: topic creation, the consumer group
 * on the frames topic (manual commits), a producer for distributions, alerts and
 * checkpoints, and a reader of the compacted checkpoint topic that restores a newly assigned
 * partition from the checkpoint partition holding its records. Everything else gets plain functions from here.
 */

/** Settings: the kafka slice of EstimatorConfig plus the instance name (Kafka client id suffix). */
export type EstimatorKafkaOptions = EstimatorConfig['kafka'] & { readonly instanceId: string };

/** One consumed message as the service sees it. */
export interface ConsumedMessage {
  readonly offset: string;
  readonly key: string | undefined;
  readonly value: Uint8Array;
  readonly headers: Readonly<Record<string, string>>;
  /** Broker/producer timestamp, ms since epoch. */
  readonly timestampMillis: number;
}

/** What the consumer loop calls. */
export interface FramesHandlers {
  /**
   * The group assigned these partitions of the frames topic (after every rebalance).
   * `rejoined` is true when this consumer joined as a new member (its member id changed: after a
   * crash kafkajs leaves the group and joins again, and a member the coordinator expired gets a
   * new id): meanwhile other members may have held any of these partitions and committed past
   * what this process holds, so its state of them is stale (docs/estimator.md, Scale-out).
   */
  onAssignment(partitions: readonly number[], membership: { readonly memberId: string; readonly rejoined: boolean; readonly joinStartedAtMillis: number }): void;
  /**
   * The group coordinator answered a heartbeat of this member with success: it was still a
   * member, at its generation, when the request was sent at `sentAtMillis` (ms, Date.now()).
   * The service's fence (engine/membership-lease.ts) is renewed from it.
   */
  onMembershipConfirmed(sentAtMillis: number): void;
  /**
   * A batch of one partition, in offset order. Its messages are made one at a time as they are
   * iterated (docs/estimator.md, Performance): each is garbage once handled, instead of the whole
   * batch's being made first and outliving young-generation collections while it is worked through.
   */
  onBatch(batch: {
    partition: number;
    messages: Iterable<ConsumedMessage>;
    /** The offset of the batch's first message (undefined for an empty batch). */
    firstOffset: string | undefined;
    highWatermark: string;
    heartbeat: () => Promise<void>;
    isStale: () => boolean;
  }): Promise<void>;
  /**
   * The consumer crashed: kafkajs has left the group (its partitions may go to other members at
   * once) and restarts it, as a new member, when `restart` is true.
   */
  onCrash(error: Error, restart: boolean): void;
}

/** A record to produce; value null = tombstone (compacted topics). */
export interface OutgoingRecord {
  readonly key: string;
  /** JSON text for the result topics; the frame's bytes (capped) for a DLQ record; null = tombstone. */
  readonly value: string | Buffer | null;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The record to produce for a distribution or alert record the engine published: the stream key
 * and the record's JSON text (contracts/wire-records.ts).
 *
 * @example outgoingResultRecord(key, alert) // { key, value: '{"schema":"warpwatch.alert/v1",...}' }
 */
export function outgoingResultRecord(key: string, record: DistributionRecord | AlertRecord): OutgoingRecord {
  return { key, value: encodeWireRecord(record) };
}

/**
 * Records per producer request. kafkajs groups a request's messages by partition by copying the
 * partition's array once per message (quadratic in the request's size): one checkpoint round of
 * 10,000 streams in one request made ~200 MB of short-lived arrays, which grew the heap by tens
 * of MB. Larger writes go out as consecutive requests of at most this many records, in order.
 */
export const PRODUCE_CHUNK_RECORDS = 500;

/**
 * Value bytes per producer request (a record larger than this goes in a request of its own).
 * kafkajs encodes a request into a buffer that it grows by copying, so a request of 500
 * checkpoint records with full dedupe memories (~18 KB each, 9 MB) cost ~0.4 ms of copying per
 * record; and an uncompressed record batch must stay below the topics' max.message.bytes (8 MiB,
 * contracts/topics.ts) whatever the records' size (docs/estimator.md, The dedupe memory at steady state).
 */
export const PRODUCE_CHUNK_BYTES = 1_048_576;

/**
 * The kafkajs messages of one write, in order, split into requests of at most
 * {@link PRODUCE_CHUNK_RECORDS} records and {@link PRODUCE_CHUNK_BYTES} of values. `partition`,
 * when given, is set on every message: kafkajs then skips hashing the key (its murmur2 allocates
 * objects per 4 bytes of key); checkpoint records are placed by their frames partition instead.
 *
 * @example producerRequests([{ key: 'a', value: '1' }], 0) // [[{ key: 'a', value: '1', partition: 0, headers: undefined }]]
 */
export function producerRequests(records: readonly OutgoingRecord[], partition?: number): Message[][] {
  const requests: Message[][] = [];
  let request: Message[] = [];
  let bytes = 0;
  for (const record of records) {
    const size = record.value === null ? 0 : record.value.length;
    if (request.length === PRODUCE_CHUNK_RECORDS || (request.length > 0 && bytes + size > PRODUCE_CHUNK_BYTES)) {
      requests.push(request);
      request = [];
      bytes = 0;
    }
    request.push({
      key: record.key,
      value: record.value,
      headers: record.headers ? { ...record.headers } : undefined,
      ...(partition === undefined ? {} : { partition }),
    });
    bytes += size;
  }
  if (request.length > 0) requests.push(request);
  return requests;
}

/**
 * Reads the compacted checkpoint topic for partition restores (docs/estimator.md, Fault tolerance:
 * Restore): the records of frames partition p lie in checkpoint partition p mod (its partition
 * count), and only that partition is read, from its beginning, when p is assigned.
 */
export interface CheckpointReader {
  /**
   * The latest value of every key that starts with `keyPrefix` in the checkpoint partition that
   * holds frames partition `framesPartition`'s records, read from its first record up to its end
   * as the broker answers at the call. A key whose latest record is a tombstone is absent. Reads
   * of one checkpoint partition share a pass over it; reads of different ones run together.
   *
   * @param timeoutMillis - the read fails when it has not reached that end within this long
   * @throws EstimatorError WW_ERR_ESTIMATOR_CHECKPOINT_READ (retriable) when it times out or the
   *   reader stops; WW_ERR_ESTIMATOR_KAFKA when the broker does not answer.
   * @example const records = await reader.read(3, 'warpwatch-estimator|warpwatch.frames|3', 60_000);
   */
  read(framesPartition: number, keyPrefix: string, timeoutMillis: number): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

/** The adapter. */
export interface EstimatorKafka {
  /**
   * Creates the missing topics as contracts/topics.ts TOPIC_SPECS defines them (the same
   * settings the collector uses, whichever service starts first) and checks the existing ones
   * against it; the problems found are then in {@link EstimatorKafka.topicProblems}.
   */
  ensureTopics(): Promise<void>;
  /** What the last {@link EstimatorKafka.ensureTopics} found wrong with the topics (empty = they fit): one sentence each. */
  topicProblems(): readonly string[];
  /**
   * Starts a {@link CheckpointReader} whose reads keep only records whose key starts with
   * `keyPrefix` (the service's: `<group>|<frames topic>|`), so the records of other consumer
   * groups or frames topics sharing the checkpoint topic take no memory here.
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the broker does not answer.
   * @param onStoppedForGood called once if the reader's consumer stops and kafkajs does not
   *   restart it (a refused ACL: WW_ERR_KAFKA_AUTHORIZATION naming it); its reads are rejected
   *   with the same error. The service cannot restore partitions without it.
   * @example const reader = await kafka.startCheckpointReader('warpwatch-estimator|warpwatch.frames|', (error) => fail(error));
   */
  startCheckpointReader(keyPrefix: string, onStoppedForGood?: (error: EstimatorError) => void): Promise<CheckpointReader>;
  /**
   * Writes frames partition `framesPartition`'s checkpoint records, in order, to checkpoint
   * partition `framesPartition` mod the checkpoint topic's partition count (read once, at
   * {@link EstimatorKafka.ensureTopics} or the first write or read), compressed as
   * WARPWATCH_CHECKPOINT_COMPRESSION says.
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the write fails.
   * @example await kafka.writeCheckpoint(3, [{ key: 'g|t|3|job/k|n=32', value: '{…}' }, { key: 'g|t|3', value: '{"v":1,"nextOffset":"42"}' }]);
   */
  writeCheckpoint(framesPartition: number, records: readonly OutgoingRecord[]): Promise<void>;
  /** Joins the group and runs the frames consumer until stop(). */
  runFramesConsumer(handlers: FramesHandlers): Promise<void>;
  commit(partition: number, nextOffset: string): Promise<void>;
  /**
   * The offset the consumer group has committed for `partition` of the frames topic, as the
   * broker answers now; undefined when none is committed.
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the broker does not answer.
   * @example await kafka.committedOffset(0) // 1042n
   */
  committedOffset(partition: number): Promise<bigint | undefined>;
  /**
   * Makes the frames consumer fetch `partition` from `offset` next (kafkajs `seek`; batches
   * already fetched for it turn stale). Nothing happens when the partition is not assigned.
   *
   * @example kafka.seek(0, 980n);
   */
  seek(partition: number, offset: bigint): void;
  /**
   * The frames topic's offsets per partition as the broker answers now (`high`: the high
   * watermark, `low`: the first offset still held), for the consumer lag. Asks with an admin
   * client of its own that retries once only: an unreachable broker makes it fail within about
   * the connection timeout rather than after kafkajs' retries.
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the broker does not answer.
   * @example const offsets = await kafka.frameOffsets(); offsets.get(0) // { low: 0n, high: 1042n }
   */
  frameOffsets(): Promise<Map<number, { low: bigint; high: bigint }>>;
  /**
   * The frames topic's partition count as the broker says it now (a metadata request of its own:
   * kafkajs' cached metadata, which frameOffsets uses, is refreshed only every 5 minutes).
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the broker does not answer
   * @example await kafka.framesPartitionCount() // 6
   */
  framesPartitionCount(): Promise<number>;
  /**
   * Whether the frames topic exists now (the broker's topic list: asking for the topic's own
   * metadata could create it again where the broker auto-creates topics).
   *
   * @throws EstimatorError WW_ERR_ESTIMATOR_KAFKA when the broker does not answer
   * @example await kafka.framesTopicExists() // true
   */
  framesTopicExists(): Promise<boolean>;
  produce(topic: string, records: readonly OutgoingRecord[]): Promise<void>;
  stop(): Promise<void>;
}

/** kafkajs' messages as {@link ConsumedMessage}s, each made when the iteration reaches it. */
function consumedMessagesOf(messages: readonly KafkaMessage[]): Iterable<ConsumedMessage> {
  return {
    [Symbol.iterator]: (): Iterator<ConsumedMessage> => {
      let next = 0;
      return {
        next: (): IteratorResult<ConsumedMessage> => {
          if (next >= messages.length) return { done: true, value: undefined };
          const message = messages[next++]!;
          return {
            done: false,
            value: {
              offset: message.offset,
              key: message.key?.toString('utf8'),
              value: message.value ?? new Uint8Array(0),
              headers: headersToStrings(message.headers),
              timestampMillis: Number(message.timestamp),
            },
          };
        },
      };
    },
  };
}

function headersToStrings(headers: IHeaders | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  if (headers === undefined) return result;
  for (const [name, value] of Object.entries(headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first === undefined) continue;
    result[name] = typeof first === 'string' ? first : first.toString('utf8');
  }
  return result;
}

/**
 * The estimator's error for a failed Kafka call: WW_ERR_KAFKA_TLS (a handshake), WW_ERR_KAFKA_AUTHORIZATION
 * (a refusal: the ACLs the call needs, named with their grant command; not retriable, as only an
 * operator can end it), else WW_ERR_ESTIMATOR_KAFKA with kafkajs' own retriability.
 */
function kafkaError(action: string, error: unknown, access?: { readonly principal: string; readonly needs: readonly KafkaAclNeed[] }): EstimatorError {
  const tls = kafkaTlsFailure(error);
  if (tls !== undefined) return new EstimatorError('WW_ERR_KAFKA_TLS', `${action}: TLS handshake failed: ${tls}`, { retriable: false, cause: error });
  if (access !== undefined && (error instanceof KafkaAccessDenied || kafkaAuthorizationDenial(error) !== undefined)) {
    const needs = error instanceof KafkaAccessDenied ? error.needs : access.needs;
    return new EstimatorError('WW_ERR_KAFKA_AUTHORIZATION', `${action}: Kafka refused: ${missingAclText(access.principal, needs)}`, { retriable: false, cause: error });
  }
  const retriable = typeof error === 'object' && error !== null && (error as { retriable?: unknown }).retriable === true;
  return new EstimatorError('WW_ERR_ESTIMATOR_KAFKA', `${action}: ${error instanceof Error ? error.message : String(error)}`, { retriable, cause: error });
}

/**
 * Creates the adapter (connects lazily).
 *
 * @param events.onUnreachable called with kafkajs' message each time a connection to a broker
 *   fails because nothing answers (refused, unknown host, timed out); kafkajs logs nothing else.
 * @param events.onTlsFailure called with what to change when a TLS handshake fails
 *   (service/kafka-security.ts kafkaTlsFailure); never retried in plaintext.
 * @example
 * const kafka = createEstimatorKafka({ ...config.kafka, instanceId: config.instanceId });
 * await kafka.ensureTopics();
 */
export function createEstimatorKafka(
  options: EstimatorKafkaOptions,
  events: { readonly onUnreachable?: (message: string) => void; readonly onTlsFailure?: (reason: string) => void } = {},
): EstimatorKafka {
  const kafka = createKafkaClient({
    clientId: `${options.clientId}-${options.instanceId}`,
    brokers: options.brokers,
    security: options.security,
    connectionTimeoutMillis: options.connectionTimeoutMillis,
    retry: { retries: 8, initialRetryTime: 200 },
    // kafkajs says nothing itself; a broker that cannot be reached is passed on (the service
    // says it once per outage, with what to try), the moment the first connection fails.
    log: {
      level: 'error',
      entry: (entry) => {
        const text = `${entry.message}${entry.error === undefined ? '' : `: ${String(entry.error)}`}`;
        const tls = kafkaTlsFailure(text);
        if (tls !== undefined) events.onTlsFailure?.(tls);
        else if (isUnreachableError(text)) events.onUnreachable?.(text);
      },
    },
  });
  let admin: Admin | undefined;
  let probeAdmin: Admin | undefined;
  let stopped = false;
  let producer: Producer | undefined;
  let consumer: Consumer | undefined;
  const readers: CheckpointReader[] = [];
  // What each call needs when the broker refuses it (docs/security.md § Kafka ACLs).
  const principal = kafkaPrincipalOf(options.security ?? { sasl: undefined, tls: undefined });
  const topicAcl = (operation: KafkaAclNeed['operation'], name: string): KafkaAclNeed => ({ operation, resourceType: 'Topic', name });
  const groupAcl: KafkaAclNeed = { operation: 'Read', resourceType: 'Group', name: options.groupId, pattern: 'PREFIXED' };
  const needing = (...needs: KafkaAclNeed[]): { principal: string; needs: KafkaAclNeed[] } => ({ principal, needs });
  let problems: readonly string[] = [];
  // The checkpoint topic's partition count, read once: writes and reads place frames partition p
  // at p mod this, so it must not change while the process runs (docs/estimator.md, Fault tolerance: Restore).
  let checkpointPartitions: number | undefined;
  // The largest record the frames topic allows (its max.message.bytes once checked): the
  // consumer fetches at least this much per partition, so no allowed frame is too large to read.
  let framesMaxMessageBytes = TOPIC_SPECS.frames.maxMessageBytes;

  const getAdmin = async (): Promise<Admin> => {
    if (admin === undefined) {
      admin = kafka.admin();
      await admin.connect();
    }
    return admin;
  };
  const checkpointPartitionOf = async (framesPartition: number): Promise<number> => {
    if (checkpointPartitions === undefined) {
      const client = await getAdmin();
      const metadata = await retryTransientKafka(() => client.fetchTopicMetadata({ topics: [options.checkpointTopic] }));
      checkpointPartitions = Math.max(1, metadata.topics[0]?.partitions.length ?? 1);
    }
    return framesPartition % checkpointPartitions;
  };
  const getProducer = async (): Promise<Producer> => {
    if (producer === undefined) {
      const created = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false, createPartitioner: cachingDefaultPartitioner });
      await created.connect();
      producer = created;
    }
    return producer;
  };

  return {
    async ensureTopics() {
      try {
        const report = await createMissingTopics(await getAdmin(), options);
        problems = report.problems;
        const count = report.partitions.get(options.checkpointTopic) ?? 0;
        if (count > 0) checkpointPartitions ??= count;
        framesMaxMessageBytes = Math.max(TOPIC_SPECS.frames.maxMessageBytes, report.maxMessageBytes.get(options.framesTopic) ?? 0);
      } catch (error) {
        throw kafkaError(`creating or checking topics on ${options.brokers.join(',')}`, error, needing());
      }
    },

    topicProblems: () => problems,

    async startCheckpointReader(keyPrefix, onStoppedForGood) {
      try {
        const stoppedForGood = (error: unknown): EstimatorError => {
          const action = `the reader of ${options.checkpointTopic} stopped for good (kafkajs does not restart it)`;
          const denial = stoppedConsumerDenial(error);
          const failure =
            denial === 'Group'
              ? new EstimatorError('WW_ERR_KAFKA_AUTHORIZATION', `${action}: Kafka refused its group (${error instanceof Error ? error.message : String(error)}): ${missingAclText(principal, [groupAcl])}`, { retriable: false, cause: error })
              : kafkaError(action, error, needing(topicAcl('Read', options.checkpointTopic)));
          onStoppedForGood?.(failure);
          return failure;
        };
        const reader = await startCheckpointReader(kafka, getAdmin, options, keyPrefix, checkpointPartitionOf, stoppedForGood);
        readers.push(reader);
        return reader;
      } catch (error) {
        throw kafkaError(`starting the reader of ${options.checkpointTopic}`, error, needing(groupAcl, topicAcl('Read', options.checkpointTopic)));
      }
    },

    async writeCheckpoint(framesPartition, records) {
      if (records.length === 0) return;
      try {
        // Checkpoints are the largest records (with full dedupe memories ~18 KB, of which 16 KB
        // base64 that gzip leaves at ~3/4); gzip (WARPWATCH_CHECKPOINT_COMPRESSION) costs ~4× the
        // CPU of writing them (libuv's thread pool, on the same cores). kafkajs' consumer
        // decompresses transparently, so a topic may hold both.
        await send(getProducer, options.checkpointTopic, records, { partition: await checkpointPartitionOf(framesPartition), compression: kafkaCompressionType(options.checkpointCompression) });
      } catch (error) {
        throw kafkaError(`writing ${records.length} checkpoint records of ${options.framesTopic}[${framesPartition}] to ${options.checkpointTopic}`, error, needing(topicAcl('Write', options.checkpointTopic)));
      }
    },

    async runFramesConsumer(handlers) {
      consumer = kafka.consumer({
        groupId: options.groupId,
        sessionTimeout: options.sessionTimeoutMillis,
        heartbeatInterval: options.heartbeatIntervalMillis,
        // kafkajs notices a rebalance (a dead member's partitions to take over) at its next
        // heartbeat, which waits for the fetch in progress: an idle fetch long-polls this long.
        // The default (5 s) on top of the session timeout made failover take ~11 s.
        maxWaitTimeInMs: Math.min(1_000, options.heartbeatIntervalMillis),
        // Fetch sizes that take the largest record the frames topic allows (kafkajs' defaults: 1 MiB per partition, 10 MiB per fetch).
        maxBytesPerPartition: framesMaxMessageBytes,
        maxBytes: Math.max(10 * 1024 * 1024, 2 * framesMaxMessageBytes),
        allowAutoTopicCreation: false,
        // Partitions added to the frames topic are assigned at the next metadata refresh (kafkajs
        // rejoins on a stale assignment): 30 s instead of kafkajs' 5 min, so that the streams that
        // move there are not left unread for minutes (docs/estimator.md § Adding partitions).
        metadataMaxAge: FRAMES_METADATA_MAX_AGE_MILLIS,
      });
      await runFramesConsumer(consumer, options, handlers);
    },

    async commit(partition, nextOffset) {
      if (consumer === undefined) return;
      try {
        await consumer.commitOffsets([{ topic: options.framesTopic, partition, offset: nextOffset }]);
      } catch (error) {
        throw kafkaError(`committing offset ${nextOffset} of ${options.framesTopic}[${partition}]`, error, needing(groupAcl));
      }
    },

    async committedOffset(partition) {
      try {
        const topics = await (await getAdmin()).fetchOffsets({ groupId: options.groupId, topics: [options.framesTopic] });
        const offset = topics.find((t) => t.topic === options.framesTopic)?.partitions.find((p) => p.partition === partition)?.offset;
        return offset === undefined || !/^\d+$/.test(offset) ? undefined : BigInt(offset);
      } catch (error) {
        throw kafkaError(`reading the committed offset of ${options.framesTopic}[${partition}]`, error, needing(groupAcl));
      }
    },

    seek(partition, offset) {
      consumer?.seek({ topic: options.framesTopic, partition, offset: offset.toString() });
    },

    async framesPartitionCount() {
      try {
        const metadata = await (await getAdmin()).fetchTopicMetadata({ topics: [options.framesTopic] });
        return metadata.topics.find((t) => t.name === options.framesTopic)?.partitions.length ?? 0;
      } catch (error) {
        throw kafkaError(`reading the partitions of ${options.framesTopic}`, error, needing(topicAcl('Read', options.framesTopic)));
      }
    },

    async framesTopicExists() {
      try {
        return (await (await getAdmin()).listTopics()).includes(options.framesTopic);
      } catch (error) {
        throw kafkaError(`listing the topics to find ${options.framesTopic}`, error);
      }
    },

    async frameOffsets() {
      try {
        if (probeAdmin === undefined) {
          const created = kafka.admin({ retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 1_000 } });
          await created.connect();
          if (stopped) {
            await created.disconnect();
            throw new Error('the estimator is stopping');
          }
          probeAdmin = created;
        }
        const offsets = await probeAdmin.fetchTopicOffsets(options.framesTopic);
        return new Map(offsets.map((o) => [o.partition, { low: BigInt(o.low), high: BigInt(o.high) }]));
      } catch (error) {
        // Connect afresh next time: a connection to a broker that went away is not reused.
        const stale = probeAdmin;
        probeAdmin = undefined;
        await stale?.disconnect().catch(() => {});
        throw kafkaError(`reading the offsets of ${options.framesTopic}`, error, needing(topicAcl('Read', options.framesTopic)));
      }
    },

    async produce(topic, records) {
      if (records.length === 0) return;
      try {
        await send(getProducer, topic, records, { compression: kafkaCompressionType(options.resultsCompression) });
      } catch (error) {
        throw kafkaError(`producing ${records.length} records to ${topic}`, error, needing(topicAcl('Write', topic)));
      }
    },

    async stop() {
      stopped = true;
      const tasks: Promise<unknown>[] = [];
      if (consumer !== undefined) tasks.push(consumer.disconnect());
      for (const reader of readers) tasks.push(reader.stop());
      await Promise.allSettled(tasks);
      await Promise.allSettled([producer?.disconnect(), admin?.disconnect(), probeAdmin?.disconnect()]);
    },
  };
}

/**
 * Creates the topics of {@link EstimatorKafka.ensureTopics} that do not exist yet (contracts/topics.ts
 * TOPIC_SPECS), checks them all, and waits until every new partition serves requests.
 */
async function createMissingTopics(client: Admin, options: EstimatorKafkaOptions): Promise<ServiceTopicsReport> {
  const report = await ensureServiceTopics(
    client,
    [
      { role: 'frames', name: options.framesTopic, access: 'Read' },
      { role: 'distributions', name: options.distributionsTopic },
      { role: 'alerts', name: options.alertsTopic },
      { role: 'dlq', name: options.dlqTopic },
      { role: 'estimatorCheckpoints', name: options.checkpointTopic, access: 'ReadWrite' },
    ],
    { partitions: options.partitions, replicationFactor: options.replicationFactor },
  );
  // Leaders are in the metadata now; wait until every new partition also serves requests.
  for (const topic of report.created) await retryTransientKafka(() => client.fetchTopicOffsets(topic));
  return report;
}

/** Sends `records` to `topic` in order, as requests of {@link producerRequests}, each acknowledged by all in-sync replicas. */
async function send(
  getProducer: () => Promise<Producer>,
  topic: string,
  records: readonly OutgoingRecord[],
  options: { readonly partition?: number; readonly compression: CompressionTypes },
): Promise<void> {
  const client = await getProducer();
  for (const messages of producerRequests(records, options.partition)) {
    await client.send({ topic, acks: -1, compression: options.compression, messages });
  }
}

/** How often a reader whose partitions are all paused looks again (kafkajs sleeps this long between empty fetches; its default is 5 s). */
const READER_IDLE_WAIT_MILLIS = 100;

/**
 * The {@link CheckpointReader}: one consumer of the checkpoint topic in a group of this process's
 * own (`<group>.checkpoint-reader.<instance>.<8 random hex digits>`, never committed, so the broker
 * drops it when the process leaves; a shared group would give the partitions to only one of two
 * processes started under one instance name). It holds every partition, paused: a read seeks its
 * partition to the first offset, resumes it, keeps the records of `keyPrefix` until the end the
 * broker gave at the call, then pauses it again. Between restores it reads nothing.
 *
 * A batch that does not continue where the pass has read to (its fetch offset lies past the
 * pass's next offset: a seek kafkajs could not apply during a rebalance) starts the pass over
 * from the first offset, so a read never skips a record.
 */
async function startCheckpointReader(
  kafka: Kafka,
  getAdmin: () => Promise<Admin>,
  options: EstimatorKafkaOptions,
  keyPrefix: string,
  checkpointPartitionOf: (framesPartition: number) => Promise<number>,
  stoppedForGood: (error: unknown) => Error,
): Promise<CheckpointReader> {
  const topic = options.checkpointTopic;
  interface Request {
    readonly keyPrefix: string;
    readonly low: bigint;
    readonly high: bigint;
    readonly resolve: (values: Map<string, string>) => void;
    readonly reject: (error: Error) => void;
    timer?: NodeJS.Timeout;
  }
  interface Pass {
    readonly requests: Request[];
    readonly low: bigint;
    readonly high: bigint;
    /** The offset the next batch must be fetched from (at most), to continue without a gap. */
    next: bigint;
    values: Map<string, string>;
  }
  const waiting = new Map<number, Request[]>();
  const passes = new Map<number, Pass>();
  let stopped = false;
  const consumer = kafka.consumer({
    groupId: `${options.groupId}.checkpoint-reader.${options.instanceId}.${randomBytes(4).toString('hex')}`,
    sessionTimeout: options.sessionTimeoutMillis,
    heartbeatInterval: options.heartbeatIntervalMillis,
    maxWaitTimeInMs: READER_IDLE_WAIT_MILLIS,
    // A fetch takes a checkpoint record of the largest size the topic allows.
    maxBytesPerPartition: TOPIC_SPECS.estimatorCheckpoints.maxMessageBytes,
  });
  const pause = (partition: number): void => consumer.pause([{ topic, partitions: [partition] }]);

  const startPass = (partition: number): void => {
    const requests = waiting.get(partition);
    if (passes.has(partition) || requests === undefined || requests.length === 0) return;
    waiting.delete(partition);
    const low = requests.reduce((min, r) => (r.low < min ? r.low : min), requests[0]!.low);
    const high = requests.reduce((max, r) => (r.high > max ? r.high : max), 0n);
    passes.set(partition, { requests, low, high, next: low, values: new Map() });
    consumer.seek({ topic, partition, offset: low.toString() });
    consumer.resume([{ topic, partitions: [partition] }]);
  };
  const finishPass = (partition: number, pass: Pass): void => {
    passes.delete(partition);
    pause(partition);
    for (const request of pass.requests) {
      clearTimeout(request.timer);
      const values = new Map<string, string>();
      for (const [key, value] of pass.values) if (key.startsWith(request.keyPrefix)) values.set(key, value);
      request.resolve(values);
    }
    startPass(partition);
  };
  const drop = (partition: number, request: Request, error: Error): void => {
    clearTimeout(request.timer);
    const queued = waiting.get(partition);
    if (queued?.includes(request) === true) queued.splice(queued.indexOf(request), 1);
    const pass = passes.get(partition);
    if (pass?.requests.includes(request) === true) {
      pass.requests.splice(pass.requests.indexOf(request), 1);
      if (pass.requests.length === 0) {
        passes.delete(partition);
        pause(partition);
        startPass(partition);
      }
    }
    request.reject(error);
  };

  // A reader kafkajs will not restart reads nothing more: its reads fail at once with why, not at their timeout.
  consumer.on(consumer.events.CRASH, (event) => {
    if (event.payload.restart || stopped) return;
    stopped = true;
    const error = stoppedForGood(event.payload.error);
    // Rejected directly: the stopped consumer cannot pause or seek any more.
    const pending = [...[...waiting.values()].flat(), ...[...passes.values()].flatMap((pass) => pass.requests)];
    waiting.clear();
    passes.clear();
    for (const request of pending) {
      clearTimeout(request.timer);
      request.reject(error);
    }
  });
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    // Every partition starts paused; one with a pass in progress goes on (from the first offset:
    // nothing is committed, and the pass checks that it continues without a gap).
    const idle = (event.payload.memberAssignment[topic] ?? []).filter((partition) => !passes.has(partition));
    if (idle.length > 0) consumer.pause([{ topic, partitions: idle }]);
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }: EachBatchPayload) => {
      const pass = passes.get(batch.partition);
      if (pass === undefined) {
        pause(batch.partition);
        return;
      }
      const fetchedFrom = BigInt((batch as unknown as { fetchedOffset: string }).fetchedOffset);
      if (fetchedFrom > pass.next) {
        // Not a continuation of what the pass has read (a seek that did not apply): start over.
        pass.values = new Map();
        pass.next = pass.low;
        consumer.seek({ topic, partition: batch.partition, offset: pass.low.toString() });
        return;
      }
      for (const message of batch.messages) {
        const key = message.key?.toString('utf8');
        if (key?.startsWith(keyPrefix) !== true) continue;
        if (message.value === null) pass.values.delete(key);
        else pass.values.set(key, message.value.toString('utf8'));
      }
      pass.next = BigInt(batch.lastOffset()) + 1n;
      if (pass.next >= pass.high) finishPass(batch.partition, pass);
      await Promise.resolve();
    },
  });

  return {
    async read(framesPartition, readPrefix, timeoutMillis) {
      if (stopped) throw new EstimatorError('WW_ERR_ESTIMATOR_CHECKPOINT_READ', `the reader of ${topic} has stopped`, { retriable: true });
      const partition = await checkpointPartitionOf(framesPartition);
      const client = await getAdmin();
      const offsets = (await retryTransientKafka(() => client.fetchTopicOffsets(topic))).find((o) => o.partition === partition);
      const low = BigInt(offsets?.low ?? '0');
      const high = BigInt(offsets?.high ?? '0');
      if (high <= low) return new Map();
      return new Promise<Map<string, string>>((resolve, reject) => {
        const request: Request = { keyPrefix: readPrefix, low, high, resolve, reject };
        request.timer = setTimeout(() => {
          const at = passes.get(partition)?.requests.includes(request) === true ? ` (at ${passes.get(partition)?.next})` : ' (waiting for the pass before it)';
          drop(partition, request, new EstimatorError('WW_ERR_ESTIMATOR_CHECKPOINT_READ', `partition ${partition} of ${topic} not read from ${low} up to offset ${high} within ${timeoutMillis} ms${at}`, { retriable: true }));
        }, timeoutMillis);
        waiting.set(partition, [...(waiting.get(partition) ?? []), request]);
        startPass(partition);
      });
    },
    async stop() {
      stopped = true;
      const error = new EstimatorError('WW_ERR_ESTIMATOR_CHECKPOINT_READ', `the reader of ${topic} has stopped`, { retriable: true });
      for (const [partition, requests] of [...waiting]) for (const request of [...requests]) drop(partition, request, error);
      for (const [partition, pass] of [...passes]) for (const request of [...pass.requests]) drop(partition, request, error);
      await consumer.disconnect();
    },
  };
}

/** How old the frames consumer's topic metadata may get before it is read again (ms). */
const FRAMES_METADATA_MAX_AGE_MILLIS = 30_000;

/** kafkajs' request timeout, which the estimator leaves at its default (ms). */
const KAFKAJS_REQUEST_TIMEOUT_MILLIS = 30_000;

/** Joins the group with `consumer` and hands assignments, batches (messages decoded to {@link ConsumedMessage}) and crashes to `handlers`; commits are the caller's. */
async function runFramesConsumer(consumer: Consumer, options: EstimatorKafkaOptions, handlers: FramesHandlers): Promise<void> {
  // The member id of the last join: a different one means this consumer is a new member.
  let memberId: string | undefined;
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    const rejoined = memberId !== undefined && memberId !== event.payload.memberId;
    memberId = event.payload.memberId;
    // The join and sync were sent no earlier than `duration` before the event.
    handlers.onAssignment(event.payload.memberAssignment[options.framesTopic] ?? [], { memberId, rejoined, joinStartedAtMillis: event.timestamp - event.payload.duration });
  });
  // The send time of the last heartbeat answered (kafkajs emits the request event when the
  // answer comes, before it reads the answer's error code, then the heartbeat event on success):
  // the coordinator's session clock restarted no earlier than that.
  let heartbeatSentAt: number | undefined;
  consumer.on(consumer.events.REQUEST, (event) => {
    if (event.payload.apiName === 'Heartbeat') heartbeatSentAt = event.payload.sentAt;
  });
  consumer.on(consumer.events.HEARTBEAT, (event) => {
    // Without the request event (another kafkajs), the heartbeat may have been sent as much as a
    // request timeout before its answer: counted from then, which confirms less, never more.
    handlers.onMembershipConfirmed(heartbeatSentAt ?? event.timestamp - KAFKAJS_REQUEST_TIMEOUT_MILLIS);
    heartbeatSentAt = undefined;
  });
  consumer.on(consumer.events.CRASH, (event) => {
    handlers.onCrash(event.payload.error, event.payload.restart);
  });
  await consumer.connect();
  await consumer.subscribe({ topic: options.framesTopic, fromBeginning: options.fromBeginning });
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 1,
    eachBatch: async ({ batch, heartbeat, isStale }: EachBatchPayload) => {
      await handlers.onBatch({
        partition: batch.partition,
        firstOffset: batch.messages[0]?.offset,
        highWatermark: batch.highWatermark,
        heartbeat,
        isStale,
        messages: consumedMessagesOf(batch.messages),
      });
    },
  });
}
