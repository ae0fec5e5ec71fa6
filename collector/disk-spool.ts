import {
  closeSync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SpoolPolicy } from './config.ts';
import { SpoolError } from './errors.ts';
import type { ProduceRecord } from './produce-record.ts';
import { SPOOL_RECORD_HEADER_BYTES, decodeSpoolRecords, encodeSpoolRecord } from './spool-record.ts';

/** Settings of {@link openDiskSpool}. Sizes in bytes. */
export interface DiskSpoolOptions {
  /** Directory holding the segment files, the cursor and the lock (created if missing). */
  readonly directory: string;
  /** Bound on the total size of all segment files. */
  readonly maxBytes: number;
  /** A segment is closed and a new one started when the next record would pass this size. */
  readonly segmentBytes: number;
  /** Full spool: drop the oldest segment (`drop-oldest`) or the incoming record (`drop-newest`). */
  readonly policy: SpoolPolicy;
  /** Appended data is fdatasync'ed at least this often; 0 = after every record. */
  readonly fsyncIntervalMillis: number;
  /** Called when recovery or reading finds a torn or corrupt record (the rest of that segment is discarded). */
  readonly onCorrupt?: (error: SpoolError, lostBytes: number) => void;
}

/** Outcome of {@link DiskSpool.append}. */
export interface SpoolAppendResult {
  /** True when the record is now on disk. */
  readonly spooled: boolean;
  /** Records discarded to honour the bound: the incoming one (drop-newest) or an old segment's (drop-oldest). */
  readonly droppedRecords: number;
}

/**
 * A bounded, crash-safe FIFO of records on disk: numbered segment files of
 * length-prefixed, CRC-32C-checked records (spool-record.ts), a cursor file for the
 * replay position, and a lock file so two collectors never share a directory.
 * Single-threaded use from the event loop; every method is synchronous so ordering is
 * decided at the call, never by I/O completion.
 */
export interface DiskSpool {
  /** Bytes of all segment files on disk (the bounded quantity). */
  readonly sizeBytes: number;
  /** Records not yet committed. */
  readonly recordCount: number;
  /** Appends one record at the tail; applies the full-spool policy first. */
  append(record: ProduceRecord): SpoolAppendResult;
  /** Returns up to `maxRecords` records (about `maxBytes`, at least one) from the head, without removing them. */
  peek(maxRecords: number, maxBytes: number): readonly ProduceRecord[];
  /**
   * Puts `records` before everything else in the spool (a batch that was in flight when the
   * broker failed, older than what was spooled meanwhile). Written atomically to a retry
   * file; not subject to the size bound (it is at most one batch).
   */
  prepend(records: readonly ProduceRecord[]): void;
  /** Removes the first `count` records of the last peek (they were delivered). */
  commit(count: number): void;
  /** Flushes appended data to stable storage now. */
  sync(): void;
  /** Syncs, closes files and releases the lock. */
  close(): void;
}

interface Segment {
  readonly sequence: number;
  readonly path: string;
  sizeBytes: number;
  recordCount: number;
}

const SEGMENT_SUFFIX = '.seg';
const CURSOR_FILE = 'cursor.json';
const LOCK_FILE = 'LOCK';
const RETRY_FILE = 'retry.seg';

/**
 * Opens (or creates) the spool in `options.directory`, recovering what a previous run
 * left: segments are scanned, a torn or corrupt tail is truncated (reported through
 * `onCorrupt`), and replay resumes at the saved cursor. Records committed after the last
 * cursor write are replayed again (at-least-once, never lost).
 *
 * @throws SpoolError WW_ERR_SPOOL_LOCKED when a live process holds the directory,
 *   WW_ERR_SPOOL_IO when it cannot be created, read or written.
 * @example
 * const spool = openDiskSpool({ directory: '/var/lib/warpwatch/spool', maxBytes: 1 << 30, segmentBytes: 16 << 20, policy: 'drop-oldest', fsyncIntervalMillis: 1000 });
 */
