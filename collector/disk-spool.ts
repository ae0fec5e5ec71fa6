import * as nodeFs from 'node:fs';
import { join } from 'node:path';
import type { SpoolPolicy } from './config.ts';
import { SpoolError } from './errors.ts';
import { acquireSpoolLock, type SpoolLock } from './spool-lock.ts';
import type { ProduceRecord } from './produce-record.ts';
import { SPOOL_RECORD_HEADER_BYTES, decodeSpoolRecords, encodeSpoolRecordParts, scanSpoolSegment, stampSpoolRecord, type SpoolDamage, type SpoolRecordParts } from './spool-record.ts';

/**
 * The file-system calls the spool makes, all synchronous (ordering is decided at the call,
 * never by I/O completion). Production passes node:fs; fault tests wrap it to fail with
 * ENOSPC or EIO at chosen calls.
 */
export type SpoolFs = Pick<
  typeof nodeFs,
  | 'closeSync'
  | 'fdatasyncSync'
  | 'ftruncateSync'
  | 'mkdirSync'
  | 'openSync'
  | 'readFileSync'
  | 'readSync'
  | 'readdirSync'
  | 'renameSync'
  | 'unlinkSync'
  | 'writeFileSync'
  | 'writeSync'
  | 'writevSync'
>;

/** Why the spool dropped records on purpose (the `reason` attribute of the dropped counter). */
export type SpoolDropReason =
  /** The spool reached `maxBytes` (drop-newest, or drop-oldest with nothing old to drop). */
  | 'spool-full'
  /** The disk refused the write (ENOSPC, EDQUOT) and the memory bound was reached too. */
  | 'disk-full'
  /** The disk failed otherwise (EIO, EROFS, ...) and the memory bound was reached too. */
  | 'disk-error'
  /** One record larger than a whole segment. */
  | 'too-large-for-spool'
  /** Records the disk had refused were still only in memory when the collector stopped. */
  | 'disk-error-at-stop';

/** Settings of {@link openDiskSpool}. Sizes in bytes, times in milliseconds. */
export interface DiskSpoolOptions {
  /** Directory holding the segment files, the cursor and the lock (created 0700 if missing). */
  readonly directory: string;
  /** Bound on the total size of all segment files. */
  readonly maxBytes: number;
  /** A segment is closed and a new one started when the next record would pass this size. */
  readonly segmentBytes: number;
  /** Full spool: drop the oldest segment (`drop-oldest`) or the incoming record (`drop-newest`). */
  readonly policy: SpoolPolicy;
  /**
   * 0 = fdatasync after every write (one write per event-loop turn). Otherwise the interval of
   * the periodic fdatasync, which runs only while records written before the previous tick are
   * still undelivered (a backlog); see the class notes.
   */
  readonly fsyncIntervalMillis: number;
  /**
   * Bound on records held in memory: a cache of recent records (also on disk, so delivery
   * need not read them back) plus records the disk refused. Counted as the encoded size
   * plus {@link MEMORY_OVERHEAD_BYTES} per record, close to the real heap cost.
   */
  readonly memoryMaxBytes: number;
  /** After a disk error, writing is tried again this often (default 1000). */
  readonly diskRetryMillis?: number;
  /** The replay cursor is written at most this often (default 500); a crash re-sends at most this much. */
  readonly cursorIntervalMillis?: number;
  /**
   * Records lost to damage (recovery or read), with the bytes cut out. `lostRecords` is the
   * exact gap in the records' sequence numbers (docs/collector.md, "What damage costs"); only
   * for segments written before sequence numbers it is 1 per damaged stretch, and for the
   * newest segment's tail it is a lower bound (at least 1 when torn bytes remain).
   */
  readonly onCorrupt?: (error: SpoolError, lostRecords: number, lostBytes: number) => void;
  /** Records dropped on purpose, with the reason. */
  readonly onDrop?: (count: number, reason: SpoolDropReason) => void;
  /** The disk started failing (`error` set) or works again (`undefined`). */
  readonly onDiskState?: (error: SpoolDiskError | undefined) => void;
  /** File-system calls of segments and cursor (default node:fs; the lock uses node:fs and node:net, spool-lock.ts). */
  readonly fs?: SpoolFs;
  /** A LOCK from another network namespace or host counts as live while renewed within this time (default 10 000; spool-lock.ts). */
  readonly lockLeaseMillis?: number;
  /** A stale lock was taken over (what it said and why it is stale). */
  readonly onLockTakeOver?: (message: string) => void;
  /** Monotonic clock in milliseconds (default performance.now). */
  readonly now?: () => number;
}

/** The disk refuses writes: what it said and since when (monotonic ms). */
export interface SpoolDiskError {
  /** errno code such as ENOSPC or EIO. */
  readonly code: string;
  readonly message: string;
  readonly sinceMillis: number;
}

/**
 * A bounded, crash-safe write-ahead log of records: every record is written to disk when it
 * arrives (before it is produced), delivery reads from the head and commits what Kafka
 * acknowledged. See {@link openDiskSpool}.
 */
