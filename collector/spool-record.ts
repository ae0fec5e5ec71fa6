import type { ProduceRecord } from './produce-record.ts';
import { crc32c } from '../protocol/index.ts';

/**
 * On-disk layout of one spool record (little-endian):
 *
 *     u32 payloadLength | u32 crc32c(payload) | payload
 *     payload = u8 version(1) | f64 timestampMillis | u16 topicLength, topic
 *             | i32 keyLength (-1 = null), key | u16 headerCount, { u16 nameLength, name, u32 valueLength, value }*
 *             | u32 valueLength, value
 *
 * Strings are UTF-8. The CRC makes a torn write (crash mid-append) or a flipped bit
 * detectable at recovery instead of replaying garbage to Kafka.
 */
export const SPOOL_RECORD_HEADER_BYTES = 8;

const SPOOL_RECORD_VERSION = 1;
/** A record larger than this is certainly corrupt (frames are ≤ 4 MiB + headers). */
export const MAX_SPOOL_PAYLOAD_BYTES = 8 * 1024 * 1024;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Serialises a record with its length and CRC-32C, ready to append to a segment file.
 *
 * @example const bytes = encodeSpoolRecord(record); fs.writeSync(fd, bytes);
 */
export function encodeSpoolRecord(record: ProduceRecord): Buffer {
  // Lengths first, then one allocation; strings are written straight into it (no temporaries).
  const topicLength = Buffer.byteLength(record.topic, 'utf8');
  const keyLength = record.key === null ? -1 : Buffer.byteLength(record.key, 'utf8');
  let headerCount = 0;
  let headerBytes = 0;
  for (const name in record.headers) {
    headerCount += 1;
    headerBytes += 6 + Buffer.byteLength(name, 'utf8') + Buffer.byteLength(record.headers[name] ?? '', 'utf8');
  }
  const payloadLength = 1 + 8 + 2 + topicLength + 4 + Math.max(0, keyLength) + 2 + headerBytes + 4 + record.value.byteLength;
  const out = Buffer.allocUnsafe(SPOOL_RECORD_HEADER_BYTES + payloadLength);
  let at = SPOOL_RECORD_HEADER_BYTES;
  out.writeUInt8(SPOOL_RECORD_VERSION, at);
  out.writeDoubleLE(record.timestampMillis, at + 1);
  out.writeUInt16LE(topicLength, at + 9);
  at += 11;
  at += out.write(record.topic, at, 'utf8');
  out.writeInt32LE(keyLength, at);
  at += 4;
  if (record.key !== null) at += out.write(record.key, at, 'utf8');
  out.writeUInt16LE(headerCount, at);
  at += 2;
  for (const name in record.headers) {
    const value = record.headers[name] ?? '';
    const nameLength = out.write(name, at + 2, 'utf8');
    out.writeUInt16LE(nameLength, at);
    at += 2 + nameLength;
    const valueLength = out.write(value, at + 4, 'utf8');
    out.writeUInt32LE(valueLength, at);
    at += 4 + valueLength;
  }
  out.writeUInt32LE(record.value.byteLength, at);
  at += 4;
  out.set(record.value, at);
  out.writeUInt32LE(payloadLength, 0);
  out.writeUInt32LE(crc32c(out.subarray(SPOOL_RECORD_HEADER_BYTES)), 4);
  return out;
}

/** Result of scanning spool bytes: the records found and where the valid prefix ends. */
export interface SpoolScan {
  /** Decoded records, in file order (empty when scanned with `decode: false`). */
  readonly records: ProduceRecord[];
  /** Byte length of each decoded record on disk (header included), same order as `records`. */
  readonly recordBytes: number[];
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
    if (crc32c(bytes.subarray(at + SPOOL_RECORD_HEADER_BYTES, end)) !== bytes.readUInt32LE(at + 4)) {
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
    at = end;
  }
  return { records, recordBytes, validBytes: at, stop };
}

function decodePayload(bytes: Buffer, start: number, end: number): ProduceRecord | undefined {
  try {
    let at = start;
    const need = (n: number): void => {
      if (at + n > end) throw new RangeError('short');
    };
    need(11);
    if (bytes.readUInt8(at) !== SPOOL_RECORD_VERSION) return undefined;
    const timestampMillis = bytes.readDoubleLE(at + 1);
    at += 9;
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
    need(4);
    const valueLength = bytes.readUInt32LE(at);
    at += 4;
    if (at + valueLength !== end) return undefined;
    // Copy: the segment buffer is reused/dropped, the record outlives it.
    const value = new Uint8Array(valueLength);
    value.set(bytes.subarray(at, end));
    return { topic, key, value, headers, timestampMillis };
  } catch {
    return undefined;
  }
}

/** Smallest valid payload: version, timestamp, empty topic, null key, no headers, empty value. */
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
  /** Damaged stretches, in file order; empty for a clean segment. */
  readonly damage: SpoolDamage[];
}

/** True when a whole, CRC-valid record of plausible shape starts at `at`. */
function validRecordAt(bytes: Buffer, at: number): number {
  if (bytes.length - at < SPOOL_RECORD_HEADER_BYTES + MIN_SPOOL_PAYLOAD_BYTES) return -1;
  const payloadLength = bytes.readUInt32LE(at);
  if (payloadLength < MIN_SPOOL_PAYLOAD_BYTES || payloadLength > MAX_SPOOL_PAYLOAD_BYTES) return -1;
  const end = at + SPOOL_RECORD_HEADER_BYTES + payloadLength;
  if (end > bytes.length || bytes[at + SPOOL_RECORD_HEADER_BYTES] !== SPOOL_RECORD_VERSION) return -1;
  if (crc32c(bytes.subarray(at + SPOOL_RECORD_HEADER_BYTES, end)) !== bytes.readUInt32LE(at + 4)) return -1;
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
  const damage: SpoolDamage[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = validRecordAt(bytes, at);
    if (end > 0) {
      offsets.push(at);
      lengths.push(end - at);
      at = end;
      continue;
    }
    let next = at + 1;
    while (next < bytes.length && validRecordAt(bytes, next) < 0) next += 1;
    damage.push({ offset: at, length: next - at, where: next >= bytes.length ? 'tail' : 'middle' });
    at = next;
  }
  return { offsets, lengths, damage };
}
