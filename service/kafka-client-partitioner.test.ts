import fc from 'fast-check';
import { Partitioners, type PartitionerArgs, type PartitionMetadata } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { cachingDefaultPartitioner, PARTITIONER_CACHE_LIMIT } from './kafka-client.ts';

function metadataOf(count: number, unavailable: readonly number[] = []): PartitionMetadata[] {
  return Array.from({ length: count }, (_, partitionId) => ({ partitionId, leader: unavailable.includes(partitionId) ? -1 : 0, replicas: [0], isr: [0], partitionErrorCode: 0, offlineReplicas: [] }));
}

describe('cachingDefaultPartitioner', () => {
  it("gives every string key the partition kafkajs' default partitioner gives it, first time and after", () => {
    const partition = cachingDefaultPartitioner();
    const kafkajs = Partitioners.DefaultPartitioner();
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', 'bench7/k|n=32|cpu|00000000-0000-0000-0000-000000000000|', 'a\u0000b')), count: fc.integer({ min: 1, max: 64 }), topic: fc.constantFrom('warpwatch.frames', 'warpwatch.distributions', 'x') }), { minLength: 1, maxLength: 20 }),
        (records) => {
          // Each record twice: computed, then remembered.
          for (const { key, count, topic } of [...records, ...records]) {
            const args: PartitionerArgs = { topic, partitionMetadata: metadataOf(count), message: { key, value: 'v' } };
            expect(partition(args)).toBe(kafkajs(args));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tells the same key apart by topic and by partition count', () => {
    const partition = cachingDefaultPartitioner();
    const kafkajs = Partitioners.DefaultPartitioner();
    const key = 'train/matmul|n=32|cuda|GPU-1|';
    const seen = new Set<number>();
    for (const count of [1, 2, 3, 6, 7, 12, 60]) {
      for (const topic of ['a', 'b']) {
        const args: PartitionerArgs = { topic, partitionMetadata: metadataOf(count), message: { key, value: null } };
        expect(partition(args)).toBe(kafkajs(args));
        seen.add(partition(args));
      }
    }
    expect(seen.size).toBeGreaterThan(1); // the counts gave different partitions: not one answer cached for all
  });

  it('keeps an explicit partition, and leaves Buffer keys and keyless records to kafkajs', () => {
    const partition = cachingDefaultPartitioner();
    const kafkajs = Partitioners.DefaultPartitioner();
    expect(partition({ topic: 't', partitionMetadata: metadataOf(6), message: { key: 'k', value: 'v', partition: 4 } })).toBe(4);
    const bufferKey: PartitionerArgs = { topic: 't', partitionMetadata: metadataOf(6), message: { key: Buffer.from('stream-9'), value: 'v' } };
    expect(partition(bufferKey)).toBe(kafkajs(bufferKey));
    // Keyless: round robin over the available partitions only (kafkajs' own rule).
    const keyless = Array.from({ length: 40 }, () => partition({ topic: 't', partitionMetadata: metadataOf(6, [1, 3]), message: { value: 'v' } }));
    expect(new Set(keyless)).toEqual(new Set([0, 2, 4, 5]));
  });

  it(`starts afresh beyond ${PARTITIONER_CACHE_LIMIT} remembered keys and still answers as kafkajs does`, () => {
    const partition = cachingDefaultPartitioner();
    const kafkajs = Partitioners.DefaultPartitioner();
    const metadata = metadataOf(12);
    for (let i = 0; i < PARTITIONER_CACHE_LIMIT + 10; i++) partition({ topic: 't', partitionMetadata: metadata, message: { key: `s${i}`, value: null } });
    for (const i of [0, 1, PARTITIONER_CACHE_LIMIT - 1, PARTITIONER_CACHE_LIMIT + 9]) {
      const args: PartitionerArgs = { topic: 't', partitionMetadata: metadata, message: { key: `s${i}`, value: null } };
      expect(partition(args)).toBe(kafkajs(args));
    }
  });
});
