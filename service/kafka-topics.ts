import type { Admin, ConfigResourceTypes } from 'kafkajs';
import { topicConfigProblems, topicToCreate, TOPIC_SPECS, type TopicRole } from '../contracts/index.ts';
import { retry } from './retry.ts';
import { KafkaAccessDenied, kafkaAuthorizationDenial, type KafkaAclNeed, type KafkaAclOperation } from './kafka-authorization.ts';

// kafkajs' ConfigResourceTypes.TOPIC: the enum is not a named export Node's ESM loader sees in kafkajs (CommonJS).
const TOPIC_RESOURCE = 2 as ConfigResourceTypes;

/** Broker answers that mean "not yet": KRaft announces a new topic's leader in metadata a moment before the partition serves requests. */
const TRANSIENT_KAFKA_ERRORS = new Set([
  'NOT_LEADER_FOR_PARTITION',
  'NOT_LEADER_OR_FOLLOWER',
  'LEADER_NOT_AVAILABLE',
  'UNKNOWN_TOPIC_OR_PARTITION',
  'REQUEST_TIMED_OUT',
  'COORDINATOR_NOT_AVAILABLE',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'NOT_COORDINATOR',
  'OFFSET_NOT_AVAILABLE',
]);

/**
 * Whether a kafkajs error is a transient broker state worth retrying (leader moving or not yet
 * elected, coordinator loading). Looks through kafkajs' retry wrappers (`originalError`, `cause`).
 *
 * @example
 * isTransientKafkaError(Object.assign(new Error('x'), { type: 'NOT_LEADER_FOR_PARTITION' })); // true
 */
export function isTransientKafkaError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const type = (current as { type?: unknown }).type;
    if (typeof type === 'string' && TRANSIENT_KAFKA_ERRORS.has(type)) return true;
    current = (current as { originalError?: unknown; cause?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Runs a Kafka admin call again while it fails with a transient broker state (see
 * isTransientKafkaError), with doubling pauses from 100 ms up to 1 s ({@link retry}), for at
 * most `timeoutMillis` in all. kafkajs' own admin retry does not cover these for every call
 * (`fetchTopicOffsets` gives up at once on NOT_LEADER_FOR_PARTITION, which a freshly created
 * topic answers for a moment on KRaft).
 *
 * @throws the last error when it is not transient or the time is up.
 * @example
 * const offsets = await retryTransientKafka(() => admin.fetchTopicOffsets('warpwatch.frames'));
 */
export async function retryTransientKafka<T>(operation: () => Promise<T>, timeoutMillis = 15_000): Promise<T> {
  return retry(operation, { initialMillis: 100, maxMillis: 1_000, timeoutMillis, shouldRetry: isTransientKafkaError });
}

/** A topic a service uses: its role (contracts/topics.ts TOPIC_SPECS) and its configured name. */
export interface ServiceTopic {
  readonly role: TopicRole;
  readonly name: string;
  /** Overrides the spec's need for this service (bytes of the largest record it sends or reads). */
  readonly neededMessageBytes?: number;
  /** What the service does with the topic, for the ACLs named when the broker refuses (default Write). */
  readonly access?: 'Read' | 'Write' | 'ReadWrite';
}

/** What {@link ensureServiceTopics} did and found. */
export interface ServiceTopicsReport {
  /** Topics it created (with TOPIC_SPECS). */
  readonly created: readonly string[];
  /** One sentence per setting of an existing topic that cannot serve its role (contracts/topics.ts topicConfigProblems). */
  readonly problems: readonly string[];
  /** The effective max.message.bytes of each topic, bytes (the spec's for one just created). */
  readonly maxMessageBytes: ReadonlyMap<string, number>;
  /** The partition count of each topic, as the metadata says. */
  readonly partitions: ReadonlyMap<string, number>;
}

/**
 * Creates the service's missing topics exactly as contracts/topics.ts TOPIC_SPECS defines them
 * (so the first service to start decides nothing), then checks every one against its spec with
 * describeConfigs and the metadata: a `max.message.bytes` too small for the records the service
 * sends or reads, a wrong `cleanup.policy`, a wrong fixed partition count. A topic created
 * concurrently by another service is fine.
 *
 * @param admin - a connected kafkajs admin client
 * @param topics - the service's topics
 * @param options.partitions - partitions of topics whose spec says `configured`; replicationFactor -1 = broker default
 * @returns what was created and the problems found (the caller logs them with WW_ERR_KAFKA_TOPIC_CONFIG and reports them on /healthz)
 * @throws KafkaAccessDenied (service/kafka-authorization.ts) when the broker refuses, with the
 *   ACLs missing; the admin client's other errors (unreachable broker)
 * @example const report = await ensureServiceTopics(admin, [{ role: 'frames', name: 'warpwatch.frames' }], { partitions: 6, replicationFactor: -1 });
 */
export async function ensureServiceTopics(admin: Admin, topics: readonly ServiceTopic[], options: { readonly partitions: number; readonly replicationFactor: number }): Promise<ServiceTopicsReport> {
  // A topic another service has just created can answer "unknown" for a moment (describeConfigs,
  // metadata): tried again, from the start (what exists by then is only checked).
  const created: string[] = [];
  try {
    return await retryTransientKafka(() => ensureServiceTopicsOnce(admin, topics, options, created));
  } catch (error) {
    if (kafkaAuthorizationDenial(error) === undefined) throw error;
    const needs = await topicAccessNeeds(admin, topics);
    // Refused, yet every topic answers alone: the refusal was the creation of a missing topic.
    throw new KafkaAccessDenied(needs.length > 0 ? needs : topics.map((t) => ({ operation: 'Describe' as const, resourceType: 'Topic' as const, name: t.name })), error);
  }
}

/**
 * The ACLs a refused topic check lacks, probed one topic at a time: metadata (Describe, which
 * the broker also answers as a refusal for a topic that does not exist, to hide it) and
 * describeConfigs (DescribeConfigs). Describe is named as the operation the service needs
 * (Read, Write), which implies it.
 */
async function topicAccessNeeds(admin: Admin, topics: readonly ServiceTopic[]): Promise<KafkaAclNeed[]> {
  const needs: KafkaAclNeed[] = [];
  for (const topic of topics) {
    const main: KafkaAclOperation[] = topic.access === 'Read' ? ['Read'] : topic.access === 'ReadWrite' ? ['Read', 'Write'] : ['Write'];
    try {
      await admin.fetchTopicMetadata({ topics: [topic.name] });
    } catch (error) {
      if (kafkaAuthorizationDenial(error) !== undefined) needs.push(...main.map((operation) => ({ operation, resourceType: 'Topic' as const, name: topic.name })));
      continue;
    }
    try {
      await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: TOPIC_RESOURCE, name: topic.name, configNames: ['cleanup.policy'] }] });
    } catch (error) {
      if (kafkaAuthorizationDenial(error) !== undefined) needs.push({ operation: 'DescribeConfigs', resourceType: 'Topic', name: topic.name });
    }
  }
  return needs;
}

