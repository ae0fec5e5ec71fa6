/**
 * Kafka topics the pipeline uses, defined once for the collector (which produces frames and
 * DLQ records), the estimator (which consumes frames and produces the others) and the CLI.
 * Each service's config can rename them (WARPWATCH_*_TOPIC).
 *
 * @example
 * consumer.subscribe({ topic: TOPICS.frames });
 */
export const TOPICS = {
  frames: 'warpwatch.frames',
  dlq: 'warpwatch.dlq',
  distributions: 'warpwatch.distributions',
  alerts: 'warpwatch.alerts',
  estimatorCheckpoints: 'warpwatch.estimator.checkpoints',
} as const;

/** The role of a topic: a key of {@link TOPICS}. */
export type TopicRole = keyof typeof TOPICS;

/**
 * `max.message.bytes` of the topics warpwatch creates, bytes (8 MiB). Room for the largest frame
 * SPEC.md allows (4 MiB payload) with its key and headers, and for the largest checkpoint; the
 * broker's default (1 MiB + 12) is not.
 */
export const TOPIC_MAX_MESSAGE_BYTES = 8 * 1024 * 1024;

/**
 * Bytes a frames or DLQ record can reach: the largest frame (16-byte header + 4 MiB payload,
 * protocol/limits.ts) plus 64 KiB for its key, headers (labels included) and record overhead.
 * A topic that carries frames must take records this large.
 */
export const MAX_FRAME_RECORD_BYTES = 16 + 4 * 1024 * 1024 + 64 * 1024;

const DAY_MILLIS = 24 * 60 * 60 * 1000;

/** How a topic is created, and what a running service needs of it (see {@link TOPIC_SPECS}). */
export interface TopicSpec {
  /** Partitions it is created with: `configured` = the service's WARPWATCH_KAFKA_PARTITIONS, or a fixed count. */
  readonly partitions: 'configured' | number;
  /** `cleanup.policy`: `compact` keeps the latest record per key (state), `delete` ages records out. */
  readonly cleanupPolicy: 'delete' | 'compact';
  /** `max.message.bytes` it is created with, bytes. */
  readonly maxMessageBytes: number;
  /** Records the services write or read can be this large, bytes: an existing topic must take them. */
  readonly neededMessageBytes: number;
  /** `retention.ms` it is created with (`delete` topics); undefined = none set (compacted topics keep the latest per key). */
  readonly retentionMillis: number | undefined;
  /**
   * `segment.bytes` and `segment.ms` it is created with, or undefined for the broker's defaults
   * (1 GiB, 7 days). Kafka's cleaner never compacts the active segment, so a compacted topic that
   * is read from its beginning on every restore rolls segments sooner: what a reader meets
   * beyond the latest record per key stays bounded.
   */
  readonly segment?: { readonly bytes: number; readonly millis: number };
}

/**
 * Each topic's configuration, defined once: the collector and the estimator create a missing
 * topic with exactly this (whichever starts first), and both check an existing one against
 * it at start (docs/collector.md, docs/estimator.md "Kafka topics").
 */
export const TOPIC_SPECS: Readonly<Record<TopicRole, TopicSpec>> = Object.freeze({
  frames: { partitions: 'configured', cleanupPolicy: 'delete', maxMessageBytes: TOPIC_MAX_MESSAGE_BYTES, neededMessageBytes: MAX_FRAME_RECORD_BYTES, retentionMillis: 7 * DAY_MILLIS },
  dlq: { partitions: 1, cleanupPolicy: 'delete', maxMessageBytes: TOPIC_MAX_MESSAGE_BYTES, neededMessageBytes: MAX_FRAME_RECORD_BYTES, retentionMillis: 30 * DAY_MILLIS },
  distributions: { partitions: 'configured', cleanupPolicy: 'compact', maxMessageBytes: TOPIC_MAX_MESSAGE_BYTES, neededMessageBytes: 1024 * 1024, retentionMillis: undefined },
  alerts: { partitions: 'configured', cleanupPolicy: 'delete', maxMessageBytes: TOPIC_MAX_MESSAGE_BYTES, neededMessageBytes: 64 * 1024, retentionMillis: 30 * DAY_MILLIS },
  // As many partitions as the frames topic: frames partition p's checkpoint records go to
  // partition p mod (its count), so a restore reads one partition (any count works).
  estimatorCheckpoints: {
    partitions: 'configured',
    cleanupPolicy: 'compact',
    maxMessageBytes: TOPIC_MAX_MESSAGE_BYTES,
    neededMessageBytes: TOPIC_MAX_MESSAGE_BYTES,
    retentionMillis: undefined,
    segment: { bytes: 64 * 1024 * 1024, millis: 10 * 60 * 1000 },
  },
});