export function openDiskSpool(options: DiskSpoolOptions): DiskSpool {
  const { directory } = options;
  const io = <T>(what: string, path: string, fn: () => T): T => {
    try {
      return fn();
    } catch (error) {
      if (error instanceof SpoolError) throw error;
      throw new SpoolError('WW_ERR_SPOOL_IO', `spool ${what} failed for ${path}: ${(error as Error).message}`, path, { cause: error });
    }
  };

  io('mkdir', directory, () => mkdirSync(directory, { recursive: true, mode: 0o700 }));
  const lockPath = join(directory, LOCK_FILE);
  acquireLock(lockPath, io);

  const segments: Segment[] = [];
  let headReadOffset = 0;
  let headConsumed = 0;
  let totalBytes = 0;
  let totalRecords = 0;
  let lastSequence = 0;
  let activeFd: number | undefined;
  let active: Segment | undefined;
  let headFd: number | undefined;
  let headFdSegment: Segment | undefined;
  let peekedBytes: number[] = [];
  let peekedFromRetry = false;
  let retryRecords: ProduceRecord[] = [];
  let retryBytes: number[] = [];
  const retryPath = join(directory, RETRY_FILE);
  let dirty = false;
  let closed = false;

  // --- recovery -------------------------------------------------------------------------
  const cursor = readCursor(join(directory, CURSOR_FILE));
  const names = io('readdir', directory, () => readdirSync(directory))
    .filter((name) => /^\d{16}\.seg$/.test(name))
    .sort();
  for (const name of names) {
    const sequence = Number(name.slice(0, 16));
    const path = join(directory, name);
    lastSequence = Math.max(lastSequence, sequence);
    if (cursor !== undefined && sequence < cursor.sequence) {
      io('unlink', path, () => unlinkSync(path));
      continue;
    }
    const bytes = io('read', path, () => readFileSync(path));
    const scan = decodeSpoolRecords(bytes, { decode: false });
    if (scan.stop !== 'end') {
      const lost = bytes.length - scan.validBytes;
      io('truncate', path, () => {
        const fd = openSync(path, 'r+');
        try {
          ftruncateSync(fd, scan.validBytes);
        } finally {
          closeSync(fd);
        }
      });
      options.onCorrupt?.(
        new SpoolError(
          'WW_ERR_SPOOL_CORRUPT',
          `spool segment ${path}: ${scan.stop} record at byte ${scan.validBytes} (CRC-32C or length check failed); discarded ${lost} bytes after it`,
          path,
        ),
        lost,
      );
    }
    if (scan.recordBytes.length === 0) {
      io('unlink', path, () => unlinkSync(path));
      continue;
    }
    const segment: Segment = { sequence, path, sizeBytes: scan.validBytes, recordCount: scan.recordBytes.length };
    if (segments.length === 0 && cursor !== undefined && cursor.sequence === sequence) {
      // Resume at the last record boundary at or before the saved offset.
      let offset = 0;
      let consumed = 0;
      for (const length of scan.recordBytes) {
        if (offset + length > cursor.offsetBytes) break;
        offset += length;
        consumed += 1;
      }
      headReadOffset = offset;
      headConsumed = consumed;
    }
    segments.push(segment);
    totalBytes += segment.sizeBytes;
    totalRecords += segment.recordCount;
  }
  totalRecords -= headConsumed;
  const retryContent = io('read', retryPath, () => {
    try {
      return readFileSync(retryPath);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  });
  if (retryContent !== undefined) {
    const scan = decodeSpoolRecords(retryContent);
    if (scan.stop !== 'end') {
      options.onCorrupt?.(
        new SpoolError('WW_ERR_SPOOL_CORRUPT', `spool retry file ${retryPath}: ${scan.stop} record at byte ${scan.validBytes}; discarded the rest`, retryPath),
        retryContent.length - scan.validBytes,
      );
    }
    retryRecords = scan.records;
    retryBytes = scan.recordBytes;
    totalBytes += scan.validBytes;
    totalRecords += scan.records.length;
    if (scan.records.length === 0) io('unlink', retryPath, () => unlinkSync(retryPath));
  }

  // --- helpers --------------------------------------------------------------------------
  const writeCursor = (): void => {
    const head = segments[0];
    const path = join(directory, CURSOR_FILE);
    const tmp = `${path}.tmp`;
    const text = JSON.stringify({ sequence: head?.sequence ?? lastSequence + 1, offsetBytes: head === undefined ? 0 : headReadOffset });
    io('cursor write', path, () => {
      writeFileSync(tmp, text);
      renameSync(tmp, path);
    });
  };

  const writeRetryFile = (): void => {
    if (retryRecords.length === 0) {
      io('unlink', retryPath, () => {
        try {
          unlinkSync(retryPath);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      });
      return;
    }
    const tmp = `${retryPath}.tmp`;
    io('retry write', retryPath, () => {
      const fd = openSync(tmp, 'w', 0o600);
      try {
        for (const record of retryRecords) {
          const bytes = encodeSpoolRecord(record);
          let written = 0;
          while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        }
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, retryPath);
    });
  };

  const closeHeadFd = (): void => {
    if (headFd !== undefined) {
      closeSync(headFd);
      headFd = undefined;
      headFdSegment = undefined;
    }
  };

  const closeActive = (): void => {
    if (activeFd !== undefined) {
      const fd = activeFd;
      io('fsync', active?.path ?? directory, () => {
        if (dirty) fdatasyncSync(fd);
        closeSync(fd);
      });
      dirty = false;
    }
    activeFd = undefined;
    active = undefined;
  };

  /** Removes the head segment; returns how many records it still held. */
  const removeHead = (): number => {
    const head = segments.shift();
    if (head === undefined) return 0;
    const remaining = head.recordCount - headConsumed;
    if (head === headFdSegment) closeHeadFd();
    if (head === active) closeActive();
    io('unlink', head.path, () => unlinkSync(head.path));
    totalBytes -= head.sizeBytes;
    totalRecords -= remaining;
    headReadOffset = 0;
    headConsumed = 0;
    // A peek from the head segment is void now (its records were just dropped).
    if (!peekedFromRetry) peekedBytes = [];
    return remaining;
  };

  const fsyncTimer =
    options.fsyncIntervalMillis > 0
      ? setInterval(() => {
          if (dirty && activeFd !== undefined && !closed) {
            const fd = activeFd;
            io('fsync', active?.path ?? directory, () => fdatasyncSync(fd));
            dirty = false;
          }
        }, options.fsyncIntervalMillis)
      : undefined;
  fsyncTimer?.unref();

  // --- the spool ------------------------------------------------------------------------
  return {
    get sizeBytes() {
      return totalBytes;
    },
    get recordCount() {
      return totalRecords;
    },

    append(record) {
      const bytes = encodeSpoolRecord(record);
      const size = bytes.length;
      if (size > options.maxBytes || size > options.segmentBytes) return { spooled: false, droppedRecords: 1 };
      if (active !== undefined && active.sizeBytes + size > options.segmentBytes) closeActive();
      let droppedRecords = 0;
      while (totalBytes + size > options.maxBytes) {
        const head = segments[0];
        if (options.policy === 'drop-newest' || head === undefined || head === active) {
          return { spooled: false, droppedRecords: droppedRecords + 1 };
        }
        droppedRecords += removeHead();
        writeCursor();
      }
      if (active === undefined) {
        lastSequence += 1;
        const path = join(directory, `${String(lastSequence).padStart(16, '0')}${SEGMENT_SUFFIX}`);
        activeFd = io('create segment', path, () => openSync(path, 'wx', 0o600));
        active = { sequence: lastSequence, path, sizeBytes: 0, recordCount: 0 };
        segments.push(active);
        if (segments.length === 1) writeCursor();
      }
      const fd = activeFd as number;
      const segment = active;
      io('append', segment.path, () => {
        let written = 0;
        while (written < size) written += writeSync(fd, bytes, written, size - written);
        if (options.fsyncIntervalMillis === 0) fdatasyncSync(fd);
      });
      dirty = options.fsyncIntervalMillis !== 0;
      segment.sizeBytes += size;
      segment.recordCount += 1;
      totalBytes += size;
      totalRecords += 1;
      return { spooled: true, droppedRecords };
    },

    prepend(records) {
      if (records.length === 0) return;
      const added = records.map((record) => encodeSpoolRecord(record).length);
      retryRecords = [...records, ...retryRecords];
      retryBytes = [...added, ...retryBytes];
      for (const length of added) totalBytes += length;
      totalRecords += records.length;
      peekedBytes = [];
      writeRetryFile();
    },

    peek(maxRecords, maxBytes) {
      peekedBytes = [];
      peekedFromRetry = false;
      if (retryRecords.length > 0) {
        let bytes = 0;
        let n = 0;
        while (n < retryRecords.length && n < maxRecords && (n === 0 || bytes + (retryBytes[n] as number) <= maxBytes)) {
          bytes += retryBytes[n] as number;
          n += 1;
        }
        peekedFromRetry = true;
        peekedBytes = retryBytes.slice(0, n);
        return retryRecords.slice(0, n);
      }
      for (;;) {
        const head = segments[0];
        if (head === undefined) return [];
        const remaining = head.sizeBytes - headReadOffset;
        if (remaining <= 0) {
          if (head === active) return [];
          removeHead();
          writeCursor();
          continue;
        }
        if (headFdSegment !== head) {
          closeHeadFd();
          headFd = io('open segment', head.path, () => openSync(head.path, 'r'));
          headFdSegment = head;
        }
        const fd = headFd as number;
        const readAt = (length: number): Buffer =>
          io('read', head.path, () => {
            const buffer = Buffer.allocUnsafe(length);
            let got = 0;
            while (got < length) {
              const n = readSync(fd, buffer, got, length - got, headReadOffset + got);
              if (n === 0) break;
              got += n;
            }
            return buffer.subarray(0, got);
          });
        let buffer = readAt(Math.min(remaining, Math.max(maxBytes, SPOOL_RECORD_HEADER_BYTES)));
        let scan = decodeSpoolRecords(buffer, { maxRecords });
        if (scan.records.length === 0 && scan.stop === 'truncated' && buffer.length >= SPOOL_RECORD_HEADER_BYTES) {
          // The first record is larger than maxBytes: read exactly that record.
          buffer = readAt(Math.min(remaining, SPOOL_RECORD_HEADER_BYTES + buffer.readUInt32LE(0)));
          scan = decodeSpoolRecords(buffer, { maxRecords: 1 });
        }
        const corrupt = scan.stop === 'corrupt' || (scan.records.length === 0 && buffer.length === remaining);
        if (corrupt && scan.records.length === 0) {
          // Unreadable record at the read position: the rest of this segment is lost.
          const lost = remaining;
          const lostRecords = head.recordCount - headConsumed;
          options.onCorrupt?.(
            new SpoolError('WW_ERR_SPOOL_CORRUPT', `spool segment ${head.path}: corrupt record at byte ${headReadOffset}; discarded ${lostRecords} record(s), ${lost} bytes`, head.path),
            lost,
          );
          head.recordCount = headConsumed;
          totalRecords -= lostRecords;
          totalBytes -= lost;
          head.sizeBytes = headReadOffset;
          continue;
        }
        peekedBytes = scan.recordBytes;
        return scan.records;
      }
    },

    commit(count) {
      const n = Math.min(count, peekedBytes.length);
      if (n <= 0) return;
      let bytes = 0;
      for (let i = 0; i < n; i++) bytes += peekedBytes[i] as number;
      peekedBytes = peekedBytes.slice(n);
      if (peekedFromRetry) {
        retryRecords = retryRecords.slice(n);
        retryBytes = retryBytes.slice(n);
        totalBytes -= bytes;
        totalRecords -= n;
        writeRetryFile();
        return;
      }
      headReadOffset += bytes;
      headConsumed += n;
      totalRecords -= n;
      const head = segments[0];
      if (head !== undefined && headReadOffset >= head.sizeBytes) removeHead();
      writeCursor();
    },

    sync() {
      if (dirty && activeFd !== undefined) {
        const fd = activeFd;
        io('fsync', active?.path ?? directory, () => fdatasyncSync(fd));
        dirty = false;
      }
    },

    close() {
      if (closed) return;
      closed = true;
      if (fsyncTimer !== undefined) clearInterval(fsyncTimer);
      closeActive();
      closeHeadFd();
      writeCursor();
      try {
        unlinkSync(lockPath);
      } catch {
        // Already gone: nothing to release.
      }
    },
  };
}

function readCursor(path: string): { sequence: number; offsetBytes: number } | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as { sequence?: unknown; offsetBytes?: unknown };
    if (Number.isSafeInteger(parsed.sequence) && Number.isSafeInteger(parsed.offsetBytes)) {
      return { sequence: parsed.sequence as number, offsetBytes: parsed.offsetBytes as number };
    }
  } catch {
    // No cursor (fresh spool) or unreadable: replay from the first segment (duplicates, never loss).
  }
  return undefined;
}

function acquireLock(lockPath: string, io: <T>(what: string, path: string, fn: () => T) => T): void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new SpoolError('WW_ERR_SPOOL_IO', `spool lock ${lockPath} cannot be created: ${(error as Error).message}`, lockPath, { cause: error });
      }
      const holder = Number(io('read lock', lockPath, () => readFileSync(lockPath, 'utf8')).trim());
      if (Number.isSafeInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new SpoolError(
          'WW_ERR_SPOOL_LOCKED',
          `spool directory is in use by process ${holder} (lock ${lockPath}); give each collector its own --spool-dir`,
          lockPath,
        );
      }
      // Stale lock from a process that is gone (or ourselves): take it over.
      io('remove stale lock', lockPath, () => unlinkSync(lockPath));
    }
  }
  throw new SpoolError('WW_ERR_SPOOL_LOCKED', `spool lock ${lockPath} could not be acquired`, lockPath);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
