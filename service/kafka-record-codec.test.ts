import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeKafkaRecord, encodeKafkaRecord, encodeKafkaRecordBatch, installFastKafkaRecordBatchEncoder, installFastKafkaRecordDecoder, installFastKafkaRecordEncoder, type KafkaRecordBatchContext, type KafkaRecordBatchFields, type KafkaRecordFields, type KafkaRecordReader } from './kafka-record-codec.ts';

const requireHere = createRequire(import.meta.url);
const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
const Decoder = kafkajsRequire('./src/protocol/decoder.js') as new (buffer: Buffer) => KafkaRecordReader;

// Both installs before anything loads kafkajs' record batch encoder or decoder (which bind the
// record functions when they are loaded).
const encoderInstalled = installFastKafkaRecordEncoder();
const batchEncoderInstalled = installFastKafkaRecordBatchEncoder();

/** A module of kafkajs loaded from its file apart from the module cache (where the install replaced it). */
function kafkajsOwn<T>(path: string): T {
  const resolved = kafkajsRequire.resolve(path);
  const cachedEntry = requireHere.cache[resolved]!;
  delete requireHere.cache[resolved];
  const own = kafkajsRequire(resolved) as T;
  requireHere.cache[resolved] = cachedEntry;
  return own;
}

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
  const kafkajsDecode = kafkajsOwn<typeof decodeKafkaRecord>(recordModule);

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

