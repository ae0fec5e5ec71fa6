import { mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SpoolPolicy } from './config.ts';
import { openDiskSpool, type DiskSpool } from './disk-spool.ts';
import { SpoolError } from './errors.ts';
import type { ProduceRecord } from './produce-record.ts';
import { encodeSpoolRecord } from './spool-record.ts';

const record = (i: number, valueBytes = 100): ProduceRecord => ({
  topic: 'warpwatch.frames',
  key: `job/k${i % 3}`,
  value: new Uint8Array(valueBytes).fill(i & 0xff),
  headers: { 'ww-source': 'socket', seq: String(i).padStart(6, '0') },
  timestampMillis: 1_700_000_000_000 + i,
});
const seqOf = (r: ProduceRecord): number => Number(r.headers.seq);
const RECORD_BYTES = encodeSpoolRecord(record(0)).length;

/** Reads everything from the spool, committing as it goes, like the replay loop does. */
function drain(spool: DiskSpool, batch = 7): number[] {
  const out: number[] = [];
  for (;;) {
    const records = spool.peek(batch, 1 << 20);
    if (records.length === 0) return out;
    out.push(...records.map(seqOf));
    spool.commit(records.length);
  }
}

describe('openDiskSpool', () => {
  let directory: string;
  const open = (overrides: Partial<{ maxBytes: number; segmentBytes: number; policy: SpoolPolicy }> = {}, onCorrupt?: (e: SpoolError, lost: number) => void): DiskSpool =>
    openDiskSpool({
      directory,
      maxBytes: overrides.maxBytes ?? 1 << 20,
      segmentBytes: overrides.segmentBytes ?? 10 * RECORD_BYTES,
      policy: overrides.policy ?? 'drop-oldest',
      fsyncIntervalMillis: 0,
      onCorrupt,
    });

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'ww-spool-'));
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  describe('append / peek / commit', () => {
    it('returns records first-in first-out across many segments', () => {
      const spool = open();
      for (let i = 0; i < 95; i++) expect(spool.append(record(i))).toEqual({ spooled: true, droppedRecords: 0 });
      expect(readdirSync(directory).filter((n) => n.endsWith('.seg'))).toHaveLength(10);
      expect(spool.recordCount).toBe(95);
      expect(drain(spool)).toEqual(Array.from({ length: 95 }, (_, i) => i));
      expect(spool.recordCount).toBe(0);
      expect(spool.sizeBytes).toBe(0);
      expect(readdirSync(directory).filter((n) => n.endsWith('.seg'))).toHaveLength(0);
      spool.close();
    });

    it('keeps appending while reading (interleaved) without losing or reordering', () => {
      const spool = open();
      const seen: number[] = [];
      let next = 0;
      for (let round = 0; round < 40; round++) {
        for (let k = 0; k < (round % 5) + 1; k++) spool.append(record(next++));
        const records = spool.peek(3, 1 << 20);
        seen.push(...records.map(seqOf));
        spool.commit(records.length);
      }
      seen.push(...drain(spool));
      expect(seen).toEqual(Array.from({ length: next }, (_, i) => i));
      spool.close();
    });

    it('re-delivers records that were peeked but not committed', () => {
      const spool = open();
      for (let i = 0; i < 5; i++) spool.append(record(i));
      expect(spool.peek(3, 1 << 20).map(seqOf)).toEqual([0, 1, 2]);
      expect(spool.peek(3, 1 << 20).map(seqOf)).toEqual([0, 1, 2]);
      spool.commit(2);
      expect(drain(spool)).toEqual([2, 3, 4]);
      spool.close();
    });

    it('returns a record larger than maxBytes on its own', () => {
      const spool = open({ segmentBytes: 64 * 1024 });
      spool.append(record(0, 5000));
      spool.append(record(1, 10));
      expect(spool.peek(10, 100).map(seqOf)).toEqual([0]);
      spool.close();
    });
  });

  describe('bound', () => {
    it('drop-oldest discards whole old segments and counts their records', () => {
      const spool = open({ maxBytes: 30 * RECORD_BYTES, segmentBytes: 10 * RECORD_BYTES, policy: 'drop-oldest' });
      let dropped = 0;
      for (let i = 0; i < 45; i++) dropped += spool.append(record(i)).droppedRecords;
      // 30 records fit; records 0..9 then 10..19 were dropped as whole segments when 30 and 40 arrived.
      expect(dropped).toBe(20);
      expect(spool.sizeBytes).toBeLessThanOrEqual(30 * RECORD_BYTES);
      expect(drain(spool)).toEqual(Array.from({ length: 25 }, (_, i) => i + 20));
      spool.close();
    });

    it('drop-newest refuses incoming records once full and counts them', () => {
      const spool = open({ maxBytes: 30 * RECORD_BYTES, segmentBytes: 10 * RECORD_BYTES, policy: 'drop-newest' });
      let dropped = 0;
      for (let i = 0; i < 45; i++) dropped += spool.append(record(i)).droppedRecords;
      expect(dropped).toBe(15);
      expect(drain(spool)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      spool.close();
    });
  });

  describe('prepend', () => {
    it('delivers prepended records before everything already spooled, also after a restart', () => {
      const spool = open();
      for (let i = 10; i < 15; i++) spool.append(record(i));
      spool.prepend([record(7), record(8), record(9)]);
      expect(spool.recordCount).toBe(8);
      const first = spool.peek(2, 1 << 20);
      expect(first.map(seqOf)).toEqual([7, 8]);
      spool.commit(2);
      spool.close();
      const reopened = open();
      expect(reopened.recordCount).toBe(6);
      expect(drain(reopened)).toEqual([9, 10, 11, 12, 13, 14]);
      reopened.close();
    });
  });

  describe('recovery', () => {
    it('resumes after the last commit when the process died without closing', () => {
      const spool = open();
      for (let i = 0; i < 25; i++) spool.append(record(i));
      const records = spool.peek(12, 1 << 20);
      expect(records.map(seqOf)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]); // a peek stays within one segment
      spool.commit(8);
      // Simulate a crash: no close(); release the lock as the dead process would leave it stale.
      writeFileSync(join(directory, 'LOCK'), '999999999');
      const reopened = open();
      expect(reopened.recordCount).toBe(17);
      expect(drain(reopened)).toEqual(Array.from({ length: 17 }, (_, i) => i + 8));
      reopened.close();
    });

    it('truncates a torn tail record, reports it, and keeps every complete record', () => {
      const spool = open({ segmentBytes: 1 << 20 });
      for (let i = 0; i < 5; i++) spool.append(record(i));
      spool.close();
      const segment = join(directory, readdirSync(directory).find((n) => n.endsWith('.seg')) as string);
      truncateSync(segment, statSync(segment).size - 10);
      const reports: number[] = [];
      const reopened = open({ segmentBytes: 1 << 20 }, (error, lost) => {
        expect(error.code).toBe('WW_ERR_SPOOL_CORRUPT');
        reports.push(lost);
      });
      expect(reports).toEqual([RECORD_BYTES - 10]);
      expect(drain(reopened)).toEqual([0, 1, 2, 3]);
      reopened.close();
    });
  });

  describe('lock', () => {
    it('refuses a directory held by a live process', () => {
      const spool = open();
      writeFileSync(join(directory, 'LOCK'), String(process.ppid));
      expect(() => open()).toThrow(expect.objectContaining({ code: 'WW_ERR_SPOOL_LOCKED' }) as Error);
      spool.close();
    });
  });
});
