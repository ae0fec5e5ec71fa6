import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from './testing/frame-fixtures.ts';
import type { ProduceRecord } from './produce-record.ts';
import { legacySpoolRecord } from './testing/spool-fixtures.ts';
import { SPOOL_RECORD_HEADER_BYTES, decodeSpoolRecords, encodeSpoolRecord, scanSpoolSegment } from './spool-record.ts';

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

    it('carries the sequence number it was stamped with, covered by the checksum, through both scanners', () => {
      const frame = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 3 });
      const records: ProduceRecord[] = [
        { topic: 'warpwatch.frames', key: 'k', value: frame, headers: { 'ww-host': 'h' }, timestampMillis: 5 },
        { topic: 'warpwatch.dlq', key: null, value: new Uint8Array([1, 2, 3]), headers: { 'ww-error-code': 'WW_ERR_FRAME_CRC_MISMATCH' }, timestampMillis: 6 },
      ];
      const numbers = [2 ** 40 + 5, 2 ** 53 - 1];
      const bytes = Buffer.concat(records.map((r, i) => encodeSpoolRecord(r, numbers[i])));
      expect(decodeSpoolRecords(bytes).sequences).toEqual(numbers);
      expect(decodeSpoolRecords(bytes).records).toEqual(records);
      expect(scanSpoolSegment(bytes).sequences).toEqual(numbers);
      // Any flipped bit of the number (bytes 9..17 of the record) fails the record's checksum.
      for (let bit = 0; bit < 64; bit++) {
        const damaged = Buffer.from(bytes);
        const at = SPOOL_RECORD_HEADER_BYTES + 1 + (bit >> 3);
        damaged[at] = (damaged[at] as number) ^ (1 << (bit & 7));
        expect(scanSpoolSegment(damaged).sequences).toEqual([numbers[1]]);
      }
      expect(() => encodeSpoolRecord(records[0] as ProduceRecord, 2 ** 53)).toThrow(RangeError);
    });

    it('reads records written before sequence numbers (v1, v2) with sequence 0, and resynchronises behind damage among them', () => {
      const frame = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 9 });
      const old: ProduceRecord[] = [
        { topic: 'warpwatch.frames', key: 'job/k|n=32', value: frame, headers: { 'ww-source': 'socket', 'ww-host': 'h' }, timestampMillis: 1_700_000_000_000 },
        { topic: 'warpwatch.dlq', key: null, value: new Uint8Array([7, 7]), headers: { 'ww-error-code': 'WW_ERR_FRAME_CRC_MISMATCH' }, timestampMillis: 2 },
      ];
      const first = legacySpoolRecord(old[0] as ProduceRecord, true);
      const second = legacySpoolRecord(old[1] as ProduceRecord, false);
      expect(first[SPOOL_RECORD_HEADER_BYTES]).toBe(2);
      expect(second[SPOOL_RECORD_HEADER_BYTES]).toBe(1);
      const clean = Buffer.concat([first, second]);
      expect(decodeSpoolRecords(clean)).toMatchObject({ records: old, sequences: [0, 0], stop: 'end' });
      const damaged = Buffer.concat([first, Buffer.alloc(33, 0xab), second, encodeSpoolRecord(old[1] as ProduceRecord, 1)]);
      const scan = scanSpoolSegment(damaged);
      expect(scan.offsets).toEqual([0, first.length + 33, first.length + 33 + second.length]);
      expect(scan.sequences).toEqual([0, 0, 1]);
      expect(scan.damage).toEqual([{ offset: first.length, length: 33, where: 'middle' }]);
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
