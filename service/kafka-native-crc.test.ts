import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { batchCrc32c, installNativeKafkaCrc32c } from './kafka-native-crc.ts';

const requireHere = createRequire(import.meta.url);
const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));

/** kafkajs' own CRC-32C, read from its file (not the module the install replaces). */
const kafkajsCrc = kafkajsRequire('./src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;
const unsigned = (value: number): number => value >>> 0;

describe('installNativeKafkaCrc32c', () => {
  it('makes the record batch encoder of kafkajs use a CRC-32C equal to its own, for every size', () => {
    expect(installNativeKafkaCrc32c()).toBe(true);
    expect(installNativeKafkaCrc32c()).toBe(true); // once per process
    // What kafkajs' record batch encoder calls from now on.
    const used = kafkajsRequire('./src/protocol/recordBatch/crc32C/index.js') as (buffer: Buffer) => number;
    expect(used).toBe(batchCrc32c);
    expect(used(Buffer.from('123456789'))).toBe(0xe3069283); // the CRC-32C check value
    fc.assert(
      fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ minLength: 200, maxLength: 70_000 })), (bytes) => {
        const buffer = Buffer.from(bytes);
        expect(used(buffer)).toBe(unsigned(kafkajsCrc(buffer)));
      }),
      { numRuns: 400 },
    );
    // The encoder, loaded after the install, binds the replaced function: a batch's CRC field is
    // the CRC of the bytes after it, as the broker checks it.
    const { RecordBatch } = kafkajsRequire('./src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
    const record = kafkajsRequire('./src/protocol/recordBatch/record/v0/index.js') as (fields: Record<string, unknown>) => unknown;
    return RecordBatch({
      firstTimestamp: 1_700_000_000_000,
      maxTimestamp: 1_700_000_000_000,
      records: [record({ key: Buffer.from('k'), value: Buffer.alloc(4_000, 7), headers: {} })],
    }).then((encoded) => {
      // Record batch v2: baseOffset 8, batchLength 4, partitionLeaderEpoch 4, magic 1, crc 4, then the CRC'd body.
      const crc = encoded.buffer.readUInt32BE(17);
      expect(crc).toBe(unsigned(kafkajsCrc(encoded.buffer.subarray(21))));
    });
  });
});
