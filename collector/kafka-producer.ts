import type { Message, Producer } from 'kafkajs';
import { MAX_FRAME_RECORD_BYTES } from '../contracts/index.ts';
import {
  cachingDefaultPartitioner,
  createKafkaClient,
  ensureServiceTopics,
  isRetriedKafkaAnswer,
  KafkaAccessDenied,
  kafkaAuthorizationDenial,
  kafkaCompressionType,
  kafkaPrincipalOf,
  isUnreachableError,
  kafkaTlsFailure,
  missingAclText,
  type KafkaAclNeed,
} from '../service/index.ts';
import type { CollectorConfig } from './config.ts';
import type { LogFunction } from './delivery-pipeline.ts';
import { CollectorError, KafkaProduceError, isKafkaAuthenticationError } from './errors.ts';
import type { ProduceFunction, ProduceRecord } from './produce-record.ts';

/** The collector's only connection to Kafka; see {@link createKafkaProducer}. */
export interface KafkaProducerAdapter {
  /** Sends a batch (acks from all in-sync replicas); rejects with KafkaProduceError when it could not. */
  readonly send: ProduceFunction;
  /**
   * Creates the frames and DLQ topics if missing, as contracts/topics.ts TOPIC_SPECS defines
   * them, and checks existing ones against it (done lazily by the first send too; call it at
   * start so a misfit topic is said at once). Each problem is logged once as a warning
   * (WW_ERR_KAFKA_TOPIC_CONFIG) and kept in {@link KafkaProducerAdapter.topicProblems}.
   */
  ensureTopics(): Promise<void>;
  /** The problems the last topic check found (empty = the topics fit, or not checked yet): /healthz reasons. */
  topicProblems(): readonly string[];
  /** Disconnects, waiting at most `timeoutMillis`. */
  close(timeoutMillis?: number): Promise<void>;
}

const KAFKA_LOG_REPEAT_MILLIS = 30_000;

/**
 * The kafkajs adapter of the collector: an idempotent producer (acks -1, the broker
 * de-duplicates retried batches, per-partition order kept with up to 5 in-flight
 * requests), the murmur2 default partitioner (each key's answer remembered) so key = stream id maps a stream to one
 * partition, optional gzip, SASL/SCRAM and TLS. Topics are created if missing as
 * contracts/topics.ts defines them (the configured partitions), and checked if they exist. After a failed send the producer is discarded and a new one
 * (new producer id) is created on the next send, so a broker restart never leaves a
 * producer with stale sequence numbers. Credentials are passed to kafkajs only, never logged;
 * kafkajs' own warnings and errors are forwarded to `log`, each distinct text at most every 30 s.
 *
 * @throws nothing at creation (no I/O); `send` rejects with KafkaProduceError (retriable),
 *   `ensureTopics` with CollectorError WW_ERR_KAFKA_TOPIC.
 * @example
 * const kafka = createKafkaProducer(config.kafka, log);
 * await kafka.send(records);
 * await kafka.close();
 */