export interface DiskSpool {
  /** Bytes of all segment files on disk (the bounded quantity). */
  readonly sizeBytes: number;
  /** Records held and not yet committed: on disk, in memory only, or waiting for the write. */
  readonly recordCount: number;
  /** Estimated bytes of records held in memory (cache + records the disk refused). */
  readonly memoryBytes: number;
  /** Records held only in memory because the disk refused them (lost on a crash). */
  readonly memoryOnlyRecords: number;
  /** Set while the disk refuses writes. */
  readonly diskError: SpoolDiskError | undefined;
  /**
   * Takes one record. It is written to disk at the end of the current event-loop turn
   * (together with every other record of that turn: one write), or by {@link flushWrites}.
   * Returns false when the record was dropped at once (counted through `onDrop`).
   */
  append(record: ProduceRecord): boolean;
  /** Writes the records appended so far now. */
  flushWrites(): void;
  /**
   * Returns up to `maxRecords` records (about `maxBytes`, at least one) from the head, without
   * removing them, and marks them in flight until {@link commit} or {@link release}.
   */
  peek(maxRecords: number, maxBytes: number): readonly ProduceRecord[];
  /** Removes the first `count` records of the last peek (they were delivered). */
  commit(count: number): void;
  /** The last peek was not delivered: its records stay at the head. */
  release(): void;
  /** Flushes written data to stable storage now. */
  sync(): void;
  /**
   * Writes what is pending, syncs, writes the cursor, closes files and releases the lock.
   * Records only in memory (the disk refused them) are lost: returns their number (also
   * reported through `onDrop` as `disk-error-at-stop`).
   */
  close(): number;
  /**
   * Stops as a crash would: closes the files and releases the lock, without writing pending
   * records, syncing or writing the cursor (what is on disk stays as it is). For crash tests
   * within one process.
   */
  abandon(): void;
}

/** Heap cost per record held in memory beyond its encoded bytes (object, headers, typed array). */
export const MEMORY_OVERHEAD_BYTES = 512;

interface Segment {
  readonly sequence: number;
  readonly path: string;
  /** Bytes of valid records (a torn tail after a failed truncate lies beyond it and is never read). */
  sizeBytes: number;
  recordCount: number;
  /** Highest record sequence number in it (0 when none is known: empty, or written before sequence numbers). */
  lastRecord: number;
}

/** A record held in memory: the cache of on-disk records (segment set) or refused by the disk (segment undefined). */
interface MemoryEntry {
  readonly record: ProduceRecord;
  /** Encoded (on-disk) size. */
  readonly diskBytes: number;
  segment: Segment | undefined;
  /** Record sequence number on disk (0 while memory only). */
  sequence: number;
}

interface PendingWrite {
  readonly record: ProduceRecord;
  readonly encoded: SpoolRecordParts;
}

const SEGMENT_PATTERN = /^\d{16}\.seg$/;
const CURSOR_FILE = 'cursor.json';
/** errno codes that mean "no space" rather than a broken disk. */
const NO_SPACE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

/**
 * Opens (or creates) the write-ahead spool in `options.directory`, recovering what a
 * previous run left.
 *
 * Layout of what it holds, oldest first: records only on disk (read back in batches),
 * records on disk and cached in memory (delivered without a read), records the disk
 * refused (memory only, written as soon as the disk takes writes again, in order). New
 * records are cached while the reader is caught up and the memory bound allows, else they
 * stay on disk only; so memory is bounded and order is the arrival order.
 *
 * Recovery: segments before the cursor are deleted; every other segment is scanned with
 * resynchronisation; a torn tail is truncated, a damaged stretch in the middle is cut out
 * (the segment is rewritten), each counted through `onCorrupt`; delivery resumes at the
 * cursor. Records delivered after the last cursor write are delivered again (at least once).
 *
 * @throws SpoolError WW_ERR_SPOOL_LOCKED when a live collector holds the directory (spool-lock.ts),
 *   WW_ERR_SPOOL_IO when it cannot be created or read at start.
 * @example
 * const spool = openDiskSpool({ directory: '/var/lib/warpwatch/spool', maxBytes: 1 << 30, segmentBytes: 16 << 20,
 *   policy: 'drop-oldest', fsyncIntervalMillis: 1000, memoryMaxBytes: 64 << 20 });
 * spool.append(record);
 * const batch = spool.peek(1000, 1 << 20); await send(batch); spool.commit(batch.length);
 */
export function openDiskSpool(options: DiskSpoolOptions): DiskSpool {
  return new WriteAheadSpool(options);
}

class WriteAheadSpool implements DiskSpool {
  readonly #o: DiskSpoolOptions;
  readonly #fs: SpoolFs;
  readonly #now: () => number;
  readonly #lock: SpoolLock;
  readonly #segments: Segment[] = [];
  #lastSequence = 0;
  /** Read position in the head segment (bytes and records already committed). */
  #headOffset = 0;
  #headConsumed = 0;
  #diskBytes = 0;
  /** Records on disk not yet committed (cached or not). */
  #diskRecords = 0;
  #active: Segment | undefined;
  #activeFd: number | undefined;
  #readFd: number | undefined;
  #readSegment: Segment | undefined;
  /** On-disk records cached in memory: the oldest uncommitted on-disk records when non-empty. */
  #cached: MemoryEntry[] = [];
  #cachedHead = 0;
  /** Records the disk refused, after every on-disk record. */
  #memoryOnly: MemoryEntry[] = [];
  #memoryBytes = 0;
  #pending: PendingWrite[] = [];
  #pendingBytes = 0;
  #flushScheduled = false;
  #peek: { source: 'disk' | 'memory'; sizes: number[]; sequences: number[] } | undefined;
  /** Sequence number the next record written gets (spool-wide, across segments and runs). */
  #nextRecord = 1;
  /** Every record numbered up to this was delivered or counted as dropped (written to the cursor). */
  #accountedThrough = 0;
  #diskError: SpoolDiskError | undefined;
  #nextDiskTry = 0;
  #dirty = false;
  /** Records ever written to disk / ever delivered from disk (monotonic), for the fsync policy. */
  #writtenTotal = 0;
  #deliveredTotal = 0;
  #writtenAtLastTick = 0;
  #cursorDirty = false;
  #cursorWrittenAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  readonly #timers: NodeJS.Timeout[] = [];