/** One attempt of {@link ensureServiceTopics}; the topics it creates are added to `created` at once (a later step may fail). */
async function ensureServiceTopicsOnce(
  admin: Admin,
  topics: readonly ServiceTopic[],
  options: { readonly partitions: number; readonly replicationFactor: number },
  created: string[],
): Promise<ServiceTopicsReport> {
  const existing = new Set(await admin.listTopics());
  const missing = topics.filter((t) => !existing.has(t.name));
  if (missing.length > 0) {
    try {
      await admin.createTopics({ waitForLeaders: true, topics: missing.map((t) => topicToCreate(t.role, t.name, options)) });
      created.push(...missing.map((t) => t.name));
    } catch (error) {
      // Created concurrently by another service: checked below like any existing topic.
      if (!((error as { type?: string }).type === 'TOPIC_ALREADY_EXISTS' || /already exists/i.test((error as Error).message))) throw error;
    }
  }
  const names = topics.map((t) => t.name);
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: names.map((name) => ({ type: TOPIC_RESOURCE, name, configNames: ['max.message.bytes', 'cleanup.policy'] })),
  });
  const metadata = await admin.fetchTopicMetadata({ topics: names });
  const problems: string[] = [];
  const maxMessageBytes = new Map<string, number>();
  const partitionCounts = new Map<string, number>();
  for (const topic of topics) {
    const resource = described.resources.find((r) => r.resourceName === topic.name);
    const configs: Record<string, string | undefined> = {};
    for (const entry of resource?.configEntries ?? []) configs[entry.configName] = entry.configValue;
    const partitions = metadata.topics.find((t) => t.name === topic.name)?.partitions.length ?? 0;
    partitionCounts.set(topic.name, partitions);
    const size = Number(configs['max.message.bytes']);
    maxMessageBytes.set(topic.name, Number.isFinite(size) && size > 0 ? size : TOPIC_SPECS[topic.role].maxMessageBytes);
    problems.push(...topicConfigProblems(topic.role, topic.name, { partitions, configs }, { neededMessageBytes: topic.neededMessageBytes }));
  }
  return { created: [...created], problems, maxMessageBytes, partitions: partitionCounts };
}