export function createKafkaProducer(config: CollectorConfig['kafka'], log: LogFunction = () => {}): KafkaProducerAdapter {
  const lastLogged = new Map<string, number>();
  const kafka = createKafkaClient({
    clientId: config.clientId,
    brokers: config.brokers,
    security: config,
    connectionTimeoutMillis: config.connectionTimeoutMillis,
    requestTimeoutMillis: config.requestTimeoutMillis,
    retry: { retries: config.retries, initialRetryTime: 100, maxRetryTime: 2_000 },
    log: {
      level: 'warn',
      entry: (entry) => {
        const message = entry.message;
        // Bounded retries are a deliberate choice here: a failed batch is spooled and re-sent by a new producer.
        if (message.includes('Limiting retries for the idempotent producer')) return;
        // A broker that cannot be reached is said once per outage by the delivery pipeline, with
        // what to try; kafkajs' own line per connection attempt would repeat it.
        if (isUnreachableError(`${message} ${String(entry.error ?? '')}`)) return;
        // A failed TLS handshake is said by the delivery pipeline as WW_ERR_KAFKA_TLS, with what to change.
        if (kafkaTlsFailure(`${message} ${String(entry.error ?? '')}`) !== undefined) return;
        // A restarted broker's "coordinator loading" answers are retried by kafkajs; a send that still fails is the pipeline's to say.
        if (isRetriedKafkaAnswer(entry)) return;
        const now = Date.now();
        const previous = lastLogged.get(message);
        if (previous !== undefined && now - previous < KAFKA_LOG_REPEAT_MILLIS) return;
        if (lastLogged.size > 1000) lastLogged.clear();
        lastLogged.set(message, now);
        log(entry.level === 'error' ? 'error' : 'warn', `kafkajs ${entry.namespace}: ${message}`);
      },
    },
  });
  const compression = kafkaCompressionType(config.compression);
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;
  let topicsReady = false;
  let problems: readonly string[] = [];

  const connect = (): Promise<Producer> => {
    if (producer !== undefined) return Promise.resolve(producer);
    connecting ??= (async () => {
      const created = kafka.producer({
        idempotent: true,
        maxInFlightRequests: config.maxInFlightRequests,
        allowAutoTopicCreation: false,
        // kafkajs' default partitioner (murmur2 of the key), each stream key's partition computed once.
        createPartitioner: cachingDefaultPartitioner,
        retry: { retries: config.retries, initialRetryTime: 100, maxRetryTime: 2_000 },
      });
      try {
        await created.connect();
      } catch (error) {
        await created.disconnect().catch(() => {});
        throw error;
      }
      producer = created;
      return created;
    })().finally(() => {
      connecting = undefined;
    });
    return connecting;
  };

  const discardProducer = async (): Promise<void> => {
    const old = producer;
    producer = undefined;
    if (old !== undefined) await old.disconnect().catch(() => {});
  };

  const authError = (error: unknown): CollectorError =>
    new CollectorError(
      'WW_ERR_KAFKA_AUTH',
      `Kafka at ${config.brokers.join(',')} refused the SASL login${config.sasl === undefined ? ' (no WARPWATCH_KAFKA_SASL_MECHANISM set: the listener may require one)' : ` of user '${config.sasl.username}' with ${config.sasl.mechanism}`}: ${(error as Error).message}; check WARPWATCH_KAFKA_SASL_USERNAME, WARPWATCH_KAFKA_SASL_PASSWORD(_FILE) and WARPWATCH_KAFKA_SASL_MECHANISM (records stay in the spool and are sent once the login works)`,
      { retriable: true, cause: error },
    );

  /** A TLS handshake that failed: the broker answered, its certificate (or ours) is the problem; never retried in plaintext. */
  const tlsError = (error: unknown, reason: string): CollectorError =>
    new CollectorError('WW_ERR_KAFKA_TLS', `TLS handshake with Kafka at ${config.brokers.join(',')} failed: ${reason} (records stay in the spool and are sent once it succeeds)`, {
      retriable: true,
      cause: error,
    });
  /** The broker refused an operation of this principal: which ACLs to grant (docs/security.md § Kafka ACLs); records wait in the spool meanwhile. */
  const aclError = (needs: readonly KafkaAclNeed[], error: unknown): CollectorError =>
    new CollectorError('WW_ERR_KAFKA_AUTHORIZATION', `Kafka at ${config.brokers.join(',')} refused: ${missingAclText(kafkaPrincipalOf(config), needs)} (records stay in the spool and are sent once it is granted)`, {
      retriable: true,
      cause: error,
    });

  const classified = (error: unknown, topics: readonly string[] = []): CollectorError | undefined => {
    if (error instanceof CollectorError && (error.code === 'WW_ERR_KAFKA_AUTH' || error.code === 'WW_ERR_KAFKA_TLS' || error.code === 'WW_ERR_KAFKA_AUTHORIZATION')) return error;
    if (isKafkaAuthenticationError(error)) return authError(error);
    if (error instanceof KafkaAccessDenied) return aclError(error.needs, error);
    // A produce refused: Write on the batch's topics (the topic check passed, so Describe and DescribeConfigs are there).
    if (kafkaAuthorizationDenial(error) === 'Topic' && topics.length > 0) return aclError(topics.map((name) => ({ operation: 'Write', resourceType: 'Topic', name })), error);
    const tls = kafkaTlsFailure(error);
    return tls === undefined ? undefined : tlsError(error, tls);
  };

  // One check at a time: the start and the first send may both ask.
  let checking: Promise<void> | undefined;
  const ensureTopics = (): Promise<void> => {
    if (topicsReady) return Promise.resolve();
    checking ??= checkTopics().finally(() => {
      checking = undefined;
    });
    return checking;
  };
  const checkTopics = async (): Promise<void> => {
    const admin = kafka.admin();
    try {
      await admin.connect();
      // Records are at most the largest frame with its key and headers, or the configured limit when smaller.
      const neededMessageBytes = Math.min(config.maxMessageBytes, MAX_FRAME_RECORD_BYTES);
      const report = await ensureServiceTopics(
        admin,
        [
          { role: 'frames', name: config.framesTopic, neededMessageBytes },
          { role: 'dlq', name: config.dlqTopic, neededMessageBytes },
        ],
        { partitions: config.partitions, replicationFactor: config.replicationFactor },
      );
      if (report.created.length > 0) log('info', `created Kafka topic(s) ${report.created.join(', ')} as contracts/topics.ts defines them (max.message.bytes=${[...report.maxMessageBytes.values()].join('/')})`);
      for (const problem of report.problems) log('warn', `WW_ERR_KAFKA_TOPIC_CONFIG: ${problem}`);
      problems = report.problems;
      topicsReady = true;
    } catch (error) {
      const known = classified(error);
      if (known !== undefined) throw known;
      throw new CollectorError('WW_ERR_KAFKA_TOPIC', `could not check/create topics ${config.framesTopic}, ${config.dlqTopic} on ${config.brokers.join(',')}: ${(error as Error).message}`, {
        retriable: true,
        cause: error,
      });
    } finally {
      await admin.disconnect().catch(() => {});
    }
  };

  const send: ProduceFunction = async (records) => {
    if (records.length === 0) return;
    try {
      await ensureTopics();
      const active = await connect();
      await active.sendBatch({ acks: -1, compression, timeout: config.requestTimeoutMillis, topicMessages: groupByTopic(records) });
    } catch (error) {
      await discardProducer();
      // A topic deleted under the collector: check (and create, where allowed) the topics again before the next send.
      if (isUnknownTopic(error)) topicsReady = false;
      const known = classified(error, [...new Set(records.map((record) => record.topic))]);
      if (known !== undefined) throw known;
      throw new KafkaProduceError(`could not deliver ${records.length} record(s) to ${config.brokers.join(',')}: ${(error as Error).message}`, records.length, error);
    }
  };

  return {
    send,
    ensureTopics,
    topicProblems: () => problems,
    async close(timeoutMillis = 5_000) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        (async () => {
          if (connecting !== undefined) await connecting.catch(() => {});
          await discardProducer();
        })(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMillis);
        }),
      ]);
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** Whether kafkajs' error (or one it wraps) is the broker saying it has no such topic-partition. */
function isUnknownTopic(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; typeof e === 'object' && e !== null && depth < 6; depth++) {
    const { type, message } = e as { type?: unknown; message?: unknown };
    if (type === 'UNKNOWN_TOPIC_OR_PARTITION' || (typeof message === 'string' && /does not host this topic-partition/i.test(message))) return true;
    e = (e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError;
  }
  return false;
}

/** Groups records per topic, keeping their order within each topic (kafkajs keeps it per partition). */
function groupByTopic(records: readonly ProduceRecord[]): { topic: string; messages: Message[] }[] {
  const byTopic = new Map<string, Message[]>();
  for (const record of records) {
    let messages = byTopic.get(record.topic);
    if (messages === undefined) {
      messages = [];
      byTopic.set(record.topic, messages);
    }
    messages.push({
      key: record.key,
      value: Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength),
      headers: record.headers as Record<string, string>,
      timestamp: String(Math.round(record.timestampMillis)),
    });
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
