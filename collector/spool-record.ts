import { DLQ_HEADERS } from '../contracts/index.ts';
import type { ProduceRecord } from './produce-record.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, crc32c } from '../protocol/index.ts';

/**
 * On-disk layout of one spool record (little-endian), in one of four versions:
 *
 *     u32 payloadLength | u32 checksum | payload
 *     v1 payload = u8 1 | f64 timestampMillis | u16 topicLength, topic
 *                | i32 keyLength (-1 = null), key | u16 headerCount, { u16 nameLength, name, u32 valueLength, value }*
 *                | u32 valueLength, value                        checksum = crc32c(payload)
 *     v2 payload = u8 2 | u32 valueLength | f64 timestampMillis | topic, key and headers as in v1
 *                | value (a validated warpwatch frame)          checksum = crc32c(payload without value[16..])
 *     v3 payload = u8 3 | u64 sequence | the v1 payload after its version byte
 *     v4 payload = u8 4 | u64 sequence | the v2 payload after its version byte
 *                  checksum (v3, v4) = the v1 / v2 checksum taken over the payload with the
 *                  8 sequence bytes moved to the end
 *
 * v2/v4 are written for frames the collector validated: a frame's own header carries the
 * CRC-32C of its payload (bytes 12..16), so the record checksum covers everything else
 * (metadata and the 16-byte frame header) and readers check the frame's CRC for the rest;
 * the hot write path then checksums about 150 bytes instead of the whole frame. Everything
 * else (DLQ records) is v1/v3. Strings are UTF-8. Either way a torn write (crash
 * mid-append) or a flipped bit is detected at recovery instead of replaying garbage to Kafka.
 *
 * The spool writes v3 and v4 only: every record carries its spool-wide sequence number
 * (1, 2, 3, ... in write order, across segments), so recovery counts exactly how many
 * records a damaged stretch, a truncated segment or a missing segment cost (the gap in the
 * numbers; docs/collector.md). The sequence is stamped by {@link stampSpoolRecord} when the
 * record is written (moving it to the end of the checksummed bytes makes that an 8-byte
 * CRC update). v1 and v2 records (spools written before sequence numbers) are still read.
 */
export const SPOOL_RECORD_HEADER_BYTES = 8;

const SPOOL_RECORD_V1 = 1;
const SPOOL_RECORD_V2 = 2;
const SPOOL_RECORD_V3 = 3;
const SPOOL_RECORD_V4 = 4;
/** Bytes of the sequence number of a v3/v4 record (after the version byte). */
const SEQUENCE_BYTES = 8;
/** A record larger than this is certainly corrupt (frames are ≤ 4 MiB + headers). */
export const MAX_SPOOL_PAYLOAD_BYTES = 8 * 1024 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A record ready to append: `head` (length, checksum, metadata) followed by `value` on disk;
 * `length` = both. Its sequence number and final checksum are set by {@link stampSpoolRecord}.
 */
export interface SpoolRecordParts {
  readonly head: Buffer;
  readonly value: Uint8Array;
  readonly length: number;
  /** CRC-32C of the checksummed bytes without the sequence (continued over it when stamped). */
  readonly partialChecksum: number;
}

/** UTF-8 byte length of `text`; a plain loop for ASCII (headers, topics, keys), which avoids a native call. */
function utf8Length(text: string): number {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) >= 0x80) return Buffer.byteLength(text, 'utf8');
  return text.length;
}

/** Writes `text` as UTF-8 at `at`; returns the bytes written (ASCII by a plain loop). */
function writeUtf8(out: Buffer, text: string, at: number): number {
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return out.write(text, at, 'utf8');
    out[at + i] = c;
  }
  return length;
}

/** True when `record` is a frame the collector validated (not a DLQ record) with a consistent frame header. */
function isValidatedFrame(record: ProduceRecord): boolean {
  const v = record.value;
  return (
    record.headers[DLQ_HEADERS.errorCode] === undefined &&
    v.length >= FRAME_HEADER_BYTES &&
    v[0] === FRAME_MAGIC[0] && v[1] === FRAME_MAGIC[1] && v[2] === FRAME_MAGIC[2] && v[3] === FRAME_MAGIC[3] &&
    (v[8]! | (v[9]! << 8) | (v[10]! << 16) | (v[11]! << 24)) >>> 0 === v.length - FRAME_HEADER_BYTES
  );
}