  constructor(options: DiskSpoolOptions) {
    this.#o = options;
    this.#fs = options.fs ?? nodeFs;
    this.#now = options.now ?? (() => performance.now());
    const { directory } = options;
    this.#io('mkdir', directory, () => this.#fs.mkdirSync(directory, { recursive: true, mode: 0o700 }));
    this.#lock = acquireSpoolLock(directory, { leaseMillis: options.lockLeaseMillis, onTakeOver: options.onLockTakeOver });
    try {
      this.#recover();
    } catch (error) {
      this.#lock.release();
      throw error;
    }
    if (options.fsyncIntervalMillis > 0) this.#every(options.fsyncIntervalMillis, () => this.#fsyncTick());
    this.#every(options.cursorIntervalMillis ?? 500, () => {
      if (this.#cursorDirty) this.#writeCursorQuietly();
    });
    this.#every(options.diskRetryMillis ?? 1_000, () => {
      if (this.#diskError !== undefined && this.#memoryOnly.length > 0) this.flushWrites();
    });
  }

  get sizeBytes(): number {
    return this.#diskBytes;
  }

  get recordCount(): number {
    return this.#diskRecords + this.#memoryOnly.length + this.#pending.length;
  }

  get memoryBytes(): number {
    return this.#memoryBytes;
  }

  get memoryOnlyRecords(): number {
    return this.#memoryOnly.length;
  }

  get diskError(): SpoolDiskError | undefined {
    return this.#diskError;
  }

  append(record: ProduceRecord): boolean {
    if (this.#closed) throw new SpoolError('WW_ERR_SPOOL_IO', 'spool is closed', this.#o.directory);
    const encoded = encodeSpoolRecordParts(record);
    if (encoded.length > this.#o.segmentBytes || encoded.length > this.#o.maxBytes) {
      this.#o.onDrop?.(1, 'too-large-for-spool');
      return false;
    }
    if (!this.#makeRoom(encoded.length)) {
      this.#o.onDrop?.(1, 'spool-full');
      return false;
    }
    this.#pending.push({ record, encoded });
    this.#pendingBytes += encoded.length;
    if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      queueMicrotask(() => this.flushWrites());
    }
    return true;
  }

  flushWrites(): void {
    this.#flushScheduled = false;
    if (this.#closed) return;
    // Memory about to overflow: try the disk now rather than drop (one failed write per turn at most).
    const memoryFull = this.#memoryBytes + this.#pendingBytes + this.#pending.length * MEMORY_OVERHEAD_BYTES > this.#o.memoryMaxBytes;
    if (this.#memoryOnly.length > 0 && !this.#retryMemoryOnly(memoryFull)) {
      // The disk still refuses: new records queue behind the refused ones, in memory.
      this.#toMemoryOnly(this.#takePending());
      return;
    }
    const pending = this.#takePending();
    if (pending.length === 0) return;
    let uncached = this.#diskRecords - (this.#cached.length - this.#cachedHead);
    const { segments: written, firstRecord } = this.#writeRecords(pending.map((p) => p.encoded));
    for (let i = 0; i < written.length; i++) {
      // Cached only while every older on-disk record is cached too (then the cache is the head).
      const { record, encoded } = pending[i] as PendingWrite;
      const cost = encoded.length + MEMORY_OVERHEAD_BYTES;
      if (uncached === 0 && this.#memoryBytes + cost <= this.#o.memoryMaxBytes) {
        this.#cached.push({ record, diskBytes: encoded.length, segment: written[i], sequence: firstRecord + i });
        this.#memoryBytes += cost;
      } else {
        uncached += 1;
      }
    }
    if (written.length < pending.length) this.#toMemoryOnly(pending.slice(written.length));
  }

  peek(maxRecords: number, maxBytes: number): readonly ProduceRecord[] {
    this.flushWrites();
    this.#peek = undefined;
    const uncachedOnDisk = this.#diskRecords - (this.#cached.length - this.#cachedHead);
    if (this.#cached.length - this.#cachedHead === 0 && uncachedOnDisk > 0) return this.#peekDisk(Math.min(maxRecords, uncachedOnDisk), maxBytes);
    const out: ProduceRecord[] = [];
    const sizes: number[] = [];
    const sequences: number[] = [];
    let bytes = 0;
    const take = (entries: MemoryEntry[], from: number): boolean => {
      for (let i = from; i < entries.length; i++) {
        const entry = entries[i] as MemoryEntry;
        if (out.length >= maxRecords || (out.length > 0 && bytes + entry.diskBytes > maxBytes)) return false;
        out.push(entry.record);
        sizes.push(entry.diskBytes);
        sequences.push(entry.sequence);
        bytes += entry.diskBytes;
      }
      return true;
    };
    // Cached records first; memory-only ones only once nothing on disk is left before them.
    if (take(this.#cached, this.#cachedHead) && uncachedOnDisk === 0) take(this.#memoryOnly, 0);
    if (out.length > 0) this.#peek = { source: 'memory', sizes, sequences };
    return out;
  }

  commit(count: number): void {
    const peek = this.#peek;
    this.#peek = undefined;
    if (peek === undefined) return;
    const n = Math.min(count, peek.sizes.length);
    if (peek.source === 'disk') {
      for (let i = 0; i < n; i++) this.#advanceHead(peek.sizes[i] as number, peek.sequences[i] as number);
      this.#maybeWriteCursor();
      return;
    }
    for (let i = 0; i < n; i++) {
      let entry: MemoryEntry;
      if (this.#cachedHead < this.#cached.length) {
        entry = this.#cached[this.#cachedHead] as MemoryEntry;
        this.#cached[this.#cachedHead++] = undefined as unknown as MemoryEntry;
      } else {
        entry = this.#memoryOnly.shift() as MemoryEntry;
      }
      this.#memoryBytes -= entry.diskBytes + MEMORY_OVERHEAD_BYTES;
      if (entry.segment !== undefined) this.#advanceHead(entry.diskBytes, entry.sequence);
    }
    if (this.#cachedHead > 1024 && this.#cachedHead * 2 > this.#cached.length) {
      this.#cached = this.#cached.slice(this.#cachedHead);
      this.#cachedHead = 0;
    }
    this.#maybeWriteCursor();
  }

  /** Writes the cursor when it moved and the last write is at least cursorIntervalMillis old. */
  #maybeWriteCursor(): void {
    if (this.#cursorDirty && this.#now() - this.#cursorWrittenAt >= (this.#o.cursorIntervalMillis ?? 500)) this.#writeCursorQuietly();
  }

  release(): void {
    this.#peek = undefined;
  }

  sync(): void {
    this.flushWrites();
    this.#syncQuietly();
  }

  close(): number {
    if (this.#closed) return 0;
    this.flushWrites();
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#syncQuietly();
    this.#closeActive();
    this.#closeReader();
    this.#writeCursorQuietly();
    const lost = this.#memoryOnly.length;
    if (lost > 0) this.#o.onDrop?.(lost, 'disk-error-at-stop');
    this.#memoryOnly = [];
    this.#lock.release();
    return lost;
  }

  abandon(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    this.#dirty = false;
    this.#diskRecords = 0;
    this.#closeActive();
    this.#closeReader();
    this.#lock.release();
  }

  // --- writing --------------------------------------------------------------------------

  #takePending(): PendingWrite[] {
    const pending = this.#pending;
    this.#pending = [];
    this.#pendingBytes = 0;
    return pending;
  }

  /**
   * Writes encoded records in order, rolling segments, each stamped with the next record
   * sequence number; returns the segment of each record written before a failure and the
   * number of the first (the others follow consecutively). Numbers of a failed write are
   * given again to the next records written, so the numbers on disk have a gap only where
   * records were lost.
   */
  #writeRecords(encoded: readonly SpoolRecordParts[]): { segments: Segment[]; firstRecord: number } {
    const segments: Segment[] = [];
    const firstRecord = this.#nextRecord;
    let done = 0;
    while (done < encoded.length) {
      try {
        const segment = this.#activeSegment((encoded[done] as SpoolRecordParts).length);
        // One write for as many records as fit in this segment.
        let end = done;
        let bytes = 0;
        const parts: Uint8Array[] = [];
        while (end < encoded.length && (end === done || segment.sizeBytes + bytes + (encoded[end] as SpoolRecordParts).length <= this.#o.segmentBytes)) {
          const record = encoded[end] as SpoolRecordParts;
          stampSpoolRecord(record, firstRecord + end);
          parts.push(record.head, record.value);
          bytes += record.length;
          end += 1;
        }
        this.#writeAll(segment, parts, bytes);
        segment.sizeBytes += bytes;
        segment.recordCount += end - done;
        segment.lastRecord = firstRecord + end - 1;
        this.#nextRecord = firstRecord + end;
        this.#diskBytes += bytes;
        this.#diskRecords += end - done;
        this.#writtenTotal += end - done;
        this.#cursorDirty = true;
        for (; done < end; done++) segments.push(segment);
      } catch (error) {
        this.#diskFailed(error);
        return { segments, firstRecord };
      }
    }
    if (done > 0) this.#diskWorks();
    return { segments, firstRecord };
  }

  /** The segment to append a record of `nextBytes` to: the active one, or a new one when it would overflow. */
  #activeSegment(nextBytes: number): Segment {
    if (this.#active !== undefined && this.#active.sizeBytes + nextBytes > this.#o.segmentBytes) {
      this.#closeActive();
      this.#dropConsumedHead();
    }
    if (this.#active !== undefined) return this.#active;
    const sequence = this.#lastSequence + 1;
    const path = join(this.#o.directory, segmentName(sequence));
    this.#activeFd = this.#fs.openSync(path, 'wx', 0o600);
    this.#lastSequence = sequence;
    const segment: Segment = { sequence, path, sizeBytes: 0, recordCount: 0, lastRecord: 0 };
    this.#active = segment;
    this.#segments.push(segment);
    if (this.#segments.length === 1) this.#cursorDirty = true;
    return segment;
  }

  /** Writes `parts` (`total` bytes) at the end of `segment` in one gathered write; on failure cuts the segment back to its last whole record. */
  #writeAll(segment: Segment, parts: Uint8Array[], total: number): void {
    const fd = this.#activeFd as number;
    try {
      let written = this.#fs.writevSync(fd, parts);
      if (written < total) {
        // A short write (rare: a signal, a nearly full disk): write the rest piece by piece.
        const rest = Buffer.concat(parts, total).subarray(written);
        for (let at = 0; at < rest.length; ) at += this.#fs.writeSync(fd, rest, at, rest.length - at);
        written = total;
      }
      if (this.#o.fsyncIntervalMillis === 0) this.#fs.fdatasyncSync(fd);
      else this.#dirty = true;
    } catch (error) {
      try {
        this.#fs.ftruncateSync(fd, segment.sizeBytes);
      } catch {
        // Cannot cut the torn bytes off: seal the segment at its valid size (they are never
        // read; a later recovery finds and counts them as a torn stretch).
      }
      this.#closeActive();
      throw error;
    }
  }

  #toMemoryOnly(pending: readonly PendingWrite[]): void {
    let dropped = 0;
    for (const { record, encoded } of pending) {
      const cost = encoded.length + MEMORY_OVERHEAD_BYTES;
      if (this.#memoryBytes + cost > this.#o.memoryMaxBytes) {
        dropped += 1;
        continue;
      }
      this.#memoryOnly.push({ record, diskBytes: encoded.length, segment: undefined, sequence: 0 });
      this.#memoryBytes += cost;
    }
    if (dropped > 0) this.#o.onDrop?.(dropped, NO_SPACE_CODES.has(this.#diskError?.code ?? '') ? 'disk-full' : 'disk-error');
  }

  /** Tries to write the records the disk refused (at most every diskRetryMillis unless `force`); true when none is left. */
  #retryMemoryOnly(force = false): boolean {
    if (!force && this.#now() < this.#nextDiskTry) return false;
    const entries = this.#memoryOnly;
    const uncached = this.#diskRecords - (this.#cached.length - this.#cachedHead);
    const { segments: written, firstRecord } = this.#writeRecords(entries.map((entry) => encodeSpoolRecordParts(entry.record)));
    for (let i = 0; i < written.length; i++) {
      const entry = entries[i] as MemoryEntry;
      entry.segment = written[i];
      entry.sequence = firstRecord + i;
      // Stay cached when nothing uncached lies before them on disk; else read back from disk later.
      if (uncached === 0) this.#cached.push(entry);
      else this.#memoryBytes -= entry.diskBytes + MEMORY_OVERHEAD_BYTES;
    }
    this.#memoryOnly = entries.slice(written.length);
    return this.#memoryOnly.length === 0;
  }

  #diskFailed(error: unknown): void {
    const code = (error as NodeJS.ErrnoException).code ?? 'EIO';
    this.#nextDiskTry = this.#now() + (this.#o.diskRetryMillis ?? 1_000);
    if (this.#diskError === undefined) {
      this.#diskError = { code, message: (error as Error).message, sinceMillis: this.#now() };
      this.#o.onDiskState?.(this.#diskError);
    }
  }

  #diskWorks(): void {
    if (this.#diskError === undefined) return;
    this.#diskError = undefined;
    this.#o.onDiskState?.(undefined);
  }

  /** Applies the bound before `size` more bytes: drop-oldest removes old segments. False = no room. */
  #makeRoom(size: number): boolean {
    // Decide on what is on disk: write this turn's records first.
    if (this.#diskBytes + this.#pendingBytes + size > this.#o.maxBytes && this.#pending.length > 0) this.flushWrites();
    while (this.#diskBytes + this.#pendingBytes + size > this.#o.maxBytes) {
      const head = this.#segments[0];
      // Never drop the segment being written, nor records in flight (their commit would double-count).
      if (this.#o.policy === 'drop-newest' || head === undefined || head === this.#active || this.#peek !== undefined) return false;
      const dropped = this.#removeHead();
      if (dropped > 0) this.#o.onDrop?.(dropped, 'spool-full');
    }
    return true;
  }

  // --- reading and committing -----------------------------------------------------------

  #peekDisk(maxRecords: number, maxBytes: number): readonly ProduceRecord[] {
    for (;;) {
      const head = this.#segments[0];
      if (head === undefined) return [];
      const remaining = head.sizeBytes - this.#headOffset;
      if (remaining <= 0) {
        if (head === this.#active) return [];
        this.#removeHead();
        continue;
      }
      let buffer = this.#readHead(head, Math.min(remaining, Math.max(maxBytes, SPOOL_RECORD_HEADER_BYTES)));
      let scan = decodeSpoolRecords(buffer, { maxRecords });
      if (scan.records.length === 0 && scan.stop === 'truncated' && buffer.length >= SPOOL_RECORD_HEADER_BYTES) {
        // The first record is larger than maxBytes: read exactly that record.
        buffer = this.#readHead(head, Math.min(remaining, SPOOL_RECORD_HEADER_BYTES + buffer.readUInt32LE(0)));
        scan = decodeSpoolRecords(buffer, { maxRecords: 1 });
      }
      if (scan.records.length === 0) {
        // Unreadable record at the read position (damaged after it was written): the rest of
        // this segment is lost; its record count is known exactly.
        const lostRecords = head.recordCount - this.#headConsumed;
        this.#o.onCorrupt?.(
          new SpoolError('WW_ERR_SPOOL_CORRUPT', `spool segment ${head.path}: unreadable record at byte ${this.#headOffset}; discarded ${lostRecords} record(s), ${remaining} bytes`, head.path),
          lostRecords,
          remaining,
        );
        this.#diskRecords -= lostRecords;
        this.#diskBytes -= remaining;
        this.#accountedThrough = Math.max(this.#accountedThrough, head.lastRecord);
        this.#cursorDirty = true;
        head.recordCount = this.#headConsumed;
        head.sizeBytes = this.#headOffset;
        if (head === this.#active) this.#closeActive();
        continue;
      }
      this.#peek = { source: 'disk', sizes: scan.recordBytes, sequences: scan.sequences };
      return scan.records;
    }
  }

  #readHead(head: Segment, length: number): Buffer {
    if (this.#readSegment !== head) {
      this.#closeReader();
      this.#readFd = this.#io('open segment', head.path, () => this.#fs.openSync(head.path, 'r'));
      this.#readSegment = head;
    }
    const fd = this.#readFd as number;
    return this.#io('read', head.path, () => {
      const buffer = Buffer.allocUnsafe(length);
      let got = 0;
      while (got < length) {
        const n = this.#fs.readSync(fd, buffer, got, length - got, this.#headOffset + got);
        if (n === 0) break;
        got += n;
      }
      return buffer.subarray(0, got);
    });
  }

  /** One on-disk record of `bytes` (sequence number `sequence`, 0 when it has none) at the head was delivered. */
  #advanceHead(bytes: number, sequence: number): void {
    this.#dropConsumedHead();
    if (sequence > this.#accountedThrough) this.#accountedThrough = sequence;
    this.#headOffset += bytes;
    this.#headConsumed += 1;
    this.#diskRecords -= 1;
    this.#deliveredTotal += 1;
    this.#cursorDirty = true;
    this.#dropConsumedHead();
  }

  /** Deletes fully delivered segments at the head (the one being written stays until it is full). */
  #dropConsumedHead(): void {
    for (let head = this.#segments[0]; head !== undefined && head !== this.#active && this.#headOffset >= head.sizeBytes; head = this.#segments[0]) this.#removeHead();
  }

  /** Deletes the head segment; returns how many uncommitted records it held (dropped from the cache too). */
  #removeHead(): number {
    const head = this.#segments.shift();
    if (head === undefined) return 0;
    const remaining = head.recordCount - this.#headConsumed;
    if (head === this.#readSegment) this.#closeReader();
    if (head === this.#active) this.#closeActive();
    while (this.#cachedHead < this.#cached.length && (this.#cached[this.#cachedHead] as MemoryEntry).segment === head) {
      const entry = this.#cached[this.#cachedHead] as MemoryEntry;
      this.#cached[this.#cachedHead++] = undefined as unknown as MemoryEntry;
      this.#memoryBytes -= entry.diskBytes + MEMORY_OVERHEAD_BYTES;
    }
    try {
      this.#fs.unlinkSync(head.path);
    } catch {
      // Already gone or the disk fails: recovery deletes segments before the cursor anyway.
    }
    this.#diskBytes -= head.sizeBytes;
    this.#diskRecords -= remaining;
    // Its records were delivered, or are counted as dropped by the caller.
    this.#accountedThrough = Math.max(this.#accountedThrough, head.lastRecord);
    this.#headOffset = 0;
    this.#headConsumed = 0;
    this.#cursorDirty = true;
    this.#writeCursorQuietly();
    return remaining;
  }

  // --- recovery ---------------------------------------------------------------------------

  #recover(): void {
    const { directory } = this.#o;
    const cursor = readCursor(this.#fs, join(directory, CURSOR_FILE));
    const state: RecoveryState = { expected: cursor?.accountedThrough === undefined ? undefined : cursor.accountedThrough + 1, pending: [], missing: [], maxSeen: 0, firstKept: 0 };
    const names = this.#io('readdir', directory, () => this.#fs.readdirSync(directory))
      .filter((name) => SEGMENT_PATTERN.test(name))
      .sort();
    let previous: number | undefined;
    for (const name of names) {
      const sequence = Number(name.slice(0, 16));
      const path = join(directory, name);
      this.#lastSequence = Math.max(this.#lastSequence, sequence);
      if (cursor !== undefined && sequence < cursor.sequence) {
        this.#io('unlink', path, () => this.#fs.unlinkSync(path));
        continue;
      }
      // Segment files are numbered consecutively and only the oldest are deleted: a hole is a lost file.
      const expectedFile = previous === undefined ? cursor?.sequence : previous + 1;
      if (expectedFile !== undefined && sequence > expectedFile) state.missing.push(sequence - expectedFile === 1 ? segmentName(expectedFile) : `${segmentName(expectedFile)}..${segmentName(sequence - 1)}`);
      previous = sequence;
      const startAt = this.#segments.length === 0 && cursor !== undefined && cursor.sequence === sequence ? cursor.offsetBytes : 0;
      this.#recoverSegment(sequence, path, startAt, state);
    }
    // The newest segment's tail: what the cursor says was written, and torn bytes after the last record.
    const writtenThrough = cursor?.writtenThrough ?? 0;
    this.#settle(state, 0, writtenThrough);
    this.#nextRecord = Math.max(1, state.maxSeen + 1, writtenThrough + 1, (cursor?.accountedThrough ?? 0) + 1, state.expected ?? 1);
    this.#accountedThrough = state.firstKept > 0 ? state.firstKept - 1 : this.#nextRecord - 1;
    this.#cursorDirty = true;
  }

  /**
   * Counts the records lost before the record numbered `sequence`, found at `where` (0 = it
   * has no number: a segment written before sequence numbers), and reports them with the
   * damage seen since the previous record: exactly the gap in the numbers when both are known,
   * else 1 per damaged stretch. At the end of the spool (`where` undefined) the gap up to
   * `writtenThrough` (the cursor's high-water mark) is counted, and at least 1 when torn bytes
   * follow the last record.
   */
  #settle(state: RecoveryState, sequence: number, writtenThrough: number, where?: string): void {
    const expected = state.expected;
    const damagedBytes = state.pending.reduce((sum, p) => sum + p.damage.length, 0);
    let lost: number;
    let count: string;
    if (where === undefined) {
      const gap = expected !== undefined && writtenThrough >= expected ? writtenThrough - expected + 1 : 0;
      lost = state.pending.length > 0 ? Math.max(gap, 1) : gap;
      count =
        gap > 0
          ? `${lost} record(s) lost at the end of the spool: records ${expected}..${writtenThrough} were written (cursor.json) and are not there`
          : `at least ${lost} record(s) lost at the end of the spool (torn bytes after the last whole record)`;
    } else if (sequence > 0 && expected !== undefined) {
      lost = Math.max(0, sequence - expected);
      const missing = lost === 1 ? `record ${expected} is` : `records ${expected}..${sequence - 1} are`;
      count = lost > 0 ? `${lost} record(s) lost: ${missing} missing before record ${sequence} at ${where}` : '';
    } else {
      lost = state.pending.length;
      count = `${lost} record(s) lost before ${where}, counted 1 per damaged stretch (records written before sequence numbers)`;
    }
    if (lost > 0 || state.pending.length > 0 || state.missing.length > 0) {
      const what = [
        ...state.pending.map((p) => `${p.damage.where === 'tail' ? 'torn tail' : 'damaged stretch'} of ${p.damage.length} bytes at byte ${p.damage.offset} of ${p.file} (CRC-32C or length check failed)`),
        ...state.missing.map((m) => `segment file(s) ${m} missing`),
      ];
      if (what.length === 0) what.push('no damaged bytes (a segment ends early at a record boundary, or was removed)');
      const verdict = lost === 0 ? 'no record lost: every record number is present (records written again after a failed write)' : count;
      this.#o.onCorrupt?.(new SpoolError('WW_ERR_SPOOL_CORRUPT', `spool ${this.#o.directory}: ${what.join('; ')}; ${verdict}`, this.#o.directory), lost, damagedBytes);
    }
    state.pending = [];
    state.missing = [];
    if (sequence > 0) state.expected = Math.max(expected ?? 0, sequence + 1);
  }

  /** Scans one segment, counts what its damage cost, repairs it (truncate a torn tail, cut out damage), and adds its records. */
  #recoverSegment(sequence: number, path: string, cursorOffset: number, state: RecoveryState): void {
    const bytes = this.#io('read', path, () => this.#fs.readFileSync(path));
    const scan = scanSpoolSegment(bytes);
    const file = segmentName(sequence);
    // Records at or after the cursor (the last boundary at or before it).
    let first = 0;
    while (first < scan.offsets.length && (scan.offsets[first] as number) + (scan.lengths[first] as number) <= cursorOffset) first += 1;
    let nextDamage = 0;
    let lastRecord = 0;
    for (let i = 0; i < scan.offsets.length; i++) {
      const offset = scan.offsets[i] as number;
      while (nextDamage < scan.damage.length && (scan.damage[nextDamage] as SpoolDamage).offset < offset) state.pending.push({ file, damage: scan.damage[nextDamage++] as SpoolDamage });
      const record = scan.sequences[i] as number;
      if (record > 0 || state.pending.length > 0 || state.missing.length > 0) this.#settle(state, record, 0, `byte ${offset} of ${file}`);
      state.maxSeen = Math.max(state.maxSeen, record);
      if (i >= first) {
        lastRecord = Math.max(lastRecord, record);
        if (record > 0 && state.firstKept === 0) state.firstKept = record;
      }
    }
    for (; nextDamage < scan.damage.length; nextDamage++) state.pending.push({ file, damage: scan.damage[nextDamage] as SpoolDamage });
    const keep = scan.offsets.length - first;
    if (keep === 0) {
      this.#io('unlink', path, () => this.#fs.unlinkSync(path));
      return;
    }
    const middleDamage = scan.damage.some((d) => d.where === 'middle');
    let size: number;
    let headOffset = 0;
    if (middleDamage) {
      // Rewrite with the kept records only (atomically), so reading never meets the damage.
      const parts = [];
      for (let i = first; i < scan.offsets.length; i++) parts.push(bytes.subarray(scan.offsets[i], (scan.offsets[i] as number) + (scan.lengths[i] as number)));
      const clean = Buffer.concat(parts);
      const tmp = `${path}.tmp`;
      this.#io('rewrite', path, () => {
        this.#fs.writeFileSync(tmp, clean, { mode: 0o600 });
        this.#fs.renameSync(tmp, path);
      });
      size = clean.length;
    } else {
      const last = scan.offsets.length - 1;
      size = (scan.offsets[last] as number) + (scan.lengths[last] as number);
      if (size < bytes.length) {
        this.#io('truncate', path, () => {
          const fd = this.#fs.openSync(path, 'r+');
          try {
            this.#fs.ftruncateSync(fd, size);
          } finally {
            this.#fs.closeSync(fd);
          }
        });
      }
      headOffset = first > 0 ? (scan.offsets[first] as number) : 0;
    }
    const segment: Segment = { sequence, path, sizeBytes: size, recordCount: scan.offsets.length - (middleDamage ? first : 0), lastRecord };
    if (this.#segments.length === 0) {
      this.#headOffset = headOffset;
      this.#headConsumed = middleDamage ? 0 : first;
    }
    this.#segments.push(segment);
    this.#diskBytes += size;
    this.#diskRecords += keep;
  }

  // --- small helpers ----------------------------------------------------------------------

  #io<T>(what: string, path: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof SpoolError) throw error;
      throw new SpoolError('WW_ERR_SPOOL_IO', `spool ${what} failed for ${path}: ${(error as Error).message}`, path, { cause: error });
    }
  }

  #every(millis: number, fn: () => void): void {
    const timer = setInterval(fn, millis);
    timer.unref();
    this.#timers.push(timer);
  }

  /**
   * The periodic fsync: only when a record written before the previous tick is still not
   * delivered. A healthy pipeline delivers within milliseconds, so its data (deleted soon
   * after) is not forced to the platters; a backlog (slow or absent broker) is synced every
   * interval. A power loss therefore costs at most the records of the last two intervals
   * that Kafka had not acknowledged.
   */
  #fsyncTick(): void {
    const backlog = this.#deliveredTotal < this.#writtenAtLastTick;
    this.#writtenAtLastTick = this.#writtenTotal;
    if (backlog) this.#syncQuietly();
  }

  #syncQuietly(): void {
    if (!this.#dirty || this.#activeFd === undefined) return;
    try {
      this.#fs.fdatasyncSync(this.#activeFd);
      this.#dirty = false;
    } catch (error) {
      // The data stays in the page cache (safe against a crash, not a power loss): report it.
      this.#diskFailed(error);
    }
  }

  #writeCursorQuietly(): void {
    const head = this.#segments[0];
    const path = join(this.#o.directory, CURSOR_FILE);
    const text = JSON.stringify({
      sequence: head?.sequence ?? this.#lastSequence + 1,
      offsetBytes: head === undefined ? 0 : this.#headOffset,
      accountedThrough: this.#accountedThrough,
      writtenThrough: this.#nextRecord - 1,
    });
    try {
      this.#fs.writeFileSync(`${path}.tmp`, text);
      this.#fs.renameSync(`${path}.tmp`, path);
      this.#cursorDirty = false;
      this.#cursorWrittenAt = this.#now();
    } catch {
      // Cannot write the cursor (disk full): a crash would re-send more (duplicates, never loss).
    }
  }

  #closeActive(): void {
    if (this.#activeFd !== undefined) {
      const fd = this.#activeFd;
      try {
        // A full segment is synced when it still holds undelivered records (else they were delivered: nothing to protect).
        if (this.#dirty && this.#diskRecords > 0) this.#fs.fdatasyncSync(fd);
      } catch (error) {
        this.#diskFailed(error);
      }
      try {
        this.#fs.closeSync(fd);
      } catch {
        // Nothing more to do with this descriptor.
      }
    }
    this.#dirty = false;
    this.#activeFd = undefined;
    this.#active = undefined;
  }

  #closeReader(): void {
    if (this.#readFd !== undefined) {
      try {
        this.#fs.closeSync(this.#readFd);
      } catch {
        // Nothing more to do with this descriptor.
      }
    }
    this.#readFd = undefined;
    this.#readSegment = undefined;
  }
}

