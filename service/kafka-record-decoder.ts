/**
 * kafkajs decodes every record it fetches with a function (kafkajs/src/protocol/recordBatch/
 * record/v0/decoder.js) that costs about half of a consumer's CPU on small records: it folds the
 * record's headers into an object by spreading a new copy per header, and it computes the
 * record's offset and timestamp with BigInt-backed `Long` objects (several per record; the
 * timestamp delta is read byte by byte into `Long`s). kafkajs 2.2.4 is its last release and offers
 * no way to pass another decoder. So, before a client decodes its first record batch,
 * {@link installFastKafkaRecordDecoder} replaces that module's export in Node's module cache with
 * {@link decodeKafkaRecord}: the same record object, field for field, from the same bytes, built
 * with plain numbers and one headers object.
 *
 * It takes its fast path only where plain numbers are exact: the batch's first offset and
 * timestamp within ±2^52, a timestamp delta of at most 7 varint bytes (±2^48 ms, ~9,000 years).
 * Any other record (and any record it cannot read) goes to kafkajs' own decoder from the same
 * position, so that the result, or the error, is kafkajs' own. docs/estimator.md (Kafka record decoding)
 * gives the measured gain; service/kafka-record-decoder.test.ts compares the two decoders on
 * generated records, edge cases included.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

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
  installed = false;
  try {
    const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
    if (requireHere.cache[kafkajsRequire.resolve('./src/protocol/recordBatch/v0/decoder.js')] !== undefined) return false;
    const recordPath = kafkajsRequire.resolve('./src/protocol/recordBatch/record/v0/decoder.js');
    const original = kafkajsRequire(recordPath) as RecordDecoder;
    const cached = requireHere.cache[recordPath];
    if (typeof original !== 'function' || cached === undefined) return false;
    kafkajsDecoder = original;
    cached.exports = decodeKafkaRecord;
    installed = true;
  } catch {
    installed = false;
  }
  return installed;
}