/**
 * Serialises a record into the two pieces that are written one after the other (no copy of
 * the value): v4 for validated frames, v3 otherwise (see the layout above), with sequence 0
 * until {@link stampSpoolRecord} sets it.
 *
 * @example const parts = encodeSpoolRecordParts(record); stampSpoolRecord(parts, 42); fs.writevSync(fd, [parts.head, parts.value]);
 */
export function encodeSpoolRecordParts(record: ProduceRecord): SpoolRecordParts {
  const frame = isValidatedFrame(record);
  const topicLength = utf8Length(record.topic);
  const keyLength = record.key === null ? -1 : utf8Length(record.key);
  let headerCount = 0;
  let headerBytes = 0;
  for (const name in record.headers) {
    headerCount += 1;
    headerBytes += 6 + utf8Length(name) + utf8Length(record.headers[name] ?? '');
  }
  const metaLength = 1 + SEQUENCE_BYTES + 4 + 8 + 2 + topicLength + 4 + Math.max(0, keyLength) + 2 + headerBytes; // v3: the u32 value length moves to the end
  const head = Buffer.allocUnsafe(SPOOL_RECORD_HEADER_BYTES + metaLength);
  let at = SPOOL_RECORD_HEADER_BYTES;
  head.writeUInt8(frame ? SPOOL_RECORD_V4 : SPOOL_RECORD_V3, at);
  head.fill(0, at + 1, at + 1 + SEQUENCE_BYTES);
  at += 1 + SEQUENCE_BYTES;
  if (frame) {
    head.writeUInt32LE(record.value.byteLength, at);
    at += 4;
  }
  head.writeDoubleLE(record.timestampMillis, at);
  head.writeUInt16LE(topicLength, at + 8);
  at += 10;
  at += writeUtf8(head, record.topic, at);
  head.writeInt32LE(keyLength, at);
  at += 4;
  if (record.key !== null) at += writeUtf8(head, record.key, at);
  head.writeUInt16LE(headerCount, at);
  at += 2;
  for (const name in record.headers) {
    const nameLength = writeUtf8(head, name, at + 2);
    head.writeUInt16LE(nameLength, at);
    at += 2 + nameLength;
    const valueLength = writeUtf8(head, record.headers[name] ?? '', at + 4);
    head.writeUInt32LE(valueLength, at);
    at += 4 + valueLength;
  }
  if (!frame) {
    head.writeUInt32LE(record.value.byteLength, at);
    at += 4;
  }
  const payloadLength = at - SPOOL_RECORD_HEADER_BYTES + record.value.byteLength;
  // Checksummed order: version byte, metadata after the sequence, value (v4: its 16-byte header); the sequence last.
  const afterSequence = SPOOL_RECORD_HEADER_BYTES + 1 + SEQUENCE_BYTES;
  const metaChecksum = crc32c(head.subarray(afterSequence, at), crc32c(head.subarray(SPOOL_RECORD_HEADER_BYTES, SPOOL_RECORD_HEADER_BYTES + 1)));
  const partialChecksum = crc32c(frame ? record.value.subarray(0, FRAME_HEADER_BYTES) : record.value, metaChecksum);
  head.writeUInt32LE(payloadLength, 0);
  head.writeUInt32LE(crc32c(head.subarray(SPOOL_RECORD_HEADER_BYTES + 1, afterSequence), partialChecksum), 4);
  return { head: head.subarray(0, at), value: record.value, length: at + record.value.byteLength, partialChecksum };
}

/**
 * Sets the spool-wide sequence number of an encoded record (1 .. 2^53 − 1) and its final
 * checksum, in place. Called when the record is written, so numbers follow the write order.
 *
 * @throws RangeError when `sequence` is not a safe non-negative integer.
 * @example stampSpoolRecord(parts, 7); // parts.head now carries sequence 7 and its CRC-32C
 */
