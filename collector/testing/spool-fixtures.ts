import { crc32c } from '../../protocol/index.ts';
import type { ProduceRecord } from '../produce-record.ts';

/**
 * A record in the formats written before sequence numbers, built here from their documented
 * layout in spool-record.ts (not by the code under test): v2 for a frame value, v1 otherwise.
 * Tests only: a spool left by an older collector must still be recovered.
 *
 * @example writeFileSync(path, Buffer.concat([legacySpoolRecord(record, false)]));
 */
export function legacySpoolRecord(record: ProduceRecord, frame: boolean): Buffer {
  const text = (t: string): Buffer => Buffer.from(t, 'utf8');
  const u16 = (n: number): Buffer => { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; };
  const u32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; };
  const i32 = (n: number): Buffer => { const b = Buffer.alloc(4); b.writeInt32LE(n); return b; };
  const f64 = (n: number): Buffer => { const b = Buffer.alloc(8); b.writeDoubleLE(n); return b; };
  const names = Object.keys(record.headers);
  const meta = [
    f64(record.timestampMillis), u16(text(record.topic).length), text(record.topic),
    i32(record.key === null ? -1 : text(record.key).length), text(record.key ?? ''),
    u16(names.length), ...names.flatMap((n) => [u16(text(n).length), text(n), u32(text(record.headers[n] ?? '').length), text(record.headers[n] ?? '')]),
  ];
  const value = Buffer.from(record.value);
  const payload = frame
    ? Buffer.concat([Buffer.from([2]), u32(value.length), ...meta, value])
    : Buffer.concat([Buffer.from([1]), ...meta, u32(value.length), value]);
  const checksum = frame ? crc32c(payload.subarray(0, payload.length - value.length + 16)) : crc32c(payload);
  return Buffer.concat([u32(payload.length), u32(checksum), payload]);
}

/** Values: arbitrary bytes (written as v1 records) or real frames (v2: the frame's own CRC covers its payload). */
