import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeKafkaRecord, installFastKafkaRecordDecoder, type KafkaRecordBatchContext, type KafkaRecordReader } from './kafka-record-decoder.ts';

const requireHere = createRequire(import.meta.url);
const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
const Decoder = kafkajsRequire('./src/protocol/decoder.js') as new (buffer: Buffer) => KafkaRecordReader;

// The encoding written here from the Kafka protocol (record v2: zigzag varints), not kafkajs'
// encoder, so that a record kafkajs' encoder cannot write (a null header key, a negative header
// count, a 10-byte timestamp delta) is tested too.
function zigzagVarint(value: bigint): number[] {
  let n = value >= 0n ? value * 2n : -value * 2n - 1n;
  const out: number[] = [];
  do {
    const low = Number(n & 0x7fn);
    n >>= 7n;
    out.push(n > 0n ? low | 0x80 : low);
  } while (n > 0n);
  return out;
}

function bytesField(bytes: Uint8Array | null): number[] {
  return bytes === null ? zigzagVarint(-1n) : [...zigzagVarint(BigInt(bytes.length)), ...bytes];
}

interface RecordSpec {
  attributes: number;
  timestampDelta: bigint;
  offsetDelta: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headerCount?: number;
  headers: { key: string | null; value: Uint8Array | null }[];
}

function encodeRecord(spec: RecordSpec): Buffer {
  const bytes = [
    spec.attributes & 0xff,
    ...zigzagVarint(spec.timestampDelta),
    ...zigzagVarint(BigInt(spec.offsetDelta)),
    ...bytesField(spec.key),
    ...bytesField(spec.value),
    ...zigzagVarint(BigInt(spec.headerCount ?? spec.headers.length)),
  ];
  for (const header of spec.headers) bytes.push(...bytesField(header.key === null ? null : Buffer.from(header.key, 'utf8')), ...bytesField(header.value));
  return Buffer.from(bytes);
}

/** A record made comparable: headers as their own keys in order (with the values), and the prototype checked apart. */
function comparable(record: ReturnType<typeof decodeKafkaRecord>): unknown {
  const headers = record.headers as Record<PropertyKey, unknown>;
  return {
    ...record,
    headers: Reflect.ownKeys(headers).map((key) => [key, Object.getOwnPropertyDescriptor(headers, key)]),
    headersPrototype: Object.getPrototypeOf(headers) as unknown,
  };
}

type Outcome = { record: unknown; offset: number } | { error: string };

