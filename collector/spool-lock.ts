import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { createServer, type Server } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SpoolError } from './errors.ts';

/** Settings of {@link acquireSpoolLock}; times in milliseconds. */
export interface SpoolLockOptions {
  /**
   * A LOCK written from another network namespace or host counts as live while it is renewed
   * within this time (default 10 000); the holder renews it every quarter of it.
   */
  readonly leaseMillis?: number;
  /** Called once when a stale LOCK is taken over (what it said and why it is stale). */
  readonly onTakeOver?: (message: string) => void;
  /**
   * How long a bind of the lock socket that the kernel refuses is retried before the directory
   * is called busy (ms, default 3 000): a holder killed a moment ago may still be tearing down.
   */
  readonly busyRetryMillis?: number;
}

/** A held spool lock. */
export interface SpoolLock {
  /** Releases the lock (closes the socket, stops renewing, removes LOCK if it is still ours). Idempotent. */
  release(): void;
}

/** What a LOCK file says (JSON, one object). Information for people and for other namespaces; see {@link acquireSpoolLock}. */
interface LockInfo {
  readonly pid: number;
  readonly host: string;
  /** `/proc/self/ns/net` of the holder, e.g. `net:[4026531840]`. */
  readonly netns: string | undefined;
  readonly bootId: string | undefined;
  /** Random id of this holder, so release never removes a successor's file. */
  readonly token: string;
  readonly startedAt: string;
}

const LOCK_FILE = 'LOCK';

function readProc(path: string, read: (p: string) => string): string | undefined {
  try {
    return read(path).trim();
  } catch {
    return undefined;
  }
}

/** The network namespace and boot of this process: two processes with equal values see each other's abstract sockets. */
function namespaceOf(): { netns: string | undefined; bootId: string | undefined } {
  return {
    netns: readProc('/proc/self/ns/net', (p) => fs.readlinkSync(p)),
    bootId: readProc('/proc/sys/kernel/random/boot_id', (p) => fs.readFileSync(p, 'utf8')),
  };
}

function readLockInfo(path: string): { info: Partial<LockInfo> | undefined; text: string; mtimeMs: number } | undefined {
  try {
    const text = fs.readFileSync(path, 'utf8');
    const { mtimeMs } = fs.statSync(path);
    let info: Partial<LockInfo> | undefined;
    try {
      const parsed = JSON.parse(text) as unknown;
      if (typeof parsed === 'object' && parsed !== null) info = parsed as Partial<LockInfo>;
    } catch {
      // A bare pid (written by collectors before this lock) or garbage: information only.
    }
    return { info, text: text.trim().slice(0, 200), mtimeMs };
  } catch {
    return undefined;
  }
}

function holderOf(lock: { info: Partial<LockInfo> | undefined; text: string } | undefined): string {
  if (lock === undefined) return 'unknown process';
  if (lock.info === undefined) return `"${lock.text}"`;
  return `pid ${String(lock.info.pid)} on host ${String(lock.info.host)}`;
}

/** Blocks the thread for `millis` (start-up only: waiting out a foreign lease). */
function sleepSync(millis: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, millis);
}

/**
 * Takes the spool directory's lock, so that one collector at a time uses it. The lock is one
 * the kernel releases when its holder dies, however it dies (SIGKILL, OOM, a zombie not yet
 * reaped, a container that is gone):
 *
 * 1. On Linux, a listening abstract unix socket named after the directory's identity
 *    (`\0warpwatch-spool/<device>/<inode>`): a second bind fails with EADDRINUSE while the
 *    holder lives, and the kernel closes it when the holder exits. Abstract sockets are per
 *    network namespace, so this protects collectors of one host namespace or one pod.
 * 2. The `LOCK` file (JSON: pid, host, network namespace, boot id) is information and the
 *    guard across namespaces: the holder renews its mtime every `leaseMillis / 4`. A LOCK from
 *    the same namespace and boot is authoritative only through step 1 (a free socket means its
 *    writer is dead, whatever process now has that pid). A LOCK from another namespace or
 *    host (two containers sharing one volume) counts as live while it is renewed: start-up
 *    waits up to `leaseMillis`, refuses as soon as it sees a renewal, and takes the lock over
 *    when none came. A bare pid (an older collector's LOCK) is never a reason to refuse.
 *
 * Elsewhere than Linux (development machines) only step 2 applies.
 *
 * @throws SpoolError WW_ERR_SPOOL_LOCKED when a live collector holds the directory,
 *   WW_ERR_SPOOL_IO when the directory cannot be examined or LOCK cannot be written.
 * @example
 * const lock = acquireSpoolLock('/var/lib/warpwatch/spool');
 * try { ... } finally { lock.release(); }
 */
