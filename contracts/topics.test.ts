import { describe, expect, it } from 'vitest';
import { MAX_FRAME_RECORD_BYTES, TOPIC_SPECS, TOPICS, topicConfigProblems, topicToCreate } from './topics.ts';

describe('TOPIC_SPECS', () => {
  it('creates every topic with its cleanup policy, 8 MiB max.message.bytes and, when it ages records out, a retention', () => {
    expect(topicToCreate('frames', 'f', { partitions: 6, replicationFactor: -1 })).toEqual({
      topic: 'f',
      numPartitions: 6,
      replicationFactor: -1,
      configEntries: [
        { name: 'cleanup.policy', value: 'delete' },
        { name: 'max.message.bytes', value: '8388608' },
        { name: 'retention.ms', value: '604800000' },
      ],
    });
    // The checkpoint topic: as many partitions as configured, and segments that roll at 64 MiB or
    // 10 minutes so the cleaner can compact what a restore reads.
    expect(topicToCreate('estimatorCheckpoints', 'c', { partitions: 6, replicationFactor: 3 })).toEqual({
      topic: 'c',
      numPartitions: 6,
      replicationFactor: 3,
      configEntries: [
        { name: 'cleanup.policy', value: 'compact' },
        { name: 'max.message.bytes', value: '8388608' },
        { name: 'segment.bytes', value: '67108864' },
        { name: 'segment.ms', value: '600000' },
      ],
    });
    for (const role of Object.keys(TOPICS) as (keyof typeof TOPICS)[]) expect(TOPIC_SPECS[role].maxMessageBytes).toBeGreaterThanOrEqual(TOPIC_SPECS[role].neededMessageBytes);
  });

  it('the frames topic must take the largest frame SPEC.md allows (16 + 4 MiB) with its key and headers', () => {
    expect(MAX_FRAME_RECORD_BYTES).toBe(16 + 4 * 1024 * 1024 + 64 * 1024);
    expect(TOPIC_SPECS.frames.neededMessageBytes).toBe(MAX_FRAME_RECORD_BYTES);
  });
});

describe('topicConfigProblems', () => {
  it('names a max.message.bytes too small and a wrong cleanup policy, each with its fix; any partition count serves', () => {
    expect(topicConfigProblems('frames', 'warpwatch.frames', { partitions: 3, configs: { 'max.message.bytes': '1048588', 'cleanup.policy': 'delete' } })).toEqual([
      'topic warpwatch.frames has max.message.bytes=1048588, it must take records of 4259856 bytes: larger ones are refused by the broker (the collector moves them to the DLQ); ' +
        'raise it: kafka-configs.sh --alter --entity-type topics --entity-name warpwatch.frames --add-config max.message.bytes=8388608',
    ]);
    expect(topicConfigProblems('estimatorCheckpoints', 'c', { partitions: 2, configs: { 'max.message.bytes': '8388608', 'cleanup.policy': 'delete' } })).toEqual([
      'topic c has cleanup.policy=delete, it needs compact; set it: kafka-configs.sh --alter --entity-type topics --entity-name c --add-config cleanup.policy=compact',
    ]);
    // A checkpoint topic of one partition (as created before it followed the frames topic) serves.
    expect(topicConfigProblems('estimatorCheckpoints', 'c', { partitions: 1, configs: { 'max.message.bytes': '8388608', 'cleanup.policy': 'compact' } })).toEqual([]);
  });

  it('accepts a topic that fits, a larger limit, compact,delete, and a need lowered by the service', () => {
    expect(topicConfigProblems('frames', 'f', { partitions: 12, configs: { 'max.message.bytes': String(MAX_FRAME_RECORD_BYTES), 'cleanup.policy': 'delete' } })).toEqual([]);
    expect(topicConfigProblems('distributions', 'd', { partitions: 1, configs: { 'max.message.bytes': '67108864', 'cleanup.policy': 'compact,delete' } })).toEqual([]);
    expect(topicConfigProblems('frames', 'f', { partitions: 1, configs: { 'max.message.bytes': '1048588' } }, { neededMessageBytes: 1024 * 1024 })).toEqual([]);
    expect(topicConfigProblems('frames', 'f', { partitions: 1, configs: { 'max.message.bytes': '1048575' } }, { neededMessageBytes: 1024 * 1024 })).toHaveLength(1);
  });
});