function decodeWith(decode: (decoder: KafkaRecordReader, context?: KafkaRecordBatchContext) => ReturnType<typeof decodeKafkaRecord>, bytes: Buffer, context: KafkaRecordBatchContext | undefined): Outcome {
  const decoder = new Decoder(bytes);
  try {
    const record = decode(decoder, context);
    return { record: comparable(record), offset: decoder.offset };
  } catch (error) {
    return { error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

describe('installFastKafkaRecordDecoder', () => {
  expect(installFastKafkaRecordDecoder()).toBe(true);
  expect(installFastKafkaRecordDecoder()).toBe(true); // once per process
  const recordModule = kafkajsRequire.resolve('./src/protocol/recordBatch/record/v0/decoder.js');
  // kafkajs' own decoder, loaded from its file apart from the module cache the install replaced.
  const cachedEntry = requireHere.cache[recordModule]!;
  delete requireHere.cache[recordModule];
  const kafkajsDecode = kafkajsRequire(recordModule) as typeof decodeKafkaRecord;
  requireHere.cache[recordModule] = cachedEntry;

  it('puts decodeKafkaRecord where kafkajs\' record batch decoder looks for it', () => {
    expect(kafkajsRequire(recordModule)).toBe(decodeKafkaRecord);
    expect(kafkajsDecode).not.toBe(decodeKafkaRecord);
  });

  it('decodes a known record as the Kafka protocol says', () => {
    const bytes = encodeRecord({ attributes: 0, timestampDelta: -3n, offsetDelta: 7, key: Buffer.from('k'), value: Buffer.from('v'), headers: [{ key: 'a', value: Buffer.from('1') }, { key: 'a', value: null }, { key: 'b', value: Buffer.from('2') }] });
    const record = decodeKafkaRecord(new Decoder(bytes), { firstOffset: '9007199254', firstTimestamp: '1700000000000', magicByte: 2, timestampType: 0, maxTimestamp: '1700000000009' });
    expect(record.offset).toBe('9007199261');
    expect(record.timestamp).toBe('1699999999997');
    expect(record.key?.toString()).toBe('k');
    expect(record.value?.toString()).toBe('v');
    expect(Object.keys(record.headers)).toEqual(['a', 'b']);
    expect(record.headers.a).toEqual([Buffer.from('1'), null]);
    expect(record.isControlRecord).toBe(false);
  });

  const header = fc.record({
    key: fc.oneof(fc.constantFrom<string | null>('a', 'b', 'traceparent', '__proto__', 'toString', 'constructor', '1', '0', 'null', null, ''), fc.string({ maxLength: 6 })),
    value: fc.option(fc.uint8Array({ maxLength: 8 }), { nil: null }),
  });
  const bigText = fc.oneof(
    fc.integer({ min: -5, max: 5_000_000 }).map(String),
    fc.constantFrom('1700000000000', '4503599627370496', '4503599627370497', '-4503599627370496', '9007199254740993', '9223372036854775807', '-1', '0', '-0', '007', '', 'NaN', ' 12'),
    fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String),
  );
  const spec = fc.record({
    attributes: fc.integer({ min: -128, max: 127 }),
    timestampDelta: fc.oneof(fc.bigInt({ min: -1000n, max: 1000n }), fc.bigInt({ min: -(2n ** 48n), max: 2n ** 48n }), fc.bigInt({ min: -(2n ** 56n), max: 2n ** 56n }), fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n })),
    offsetDelta: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })),
    key: fc.option(fc.uint8Array({ maxLength: 16 }), { nil: null }),
    value: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: null }),
    headerCount: fc.option(fc.integer({ min: -3, max: -1 }), { nil: undefined }),
    headers: fc.array(header, { maxLength: 6 }),
  });
  const context = fc.option(
    fc.record(
      {
        firstOffset: bigText,
        firstTimestamp: bigText,
        magicByte: fc.constantFrom(2, 1),
        isControlBatch: fc.boolean(),
        timestampType: fc.constantFrom(0, 1),
        maxTimestamp: fc.constantFrom('', '0', '1700000000123'),
      },
      { requiredKeys: ['magicByte'] },
    ),
    { nil: undefined },
  );

  it('returns what kafkajs\' own decoder returns (record, position after it, or the error) for any record and batch', () => {
    fc.assert(
      fc.property(spec, context, fc.integer({ min: 0, max: 3 }), (recordSpec, batchContext, cut) => {
        const whole = encodeRecord(recordSpec);
        // Truncated records too: kafkajs reads past the end as zeros or throws; either way the same.
        const bytes = cut === 0 ? whole : whole.subarray(0, Math.max(1, whole.length - cut));
        expect(decodeWith(decodeKafkaRecord, bytes, batchContext)).toEqual(decodeWith(kafkajsDecode, bytes, batchContext));
      }),
      { numRuns: 3_000 },
    );
  });

  it('decodes a record batch fetched through kafkajs\' batch decoder the same way', async () => {
    // kafkajs' record batch encoder and decoder, around the installed record decoder.
    const { RecordBatch } = kafkajsRequire('./src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
    const recordOf = kafkajsRequire('./src/protocol/recordBatch/record/v0/index.js') as (fields: Record<string, unknown>) => unknown;
    const decodeBatch = kafkajsRequire('./src/protocol/recordBatch/v0/decoder.js') as (decoder: KafkaRecordReader) => Promise<{ records: ReturnType<typeof decodeKafkaRecord>[] }>;
    const records = [0, 1, 2].map((i) => recordOf({ offsetDelta: i, timestampDelta: 10 * i, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), headers: { 'ww-host': `h${i}` } }));
    // RecordBatch writes the batch's first offset and length before it, as a fetch response holds it.
    const batch = await RecordBatch({ firstOffset: '123456789012', firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_020, records });
    const decoded = await decodeBatch(new Decoder(batch.buffer));
    expect(decoded.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.toString(), r.headers['ww-host']?.toString()])).toEqual([
      ['123456789012', '1700000000000', 'k0', 'v0', 'h0'],
      ['123456789013', '1700000000010', 'k1', 'v1', 'h1'],
      ['123456789014', '1700000000020', 'k2', 'v2', 'h2'],
    ]);
  });
});