export function stampSpoolRecord(parts: SpoolRecordParts, sequence: number): void {
  if (!Number.isSafeInteger(sequence) || sequence < 0) throw new RangeError(`spool sequence must be a safe non-negative integer, got ${sequence}`);
  const at = SPOOL_RECORD_HEADER_BYTES + 1;
  parts.head.writeUInt32LE(sequence % 0x1_0000_0000, at);
  parts.head.writeUInt32LE(Math.floor(sequence / 0x1_0000_0000), at + 4);
  parts.head.writeUInt32LE(crc32c(parts.head.subarray(at, at + SEQUENCE_BYTES), parts.partialChecksum), 4);
}

/**
 * Serialises a record with its length, sequence number and CRC-32C, ready to append to a
 * segment file.
 *
 * @throws RangeError when `sequence` is not a safe non-negative integer.
 * @example const bytes = encodeSpoolRecord(record, 1); fs.writeSync(fd, bytes);
 */
export function encodeSpoolRecord(record: ProduceRecord, sequence = 0): Buffer {
  const parts = encodeSpoolRecordParts(record);
  stampSpoolRecord(parts, sequence);
  return Buffer.concat([parts.head, parts.value], parts.length);
}

/** The sequence number of the valid record whose payload starts at `start` (0 for a v1/v2 record, which has none). */
function sequenceAt(bytes: Buffer, start: number): number {
  const version = bytes[start];
  if (version !== SPOOL_RECORD_V3 && version !== SPOOL_RECORD_V4) return 0;
  return bytes.readUInt32LE(start + 1) + bytes.readUInt32LE(start + 5) * 0x1_0000_0000;
}

/**
 * Whether the record whose payload is bytes[start, end) passes its checksum: v1 over the
 * whole payload; v2 over the payload up to the frame's first 16 bytes, and the frame's own
 * CRC-32C over the rest.
 */
function checksumOk(bytes: Buffer, start: number, end: number, stored: number): boolean {
  const version = bytes[start];
  if (version === SPOOL_RECORD_V1) return crc32c(bytes.subarray(start, end)) === stored;
  if (version === SPOOL_RECORD_V3) {
    if (end - start < 1 + SEQUENCE_BYTES) return false;
    const sequenceEnd = start + 1 + SEQUENCE_BYTES;
    return crc32c(bytes.subarray(start + 1, sequenceEnd), crc32c(bytes.subarray(sequenceEnd, end), crc32c(bytes.subarray(start, start + 1)))) === stored;
  }
  if (version !== SPOOL_RECORD_V2 && version !== SPOOL_RECORD_V4) return false;
  const lengthAt = start + 1 + (version === SPOOL_RECORD_V4 ? SEQUENCE_BYTES : 0);
  if (end - lengthAt < 4) return false;
  const valueLength = bytes.readUInt32LE(lengthAt);
  if (valueLength < FRAME_HEADER_BYTES || valueLength > end - lengthAt - 4) return false;
  const valueStart = end - valueLength;
  const checkedEnd = valueStart + FRAME_HEADER_BYTES;
  const checksum =
    version === SPOOL_RECORD_V2
      ? crc32c(bytes.subarray(start, checkedEnd))
      : crc32c(bytes.subarray(start + 1, lengthAt), crc32c(bytes.subarray(lengthAt, checkedEnd), crc32c(bytes.subarray(start, start + 1))));
  if (checksum !== stored) return false;
  return crc32c(bytes.subarray(checkedEnd, end)) === bytes.readUInt32LE(valueStart + 12);
}

/** Result of scanning spool bytes: the records found and where the valid prefix ends. */
export interface SpoolScan {
  /** Decoded records, in file order (empty when scanned with `decode: false`). */
  readonly records: ProduceRecord[];
  /** Byte length of each decoded record on disk (header included), same order as `records`. */
  readonly recordBytes: number[];
  /** Sequence number of each record (0 for v1/v2 records, which have none), same order as `recordBytes`. */
  readonly sequences: number[];
  /** Offset just past the last complete, valid record. */
  readonly validBytes: number;
  /** Why scanning stopped before the end: a truncated record (torn write) or a CRC/format error. */
  readonly stop: 'end' | 'truncated' | 'corrupt';
}

