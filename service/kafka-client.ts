import { Kafka, logLevel, Partitioners, type ICustomPartitioner, type LogEntry, type RetryOptions } from 'kafkajs';
import { installKafkaCompressionCodecs } from './kafka-compression.ts';
import { installNativeKafkaCrc32c } from './kafka-native-crc.ts';
import { installFastKafkaRecordBatchEncoder, installFastKafkaRecordDecoder, installFastKafkaRecordEncoder } from './kafka-record-codec.ts';
import { kafkaClientSecurity, type KafkaSecurityConfig } from './kafka-security.ts';

/** One log entry of kafkajs, as {@link createKafkaClient} passes it on. */
export interface KafkaClientLogEntry {
  readonly level: 'error' | 'warn' | 'info' | 'debug';
  /** kafkajs' component, e.g. `Connection`, `Producer`. */
  readonly namespace: string;
  readonly message: string;
  /** kafkajs' `error` field of the entry (a string), when it has one. */
  readonly error: unknown;
}

/** Settings of {@link createKafkaClient}. */
export interface KafkaClientOptions {
  readonly clientId: string;
  /** Bootstrap brokers, `host:port`. */
  readonly brokers: readonly string[];
  /**
   * SASL and TLS as read by service/kafka-security.ts readKafkaSecurity, credentials still
   * {@link Secret}s: revealed here, to kafkajs only. Undefined = plaintext without login.
   */
  readonly security?: KafkaSecurityConfig | undefined;
  /** Longest wait for a connection to a broker (ms); kafkajs' default (1 s) when undefined. */
  readonly connectionTimeoutMillis?: number | undefined;
  /** Longest wait for one request (ms); kafkajs' default (30 s) when undefined. */
  readonly requestTimeoutMillis?: number | undefined;
  /** kafkajs' retry of each request (retries, initialRetryTime and maxRetryTime in ms); kafkajs' default when undefined. */
  readonly retry?: RetryOptions | undefined;
  /**
   * Where kafkajs' own log entries go, from `level` up (`error`: errors only, `warn`: warnings
   * too); undefined = kafkajs says nothing (it would otherwise print to the console).
   */
  readonly log?: { readonly level: 'error' | 'warn'; readonly entry: (entry: KafkaClientLogEntry) => void } | undefined;
}

const LEVEL_NAMES: Readonly<Record<number, KafkaClientLogEntry['level']>> = {
  [logLevel.ERROR]: 'error',
  [logLevel.WARN]: 'warn',
  [logLevel.INFO]: 'info',
  [logLevel.DEBUG]: 'debug',
};

/**
 * The one way warpwatch makes a kafkajs client (the collector's producer, the estimator, the
 * CLI's readers and demo, the local stack's probe): brokers, client id, SASL/TLS from the shared
 * security slice (secrets revealed here only), timeouts, the request retry, and kafkajs' log
 * passed to the caller (or silenced). Connects nothing: that happens when the caller's
 * producer, consumer or admin connects.
 *
 * @example
 * const kafka = createKafkaClient({ clientId: 'warpwatch-collector', brokers: config.kafka.brokers, security: config.kafka, retry: { retries: 5 } });
 * const admin = kafka.admin();
 */
export function createKafkaClient(options: KafkaClientOptions): Kafka {
  // Record batches' CRC-32C computed natively (service/kafka-native-crc.ts); kafkajs' own where not.
  installNativeKafkaCrc32c();
  // Records decoded without kafkajs' per-header copies and BigInt offsets, and records and
  // record batches encoded into one buffer of their size (service/kafka-record-codec.ts): the
  // same records and bytes, kafkajs' own functions where they cannot.
  installFastKafkaRecordDecoder();
  installFastKafkaRecordEncoder();
  installFastKafkaRecordBatchEncoder();
  // snappy, lz4 and zstd batches, which kafkajs cannot read or write by itself (service/kafka-compression.ts).
  installKafkaCompressionCodecs();
  const log = options.log;
  return new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...(options.connectionTimeoutMillis === undefined ? {} : { connectionTimeout: options.connectionTimeoutMillis }),
    ...(options.requestTimeoutMillis === undefined ? {} : { requestTimeout: options.requestTimeoutMillis }),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    ...(options.security === undefined ? {} : kafkaClientSecurity(options.security)),
    logLevel: log === undefined ? logLevel.NOTHING : log.level === 'warn' ? logLevel.WARN : logLevel.ERROR,
    ...(log === undefined
      ? {}
      : {
          logCreator: () => (entry: LogEntry) => {
            log.entry({ level: LEVEL_NAMES[entry.level] ?? 'error', namespace: entry.namespace, message: entry.log.message, error: entry.log.error });
          },
        }),
  });
}

