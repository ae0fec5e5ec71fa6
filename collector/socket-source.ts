import { chmodSync, lstatSync, mkdirSync, realpathSync, unlinkSync, type Stats } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { dirname, resolve } from 'node:path';
import type { CollectorMetrics } from './collector-metrics.ts';
import type { LogFunction } from './delivery-pipeline.ts';
import { CollectorError } from './errors.ts';
import type { FrameIntake } from './frame-intake.ts';

/** Settings of {@link startSocketSource}. */
export interface SocketSourceOptions {
  /** Socket file path; its directory is created if missing. */
  readonly path: string;
  /** Permission bits applied to the socket file (0o660: owner and group may write). */
  readonly mode: number;
  /** Permission bits of the socket directory when the collector creates it (default 0o750). */
  readonly directoryMode?: number;
  readonly intake: FrameIntake;
  readonly metrics: CollectorMetrics;
  /** A connection is closed after this many invalid frames. */
  readonly maxConnectionErrors: number;
  readonly log?: LogFunction;
}

/** A listening socket source; see {@link startSocketSource}. */
export interface SocketSource {
  /** Open connections right now. */
  readonly connectionCount: number;
  /**
   * Stops accepting at once, lets open connections finish for up to `graceMillis` (their
   * data is still read), then closes the rest and removes the socket file.
   */
  close(graceMillis: number): Promise<void>;
}

/**
 * Serves a unix domain socket that any number of instrumented jobs write frames to, at the
 * same time. Every connection is read as fast as data arrives (never paused: a GPU job is
 * never slowed by the collector; overflow is handled behind, in the delivery pipeline).
 * Invalid frames go to the DLQ; a connection past its error budget is closed. A stale
 * socket file from a crashed collector is replaced; a live one is an error. The socket's
 * directory must be the collector's own (see {@link prepareSocketDirectory}), so no other
 * local user can replace the socket with theirs.
 *
 * @throws CollectorError WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE when the directory is not the collector's own,
 *   WW_ERR_COLLECTOR_SOCKET_IN_USE when another process serves the path,
 *   WW_ERR_COLLECTOR_SOURCE_IO when the path exists and is not a socket or cannot be bound.
 * @example const source = await startSocketSource({ path: '/run/warpwatch/collector.sock', mode: 0o660, intake, metrics, maxConnectionErrors: 16 });
 */
