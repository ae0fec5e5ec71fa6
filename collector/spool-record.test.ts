import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from './frame-fixtures.ts';
import type { ProduceRecord } from './produce-record.ts';
import { SPOOL_RECORD_HEADER_BYTES, decodeSpoolRecords, encodeSpoolRecord, scanSpoolSegment } from './spool-record.ts';

/** Values: arbitrary bytes (written as v1 records) or real frames (v2: the frame's own CRC covers its payload). */
const valueArbitrary = fc.oneof(
  fc.uint8Array({ maxLength: 2000 }),
  fc.record({ sequence: fc.nat({ max: 1000 }), groups: fc.integer({ min: 1, max: 6 }) }).map(({ sequence, groups }) => fixtureFrameBytes({ job: 'j', kernel: 'k', sequence, groups })),
);

const recordArbitrary: fc.Arbitrary<ProduceRecord> = fc.record({
  topic: fc.string({ minLength: 1, maxLength: 40 }),
  key: fc.option(fc.string({ maxLength: 60 }), { nil: null }),
  value: valueArbitrary,
  headers: fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), fc.string({ maxLength: 80 }), { maxKeys: 6 }),
  timestampMillis: fc.integer({ min: 0, max: 2 ** 45 }),
});

describe('spool records', () => {
  describe('encodeSpoolRecord / decodeSpoolRecords', () => {
    it('round-trips any sequence of records exactly', () => {
      fc.assert(
        fc.property(fc.array(recordArbitrary, { maxLength: 8 }), (records) => {
          const bytes = Buffer.concat(records.map((r) => encodeSpoolRecord(r)));
          const scan = decodeSpoolRecords(bytes);
          expect(scan.stop).toBe('end');
          expect(scan.validBytes).toBe(bytes.length);
          expect(scan.records).toEqual(records.map((r) => ({ ...r, headers: { ...r.headers } })));
        }),
        { numRuns: 200 },
      );
    });

    it('stops at a torn last record and keeps the complete ones before it', () => {
      fc.assert(
        fc.property(fc.array(recordArbitrary, { minLength: 2, maxLength: 5 }), fc.nat(), (records, cutSeed) => {
          const parts = records.map((r) => encodeSpoolRecord(r));
          const full = Buffer.concat(parts);
          const last = parts[parts.length - 1] as Buffer;
          const cut = 1 + (cutSeed % (last.length - 1)); // remove 1..len-1 bytes of the last record
          const scan = decodeSpoolRecords(full.subarray(0, full.length - cut));
          expect(scan.stop).toBe('truncated');
          expect(scan.records).toHaveLength(records.length - 1);
          expect(scan.validBytes).toBe(full.length - last.length);
        }),
        { numRuns: 100 },
      );
    });

    it('detects any single flipped bit in a payload through the CRC', () => {
      fc.assert(
        fc.property(recordArbitrary, fc.nat(), fc.integer({ min: 0, max: 7 }), (record, at, bit) => {
          const bytes = encodeSpoolRecord(record);
          const position = SPOOL_RECORD_HEADER_BYTES + (at % (bytes.length - SPOOL_RECORD_HEADER_BYTES));
          bytes[position] = (bytes[position] as number) ^ (1 << bit);
          const scan = decodeSpoolRecords(bytes);
          expect(scan.stop).toBe('corrupt');
          expect(scan.records).toHaveLength(0);
          expect(scan.validBytes).toBe(0);
        }),
        { numRuns: 200 },
      );
    });

    it('writes validated frames as v4 and everything else (DLQ records, other bytes) as v3', () => {
      const frame = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      const record = (headers: Record<string, string>, value: Uint8Array): ProduceRecord => ({ topic: 't', key: 'k', value, headers, timestampMillis: 1 });
      expect(encodeSpoolRecord(record({}, frame))[SPOOL_RECORD_HEADER_BYTES]).toBe(4);
      expect(encodeSpoolRecord(record({ 'ww-error-code': 'WW_ERR_FRAME_CRC_MISMATCH' }, frame))[SPOOL_RECORD_HEADER_BYTES]).toBe(3);
      expect(encodeSpoolRecord(record({}, frame.subarray(0, 100)))[SPOOL_RECORD_HEADER_BYTES]).toBe(3);
      // A flipped bit deep in a v2 frame's payload is caught by the frame's own CRC, in both scanners.
      const bytes = encodeSpoolRecord(record({}, frame));
      bytes[bytes.length - 7] = (bytes[bytes.length - 7] as number) ^ 0x10;
      expect(decodeSpoolRecords(bytes).stop).toBe('corrupt');
      expect(scanSpoolSegment(bytes).offsets).toEqual([]);
    });

    it('counts records without decoding when asked', () => {
      const bytes = Buffer.concat([0, 1, 2].map((i) => encodeSpoolRecord({ topic: 't', key: `k${i}`, value: new Uint8Array(i * 10), headers: {}, timestampMillis: i })));
      const scan = decodeSpoolRecords(bytes, { decode: false });
      expect(scan.records).toHaveLength(0);
      expect(scan.recordBytes).toHaveLength(3);
      expect(scan.recordBytes.reduce((a, b) => a + b, 0)).toBe(bytes.length);
    });
  });
});