/** Distinct (topic, partition count, key) triples remembered; the cache starts afresh beyond it. */
export const PARTITIONER_CACHE_LIMIT = 100_000;

/**
 * kafkajs' `Partitioners.DefaultPartitioner` with the partitions of string keys remembered.
 * kafkajs' own (the Java client's: murmur2 of the record's key, modulo the topic's partitions)
 * hashes every keyed record with BigInt-backed `Long` objects, several per 4 bytes of key: ~6 µs
 * a record for a stream key of ~80 bytes (docs/estimator.md, Kafka records). Both
 * services key their records by stream, and a stream's key comes back with every frame or
 * window, so the partition is computed once per topic, partition count and key. A
 * record with an explicit partition goes there, a string key to the partition kafkajs' murmur2
 * gives it (computed once per topic, partition count and key), anything else (a Buffer key, no
 * key: round robin over the available partitions) to kafkajs' own partitioner.
 *
 * @returns the partitioner factory for kafkajs' `producer({ createPartitioner })`.
 * @example kafka.producer({ idempotent: true, createPartitioner: cachingDefaultPartitioner })
 */
export const cachingDefaultPartitioner: ICustomPartitioner = () => {
  const kafkajsPartitioner = Partitioners.DefaultPartitioner();
  const partitions = new Map<string, number>();
  return (args) => {
    const { message } = args;
    // As kafkajs' own: an explicit partition wins.
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    if (typeof message.key !== 'string') return kafkajsPartitioner(args);
    // The count first: a topic name never holds the separator, so the triple is unambiguous.
    const remembered = `${args.partitionMetadata.length}\u0000${args.topic}\u0000${message.key}`;
    let partition = partitions.get(remembered);
    if (partition === undefined) {
      partition = kafkajsPartitioner(args);
      if (partitions.size >= PARTITIONER_CACHE_LIMIT) partitions.clear();
      partitions.set(remembered, partition);
    }
    return partition;
  };
};

/**
 * The partition a producer with {@link cachingDefaultPartitioner} (and kafkajs' default, the
 * Java client's murmur2) gives a record with this string key when the topic has
 * `partitionCount` partitions. The estimator uses it to see streams move after partitions are
 * added (docs/estimator.md § Adding partitions).
 *
 * @example keyPartition('train/matpow|n=32|cuda|GPU-…|node7', 6) // 0..5
 */
export function keyPartition(key: string, partitionCount: number): number {
  keyPartitioner ??= Partitioners.DefaultPartitioner();
  const partitionMetadata = Array.from({ length: partitionCount }, (_, partitionId) => ({ partitionId, partitionErrorCode: 0, leader: 0, replicas: [0], isr: [0] }));
  return keyPartitioner({ topic: '', partitionMetadata, message: { key, value: null } });
}
let keyPartitioner: ReturnType<typeof Partitioners.DefaultPartitioner> | undefined;

/**
 * The answers kafkajs logs as errors and then retries by itself: a broker that was restarted
 * answers for a while that its coordinators are loading or that it is not (yet) the leader
 * (kafkajs' retriable protocol errors). A line per answer reads as a failure to an operator
 * (`kafkajs Connection: Response InitProducerId(key: 22, version: 4)`) while nothing failed; a
 * request that still fails after kafkajs' retries surfaces as the caller's own error.
 */
const RETRIED_ANSWER = /coordinator is loading|coordinator is not available|not the correct coordinator|not the leader for that topic-partition|no leader for this topic-partition|broker is not available|fewer in-sync replicas|leadership election|leader epoch in the request is older/i;

/**
 * Whether a kafkajs log entry is an answer kafkajs retries by itself (see {@link RETRIED_ANSWER}),
 * which the services leave out of their logs.
 *
 * @example isRetriedKafkaAnswer({ level: 'error', namespace: 'Connection', message: 'Response InitProducerId(key: 22, version: 4)', error: "The coordinator is loading and hence can't process requests for this group" }) // true
 */
export function isRetriedKafkaAnswer(entry: KafkaClientLogEntry): boolean {
  return entry.namespace === 'Connection' && entry.message.startsWith('Response ') && RETRIED_ANSWER.test(String(entry.error ?? ''));
}