/** What recovery carries from one segment to the next (see #recover). */
interface RecoveryState {
  /** The record number the next record should have; undefined until one is known (a cursor without numbers, old segments). */
  expected: number | undefined;
  /** Damaged stretches seen since the last whole record (their cost is known at the next numbered record). */
  pending: { file: string; damage: SpoolDamage }[];
  /** Segment files missing from the numbering since the last whole record. */
  missing: string[];
  /** Highest record number seen. */
  maxSeen: number;
  /** Number of the first record kept for delivery (0 = none yet). */
  firstKept: number;
}

/** The replay position: the head segment file and offset; with sequence numbers, what was accounted and written. */
interface Cursor {
  readonly sequence: number;
  readonly offsetBytes: number;
  /** Every record numbered up to this was delivered or counted dropped (absent in cursors written before sequence numbers). */
  readonly accountedThrough: number | undefined;
  /** Highest record number written when the cursor was written (absent in old cursors). */
  readonly writtenThrough: number | undefined;
}

function segmentName(sequence: number): string {
  return `${String(sequence).padStart(16, '0')}.seg`;
}

function readCursor(fs: SpoolFs, path: string): Cursor | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path, 'utf8') as string) as { sequence?: unknown; offsetBytes?: unknown; accountedThrough?: unknown; writtenThrough?: unknown };
    if (Number.isSafeInteger(parsed.sequence) && Number.isSafeInteger(parsed.offsetBytes)) {
      const count = (value: unknown): number | undefined => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : undefined);
      return { sequence: parsed.sequence as number, offsetBytes: parsed.offsetBytes as number, accountedThrough: count(parsed.accountedThrough), writtenThrough: count(parsed.writtenThrough) };
    }
  } catch {
    // No cursor (fresh spool) or unreadable: replay from the first segment (duplicates, never loss).
  }
  return undefined;
}
