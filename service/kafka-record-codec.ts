/**
 * kafkajs' record codec, made cheaper without changing a byte. kafkajs 2.2.4 is its last release
 * and takes neither another record decoder nor another record encoder, so before a client's first
 * fetch or produce the Kafka client factory (kafka-client.ts) replaces those modules' exports in
 * Node's module cache (kafkajs-patch.ts), as it does for the CRC-32C (kafka-native-crc.ts):
 *
 * - {@link decodeKafkaRecord} for kafkajs/src/protocol/recordBatch/record/v0/decoder.js, about half
 *   of a consumer's CPU on small records: kafkajs folds a record's headers into an object by
 *   spreading a new copy per header, and computes offsets and timestamps with BigInt-backed
 *   `Long` objects (the timestamp delta read byte by byte into new `Long`s). It returns the same
 *   record object, field for field, built with plain numbers and one headers object.
 * - {@link encodeKafkaRecord} for kafkajs/src/protocol/recordBatch/record/v0/index.js: kafkajs
 *   encodes a record into a zeroed 512-byte buffer that it grows by copying, a header into one
 *   more, and the timestamp delta through BigInt `Long`s. It writes the same bytes into one
 *   buffer of the record's size.
 *
 * Each takes its fast path only where plain numbers are exact and the input is of the usual
 * kinds; anything else goes to kafkajs' own function, so that the result, or the error, is
 * kafkajs'. docs/estimator.md (Kafka records) gives the measured gains;
 * service/kafka-record-codec.test.ts compares both with kafkajs' own on generated input.
 */
import { liveKafkajsExport, replaceKafkajsExport, replaceKafkajsExports, requireKafkajs } from './kafkajs-patch.ts';


/** The part of kafkajs' protocol Decoder (kafkajs/src/protocol/decoder.js) a record is read with. */
export interface KafkaRecordReader {
  buffer: Buffer;
  offset: number;
  readInt8(): number;
  readVarInt(): number;
  readVarIntBytes(): Buffer | null;
  readVarIntString(): string | null;
}

/** What kafkajs' record batch decoder passes with every record of a batch (strings as kafkajs' `Long.toString` writes them). */
export interface KafkaRecordBatchContext {
  readonly firstOffset?: string;
  readonly firstTimestamp?: string;
  readonly magicByte?: number;
  readonly isControlBatch?: boolean;
  readonly timestampType?: number;
  readonly maxTimestamp?: string;
  readonly [field: string]: unknown;
}

/** kafkajs' record object, as its record decoder returns it. */
export interface KafkaDecodedRecord {
  readonly magicByte: number | undefined;
  readonly attributes: number;
  readonly timestamp: string;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly value: Buffer | null;
  readonly headers: Record<string, Buffer | null | (Buffer | null)[]>;
  readonly isControlRecord: boolean;
  readonly batchContext: KafkaRecordBatchContext;
}

/** kafkajs' record decoder's signature. */
export type RecordDecoder = (decoder: KafkaRecordReader, batchContext?: KafkaRecordBatchContext) => KafkaDecodedRecord;

/** kafkajs' TimestampTypes.LOG_APPEND_TIME (kafkajs/src/protocol/timestampTypes.js). */
const LOG_APPEND_TIME = 1;
/** Plain numbers add a 32-bit offset delta or a 7-byte timestamp delta exactly up to here. */
const EXACT_LIMIT = 2 ** 52;

let installed: boolean | undefined;
let kafkajsDecoder: RecordDecoder | undefined;

// The last batch's first offset and timestamp as numbers: every record of a batch carries the
// same strings, so each is parsed once per batch.
let offsetText: string | undefined;
let offsetValue = Number.NaN;
let timestampText: string | undefined;
let timestampValue = Number.NaN;

/** The number a `Long.toString` text stands for, or NaN unless it is an integer within ±2^52 written canonically. */
function exactNumber(text: unknown): number {
  if (typeof text !== 'string') return Number.NaN;
  const value = Number(text);
  return Math.abs(value) <= EXACT_LIMIT && String(value) === text ? value : Number.NaN;
}

function firstOffsetOf(text: string | undefined): number {
  if (text !== offsetText) {
    offsetText = text;
    offsetValue = exactNumber(text);
  }
  return offsetValue;
}

