import { describe, expect, it } from 'vitest';
import { isTransientKafkaError, retryTransientKafka } from './kafka-topics.ts';

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