describe('installFastKafkaRecordEncoder', () => {
  const recordModule = kafkajsRequire.resolve('./src/protocol/recordBatch/record/v0/index.js');
  const kafkajsEncode = kafkajsOwn<(fields: KafkaRecordFields) => { buffer: Buffer }>(recordModule);
  const bytesOf = (encode: (fields: KafkaRecordFields) => { buffer: Buffer }, fields: KafkaRecordFields): { bytes: string } | { error: string } => {
    try {
      return { bytes: encode(fields).buffer.toString('hex') };
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}` };
    }
  };

  it("puts encodeKafkaRecord where kafkajs' record batch encoder looks for it", () => {
    expect(encoderInstalled).toBe(true);
    expect(installFastKafkaRecordEncoder()).toBe(true); // once per process
    expect(kafkajsRequire(recordModule)).toBe(encodeKafkaRecord);
  });

  it('writes a known record as the Kafka protocol says', () => {
    const bytes = (encodeKafkaRecord({ offsetDelta: 1, timestampDelta: -2, key: 'k', value: Buffer.from([7]), headers: { h: ['a', Buffer.from('b')] } }) as unknown as { buffer: Buffer }).buffer;
    // body: attributes 0, timestamp delta −2 → zigzag 3, offset delta 1 → 2, key 'k', value [7], two headers h=a, h=b.
    const body = [0, 3, 2, 2, 0x6b, 2, 7, 4, 2, 0x68, 2, 0x61, 2, 0x68, 2, 0x62];
    expect([...bytes]).toEqual([body.length * 2, ...body]);
  });

  const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 6 }), fc.constantFrom('', 'traceparent', 'ww-host', '\ud800'));
  const bytesValue = fc.oneof(text, fc.uint8Array({ maxLength: 300, size: 'max' }).map((bytes) => Buffer.from(bytes)));
  const fields = fc.record(
    {
      offsetDelta: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer(), fc.constantFrom(1.5, -0.5, 2 ** 40)),
      timestampDelta: fc.oneof(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.integer({ min: -(2 ** 51), max: 2 ** 51 }), fc.constantFrom(2 ** 51 + 2, -(2 ** 53) + 1, 0.5)),
      key: fc.option(bytesValue, { nil: null }),
      value: fc.oneof(fc.option(bytesValue, { nil: null }), fc.constant(undefined)),
      headers: fc.dictionary(text, fc.oneof(bytesValue, fc.array(bytesValue, { maxLength: 3 })), { maxKeys: 4 }),
    },
    { requiredKeys: [] },
  );

  it("writes the bytes kafkajs' own encoder writes, or throws its error, for any record", () => {
    fc.assert(
      fc.property(fields, (record) => {
        expect(bytesOf(encodeKafkaRecord as never, record)).toEqual(bytesOf(kafkajsEncode, record));
      }),
      { numRuns: 3_000 },
    );
    // Inputs kafkajs' own encoder takes or refuses its own way: passed on to it.
    for (const odd of [{ key: 7 }, { value: { a: 1 } }, { headers: { h: null } }, { headers: null }, { headers: { h: [Buffer.from('x'), 3] } }, { timestampDelta: '5' }, { timestampDelta: 2 ** 60 }] as unknown as KafkaRecordFields[]) {
      expect(bytesOf(encodeKafkaRecord as never, odd)).toEqual(bytesOf(kafkajsEncode, odd));
    }
  });

  it("makes record batches kafkajs' decoder reads back, CRC included", async () => {
    const { RecordBatch } = kafkajsRequire('./src/protocol/recordBatch/v0/index.js') as { RecordBatch: (batch: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
    const decodeBatch = kafkajsOwn<(decoder: KafkaRecordReader) => Promise<{ records: ReturnType<typeof decodeKafkaRecord>[] }>>('./src/protocol/recordBatch/v0/decoder.js');
    const records = [0, 1, 2].map((i) => encodeKafkaRecord({ offsetDelta: i, timestampDelta: 5 * i, key: `k${i}`, value: Buffer.alloc(300, i), headers: { 'ww-host': `h${i}`, traceparent: '00-1-2-01' } }));
    const batch = await RecordBatch({ firstOffset: '9', firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_010, records });
    // The CRC-32C field covers the bytes after it (record batch v2: 8 + 4 + 4 + 1 bytes before it).
    const crc32c = kafkajsRequire('./src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;
    expect(batch.buffer.readUInt32BE(17)).toBe(crc32c(batch.buffer.subarray(21)) >>> 0);
    const decoded = await decodeBatch(new Decoder(batch.buffer));
    expect(decoded.records.map((r) => [r.offset, r.timestamp, r.key?.toString(), r.value?.length, r.value?.[0], r.headers['ww-host']?.toString(), r.headers.traceparent?.toString()])).toEqual([
      ['9', '1700000000000', 'k0', 300, 0, 'h0', '00-1-2-01'],
      ['10', '1700000000005', 'k1', 300, 1, 'h1', '00-1-2-01'],
      ['11', '1700000000010', 'k2', 300, 2, 'h2', '00-1-2-01'],
    ]);
  });
});

describe('installFastKafkaRecordBatchEncoder', () => {
  const batchModule = kafkajsRequire.resolve('./src/protocol/recordBatch/v0/index.js');
  const kafkajsBatch = kafkajsOwn<{ RecordBatch: (fields: KafkaRecordBatchFields) => Promise<{ buffer: Buffer }> }>(batchModule).RecordBatch;
  const Long = kafkajsRequire('./src/utils/long.js') as { fromValue(value: unknown): unknown };
  const bytesOf = async (encode: (fields: KafkaRecordBatchFields) => Promise<unknown>, fields: KafkaRecordBatchFields): Promise<{ bytes: string } | { error: string }> => {
    try {
      return { bytes: ((await encode(fields)) as { buffer: Buffer }).buffer.toString('hex') };
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}` };
    }
  };

  it("puts encodeKafkaRecordBatch where kafkajs' produce request looks for it", () => {
    expect(batchEncoderInstalled).toBe(true);
    expect(installFastKafkaRecordBatchEncoder()).toBe(true); // once per process
    expect((kafkajsRequire(batchModule) as { RecordBatch: unknown; MAGIC_BYTE: number }).RecordBatch).toBe(encodeKafkaRecordBatch);
    expect((kafkajsRequire(batchModule) as { MAGIC_BYTE: number }).MAGIC_BYTE).toBe(2);
  });

  const int64 = fc.oneof(fc.integer({ min: -1, max: 2 ** 31 }), fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map((v) => Long.fromValue(v)), fc.integer({ min: 0, max: 1e9 }).map(String));
  const batchFields = fc.record(
    {
      firstOffset: int64,
      firstTimestamp: fc.integer({ min: 0, max: 2 ** 45 }),
      maxTimestamp: fc.integer({ min: 0, max: 2 ** 45 }),
      partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
      lastOffsetDelta: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      transactional: fc.boolean(),
      producerId: int64,
      producerEpoch: fc.integer({ min: -1, max: 2 ** 15 - 1 }),
      firstSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
      records: fc.array(
        fc.record({ key: fc.option(fc.string({ maxLength: 20 }), { nil: null }), value: fc.oneof(fc.string({ maxLength: 600 }), fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b))) }),
        { maxLength: 40 },
      ),
    },
    { requiredKeys: ['records', 'firstTimestamp', 'maxTimestamp'] },
  );

  it("writes the bytes kafkajs' own batch encoder writes, CRC-32C included, for any uncompressed batch", async () => {
    await fc.assert(
      fc.asyncProperty(batchFields, async (batch) => {
        const fields: KafkaRecordBatchFields = { ...batch, records: batch.records.map((r, i) => encodeKafkaRecord({ offsetDelta: i, timestampDelta: i, key: r.key, value: r.value })) };
        expect(await bytesOf(encodeKafkaRecordBatch, fields)).toEqual(await bytesOf(kafkajsBatch, fields));
      }),
      { numRuns: 1_000 },
    );
  });

  it("passes compressed batches and records that are not Encoders to kafkajs' own, which encodes or refuses them as before", async () => {
    const records = [0, 1].map((i) => encodeKafkaRecord({ offsetDelta: i, value: `v${i}` }));
    const gzip = { compression: 1, firstTimestamp: 5, maxTimestamp: 5, records };
    const ours = (await encodeKafkaRecordBatch(gzip)) as unknown as { buffer: Buffer };
    const own = await kafkajsBatch(gzip);
    // gzip output is not byte-stable across calls: compare the batch header before the CRC and the attributes.
    expect(ours.buffer.subarray(0, 8).equals(own.buffer.subarray(0, 8))).toBe(true);
    expect(ours.buffer.readInt16BE(21)).toBe(1);
    for (const odd of [{ records: [Buffer.from('x')] }, { records: ['text', 'more'] }, { records: [7] }] as unknown as KafkaRecordBatchFields[]) {
      const fields = { firstTimestamp: 1, maxTimestamp: 1, ...odd };
      expect(await bytesOf(encodeKafkaRecordBatch, fields)).toEqual(await bytesOf(kafkajsBatch, fields));
    }
  });
});