function firstTimestampOf(text: string | undefined): number {
  if (text !== timestampText) {
    timestampText = text;
    timestampValue = exactNumber(text);
  }
  return timestampValue;
}

/**
 * Reads a zigzag varlong of at most 7 bytes as a number (what kafkajs' `readVarLong` returns as a
 * `Long`), or undefined when it is longer (the caller then leaves the record to kafkajs).
 */
function readShortVarLong(decoder: KafkaRecordReader): number | undefined {
  const bytes = decoder.buffer;
  let result = 0;
  let scale = 1;
  for (let i = 0; i < 7; i++) {
    // As kafkajs reads it: a byte past the end reads as undefined, i.e. 0 and the last byte.
    const byte = bytes[decoder.offset++] as number;
    result += (byte & 0x7f) * scale;
    if (!(byte >= 0x80)) return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
    scale *= 128;
  }
  return undefined;
}

/**
 * Decodes one record of a record batch exactly as kafkajs' record decoder (v0) does, faster; the
 * function {@link installFastKafkaRecordDecoder} puts in its place.
 *
 * @param decoder kafkajs' decoder over the record's bytes (after its length).
 * @param batchContext the batch's fields kafkajs passes with each record.
 * @returns kafkajs' record object: offset and timestamp as decimal strings, key and value as
 *   Buffers over the fetched bytes (or null), headers by key (a repeated key gives an array).
 * @throws whatever kafkajs' own decoder throws on the record (it decodes every record this one
 *   does not); before the install, an Error.
 * @example decodeKafkaRecord(new Decoder(recordBytes), { firstOffset: '41', firstTimestamp: '1700000000000', magicByte: 2 }).offset // '41' plus the record's delta
 */
export function decodeKafkaRecord(decoder: KafkaRecordReader, batchContext: KafkaRecordBatchContext = {}): KafkaDecodedRecord {
  const fallback = kafkajsDecoder;
  if (fallback === undefined) throw new Error('decodeKafkaRecord before installFastKafkaRecordDecoder');
  const start = decoder.offset;
  const { firstOffset, firstTimestamp, magicByte, isControlBatch = false, timestampType, maxTimestamp } = batchContext;
  const baseOffset = firstOffsetOf(firstOffset);
  const appendTime = timestampType === LOG_APPEND_TIME && Boolean(maxTimestamp);
  const baseTimestamp = appendTime ? 0 : firstTimestampOf(firstTimestamp);
  if (Number.isNaN(baseOffset) || Number.isNaN(baseTimestamp)) return fallback(decoder, batchContext);
  const attributes = decoder.readInt8();
  const timestampDelta = readShortVarLong(decoder);
  if (timestampDelta === undefined) {
    decoder.offset = start;
    return fallback(decoder, batchContext);
  }
  const timestamp = appendTime ? (maxTimestamp as string) : String(baseTimestamp + timestampDelta);
  const offset = String(baseOffset + decoder.readVarInt());
  const key = decoder.readVarIntBytes();
  const value = decoder.readVarIntBytes();
  const count = decoder.readVarInt();
  if (count < -1) {
    // kafkajs throws on it (an invalid array length): its own error, from its own decoder.
    decoder.offset = start;
    return fallback(decoder, batchContext);
  }
  const headers: Record<string, Buffer | null | (Buffer | null)[]> = {};
  for (let i = 0; i < count; i++) {
    // As kafkajs folds them: a null key is the key "null"; an existing key (own or inherited,
    // as the object's property read finds it) becomes an array of its values.
    const name = String(decoder.readVarIntString());
    const headerValue = decoder.readVarIntBytes();
    const known = headers[name] as unknown;
    const next = known === undefined ? headerValue : Array.isArray(known) ? known.concat([headerValue]) : [known, headerValue];
    if (name === '__proto__') Object.defineProperty(headers, name, { value: next, enumerable: true, writable: true, configurable: true });
    else headers[name] = next as Buffer | null | (Buffer | null)[];
  }
  return { magicByte, attributes, timestamp, offset, key, value, headers, isControlRecord: isControlBatch, batchContext };
}

/**
 * kafkajs' own record decoder, as {@link installFastKafkaRecordDecoder} found it (the one
 * {@link decodeKafkaRecord} hands the records it does not decode to): for benchmarks against it.
 *
 * @returns the function, or undefined before a successful install.
 * @example kafkajsRecordDecoder()?.(new Decoder(recordBytes), context)
 */