/**
 * Decodes consecutive spool records from `bytes`, stopping at the first incomplete or
 * corrupt one (its offset is `validBytes`), or after `maxRecords` records. With
 * `decode: false` only lengths and CRCs are checked (`records` stays empty, `recordBytes`
 * is filled): the cheap scan used at recovery.
 *
 * @example const { records, validBytes, stop } = decodeSpoolRecords(buffer);
 */
export function decodeSpoolRecords(bytes: Buffer, options: { maxRecords?: number; decode?: boolean } = {}): SpoolScan {
  const maxRecords = options.maxRecords ?? Number.POSITIVE_INFINITY;
  const decode = options.decode ?? true;
  const records: ProduceRecord[] = [];
  const recordBytes: number[] = [];
  const sequences: number[] = [];
  let at = 0;
  let stop: SpoolScan['stop'] = 'end';
  while (at < bytes.length && recordBytes.length < maxRecords) {
    if (bytes.length - at < SPOOL_RECORD_HEADER_BYTES) {
      stop = 'truncated';
      break;
    }
    const payloadLength = bytes.readUInt32LE(at);
    if (payloadLength > MAX_SPOOL_PAYLOAD_BYTES) {
      stop = 'corrupt';
      break;
    }
    const end = at + SPOOL_RECORD_HEADER_BYTES + payloadLength;
    if (end > bytes.length) {
      stop = 'truncated';
      break;
    }
    if (!checksumOk(bytes, at + SPOOL_RECORD_HEADER_BYTES, end, bytes.readUInt32LE(at + 4))) {
      stop = 'corrupt';
      break;
    }
    if (decode) {
      const record = decodePayload(bytes, at + SPOOL_RECORD_HEADER_BYTES, end);
      if (record === undefined) {
        stop = 'corrupt';
        break;
      }
      records.push(record);
    }
    recordBytes.push(end - at);
    sequences.push(sequenceAt(bytes, at + SPOOL_RECORD_HEADER_BYTES));
    at = end;
  }
  return { records, recordBytes, sequences, validBytes: at, stop };
}

function decodePayload(bytes: Buffer, start: number, end: number): ProduceRecord | undefined {
  try {
    let at = start;
    const need = (n: number): void => {
      if (at + n > end) throw new RangeError('short');
    };
    need(11);
    const version = bytes.readUInt8(at);
    if (version < SPOOL_RECORD_V1 || version > SPOOL_RECORD_V4) return undefined;
    at += 1;
    if (version >= SPOOL_RECORD_V3) {
      need(SEQUENCE_BYTES);
      at += SEQUENCE_BYTES;
    }
    const frame = version === SPOOL_RECORD_V2 || version === SPOOL_RECORD_V4;
    let v2ValueLength = -1;
    if (frame) {
      need(4);
      v2ValueLength = bytes.readUInt32LE(at);
      at += 4;
    }
    need(10);
    const timestampMillis = bytes.readDoubleLE(at);
    at += 8;
    const topicLength = bytes.readUInt16LE(at);
    at += 2;
    need(topicLength + 4);
    const topic = decoder.decode(bytes.subarray(at, at + topicLength));
    at += topicLength;
    const keyLength = bytes.readInt32LE(at);
    at += 4;
    let key: string | null = null;
    if (keyLength >= 0) {
      need(keyLength);
      key = decoder.decode(bytes.subarray(at, at + keyLength));
      at += keyLength;
    }
    need(2);
    const headerCount = bytes.readUInt16LE(at);
    at += 2;
    // Null prototype: a header named "__proto__" must stay a plain entry.
    const headers: Record<string, string> = Object.create(null) as Record<string, string>;
    for (let h = 0; h < headerCount; h++) {
      need(2);
      const nameLength = bytes.readUInt16LE(at);
      at += 2;
      need(nameLength + 4);
      const name = decoder.decode(bytes.subarray(at, at + nameLength));
      at += nameLength;
      const valueLength = bytes.readUInt32LE(at);
      at += 4;
      need(valueLength);
      headers[name] = decoder.decode(bytes.subarray(at, at + valueLength));
      at += valueLength;
    }
    let valueLength = v2ValueLength;
    if (!frame) {
      need(4);
      valueLength = bytes.readUInt32LE(at);
      at += 4;
    }
    if (at + valueLength !== end) return undefined;
    // Copy: the segment buffer is reused/dropped, the record outlives it.
    const value = new Uint8Array(valueLength);
    value.set(bytes.subarray(at, end));
    return { topic, key, value, headers, timestampMillis };
  } catch {
    return undefined;
  }
}

