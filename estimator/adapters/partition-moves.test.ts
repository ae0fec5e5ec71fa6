import { describe, expect, it } from 'vitest';
import { keyPartition } from '../../service/index.ts';
import { createPartitionMoves } from './partition-moves.ts';

describe('createPartitionMoves', () => {
  it('counts each stream seen off the partition its key had at the start count once, and says it at most once a minute', () => {
    const lines: string[] = [];
    let now = 0;
    const moves = createPartitionMoves('f', (line) => lines.push(line), { now: () => now });
    moves.start(3);
    moves.start(6); // only the first count is the start
    const keys = Array.from({ length: 200 }, (_, i) => `job${i}/k|n=32|cuda|GPU-0|h`);
    // Before the move: every frame where the start count puts it; nothing counted.
    for (const key of keys) moves.observe(keyPartition(key, 3), key);
    expect(moves.streamsMoved).toBe(0);
    // After 3 → 6 partitions: the producers place each key modulo 6.
    const movers = keys.filter((key) => keyPartition(key, 6) !== keyPartition(key, 3));
    expect(movers.length).toBeGreaterThan(50);
    for (let round = 0; round < 3; round++) for (const key of keys) moves.observe(keyPartition(key, 6), key);
    expect(moves.streamsMoved).toBe(movers.length);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: 1 stream\(s\) of f moved to another partition since this instance started with 3 \(1 since the last line; latest: job\d+\/k\|n=32\|cuda\|GPU-0\|h now on \d, was \d\)/);
    now = 60_000;
    moves.observe(99, 'late/k|n=32|cuda|GPU-0|h');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`${movers.length + 1} stream(s) of f moved`);
    expect(lines[1]).toContain(`(${movers.length} since the last line;`);
  });

  it('places keys as the Java client does (murmur2 of the UTF-8 key, made positive, modulo the count), checked against a murmur2 written here', () => {
    // Kafka's Utils.murmur2, transcribed: 32-bit arithmetic with Math.imul.
    const murmur2 = (data: Uint8Array): number => {
      const m = 0x5bd1e995;
      let h = (0x9747b28c ^ data.length) | 0;
      const whole = data.length & ~3;
      for (let i = 0; i < whole; i += 4) {
        let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
        k = Math.imul(k, m);
        k ^= k >>> 24;
        k = Math.imul(k, m);
        h = Math.imul(h, m) ^ k;
      }
      const rest = data.length % 4;
      if (rest >= 3) h ^= data[whole + 2]! << 16;
      if (rest >= 2) h ^= data[whole + 1]! << 8;
      if (rest >= 1) h = Math.imul(h ^ data[whole]!, m);
      h ^= h >>> 13;
      h = Math.imul(h, m);
      h ^= h >>> 15;
      return h;
    };
    const keys = ['a', 'ab', 'abc', 'abcd', 'train/matpow|n=32|cuda|GPU-5e1f|node7', 'ünïcode/k|n=8|cpu|00000000-0000-0000-0000-000000000000|h', ...Array.from({ length: 300 }, (_, i) => `job-${i * 7919}/kernel|n=${1 << (i % 6)}|cuda|GPU-${i}|host${i % 13}`)];
    for (const count of [1, 3, 6, 7, 12, 100]) {
      for (const key of keys) expect(keyPartition(key, count), `${key} of ${count}`).toBe((murmur2(new TextEncoder().encode(key)) & 0x7fffffff) % count);
    }
  });

  it('does nothing before the start count is known or for frames without a key', () => {
    const lines: string[] = [];
    const moves = createPartitionMoves('f', (line) => lines.push(line));
    moves.observe(5, 'k');
    moves.start(2);
    moves.observe(5, undefined);
    expect(moves.streamsMoved).toBe(0);
    expect(lines).toEqual([]);
  });
});