export function acquireSpoolLock(directory: string, options: SpoolLockOptions = {}): SpoolLock {
  const leaseMillis = options.leaseMillis ?? 10_000;
  const lockPath = join(directory, LOCK_FILE);
  let identity: fs.BigIntStats;
  try {
    identity = fs.statSync(directory, { bigint: true });
  } catch (error) {
    throw new SpoolError('WW_ERR_SPOOL_IO', `spool directory ${directory} cannot be examined: ${(error as Error).message}`, directory, { cause: error });
  }
  const own = namespaceOf();
  let server: Server | undefined;
  if (process.platform === 'linux') {
    const name = `\0warpwatch-spool/${identity.dev}/${identity.ino}`;
    // A holder that was just killed can still hold the socket for a moment: a multi-threaded
    // process shows as a zombie once its main thread has exited, while its other threads (and so
    // its open files) are still being torn down. So a refused bind is retried for a short while
    // before the directory is called busy (docs/collector.md "The spool lock").
    const deadline = Date.now() + (options.busyRetryMillis ?? 3_000);
    for (;;) {
      const candidate = createServer((socket) => socket.destroy());
      candidate.on('error', () => {
        // A failed bind is seen through `listening` below (it is reported on the next tick too).
      });
      // Node binds and listens synchronously for a unix socket: `listening` is the answer.
      candidate.listen(name);
      if (candidate.listening) {
        server = candidate;
        break;
      }
      if (Date.now() >= deadline) {
        const holder = holderOf(readLockInfo(lockPath));
        throw new SpoolError('WW_ERR_SPOOL_LOCKED', `spool directory ${directory} is in use by a live collector (LOCK names ${holder}); give each collector its own --spool-dir`, lockPath);
      }
      sleepSync(50);
    }
    server.unref();
  }
  try {
    waitOutForeignLock(lockPath, own, leaseMillis, server !== undefined, options.onTakeOver);
    const info: LockInfo = { pid: process.pid, host: hostname(), netns: own.netns, bootId: own.bootId, token: randomUUID(), startedAt: new Date().toISOString() };
    const tmp = `${lockPath}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(tmp, `${JSON.stringify(info)}\n`, { mode: 0o600 });
      fs.renameSync(tmp, lockPath);
    } catch (error) {
      throw new SpoolError('WW_ERR_SPOOL_IO', `spool lock ${lockPath} cannot be written: ${(error as Error).message}`, lockPath, { cause: error });
    }
    const renew = setInterval(() => {
      try {
        const now = new Date();
        fs.utimesSync(lockPath, now, now);
      } catch {
        // LOCK removed by hand: the socket still guards this namespace; nothing to renew.
      }
    }, Math.max(1, Math.floor(leaseMillis / 4)));
    renew.unref();
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        clearInterval(renew);
        if (readLockInfo(lockPath)?.info?.token === info.token) {
          try {
            fs.unlinkSync(lockPath);
          } catch {
            // Already gone.
          }
        }
        server?.close();
      },
    };
  } catch (error) {
    server?.close();
    throw error;
  }
}

/**
 * Step 2 of {@link acquireSpoolLock}: returns when the directory may be taken (no LOCK, a
 * LOCK of this namespace whose socket was free, an older collector's bare pid, or a foreign
 * LOCK not renewed for `leaseMillis`); throws WW_ERR_SPOOL_LOCKED when a foreign LOCK is renewed.
 */
function waitOutForeignLock(
  lockPath: string,
  own: { netns: string | undefined; bootId: string | undefined },
  leaseMillis: number,
  socketChecked: boolean,
  onTakeOver: ((message: string) => void) | undefined,
): void {
  const first = readLockInfo(lockPath);
  if (first === undefined) return;
  const info = first.info;
  const holder = holderOf(first);
  if (info === undefined || typeof info.token !== 'string') {
    onTakeOver?.(`spool lock ${lockPath} (${holder}) was written by an older collector and is not a lock the kernel releases; taken over`);
    return;
  }
  const sameNamespace = socketChecked && info.netns !== undefined && info.netns === own.netns && info.bootId === own.bootId;
  if (sameNamespace) {
    onTakeOver?.(`spool lock ${lockPath} (${holder}) is stale: its holder is gone (no collector listens on the directory's lock socket); taken over`);
    return;
  }
  const started = performance.now();
  let seen = first.mtimeMs;
  if (Date.now() - seen < leaseMillis) {
    for (;;) {
      sleepSync(Math.min(100, Math.max(1, leaseMillis / 20)));
      const now = readLockInfo(lockPath);
      if (now === undefined) break;
      if (now.mtimeMs !== seen || now.info?.token !== info.token) {
        throw new SpoolError(
          'WW_ERR_SPOOL_LOCKED',
          `spool directory ${lockPath.slice(0, -LOCK_FILE.length - 1)} is in use by a live collector in another network namespace or host (LOCK names ${holderOf(now)} and is being renewed); give each collector its own --spool-dir`,
          lockPath,
        );
      }
      seen = now.mtimeMs;
      if (performance.now() - started >= leaseMillis) break;
    }
  }
  onTakeOver?.(`spool lock ${lockPath} (${holder}, another network namespace or host) was not renewed for ${leaseMillis} ms: its holder is gone; taken over`);
}
