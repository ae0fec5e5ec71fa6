import { describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import { KafkaAccessDenied, kafkaAuthorizationDenial, missingAclText, stoppedConsumerDenial } from './kafka-authorization.ts';
import { ensureServiceTopics, isTransientKafkaError, retryTransientKafka } from './kafka-topics.ts';

function kafkaError(type: string): Error {
  return Object.assign(new Error(`broker says ${type}`), { type, retriable: true });
}

describe('isTransientKafkaError', () => {
  it('recognises leader/coordinator states, also inside kafkajs retry wrappers', () => {
    expect(isTransientKafkaError(kafkaError('NOT_LEADER_FOR_PARTITION'))).toBe(true);
    expect(isTransientKafkaError(kafkaError('LEADER_NOT_AVAILABLE'))).toBe(true);
    const wrapped = Object.assign(new Error('retries exceeded'), { originalError: kafkaError('COORDINATOR_LOAD_IN_PROGRESS') });
    expect(isTransientKafkaError(wrapped)).toBe(true);
    expect(isTransientKafkaError(new Error('outer', { cause: kafkaError('NOT_COORDINATOR') }))).toBe(true);
  });

  it('rejects permanent errors and non-errors', () => {
    expect(isTransientKafkaError(kafkaError('TOPIC_AUTHORIZATION_FAILED'))).toBe(false);
    expect(isTransientKafkaError(new Error('connection refused'))).toBe(false);
    expect(isTransientKafkaError(undefined)).toBe(false);
    expect(isTransientKafkaError('NOT_LEADER_FOR_PARTITION')).toBe(false);
  });
});

describe('retryTransientKafka', () => {
  it('retries transient failures until the call succeeds', async () => {
    let calls = 0;
    const result = await retryTransientKafka(() => {
      calls++;
      return calls < 3 ? Promise.reject(kafkaError('NOT_LEADER_FOR_PARTITION')) : Promise.resolve('offsets');
    });
    expect(result).toBe('offsets');
    expect(calls).toBe(3);
  });

  it('throws a permanent error at once', async () => {
    let calls = 0;
    const permanent = kafkaError('TOPIC_AUTHORIZATION_FAILED');
    await expect(
      retryTransientKafka(() => {
        calls++;
        return Promise.reject(permanent);
      }),
    ).rejects.toBe(permanent);
    expect(calls).toBe(1);
  });

  it('gives up with the last transient error when the time is up', async () => {
    let calls = 0;
    const started = Date.now();
    await expect(
      retryTransientKafka(() => {
        calls++;
        return Promise.reject(kafkaError('LEADER_NOT_AVAILABLE'));
      }, 350),
    ).rejects.toMatchObject({ type: 'LEADER_NOT_AVAILABLE' });
    // Pauses 100 + 200 ms fit in 350 ms, the next 400 ms does not.
    expect(calls).toBe(3);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});

describe('ensureServiceTopics through a transient broker answer', () => {
  it('tries again from the start and still reports the topics its first attempt created', async () => {
    // A minimal admin: the topic does not exist, is created, then describeConfigs answers
    // UNKNOWN_TOPIC_OR_PARTITION once, as a broker does for a moment after a topic is created.
    const topics = new Set<string>();
    const calls: string[] = [];
    let describeFailures = 1;
    const admin = {
      listTopics: () => Promise.resolve([...topics]),
      createTopics: (request: { topics: { topic: string }[] }) => {
        calls.push('create');
        for (const t of request.topics) topics.add(t.topic);
        return Promise.resolve(true);
      },
      describeConfigs: () => {
        calls.push('describe');
        if (describeFailures-- > 0) return Promise.reject(kafkaError('UNKNOWN_TOPIC_OR_PARTITION'));
        return Promise.resolve({ resources: [{ resourceName: 'ww.frames', configEntries: [{ configName: 'max.message.bytes', configValue: '8388608' }, { configName: 'cleanup.policy', configValue: 'delete' }] }] });
      },
      fetchTopicMetadata: () => Promise.resolve({ topics: [{ name: 'ww.frames', partitions: [{}, {}, {}, {}, {}, {}] }] }),
    } as unknown as Admin;
    const report = await ensureServiceTopics(admin, [{ role: 'frames', name: 'ww.frames' }], { partitions: 6, replicationFactor: -1 });
    expect(calls).toEqual(['create', 'describe', 'describe']);
    expect(report.created).toEqual(['ww.frames']);
    expect(report.problems).toEqual([]);
    expect(report.maxMessageBytes.get('ww.frames')).toBe(8388608);
  });

  it('does not retry an answer that is not transient', async () => {
    let listed = 0;
    const admin = {
      listTopics: () => {
        listed += 1;
        return Promise.reject(kafkaError('UNSUPPORTED_VERSION'));
      },
    } as unknown as Admin;
    await expect(ensureServiceTopics(admin, [{ role: 'frames', name: 'ww.frames' }], { partitions: 6, replicationFactor: -1 })).rejects.toThrow(/UNSUPPORTED_VERSION/);
    expect(listed).toBe(1);
  });
});

describe('ensureServiceTopics refused by the broker (ACLs)', () => {
  /** A broker whose principal may Describe `describable` and DescribeConfigs `configurable`, and create nothing. */
  const lockedAdmin = (describable: string[], configurable: string[]): Admin =>
    ({
      listTopics: () => Promise.resolve(describable),
      createTopics: () => Promise.reject(kafkaError('TOPIC_AUTHORIZATION_FAILED')),
      fetchTopicMetadata: ({ topics }: { topics: string[] }) =>
        topics.every((t) => describable.includes(t)) ? Promise.resolve({ topics: topics.map((name) => ({ name, partitions: [{ partitionId: 0 }] })) }) : Promise.reject(kafkaError('TOPIC_AUTHORIZATION_FAILED')),
      describeConfigs: ({ resources }: { resources: { name: string }[] }) =>
        resources.every((r) => configurable.includes(r.name))
          ? Promise.resolve({ resources: resources.map((r) => ({ resourceName: r.name, configEntries: [] })) })
          : Promise.reject(Object.assign(new Error('aggregate'), { errors: [kafkaError('TOPIC_AUTHORIZATION_FAILED')] })),
    }) as unknown as Admin;
  const topics = [
    { role: 'frames' as const, name: 'ww.frames', access: 'Read' as const },
    { role: 'dlq' as const, name: 'ww.dlq' },
  ];

  it('names the operation the service needs on a topic it may not describe (Read or Write, which imply Describe)', async () => {
    const error = await ensureServiceTopics(lockedAdmin(['ww.dlq'], ['ww.dlq']), topics, { partitions: 1, replicationFactor: -1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KafkaAccessDenied);
    expect((error as KafkaAccessDenied).needs).toEqual([{ operation: 'Read', resourceType: 'Topic', name: 'ww.frames' }]);
  });

  it('names DescribeConfigs where only that is missing, per topic', async () => {
    const error = (await ensureServiceTopics(lockedAdmin(['ww.frames', 'ww.dlq'], ['ww.frames']), topics, { partitions: 1, replicationFactor: -1 }).catch((e: unknown) => e)) as KafkaAccessDenied;
    expect(error.needs).toEqual([{ operation: 'DescribeConfigs', resourceType: 'Topic', name: 'ww.dlq' }]);
    expect(missingAclText('User:ww-e', error.needs)).toBe(
      'User:ww-e lacks ALLOW DescribeConfigs on Topic ww.dlq (docs/security.md § Kafka ACLs); grant: kafka-acls.sh --bootstrap-server <broker> --add --allow-principal User:ww-e --operation DescribeConfigs --topic ww.dlq',
    );
  });
});

describe('kafkaAuthorizationDenial and missingAclText', () => {
  it('finds the refusal anywhere in kafkajs wrappers, and nothing in other errors', () => {
    expect(kafkaAuthorizationDenial(new Error('outer', { cause: Object.assign(new Error('x'), { originalError: kafkaError('GROUP_AUTHORIZATION_FAILED') }) }))).toBe('Group');
    expect(kafkaAuthorizationDenial(Object.assign(new Error('agg'), { errors: [new Error('a'), kafkaError('TOPIC_AUTHORIZATION_FAILED')] }))).toBe('Topic');
    expect(kafkaAuthorizationDenial(kafkaError('NOT_LEADER_FOR_PARTITION'))).toBeUndefined();
    expect(kafkaAuthorizationDenial('TOPIC_AUTHORIZATION_FAILED')).toBeUndefined();
  });

  it('reads a consumer stopped for good on "Failed to find group coordinator" as a refused group (kafkajs drops the broker answer)', () => {
    expect(stoppedConsumerDenial(Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound' }))).toBe('Group');
    expect(stoppedConsumerDenial(kafkaError('TOPIC_AUTHORIZATION_FAILED'))).toBe('Topic');
    expect(stoppedConsumerDenial(new Error('ZSTD compression not implemented'))).toBeUndefined();
  });

  it('writes a prefixed group ACL with its pattern type, for each need', () => {
    expect(missingAclText('User:e', [{ operation: 'Read', resourceType: 'Group', name: 'ww-est', pattern: 'PREFIXED' }])).toBe(
      'User:e lacks ALLOW Read on Group ww-est* (prefixed) (docs/security.md § Kafka ACLs); grant: kafka-acls.sh --bootstrap-server <broker> --add --allow-principal User:e --operation Read --group ww-est --resource-pattern-type prefixed',
    );
  });
});