/** Smallest valid payload (v1): version, timestamp, empty topic, null key, no headers, empty value. */
const MIN_SPOOL_PAYLOAD_BYTES = 1 + 8 + 2 + 4 + 2 + 4;

/** A stretch of a segment that holds no valid record (a torn write, a flipped bit, foreign bytes). */
export interface SpoolDamage {
  /** Byte offset where the damage starts. */
  readonly offset: number;
  /** Bytes skipped. */
  readonly length: number;
  /** `tail` = the damage runs to the end of the bytes (a torn last append); `middle` = valid records follow. */
  readonly where: 'tail' | 'middle';
}

/** Result of {@link scanSpoolSegment}: every valid record's place and every damaged stretch. */
export interface SpoolSegmentScan {
  /** Start offset of each valid record, in file order. */
  readonly offsets: number[];
  /** On-disk length of each valid record (header included), same order as `offsets`. */
  readonly lengths: number[];
  /** Sequence number of each valid record (0 for v1/v2 records, which have none), same order as `offsets`. */
  readonly sequences: number[];
  /** Damaged stretches, in file order; empty for a clean segment. */
  readonly damage: SpoolDamage[];
}

/** True when a whole, CRC-valid record of plausible shape starts at `at`. */
function validRecordAt(bytes: Buffer, at: number): number {
  if (bytes.length - at < SPOOL_RECORD_HEADER_BYTES + MIN_SPOOL_PAYLOAD_BYTES) return -1;
  const payloadLength = bytes.readUInt32LE(at);
  if (payloadLength < MIN_SPOOL_PAYLOAD_BYTES || payloadLength > MAX_SPOOL_PAYLOAD_BYTES) return -1;
  const end = at + SPOOL_RECORD_HEADER_BYTES + payloadLength;
  if (end > bytes.length) return -1;
  if (!checksumOk(bytes, at + SPOOL_RECORD_HEADER_BYTES, end, bytes.readUInt32LE(at + 4))) return -1;
  return end;
}

/**
 * Recovery scan of one segment file: finds every valid record, also behind damage. Where a
 * record fails its length, version or CRC-32C check, the scan resynchronises at the next
 * offset where a whole valid record starts, so one torn append in the middle of a segment
 * (a disk that filled up and later had room again) costs only the torn record, never the
 * records appended behind it. Damage that reaches the end of the bytes is a torn tail.
 * Cost: linear for clean data; a damaged stretch of d bytes costs O(d) cheap checks
 * (a CRC only where length and version byte are plausible).
 *
 * @example const { offsets, lengths, damage } = scanSpoolSegment(readFileSync(path));
 */
export function scanSpoolSegment(bytes: Buffer): SpoolSegmentScan {
  const offsets: number[] = [];
  const lengths: number[] = [];
  const sequences: number[] = [];
  const damage: SpoolDamage[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = validRecordAt(bytes, at);
    if (end > 0) {
      offsets.push(at);
      lengths.push(end - at);
      sequences.push(sequenceAt(bytes, at + SPOOL_RECORD_HEADER_BYTES));
      at = end;
      continue;
    }
    let next = at + 1;
    while (next < bytes.length && validRecordAt(bytes, next) < 0) next += 1;
    damage.push({ offset: at, length: next - at, where: next >= bytes.length ? 'tail' : 'middle' });
    at = next;
  }
  return { offsets, lengths, sequences, damage };
}
