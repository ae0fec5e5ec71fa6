import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { dirname } from 'node:path';
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
 * socket file from a crashed collector is replaced; a live one is an error.
 *
 * @throws CollectorError WW_ERR_COLLECTOR_SOCKET_IN_USE when another process serves the path,
 *   WW_ERR_COLLECTOR_SOURCE_IO when the path exists and is not a socket or cannot be bound.
 * @example const source = await startSocketSource({ path: '/run/warpwatch/collector.sock', mode: 0o660, intake, metrics, maxConnectionErrors: 16 });
 */
export async function startSocketSource(options: SocketSourceOptions): Promise<SocketSource> {
  const { path, log = () => {} } = options;
  await removeStaleSocket(path);
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o770 });
  } catch (error) {
    throw new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot create the socket directory ${dirname(path)}: ${(error as Error).message}`, { cause: error });
  }

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
    socket.on('data', (chunk: Buffer) => stream.push(chunk));
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