export function kafkajsRecordDecoder(): RecordDecoder | undefined {
  return kafkajsDecoder;
}

/**
 * Makes kafkajs decode the records it fetches with {@link decodeKafkaRecord} from now on; once
 * per process (later calls return the first answer).
 *
 * @returns true when kafkajs now uses it; false when kafkajs' files are not where version 2.2.4
 *   has them, or kafkajs has already loaded its record batch decoder (which binds the record
 *   decoder once, when it is loaded).
 * @example installFastKafkaRecordDecoder(); const kafka = new Kafka({ brokers });
 */
export function installFastKafkaRecordDecoder(): boolean {
  if (installed !== undefined) return installed;
  kafkajsDecoder = replaceKafkajsExport<RecordDecoder>('./src/protocol/recordBatch/record/v0/decoder.js', './src/protocol/recordBatch/v0/decoder.js', decodeKafkaRecord);
  installed = kafkajsDecoder !== undefined;
  return installed;
}

/** kafkajs' record fields, as its record batch encoder passes them to the record encoder (kafkajs/src/protocol/recordBatch/record/v0/index.js). */
export interface KafkaRecordFields {
  readonly offsetDelta?: number;
  readonly timestampDelta?: number;
  readonly key?: Buffer | string | null;
  readonly value?: Buffer | string | null;
  readonly headers?: Readonly<Record<string, Buffer | string | readonly (Buffer | string)[] | undefined>>;
}

/** kafkajs' protocol Encoder (kafkajs/src/protocol/encoder.js): its buffer and the bytes written. */
export interface KafkaEncoder {
  buf: Buffer;
  offset: number;
}

/** kafkajs' record encoder's signature. */
export type RecordEncoder = (fields: KafkaRecordFields) => KafkaEncoder;

let encoderInstalled: boolean | undefined;
let kafkajsEncoder: RecordEncoder | undefined;
let encoderPrototype: object | undefined;

/** Bytes of kafkajs' zigzag varint of `value` (its writeVarInt's bit operations). */
function varIntSize(value: number): number {
  let encoded = (value << 1) ^ (value >> 31);
  let bytes = 1;
  while ((encoded & 0xffffff80) !== 0) {
    bytes += 1;
    encoded >>>= 7;
  }
  return bytes;
}

function writeVarInt(target: Buffer, at: number, value: number): number {
  let encoded = (value << 1) ^ (value >> 31);
  while ((encoded & 0xffffff80) !== 0) {
    target[at++] = (encoded & 0x7f) | 0x80;
    encoded >>>= 7;
  }
  target[at++] = encoded & 0x7f;
  return at;
}