export async function startSocketSource(options: SocketSourceOptions): Promise<SocketSource> {
  const { path, log = () => {} } = options;
  // The directory first: only in a directory that is ours alone is the socket path ours.
  prepareSocketDirectory(dirname(path), options.directoryMode ?? 0o750);
  await removeStaleSocket(path);

  const connections = new Set<Socket>();
  const server = createServer((socket) => {
    connections.add(socket);
    const stream = options.intake.openStream('socket', options.maxConnectionErrors, () => {
      options.metrics.connectionClosedForErrors('socket');
      const error = new CollectorError(
        'WW_ERR_COLLECTOR_TOO_MANY_ERRORS',
        `closed a socket connection after ${options.maxConnectionErrors} invalid frame(s) (limit WARPWATCH_MAX_CONNECTION_ERRORS); they went to the DLQ`,
      );
      log('warn', `${error.code}: ${error.message}`);
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      stream.push(chunk);
      // The validation worker is behind: stop reading this connection until it catches up. The
      // job's non-blocking sink then finds the socket buffer full and drops, counted on its side;
      // the collector drops nothing (a dropped chunk would also tear the frames around it).
      if (options.intake.overloaded && !socket.isPaused()) {
        socket.pause();
        void options.intake.relieved().then(() => socket.resume());
      }
    });
    socket.on('end', () => void stream.end());
    socket.on('error', () => {
      // A writer that vanished (EPIPE/ECONNRESET): what it sent so far was handled; nothing to do.
    });
    socket.on('close', () => connections.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot listen on unix socket ${path}: ${error.message}`, { cause: error })));
    server.listen(path, () => resolve());
  });
  try {
    // Safe: the directory is ours and nobody else may write in it, so the path is still our socket.
    if (!lstatSync(path).isSocket()) throw new Error('the path is no longer a socket');
    chmodSync(path, options.mode);
  } catch (error) {
    server.close();
    throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot set mode ${options.mode.toString(8)} on ${path}: ${(error as Error).message}`, { cause: error });
  }

  return {
    get connectionCount() {
      return connections.size;
    },
    async close(graceMillis) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + graceMillis;
      while (connections.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      // Data already received was handled; a writer still connected sees EPIPE and counts its drops.
      for (const socket of connections) socket.destroy();
      await closed;
      try {
        unlinkSync(path);
      } catch {
        // Node removed it already.
      }
    },
  };
}

async function removeStaleSocket(path: string): Promise<void> {
  let isSocket: boolean;
  try {
    isSocket = lstatSync(path).isSocket();
  } catch {
    return; // nothing there
  }
  if (!isSocket) {
    throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `socket path ${path} exists and is not a socket; remove it or choose another --socket`);
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = createConnection(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) {
    throw new CollectorError('WW_ERR_COLLECTOR_SOCKET_IN_USE', `socket ${path} is served by another process (a collector already runs); stop it or choose another --socket`);
  }
  unlinkSync(path);
}

const unsafe = (directory: string, what: string, fix: string): CollectorError =>
  new CollectorError(
    'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE',
    `socket directory ${directory} ${what}; another local user could replace the socket and receive every frame. ${fix}`,
  );

/**
 * Makes sure the socket directory belongs to this process alone: it is created with `mode`
 * (default 0o750) when missing, under a parent that is the process's or root's and that
 * others cannot write to (unless it is sticky, like /tmp); an existing directory must be a
 * real directory (a symbolic link is refused, never followed), owned by this process's user,
 * and not writable by group or others. Missing parents are created 0o755 by the same rules.
 *
 * @param directory the socket's directory (absolute or relative path).
 * @param mode permission bits of a directory created here.
 * @throws CollectorError WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE when a check fails (one line: which
 *   check and what to do), WW_ERR_COLLECTOR_SOURCE_IO when it cannot be created.
 * @example prepareSocketDirectory('/run/warpwatch', 0o750);
 */
export function prepareSocketDirectory(directory: string, mode = 0o750): void {
  const uid = process.getuid?.() ?? 0;
  let stats: Stats | undefined;
  try {
    stats = lstatSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot inspect the socket directory ${directory}: ${(error as Error).message}`, { cause: error });
    }
  }
  const parent = dirname(resolve(directory));
  if (stats === undefined && parent !== directory) prepareParent(parent, uid);
  // Every folder above must be safe too, or another user could rename ours away and put theirs in its place.
  checkAncestors(parent, uid);
  if (stats === undefined) {
    try {
      mkdirSync(directory, { mode });
      chmodSync(directory, mode); // the umask may have cleared bits; nobody else can swap it: the parent is safe
    } catch (error) {
      throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot create the socket directory ${directory}: ${(error as Error).message}`, { cause: error });
    }
    return;
  }
  if (stats.isSymbolicLink()) throw unsafe(directory, 'is a symbolic link', 'Point --socket at a real directory the collector owns.');
  if (!stats.isDirectory()) throw unsafe(directory, 'is not a directory', 'Choose another --socket.');
  if (stats.uid !== uid) throw unsafe(directory, `is owned by uid ${stats.uid}, not by the collector (uid ${uid})`, `Remove it, or chown it to uid ${uid} with mode 0750.`);
  if ((stats.mode & 0o022) !== 0) {
    throw unsafe(directory, `has mode ${(stats.mode & 0o7777).toString(8).padStart(4, '0')} (group or others may write)`, `chmod 0750 ${directory}, or remove it and let the collector create it.`);
  }
}

/**
 * Checks the real path of `parent` and every folder above it up to `/`: each must be owned by
 * this user or root and not writable by group or others unless sticky (like /tmp). Symbolic
 * links above the socket directory are resolved first (e.g. /var/run → /run is common).
 */
function checkAncestors(parent: string, uid: number): void {
  let real: string;
  try {
    real = realpathSync(parent);
  } catch (error) {
    throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot resolve ${parent}: ${(error as Error).message}`, { cause: error });
  }
  for (let at = real; ; at = dirname(at)) {
    const stats = lstatSync(at);
    const sticky = (stats.mode & 0o1000) !== 0;
    if ((stats.uid !== uid && stats.uid !== 0) || ((stats.mode & 0o022) !== 0 && !sticky)) {
      throw unsafe(at, `is above the socket and ${stats.uid !== uid && stats.uid !== 0 ? `owned by uid ${stats.uid}` : 'writable by others without the sticky bit'}`, 'Choose a socket directory under folders only you or root can write.');
    }
    if (dirname(at) === at) return;
  }
}

/** A missing socket directory's parent: created (0o755) if missing, and checked to be safe to create in. */
function prepareParent(parent: string, uid: number): void {
  let stats: Stats;
  try {
    stats = lstatSync(parent);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot inspect ${parent}: ${(error as Error).message}`, { cause: error });
    }
    if (dirname(parent) !== parent) prepareParent(dirname(parent), uid);
    try {
      mkdirSync(parent, { mode: 0o755 });
    } catch (mkdirError) {
      throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot create ${parent}: ${(mkdirError as Error).message}`, { cause: mkdirError });
    }
    return;
  }
  if (stats.isSymbolicLink()) throw unsafe(parent, 'has a parent that is a symbolic link', 'Use a path without symbolic links.');
  const sticky = (stats.mode & 0o1000) !== 0;
  if ((stats.uid !== uid && stats.uid !== 0) || ((stats.mode & 0o022) !== 0 && !sticky)) {
    throw unsafe(parent, 'would be created in a parent that another user owns or may write to (and that is not sticky)', 'Choose a socket directory under a path only you or root can write.');
  }
}
