import { describe, expect, it } from 'vitest';
import { PRODUCE_CHUNK_BYTES, PRODUCE_CHUNK_RECORDS, producerRequests, type OutgoingRecord } from './kafka.ts';

describe('producerRequests', () => {
  const records: OutgoingRecord[] = Array.from({ length: 2 * PRODUCE_CHUNK_RECORDS + 7 }, (_, i) => ({
    key: `stream${i}`,
    value: i % 3 === 0 ? null : `{"i":${i}}`,
    ...(i === 1 ? { headers: { 'ww-host': 'node7' } } : {}),
  }));

  it('splits a large write into requests of at most PRODUCE_CHUNK_RECORDS, keeping every record once and in order', () => {
    // kafkajs copies a partition's message array once per message of a request (quadratic):
    // a checkpoint round of 10,000 streams in one request grew the estimator's heap by tens of MB.
    const requests = producerRequests(records);
    expect(requests.map((request) => request.length)).toEqual([PRODUCE_CHUNK_RECORDS, PRODUCE_CHUNK_RECORDS, 7]);
    const flat = requests.flat();
    expect(flat.map((message) => message.key)).toEqual(records.map((record) => record.key));
    expect(flat.map((message) => message.value)).toEqual(records.map((record) => record.value));
    expect(flat[1]!.headers).toEqual({ 'ww-host': 'node7' });
    expect(flat[2]!.headers).toBeUndefined();
  });

  it('sets the partition on every message when given (no key hashing), and none otherwise', () => {
    expect(producerRequests(records, 0).flat().every((message) => message.partition === 0)).toBe(true);
    expect(producerRequests(records).flat().every((message) => !('partition' in message))).toBe(true);
  });

  it('makes no request for no records', () => {
    expect(producerRequests([])).toEqual([]);
  });

  it('also ends a request before its values pass PRODUCE_CHUNK_BYTES; a larger record goes alone; every record once, in order', () => {
    // Checkpoint-sized values (18,000 characters) and two larger than a request.
    const sizes = [...Array.from({ length: 130 }, () => 18_000), PRODUCE_CHUNK_BYTES + 5, 10, PRODUCE_CHUNK_BYTES * 2, ...Array.from({ length: 60 }, () => 18_000), 0];
    const big: OutgoingRecord[] = sizes.map((size, i) => ({ key: `k${i}`, value: size === 0 ? null : 'x'.repeat(size) }));
    const requests = producerRequests(big, 0);
    const perRequest = Math.floor(PRODUCE_CHUNK_BYTES / 18_000);
    expect(requests.map((request) => request.length)).toEqual([perRequest, perRequest, 130 - 2 * perRequest, 1, 1, 1, perRequest, 60 - perRequest + 1]);
    for (const request of requests) {
      const bytes = request.reduce((sum, m) => sum + (m.value === null ? 0 : (m.value as string).length), 0);
      expect(request.length === 1 || bytes <= PRODUCE_CHUNK_BYTES).toBe(true);
    }
    expect(requests.flat().map((m) => m.key)).toEqual(big.map((r) => r.key));
  });
});