/** The zigzag varlong of a safe integer within ±2^51 (exact in doubles), as 7-bit groups. */
function zigzagLong(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function varLongSize(value: number): number {
  let encoded = zigzagLong(value);
  let bytes = 1;
  while (encoded >= 128) {
    bytes += 1;
    encoded = Math.floor(encoded / 128);
  }
  return bytes;
}

function writeVarLong(target: Buffer, at: number, value: number): number {
  let encoded = zigzagLong(value);
  while (encoded >= 128) {
    target[at++] = (encoded % 128) | 0x80;
    encoded = Math.floor(encoded / 128);
  }
  target[at++] = encoded;
  return at;
}

/** The length of a bytes field's content (−1 for null), or undefined for a value kafkajs' encoder would not take as bytes. */
function bytesLength(value: unknown): number | undefined {
  if (value === null || value === undefined) return -1;
  if (Buffer.isBuffer(value)) return value.length;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  return undefined;
}

function writeBytes(target: Buffer, at: number, value: Buffer | string | null | undefined, length: number): number {
  at = writeVarInt(target, at, length);
  if (length <= 0 || value === null || value === undefined) return at;
  if (typeof value === 'string') return at + target.write(value, at, length, 'utf8');
  value.copy(target, at);
  return at + length;
}

/** Timestamp deltas within ±2^51 have an exact zigzag in doubles. */
const EXACT_DELTA = 2 ** 51;

/**
 * Encodes one record exactly as kafkajs' record encoder (v0) does, faster (one buffer of the
 * record's size instead of growing, zeroed ones; no BigInt `Long` for the timestamp delta); the
 * function {@link installFastKafkaRecordEncoder} puts in its place. Fields it does not take (a
 * timestamp delta beyond ±2^51 or not an integer, a key, value or header value that is neither a
 * Buffer nor a string, headers that are not an object) go to kafkajs' own encoder, which
 * encodes them or throws as it always did.
 *
 * @param fields the record: offset and timestamp deltas, key, value (Buffers or strings,
 *   strings written as UTF-8) and headers (a header whose value is an array is written once per
 *   element).
 * @returns kafkajs' Encoder holding the record's bytes (its length varint first).
 * @throws whatever kafkajs' own encoder throws; before the install, an Error.
 * @example encodeKafkaRecord({ offsetDelta: 0, timestampDelta: 0, key: 'stream', value: frameBytes, headers: { 'ww-host': 'gpu-7' } })
 */
export function encodeKafkaRecord(fields: KafkaRecordFields): KafkaEncoder {
  const fallback = kafkajsEncoder;
  if (fallback === undefined || encoderPrototype === undefined) throw new Error('encodeKafkaRecord before installFastKafkaRecordEncoder');
  const { offsetDelta = 0, timestampDelta = 0, key, value, headers = {} } = fields;
  if (typeof offsetDelta !== 'number' || !Number.isSafeInteger(timestampDelta) || Math.abs(timestampDelta) > EXACT_DELTA || headers === null || typeof headers !== 'object') return fallback(fields);
  const keyLength = bytesLength(key);
  const valueLength = bytesLength(value);
  if (keyLength === undefined || valueLength === undefined) return fallback(fields);
  // The headers in kafkajs' order: own keys, an array's elements one by one.
  const headerNames: string[] = [];
  const headerValues: (Buffer | string)[] = [];
  const headerLengths: number[] = [];
  let headersSize = 0;
  for (const name of Object.keys(headers)) {
    const entry = headers[name] as unknown;
    const values = Array.isArray(entry) ? (entry as unknown[]) : [entry];
    for (const one of values) {
      if (!Buffer.isBuffer(one) && typeof one !== 'string') return fallback(fields);
      const nameLength = Buffer.byteLength(name, 'utf8');
      const length = Buffer.isBuffer(one) ? one.length : Buffer.byteLength(one, 'utf8');
      headerNames.push(name);
      headerValues.push(one);
      headerLengths.push(nameLength, length);
      headersSize += varIntSize(nameLength) + nameLength + varIntSize(length) + length;
    }
  }
  const bodySize =
    1 +
    varLongSize(timestampDelta) +
    varIntSize(offsetDelta) +
    varIntSize(keyLength) + Math.max(0, keyLength) +
    varIntSize(valueLength) + Math.max(0, valueLength) +
    varIntSize(headerNames.length) +
    headersSize;
  const total = varIntSize(bodySize) + bodySize;
  const target = Buffer.allocUnsafe(total);
  let at = writeVarInt(target, 0, bodySize);
  target[at++] = 0; // attributes: none used
  at = writeVarLong(target, at, timestampDelta);
  at = writeVarInt(target, at, offsetDelta);
  at = writeBytes(target, at, key, keyLength);
  at = writeBytes(target, at, value, valueLength);
  at = writeVarInt(target, at, headerNames.length);
  for (let i = 0; i < headerNames.length; i++) {
    at = writeBytes(target, at, headerNames[i], headerLengths[2 * i]!);
    at = writeBytes(target, at, headerValues[i], headerLengths[2 * i + 1]!);
  }
  if (at !== total) throw new Error(`encodeKafkaRecord wrote ${at} of ${total} bytes`);
  return encoderOver(target);
}

/** A kafkajs Encoder holding `bytes` as written (what kafkajs' batch and request encoders take). */
function encoderOver(bytes: Buffer): KafkaEncoder {
  const encoder = Object.create(encoderPrototype!) as KafkaEncoder;
  encoder.buf = bytes;
  encoder.offset = bytes.length;
  return encoder;
}

/**
 * kafkajs' own record encoder, as {@link installFastKafkaRecordEncoder} found it (the one
 * {@link encodeKafkaRecord} hands the records it does not encode to): for benchmarks against it.
 *
 * @returns the function, or undefined before a successful install.
 * @example kafkajsRecordEncoder()?.({ key: 'k', value: 'v' })
 */
export function kafkajsRecordEncoder(): RecordEncoder | undefined {
  return kafkajsEncoder;
}

/**
 * Makes kafkajs encode the records it produces with {@link encodeKafkaRecord} from now on;
 * once per process (later calls return the first answer).
 *
 * @returns true when kafkajs now uses it; false when kafkajs' files are not where version 2.2.4
 *   has them, or kafkajs has already loaded its record batch encoder (which binds the record
 *   encoder once, when it is loaded).
 * @example installFastKafkaRecordEncoder(); const kafka = new Kafka({ brokers });
 */
export function installFastKafkaRecordEncoder(): boolean {
  if (encoderInstalled !== undefined) return encoderInstalled;
  encoderInstalled = false;
  try {
    // The records it returns are kafkajs Encoders (the batch encoder checks), so it needs the class first.
    encoderPrototype = requireKafkajs<{ prototype: object }>('./src/protocol/encoder.js').prototype;
  } catch {
    return false;
  }
  kafkajsEncoder = replaceKafkajsExport<RecordEncoder>('./src/protocol/recordBatch/record/v0/index.js', './src/protocol/recordBatch/v0/index.js', encodeKafkaRecord);
  encoderInstalled = kafkajsEncoder !== undefined;
  return encoderInstalled;
}

/** What kafkajs' record batch encoder (recordBatch/v0/index.js `RecordBatch`) takes. */
export interface KafkaRecordBatchFields {
  readonly compression?: number;
  readonly firstOffset?: unknown;
  readonly firstTimestamp?: number;
  readonly maxTimestamp?: number;
  readonly partitionLeaderEpoch?: number;
  readonly lastOffsetDelta?: number;
  readonly transactional?: boolean;
  readonly producerId?: unknown;
  readonly producerEpoch?: number;
  readonly firstSequence?: number;
  readonly records?: readonly unknown[];
}

/** kafkajs' record batch encoder's signature. */
export type RecordBatchEncoder = (fields: KafkaRecordBatchFields) => Promise<KafkaEncoder>;

interface KafkajsLong {
  getHighBits(): number;
  getLowBits(): number;
}

let batchEncoderInstalled: boolean | undefined;
let kafkajsBatchEncoder: RecordBatchEncoder | undefined;
let toLong: ((value: unknown) => KafkajsLong) | undefined;
let batchCrc: ((buffer: Buffer) => number) | undefined;

/** Bytes of a v2 record batch before its records: first offset, length, leader epoch, magic, CRC, attributes … first sequence, record count. */
const BATCH_HEAD_BYTES = 8 + 4 + 4 + 1 + 4 + 2 + 4 + 8 + 8 + 8 + 2 + 4 + 4;
/** Where the bytes the CRC-32C covers begin (the attributes). */
const CRC_FROM = 8 + 4 + 4 + 1 + 4;

function writeLong(target: Buffer, at: number, value: unknown): void {
  const long = toLong!(value);
  target.writeInt32BE(long.getHighBits(), at);
  target.writeInt32BE(long.getLowBits(), at + 4);
}

/**
 * Encodes an uncompressed record batch exactly as kafkajs' `RecordBatch` (record batch v2,
 * magic 2) does, into one buffer of the batch's size: kafkajs builds it in three encoders, each
 * grown by doubling into zeroed buffers and copied into the next, ~7 copies of every record
 * before the request is sent. The function {@link installFastKafkaRecordBatchEncoder} puts in
 * its place. A compressed batch, or records that are not kafkajs Encoders, go to kafkajs' own,
 * which encodes them or throws as it always did. The CRC-32C is kafkajs' module's (the native
 * one where service/kafka-native-crc.ts installed it).
 *
 * @throws Error before {@link installFastKafkaRecordBatchEncoder} succeeded.
 * @example const batch = await encodeKafkaRecordBatch({ records: [encodeKafkaRecord({ value: 'v' })] }); batch.buf
 */
export async function encodeKafkaRecordBatch(fields: KafkaRecordBatchFields): Promise<KafkaEncoder> {
  const fallback = kafkajsBatchEncoder;
  if (fallback === undefined || encoderPrototype === undefined || toLong === undefined || batchCrc === undefined) throw new Error('encodeKafkaRecordBatch before installFastKafkaRecordBatchEncoder');
  const { compression = 0, records = [] } = fields;
  if (compression !== 0 || !Array.isArray(records)) return fallback(fields);
  let recordBytes = 0;
  for (const record of records as unknown[]) {
    // kafkajs' writeArray of objects writes each Encoder's bytes (buf up to offset).
    if (typeof record !== 'object' || record === null || !Buffer.isBuffer((record as KafkaEncoder).buf) || !Number.isInteger((record as KafkaEncoder).offset)) return fallback(fields);
    recordBytes += (record as KafkaEncoder).offset;
  }
  const now = Date.now();
  const { firstOffset = 0, firstTimestamp = now, maxTimestamp = now, partitionLeaderEpoch = 0, lastOffsetDelta = 0, transactional = false, producerId = -1, producerEpoch = 0, firstSequence = 0 } = fields;
  const total = BATCH_HEAD_BYTES + recordBytes;
  const target = Buffer.allocUnsafe(total);
  writeLong(target, 0, firstOffset);
  target.writeInt32BE(total - 12, 8); // the batch's bytes after the first offset and this length
  target.writeInt32BE(partitionLeaderEpoch, 12);
  target.writeInt8(2, 16); // magic
  target.writeInt16BE(transactional ? 16 : 0, CRC_FROM); // attributes: no compression, create time, transactional bit
  target.writeInt32BE(lastOffsetDelta, CRC_FROM + 2);
  writeLong(target, CRC_FROM + 6, firstTimestamp);
  writeLong(target, CRC_FROM + 14, maxTimestamp);
  writeLong(target, CRC_FROM + 22, producerId);
  target.writeInt16BE(producerEpoch, CRC_FROM + 30);
  target.writeInt32BE(firstSequence, CRC_FROM + 32);
  target.writeInt32BE(records.length, CRC_FROM + 36);
  let at = BATCH_HEAD_BYTES;
  for (const record of records as KafkaEncoder[]) at += record.buf.copy(target, at, 0, record.offset);
  if (at !== total) throw new Error(`encodeKafkaRecordBatch wrote ${at} of ${total} bytes`);
  target.writeUInt32BE(batchCrc(target.subarray(CRC_FROM)) >>> 0, 17);
  return encoderOver(target);
}

/**
 * kafkajs' own record batch encoder, as {@link installFastKafkaRecordBatchEncoder} found it
 * (for comparisons in tests and the bench).
 *
 * @returns the function, or undefined before a successful install.
 * @example await kafkajsRecordBatchEncoder()?.({ records: [] })
 */
export function kafkajsRecordBatchEncoder(): RecordBatchEncoder | undefined {
  return kafkajsBatchEncoder;
}

/**
 * Makes kafkajs encode the record batches it produces with {@link encodeKafkaRecordBatch} from
 * now on; once per process (later calls return the first answer). Call it after
 * {@link installFastKafkaRecordEncoder}, which must reach the batch module before it loads.
 *
 * @returns true when kafkajs now uses it; false when kafkajs' files are not where version 2.2.4
 *   has them, or kafkajs has already loaded its produce request (which binds the batch encoder
 *   once, when it is loaded).
 * @example installFastKafkaRecordEncoder(); installFastKafkaRecordBatchEncoder(); const kafka = new Kafka({ brokers });
 */
export function installFastKafkaRecordBatchEncoder(): boolean {
  if (batchEncoderInstalled !== undefined) return batchEncoderInstalled;
  batchEncoderInstalled = false;
  try {
    encoderPrototype ??= requireKafkajs<{ prototype: object }>('./src/protocol/encoder.js').prototype;
    const Long = requireKafkajs<{ fromValue(value: unknown): KafkajsLong }>('./src/utils/long.js');
    toLong = (value) => Long.fromValue(value);
    // Looked up at each call: the native CRC may replace kafkajs' own after this install.
    const crc = liveKafkajsExport<(input: Buffer) => number>('./src/protocol/recordBatch/crc32C/index.js');
    batchCrc = (buffer) => crc()(buffer);
  } catch {
    return false;
  }
  const replaced = replaceKafkajsExports<{ RecordBatch: RecordBatchEncoder }>('./src/protocol/recordBatch/v0/index.js', './src/protocol/requests/produce/v3/request.js', 'object', (original) => ({
    ...original,
    RecordBatch: encodeKafkaRecordBatch,
  }));
  kafkajsBatchEncoder = replaced?.RecordBatch;
  batchEncoderInstalled = kafkajsBatchEncoder !== undefined;
  return batchEncoderInstalled;
}