/** A topic to create, in the shape of kafkajs' `admin.createTopics({ topics })`. */
export interface TopicToCreate {
  readonly topic: string;
  readonly numPartitions: number;
  readonly replicationFactor: number;
  readonly configEntries: { name: string; value: string }[];
}

/**
 * The creation request of topic `name` in role `role`, from {@link TOPIC_SPECS}.
 *
 * @param options.partitions - the service's configured partitions (used when the spec says `configured`)
 * @param options.replicationFactor - -1 = the broker's default
 * @example admin.createTopics({ topics: [topicToCreate('frames', 'warpwatch.frames', { partitions: 6, replicationFactor: -1 })] })
 */
export function topicToCreate(role: TopicRole, name: string, options: { readonly partitions: number; readonly replicationFactor: number }): TopicToCreate {
  const spec = TOPIC_SPECS[role];
  const configEntries = [
    { name: 'cleanup.policy', value: spec.cleanupPolicy },
    { name: 'max.message.bytes', value: String(spec.maxMessageBytes) },
    ...(spec.retentionMillis === undefined ? [] : [{ name: 'retention.ms', value: String(spec.retentionMillis) }]),
    ...(spec.segment === undefined
      ? []
      : [
          { name: 'segment.bytes', value: String(spec.segment.bytes) },
          { name: 'segment.ms', value: String(spec.segment.millis) },
        ]),
  ];
  return { topic: name, numPartitions: spec.partitions === 'configured' ? options.partitions : spec.partitions, replicationFactor: options.replicationFactor, configEntries };
}

/** What a broker says about an existing topic (admin describeConfigs and metadata). */
export interface ExistingTopic {
  readonly partitions: number;
  /** Its effective configuration (`max.message.bytes`, `cleanup.policy`, ...), as the broker reports it. */
  readonly configs: Readonly<Record<string, string | undefined>>;
}

/**
 * Why an existing topic cannot serve its role: each problem one sentence naming the topic, the
 * setting, what it is, what is needed, what happens meanwhile and the command that fixes it.
 * Empty = fit. `neededMessageBytes` overrides the spec's need (a collector configured with a
 * smaller WARPWATCH_KAFKA_MAX_MESSAGE_BYTES sends no larger records).
 *
 * @example topicConfigProblems('frames', 'warpwatch.frames', { partitions: 6, configs: { 'max.message.bytes': '1048588', 'cleanup.policy': 'delete' } })
 * // ['topic warpwatch.frames has max.message.bytes=1048588, it must take records of 4259856 bytes: ...']
 */
export function topicConfigProblems(role: TopicRole, name: string, existing: ExistingTopic, options: { readonly neededMessageBytes?: number } = {}): string[] {
  const spec = TOPIC_SPECS[role];
  const problems: string[] = [];
  const needed = options.neededMessageBytes ?? spec.neededMessageBytes;
  const maxMessage = Number(existing.configs['max.message.bytes']);
  if (Number.isFinite(maxMessage) && maxMessage < needed) {
    problems.push(
      `topic ${name} has max.message.bytes=${maxMessage}, it must take records of ${needed} bytes: larger ones are refused by the broker ` +
        `(the collector moves them to the DLQ); raise it: kafka-configs.sh --alter --entity-type topics --entity-name ${name} --add-config max.message.bytes=${spec.maxMessageBytes}`,
    );
  }
  const policy = existing.configs['cleanup.policy'];
  if (policy !== undefined && !policy.split(',').includes(spec.cleanupPolicy)) {
    problems.push(`topic ${name} has cleanup.policy=${policy}, it needs ${spec.cleanupPolicy}; set it: kafka-configs.sh --alter --entity-type topics --entity-name ${name} --add-config cleanup.policy=${spec.cleanupPolicy}`);
  }
  return problems;
}
