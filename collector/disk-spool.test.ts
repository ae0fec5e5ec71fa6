import * as fs from 'node:fs';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDiskSpool, type DiskSpool, type DiskSpoolOptions, type SpoolDropReason, type SpoolFs } from './disk-spool.ts';
import { SpoolError } from './errors.ts';
import type { ProduceRecord } from './produce-record.ts';
import { legacySpoolRecord } from './testing/spool-fixtures.ts';
import { encodeSpoolRecord, scanSpoolSegment } from './spool-record.ts';

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
  let drops: Record<string, number>;
  const open = (
    overrides: Partial<DiskSpoolOptions> = {},
    onCorrupt?: (e: SpoolError, lostRecords: number, lostBytes: number) => void,
  ): DiskSpool =>
    openDiskSpool({
      directory,
      maxBytes: 1 << 20,
      segmentBytes: 10 * RECORD_BYTES,
      policy: 'drop-oldest',
      fsyncIntervalMillis: 0,
      memoryMaxBytes: 1 << 20,
      cursorIntervalMillis: 0,
      onCorrupt,
      onDrop: (count: number, reason: SpoolDropReason) => {
        drops[reason] = (drops[reason] ?? 0) + count;
      },
      ...overrides,
    });
  const segmentFiles = (): string[] => readdirSync(directory).filter((n) => n.endsWith('.seg'));

  beforeEach(() => {
    drops = {};
    directory = mkdtempSync(join(tmpdir(), 'ww-spool-'));
  });
  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  describe('append / peek / commit', () => {
    it('returns records first-in first-out across many segments', () => {
      const spool = open();
      for (let i = 0; i < 95; i++) expect(spool.append(record(i))).toBe(true);
      spool.flushWrites();
      expect(segmentFiles()).toHaveLength(10);
      expect(spool.recordCount).toBe(95);
      expect(drain(spool)).toEqual(Array.from({ length: 95 }, (_, i) => i));
      expect(spool.recordCount).toBe(0);
      // Delivered segments are deleted; the one being written stays until it is full.
      expect(segmentFiles()).toHaveLength(1);
      expect(spool.sizeBytes).toBe(5 * RECORD_BYTES);
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
      for (let i = 0; i < 45; i++) spool.append(record(i));
      // 30 records fit; records 0..9 then 10..19 were dropped as whole segments when 30 and 40 arrived.
      expect(drops).toEqual({ 'spool-full': 20 });
      expect(spool.sizeBytes).toBeLessThanOrEqual(30 * RECORD_BYTES);
      expect(drain(spool)).toEqual(Array.from({ length: 25 }, (_, i) => i + 20));
      spool.close();
    });

    it('drop-newest refuses incoming records once full and counts them', () => {
      const spool = open({ maxBytes: 30 * RECORD_BYTES, segmentBytes: 10 * RECORD_BYTES, policy: 'drop-newest' });
      let refused = 0;
      for (let i = 0; i < 45; i++) if (!spool.append(record(i))) refused += 1;
      expect(refused).toBe(15);
      expect(drops).toEqual({ 'spool-full': 15 });
      expect(drain(spool)).toEqual(Array.from({ length: 30 }, (_, i) => i));
      spool.close();
    });
  });

  describe('recovery', () => {
    it('resumes after the last commit when the process died without closing', () => {
      const spool = open();
      for (let i = 0; i < 25; i++) spool.append(record(i));
      const records = spool.peek(12, 1 << 20);
      expect(records.map(seqOf)).toEqual(Array.from({ length: 12 }, (_, i) => i)); // cached: across segments
      spool.commit(8);
      // Simulate a crash: no close(); the kernel releases the lock of a dead process.
      spool.abandon();
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
      const reports: [number, number][] = [];
      const reopened = open({ segmentBytes: 1 << 20 }, (error, lostRecords, lostBytes) => {
        expect(error.code).toBe('WW_ERR_SPOOL_CORRUPT');
        reports.push([lostRecords, lostBytes]);
      });
      expect(reports).toEqual([[1, RECORD_BYTES - 10]]);
      expect(statSync(segment).size).toBe(4 * RECORD_BYTES);
      expect(drain(reopened)).toEqual([0, 1, 2, 3]);
      reopened.close();
    });
  });

  describe('damage accounting (record sequence numbers)', () => {
    const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);
    const reopenCounting = (overrides: Partial<DiskSpoolOptions> = {}): { spool: DiskSpool; reports: [number, number][]; messages: string[] } => {
      const reports: [number, number][] = [];
      const messages: string[] = [];
      const spool = open(overrides, (error, lostRecords, lostBytes) => {
        expect(error.code).toBe('WW_ERR_SPOOL_CORRUPT');
        reports.push([lostRecords, lostBytes]);
        messages.push(error.message);
      });
      return { spool, reports, messages };
    };

    it('counts exactly the records a truncated middle segment, a record corrupted mid-record and a deleted segment cost', () => {
      const spool = open(); // 10 records per segment
      for (let i = 0; i < 100; i++) spool.append(record(i));
      spool.close();
      const files = segmentFiles().sort();
      expect(files).toHaveLength(10);
      // Segment 3 (records 20..29) truncated inside its third record: 20 and 21 survive.
      truncateSync(join(directory, files[2] as string), Math.floor(2.6 * RECORD_BYTES));
      // Segment 5 (records 40..49): bytes in the middle of its fifth record (44) overwritten.
      const fifth = join(directory, files[4] as string);
      const bytes = readFileSync(fifth);
      bytes.fill(0x5a, 4 * RECORD_BYTES + 40, 4 * RECORD_BYTES + 60);
      writeFileSync(fifth, bytes);
      // Segment 7 (records 60..69) deleted.
      rmSync(join(directory, files[6] as string));
      const { spool: reopened, reports, messages } = reopenCounting();
      const lost = [...range(22, 30), 44, ...range(60, 70)];
      const delivered = drain(reopened);
      expect(delivered).toEqual(range(0, 100).filter((i) => !lost.includes(i)));
      expect(reports).toEqual([
        [8, Math.floor(2.6 * RECORD_BYTES) - 2 * RECORD_BYTES],
        [1, RECORD_BYTES],
        [10, 0],
      ]);
      expect(messages[0]).toContain('8 record(s) lost: records 23..30 are missing before record 31');
      expect(messages[2]).toContain(`segment file(s) ${files[6] as string} missing`);
      reopened.close();
    });

    it('counts records lost at the end of the newest segment from the cursor (truncated at a record boundary, or torn)', () => {
      const spool = open({ segmentBytes: 1 << 20 });
      for (let i = 0; i < 30; i++) spool.append(record(i));
      spool.close();
      const path = join(directory, segmentFiles()[0] as string);
      truncateSync(path, 27 * RECORD_BYTES);
      const first = reopenCounting({ segmentBytes: 1 << 20 });
      expect(first.reports).toEqual([[3, 0]]);
      expect(drain(first.spool)).toEqual(range(0, 27));
      first.spool.close();
      // Numbering goes on after the lost ones: a later truncation is counted from them.
      const second = open({ segmentBytes: 1 << 20 });
      for (let i = 100; i < 110; i++) second.append(record(i));
      second.close();
      const newest = join(directory, segmentFiles().sort().at(-1) as string);
      expect(scanSpoolSegment(readFileSync(newest)).sequences).toEqual(range(31, 41));
      truncateSync(newest, Math.floor(7.5 * RECORD_BYTES));
      const third = reopenCounting({ segmentBytes: 1 << 20 });
      expect(third.reports).toEqual([[3, Math.floor(0.5 * RECORD_BYTES)]]);
      expect(drain(third.spool)).toEqual(range(100, 107));
      third.spool.close();
    });

    it('does not count delivered records again: damage found after a restart costs only undelivered records', () => {
      const spool = open(); // 10 records per segment
      for (let i = 0; i < 40; i++) spool.append(record(i));
      spool.flushWrites();
      const batch = spool.peek(15, 1 << 20);
      spool.commit(batch.length);
      spool.abandon(); // a crash after delivering 0..14
      const files = segmentFiles().sort();
      expect(files).toHaveLength(3); // the first segment was delivered and deleted
      rmSync(join(directory, files[1] as string)); // records 20..29
      const { spool: reopened, reports } = reopenCounting();
      expect(reports).toEqual([[10, 0]]);
      expect(drain(reopened)).toEqual([...range(15, 20), ...range(30, 40)]);
      reopened.close();
    });

    it('recovers a spool written before sequence numbers (v1/v2 records, old cursor), then numbers new records', () => {
      const old = range(0, 5).map((i) => legacySpoolRecord(record(i), false));
      const garbage = Buffer.alloc(30, 0xee);
      writeFileSync(join(directory, '0000000000000001.seg'), Buffer.concat([old[0], old[1], garbage, old[2], old[3], old[4]] as Buffer[]));
      writeFileSync(join(directory, 'cursor.json'), JSON.stringify({ sequence: 1, offsetBytes: 0 }));
      const { spool: reopened, reports } = reopenCounting();
      // Old records have no numbers: one damaged stretch counts as 1 (the documented rule for them).
      expect(reports).toEqual([[1, 30]]);
      expect(reopened.recordCount).toBe(5);
      expect(drain(reopened)).toEqual(range(0, 5));
      for (let i = 5; i < 8; i++) reopened.append(record(i));
      reopened.close();
      const newest = join(directory, segmentFiles().sort().at(-1) as string);
      expect(scanSpoolSegment(readFileSync(newest)).sequences).toEqual([1, 2, 3]);
      const again = reopenCounting();
      expect(again.reports).toEqual([]);
      expect(drain(again.spool)).toEqual([5, 6, 7]);
      again.spool.close();
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

  describe('write-ahead', () => {
    it('has every appended record on disk at the end of the event-loop turn, before any peek (durable against a crash)', async () => {
      const spool = open({ segmentBytes: 1 << 20 });
      for (let i = 0; i < 50; i++) spool.append(record(i));
      await Promise.resolve(); // the turn ends: the microtask writes
      // Read the files as a crashed process would leave them (no close, no fsync needed for a process crash).
      const bytes = Buffer.concat(segmentFiles().sort().map((n) => readFileSync(join(directory, n))));
      expect(bytes.length).toBe(50 * RECORD_BYTES);
      spool.abandon();
      const reopened = open({ segmentBytes: 1 << 20 });
      expect(reopened.recordCount).toBe(50);
      expect(drain(reopened)).toEqual(Array.from({ length: 50 }, (_, i) => i));
      reopened.close();
      spool.close();
    });

    it('keeps memory bounded: records past the cache bound are read back from disk, in order', () => {
      const spool = open({ memoryMaxBytes: 10 * (RECORD_BYTES + 512), segmentBytes: 1 << 20 });
      for (let i = 0; i < 100; i++) spool.append(record(i));
      spool.flushWrites();
      expect(spool.memoryBytes).toBeLessThanOrEqual(10 * (RECORD_BYTES + 512));
      expect(spool.recordCount).toBe(100);
      expect(drain(spool, 13)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      expect(spool.memoryBytes).toBe(0);
      spool.close();
    });

    it('never drops the segment whose records are in flight (drop-oldest drops the incoming record then)', () => {
      const spool = open({ maxBytes: 20 * RECORD_BYTES, segmentBytes: 10 * RECORD_BYTES, policy: 'drop-oldest' });
      for (let i = 0; i < 20; i++) spool.append(record(i));
      const inFlight = spool.peek(5, 1 << 20);
      expect(spool.append(record(20))).toBe(false);
      expect(drops).toEqual({ 'spool-full': 1 });
      spool.commit(inFlight.length);
      spool.release();
      expect(spool.append(record(21))).toBe(true); // now the oldest segment (5 left) goes
      expect(drops).toEqual({ 'spool-full': 6 });
      expect(drain(spool)).toEqual([...Array.from({ length: 10 }, (_, i) => i + 10), 21]);
      spool.close();
    });
  });

  describe('fsync policy', () => {
    const countingFs = (counter: { syncs: number }): SpoolFs => ({
      ...fs,
      fdatasyncSync: ((fd: number) => {
        counter.syncs += 1;
        fs.fdatasyncSync(fd);
      }) as SpoolFs['fdatasyncSync'],
    });
    const ticks = (n: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, n * 20 + 15));

    it('syncs a backlog (records still undelivered one interval later) and skips data already delivered', async () => {
      const counter = { syncs: 0 };
      const spool = open({ fsyncIntervalMillis: 20, fs: countingFs(counter), segmentBytes: 1 << 20 });
      for (let i = 0; i < 10; i++) spool.append(record(i));
      expect(drain(spool)).toHaveLength(10); // delivered at once: a healthy pipeline
      await ticks(4);
      expect(counter.syncs).toBe(0);
      for (let i = 10; i < 20; i++) spool.append(record(i)); // a backlog: nobody delivers
      spool.flushWrites();
      await ticks(4);
      expect(counter.syncs).toBeGreaterThanOrEqual(1);
      spool.close();
    });

    it('syncs after every write with interval 0', () => {
      const counter = { syncs: 0 };
      const spool = open({ fsyncIntervalMillis: 0, fs: countingFs(counter), segmentBytes: 1 << 20 });
      spool.append(record(0));
      spool.flushWrites();
      spool.append(record(1));
      spool.flushWrites();
      expect(counter.syncs).toBe(2);
      spool.close();
    });
  });

  describe('disk faults', () => {
    /** node:fs, with writes failing (after a partial write of `partialBytes`) while `failing` is set. */
    const faultyFs = (state: { failing?: string; partialBytes?: number; failTruncate?: boolean }): SpoolFs => ({
      ...fs,
      writeSync: ((fd: number, buffer: Buffer, offset?: number, length?: number) => {
        if (state.failing !== undefined && buffer.length > 64) {
          if ((state.partialBytes ?? 0) > 0 && (length ?? buffer.length - (offset ?? 0)) > state.partialBytes!) {
            const n = fs.writeSync(fd, buffer, offset ?? 0, state.partialBytes);
            state.partialBytes = 0;
            return n;
          }
          throw Object.assign(new Error(`${state.failing}: simulated`), { code: state.failing });
        }
        return fs.writeSync(fd, buffer, offset, length);
      }) as SpoolFs['writeSync'],
      writevSync: ((fd: number, buffers: Buffer[]) => {
        if (state.failing !== undefined) {
          if ((state.partialBytes ?? 0) > 0) {
            const n = fs.writeSync(fd, Buffer.concat(buffers).subarray(0, state.partialBytes));
            state.partialBytes = 0;
            return n;
          }
          throw Object.assign(new Error(`${state.failing}: simulated`), { code: state.failing });
        }
        return fs.writevSync(fd, buffers);
      }) as SpoolFs['writevSync'],
      ftruncateSync: ((fd: number, len?: number) => {
        if (state.failTruncate === true) throw Object.assign(new Error('EIO: simulated'), { code: 'EIO' });
        fs.ftruncateSync(fd, len);
      }) as SpoolFs['ftruncateSync'],
    });

    it('on ENOSPC holds records in memory, drops beyond the bound (counted disk-full), leaves no torn bytes, and resumes when space returns', () => {
      let clock = 0;
      const state: { failing?: string; partialBytes?: number } = {};
      const states: (string | undefined)[] = [];
      const spool = open({
        segmentBytes: 1 << 20,
        memoryMaxBytes: 30 * (RECORD_BYTES + 512),
        fs: faultyFs(state),
        now: () => clock,
        diskRetryMillis: 1000,
        onDiskState: (e) => states.push(e?.code),
      });
      for (let i = 0; i < 10; i++) spool.append(record(i));
      spool.flushWrites();
      state.failing = 'ENOSPC';
      state.partialBytes = RECORD_BYTES + 17; // a torn write: one record and a bit
      for (let i = 10; i < 60; i++) spool.append(record(i));
      spool.flushWrites();
      expect(spool.diskError?.code).toBe('ENOSPC');
      // The segment was cut back to whole records: nothing torn on disk.
      expect(statSync(join(directory, segmentFiles()[0] as string)).size).toBe(10 * RECORD_BYTES);
      // Memory holds 30 records in all: 10 cached + 20 refused; the other 30 are dropped, counted.
      expect(spool.memoryOnlyRecords).toBe(20);
      expect(drops).toEqual({ 'disk-full': 30 });
      expect(spool.recordCount).toBe(30);
      state.failing = undefined;
      clock += 1000;
      for (let i = 60; i < 65; i++) spool.append(record(i));
      spool.flushWrites();
      expect(spool.diskError).toBeUndefined();
      expect(states).toEqual(['ENOSPC', undefined]);
      expect(spool.memoryOnlyRecords).toBe(0);
      const out = drain(spool);
      expect(out).toEqual([...Array.from({ length: 30 }, (_, i) => i), ...Array.from({ length: 5 }, (_, i) => i + 60)]);
      // Exact accounting: 65 in = 35 out + 30 dropped + 0 held.
      expect(out.length + (drops['disk-full'] ?? 0) + spool.recordCount).toBe(65);
      spool.close();
    });

    it('delivers records the disk refused straight from memory while the disk stays broken (EIO)', () => {
      const state: { failing?: string } = { failing: 'EIO' };
      const spool = open({ segmentBytes: 1 << 20, fs: faultyFs(state), now: () => 0 });
      for (let i = 0; i < 20; i++) spool.append(record(i));
      expect(drain(spool, 6)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      expect(spool.diskError?.code).toBe('EIO');
      for (let i = 20; i < 23; i++) spool.append(record(i));
      // Stopping while records exist only in memory loses them: counted, and the count returned.
      expect(spool.close()).toBe(3);
      expect(drops).toEqual({ 'disk-error-at-stop': 3 });
    });

    it('when the torn bytes cannot be cut off, seals the segment; recovery reports the torn stretch, loses no record (it was written again) and keeps every record after it', () => {
      let clock = 0;
      const state: { failing?: string; partialBytes?: number; failTruncate?: boolean } = {};
      const spool = open({ segmentBytes: 1 << 20, fs: faultyFs(state), now: () => clock });
      for (let i = 0; i < 5; i++) spool.append(record(i));
      spool.flushWrites();
      Object.assign(state, { failing: 'ENOSPC', partialBytes: 40, failTruncate: true });
      spool.append(record(5));
      spool.flushWrites();
      Object.assign(state, { failing: undefined, failTruncate: false });
      clock += 5000;
      for (let i = 6; i < 9; i++) spool.append(record(i));
      spool.flushWrites();
      // Crash now (no close): the next run must find 5 + 4 records and 40 torn bytes; record 5
      // was written again after the failed write (same sequence number), so nothing is lost.
      spool.abandon();
      const reports: [number, number][] = [];
      const reopened = open({ segmentBytes: 1 << 20 }, (_e, records, bytes) => reports.push([records, bytes]));
      expect(reports).toEqual([[0, 40]]);
      expect(drain(reopened)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
      reopened.close();
      spool.close();
    });

    it('cuts a damaged stretch out of the middle of a segment and keeps the records behind it', () => {
      const spool = open({ segmentBytes: 1 << 20 });
      for (let i = 0; i < 3; i++) spool.append(record(i));
      spool.close();
      const path = join(directory, segmentFiles()[0] as string);
      const good = readFileSync(path);
      // Records 3..5 with the sequence numbers they get when written after records 0..2 (numbers 1..3).
      const tail = Buffer.concat([3, 4, 5].map((i) => encodeSpoolRecord(record(i), i + 1)));
      // Record 1 torn (half written), record 2 gone, then records 3..5 behind it, as after a disk that filled and freed.
      writeFileSync(path, Buffer.concat([good.subarray(0, RECORD_BYTES), good.subarray(RECORD_BYTES, RECORD_BYTES + 50), tail]));
      const reports: [number, number][] = [];
      const reopened = open({ segmentBytes: 1 << 20 }, (_e, records, bytes) => reports.push([records, bytes]));
      // Exactly the two records that are not delivered (1 and 2), with the 50 damaged bytes.
      expect(reports).toEqual([[2, 50]]);
      expect(reopened.recordCount).toBe(4);
      expect(drain(reopened)).toEqual([0, 3, 4, 5]);
      reopened.close();
    });

    it('finds no records in zeros or random bytes (a pre-allocated or overwritten segment)', () => {
      const path = join(directory, '0000000000000001.seg');
      let x = 12345;
      const noise = Buffer.alloc(200_000, 0);
      for (let i = 100_000; i < noise.length; i++) noise[i] = (x = (x * 1103515245 + 12345) >>> 0) >>> 24;
      writeFileSync(path, noise);
      const reports: [number, number][] = [];
      const spool = open({}, (_e, records, bytes) => reports.push([records, bytes]));
      expect(reports).toEqual([[1, 200_000]]);
      expect(spool.recordCount).toBe(0);
      spool.close();
    });
  });
});
