import { HttpError, type WriteApi } from '@influxdata/influxdb-client';
import { createInfluxWriteApi } from './influx-client.ts';
import { encodeLineProtocol, type InfluxPoint } from './influx-line.ts';
import { backoffDelayMillis, type BackoffPolicy } from './retry.ts';

/**
 * The one InfluxDB writer of both services (the estimator's window, alert and pipeline points;
 * the collector's own `warpwatch_pipeline` points). Points wait in a bounded in-memory buffer,
 * counted in points (one point = one line of line protocol). When no request is in flight they
 * are sent as soon as they are queued (after `flushIntervalMillis`; 0 = once the event loop is
 * free). While requests are in flight, new points wait for one to finish (so a burst goes out
 * in a few large requests rather than many small ones) unless a full batch is ready or the
 * oldest point has waited {@link BUSY_LINGER_MILLIS}: then another request starts, up to
 * `maxInFlightBatches` at a time. Requests carry up to `batchSize` points.
 *
 * A failed request (network error, timeout, HTTP 408, 429, 5xx) goes back into the buffer in
 * its original order and is retried after {@link backoffDelayMillis} of `retry`
 * (service/retry.ts) while new points keep queueing; when the buffer is full the oldest queued
 * points are dropped. Any other 4xx (a malformed line, a missing database) drops the batch.
 * Nothing is dropped silently: every point written in is, at any moment, exactly one of
 * written, dropped (by {@link InfluxDropReason}) or buffered, so
 * `pointsIn = pointsWritten + Σ dropped + buffered` ({@link InfluxWriterStats}).
 * Concurrent batches may reach InfluxDB out of order; both services write each point once, so
 * the order does not change what a query returns.
 */

/** Why points were given up. */
export type InfluxDropReason =
  /** The buffer was full: the oldest queued points made room. */
  | 'overflow'
  /** InfluxDB refused the batch for good (HTTP 4xx other than 408/429). */
  | 'rejected'
  /** No finite numeric or string field was left (NaN and ±Infinity fields are left out). */
  | 'no-fields'
  /** Still buffered when `close` gave up, or written after `close`. */
  | 'closed';

/** Every {@link InfluxDropReason}, in the order stats list them. */
export const INFLUX_DROP_REASONS: readonly InfluxDropReason[] = ['overflow', 'rejected', 'no-fields', 'closed'];

/** Settings of {@link createInfluxWriter}. */
export interface InfluxWriterOptions {
  readonly url: string;
  /** '' (none), an API token, or 'user:password' for InfluxDB 1.8 (plain text). */
  readonly token: string;
  /** '-' on InfluxDB 1.8. */
  readonly org: string;
  /** '<database>/<retention policy>' on InfluxDB 1.8. */
  readonly bucket: string;
  /** Points per write request, at most (≥ 1). */
  readonly batchSize: number;
  /** Longest time a queued point waits before its batch is sent (ms); 0 = as soon as the event loop is free. */
  readonly flushIntervalMillis: number;
  /** Bound of the buffer in points (queued + in flight, ≥ 1); overflow drops the oldest queued points. */
  readonly maxBufferPoints: number;
  /** Write requests in flight at a time, 1..64 (default {@link DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES}). */
  readonly maxInFlightBatches?: number | undefined;
  /** Pauses between attempts of a failed batch (ms). */
  readonly retry: BackoffPolicy;
  /** Longest wait for one write request (ms). */
  readonly requestTimeoutMillis: number;
}

/** Default of {@link InfluxWriterOptions.maxInFlightBatches}. */
export const DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES = 3;

/**
 * While a request is in flight, a point waits at most this long (ms, or `flushIntervalMillis`
 * if larger) before another request starts beside it; otherwise it rides with the next request
 * once one finishes.
 */
export const BUSY_LINGER_MILLIS = 50;

/** Counters of a writer since it was created. `pointsIn = pointsWritten + pointsDropped + buffered` at every moment. */
export interface InfluxWriterStats {
  /** Points passed to `write`. */
  readonly pointsIn: number;
  /** Points InfluxDB acknowledged. */
  readonly pointsWritten: number;
  /** Points given up, all reasons (the sum of `dropped`). */
  readonly pointsDropped: number;
  /** Points given up, by reason. */
  readonly dropped: Readonly<Record<InfluxDropReason, number>>;
  /** Points queued or in flight. */
  readonly buffered: number;
  /** Write requests that succeeded. */
  readonly batchesWritten: number;
  /** Write requests in flight now. */
  readonly batchesInFlight: number;
  /** Write requests that failed (each request, not each point). */
  readonly writeErrors: number;
  /** Write requests that failed since the last one that succeeded (0 = the last write worked; > 0 = degraded). */
  readonly failingWrites: number;
}

/** A failed write request (or a flush refused while backing off), as `flush` rejects with it and `onError` receives it. */
export class InfluxWriteFailure extends Error {
  /** Points of the failed request (0 for a flush refused while backing off). */
  readonly points: number;
  /** HTTP status InfluxDB answered, undefined for a network error or timeout. */
  readonly status: number | undefined;
  /** True when the points stay buffered and are retried; false when they were dropped. */
  readonly retriable: boolean;
  /** Write requests that failed since the last one that succeeded, this one included. */
  readonly failingWrites: number;

  constructor(message: string, details: { points: number; status: number | undefined; retriable: boolean; failingWrites: number; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'InfluxWriteFailure';
    this.points = details.points;
    this.status = details.status;
    this.retriable = details.retriable;
    this.failingWrites = details.failingWrites;
  }
}

/** What a service hears from its writer (for logs and metrics); all optional, none may throw. */
export interface InfluxWriterHooks {
  /** Once per failed write request. */
  readonly onError?: ((failure: InfluxWriteFailure) => void) | undefined;
  /** When a request succeeds after `failedRequests` failed ones in a row. */
  readonly onRecovered?: ((failedRequests: number) => void) | undefined;
  /** Whenever points are dropped, with their number and reason. */
  readonly onDrop?: ((reason: InfluxDropReason, points: number) => void) | undefined;
}

/** A writer; see {@link createInfluxWriter}. */
export interface InfluxWriter {
  /** Queues points and schedules their batch. Never blocks, never throws; overflow drops the oldest queued points, after `close` the points are dropped ('closed'). */
  write(points: readonly InfluxPoint[]): void;
  /**
   * Sends everything queued now, even while backing off only when nothing is queued. Resolves
   * once every point queued before the call is written or dropped; rejects with an
   * {@link InfluxWriteFailure} when a request failed meanwhile, or at once while the writer
   * backs off after a failure (retriable points stay queued for the next attempt).
   */
  flush(): Promise<void>;
  stats(): InfluxWriterStats;
  /**
   * Stops scheduling, sends what is buffered now (backoff ignored) until everything is written,
   * a request fails or `timeoutMillis` passes, then counts what is left as dropped ('closed')
   * and releases the client. Idempotent; never rejects; returns the final stats (buffered 0).
   */
  close(timeoutMillis: number): Promise<InfluxWriterStats>;
}

/**
 * The `/healthz` reasons an InfluxDB writer contributes: `['influx-write']` while its last
 * write requests failed (points wait in the buffer), else none.
 *
 * @example influxHealthReasons({ failingWrites: 2 }) // ['influx-write']
 */
export function influxHealthReasons(stats: Pick<InfluxWriterStats, 'failingWrites'> | undefined): string[] {
  return (stats?.failingWrites ?? 0) > 0 ? ['influx-write'] : [];
}

interface Batch {
  readonly lines: string[];
  /** Sequence numbers of the lines (ascending). */
  readonly sequences: number[];
}

interface Waiter {
  /** Resolve once every point with a sequence below this is settled. */
  readonly target: number;
  resolve(): void;
  reject(error: InfluxWriteFailure): void;
}

/**
 * Creates a writer. Nothing is sent until points are written.
 *
 * @throws RangeError when maxInFlightBatches is not an integer 1..64, or batchSize or
 *   maxBufferPoints is not an integer ≥ 1.
 * @example
 * const writer = createInfluxWriter(
 *   { url: 'http://127.0.0.1:8086', token: '', org: '-', bucket: 'warpwatch/autogen', batchSize: 5_000, flushIntervalMillis: 0,
 *     maxBufferPoints: 200_000, retry: { initialMillis: 500, maxMillis: 30_000, jitter: 0.5 }, requestTimeoutMillis: 10_000 },
 *   { onError: (failure) => log(failure.message) },
 * );
 * writer.write(points);
 * await writer.close(2_000);
 */
export function createInfluxWriter(options: InfluxWriterOptions, hooks: InfluxWriterHooks = {}): InfluxWriter {
  const maxInFlight = options.maxInFlightBatches ?? DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 64) {
    throw new RangeError(`maxInFlightBatches must be an integer 1..64, got ${maxInFlight}`);
  }
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new RangeError(`batchSize must be an integer ≥ 1, got ${options.batchSize}`);
  if (!Number.isInteger(options.maxBufferPoints) || options.maxBufferPoints < 1) {
    throw new RangeError(`maxBufferPoints must be an integer ≥ 1, got ${options.maxBufferPoints}`);
  }
  const where = `InfluxDB ${urlWithoutCredentials(options.url)} (bucket ${options.bucket})`;
  // One WriteApi per concurrent request: each has its own buffer, flushed by us only. The retry
  // budget is ours; the client neither retries, buffers nor logs on its own.
  const idleApis: WriteApi[] = Array.from({ length: maxInFlight }, () =>
    createInfluxWriteApi({ url: options.url, token: options.token, org: options.org, bucket: options.bucket, requestTimeoutMillis: options.requestTimeoutMillis, maxBatchLines: options.batchSize }),
  );
  const allApis = [...idleApis];

  // Queued lines in ascending sequence order (a retried batch is merged back in place).
  const queue: string[] = [];
  const queueSequences: number[] = [];
  const inFlight = new Set<Batch>();
  let inFlightLines = 0;
  let nextSequence = 0;
  let waiters: Waiter[] = [];
  /** Called whenever a request ends (close waits for the requests in flight through it). */
  let onRequestEnd: (() => void) | undefined;
  let pointsIn = 0;
  let pointsWritten = 0;
  const dropped: Record<InfluxDropReason, number> = { overflow: 0, rejected: 0, 'no-fields': 0, closed: 0 };
  let batchesWritten = 0;
  let writeErrors = 0;
  let failingWrites = 0;
  let nextAttemptMillis = 0;
  /** No more scheduling (close called). */
  let closed = false;
  /** Close has given up: late answers of requests in flight are ignored (their points counted 'closed'). */
  let finished = false;
  let finalStats: Promise<InfluxWriterStats> | undefined;
  /** When the oldest line now queued was queued (ms since epoch; meaningful while the queue is not empty). */
  let queuedSinceMillis = 0;
  const busyLingerMillis = Math.max(options.flushIntervalMillis, BUSY_LINGER_MILLIS);
  let scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;

  const drop = (reason: InfluxDropReason, count: number): void => {
    if (count <= 0) return;
    dropped[reason] += count;
    hooks.onDrop?.(reason, count);
  };

  const stats = (): InfluxWriterStats => ({
    pointsIn,
    pointsWritten,
    pointsDropped: INFLUX_DROP_REASONS.reduce((sum, reason) => sum + dropped[reason], 0),
    dropped: { ...dropped },
    buffered: queue.length + inFlightLines,
    batchesWritten,
    batchesInFlight: inFlight.size,
    writeErrors,
    failingWrites,
  });

  /** Smallest sequence not yet settled (written or dropped); nextSequence when none. */
  const lowestOutstanding = (): number => {
    let lowest = queueSequences[0] ?? nextSequence;
    for (const batch of inFlight) lowest = Math.min(lowest, batch.sequences[0]!);
    return lowest;
  };

  const settleWaiters = (): void => {
    if (waiters.length === 0) return;
    const lowest = lowestOutstanding();
    const still: Waiter[] = [];
    for (const waiter of waiters) {
      if (waiter.target <= lowest) waiter.resolve();
      else still.push(waiter);
    }
    waiters = still;
  };

  const rejectWaiters = (failure: InfluxWriteFailure): void => {
    const rejected = waiters;
    waiters = [];
    for (const waiter of rejected) waiter.reject(failure);
  };

  const enforceBound = (): void => {
    const excess = queue.length + inFlightLines - options.maxBufferPoints;
    if (excess <= 0) return;
    // Drop the oldest queued lines (lines in flight are never dropped; the buffer may exceed its bound by those meanwhile).
    const count = Math.min(excess, queue.length);
    queue.splice(0, count);
    queueSequences.splice(0, count);
    drop('overflow', count);
  };

  const cancelSchedule = (): void => {
    if (scheduled === undefined) return;
    clearTimeout(scheduled as NodeJS.Timeout);
    clearImmediate(scheduled as NodeJS.Immediate);
    scheduled = undefined;
  };

  /** Milliseconds until queued lines may start a request (0 = now), ignoring free slots. */
  const delayUntilSend = (now: number): number => {
    if (now < nextAttemptMillis) return nextAttemptMillis - now;
    if (queue.length >= options.batchSize) return 0;
    const linger = inFlight.size === 0 ? options.flushIntervalMillis : busyLingerMillis;
    return Math.max(0, queuedSinceMillis + linger - now);
  };

  /** Arranges the next send: now-ish, after the linger time, or when the backoff ends. */
  const schedule = (): void => {
    if (closed || scheduled !== undefined || queue.length === 0 || idleApis.length === 0) return;
    const delay = delayUntilSend(Date.now());
    if (delay <= 0) {
      scheduled = setImmediate(() => {
        scheduled = undefined;
        pump(false);
      });
    } else {
      const timer = setTimeout(() => {
        scheduled = undefined;
        pump(false);
      }, delay);
      timer.unref();
      scheduled = timer;
    }
  };

  /** Books a successful request. */
  const succeeded = (batch: Batch): void => {
    pointsWritten += batch.lines.length;
    batchesWritten += 1;
    const failedBefore = failingWrites;
    failingWrites = 0;
    nextAttemptMillis = 0;
    if (failedBefore > 0) hooks.onRecovered?.(failedBefore);
  };

  /** Books a failed request: back into the buffer (retriable) or dropped; returns the failure to report. */
  const failed = (batch: Batch, error: unknown): InfluxWriteFailure => {
    writeErrors += 1;
    failingWrites += 1;
    const status = error instanceof HttpError ? error.statusCode : undefined;
    const retriable = status === undefined || status === 408 || status === 429 || status >= 500;
    if (retriable) {
      // Back into the buffer, in sequence order, for the next attempt.
      if (queue.length === 0) queuedSinceMillis = Date.now();
      const at = lowerBound(queueSequences, batch.sequences[0]!);
      queue.splice(at, 0, ...batch.lines);
      queueSequences.splice(at, 0, ...batch.sequences);
      nextAttemptMillis = Date.now() + backoffDelayMillis(failingWrites, options.retry);
    } else {
      drop('rejected', batch.lines.length);
    }
    const outcome = retriable ? `; retrying in up to ${Math.round(options.retry.maxMillis * (1 + (options.retry.jitter ?? 0) / 2))} ms, ${queue.length + inFlightLines - batch.lines.length} points buffered` : '; batch dropped (InfluxDB refused it)';
    return new InfluxWriteFailure(
      `writing ${batch.lines.length} points to ${where} failed${status === undefined ? '' : ` with HTTP ${status}`}: ${error instanceof Error ? error.message : String(error)}${outcome}`,
      { points: batch.lines.length, status, retriable, failingWrites, cause: error },
    );
  };

  const send = async (api: WriteApi, batch: Batch): Promise<void> => {
    let failure: InfluxWriteFailure | undefined;
    try {
      api.writeRecords(batch.lines);
      await api.flush();
      if (!finished) succeeded(batch);
    } catch (error) {
      if (!finished) failure = failed(batch, error);
    } finally {
      if (!finished) {
        inFlight.delete(batch);
        inFlightLines -= batch.lines.length;
        idleApis.push(api);
      }
    }
    if (finished) return;
    if (failure !== undefined) {
      enforceBound();
      rejectWaiters(failure);
      hooks.onError?.(failure);
    }
    settleWaiters();
    onRequestEnd?.();
    // A slot is free: what waited for it goes now (a flush or close in progress sends on regardless of linger).
    cancelSchedule();
    if (!closed || waiters.length > 0) pump(waiters.length > 0);
  };

  /** Starts batches while there are lines and free request slots (`force`: now, even while backing off). */
  function pump(force: boolean): void {
    while (queue.length > 0 && idleApis.length > 0) {
      if (!force && delayUntilSend(Date.now()) > 0) break;
      const count = Math.min(options.batchSize, queue.length);
      const batch: Batch = { lines: queue.splice(0, count), sequences: queueSequences.splice(0, count) };
      const api = idleApis.pop()!;
      inFlight.add(batch);
      inFlightLines += count;
      void send(api, batch);
    }
    schedule();
  }

  /** Resolves once every point queued so far is settled; rejects at the next failed request. */
  const waitForAll = (force: boolean): Promise<void> => {
    const target = nextSequence;
    if (lowestOutstanding() >= target) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => waiters.push({ target, resolve, reject }));
    pump(force);
    return settled;
  };

  /** Resolves once no request is in flight. */
  const requestsEnded = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const check = (): void => {
        if (inFlight.size > 0) return;
        onRequestEnd = undefined;
        resolve();
      };
      onRequestEnd = check;
      check();
    });

  const closeOnce = async (timeoutMillis: number): Promise<InfluxWriterStats> => {
    closed = true;
    cancelSchedule();
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timeout = setTimeout(resolve, Math.max(0, timeoutMillis));
    });
    // Everything buffered gets one forced attempt; after a failure, requests already in flight may still succeed.
    await Promise.race([waitForAll(true).catch(() => requestsEnded()), timedOut]);
    if (timeout !== undefined) clearTimeout(timeout);
    finished = true;
    onRequestEnd = undefined;
    drop('closed', queue.length + inFlightLines);
    queue.length = 0;
    queueSequences.length = 0;
    inFlight.clear();
    inFlightLines = 0;
    for (const api of allApis) api.dispose();
    return stats();
  };

  return {
    write(points) {
      pointsIn += points.length;
      if (closed) {
        drop('closed', points.length);
        return;
      }
      const lines: string[] = [];
      for (const point of points) {
        const line = lineOf(point);
        if (line === undefined) drop('no-fields', 1);
        else lines.push(line);
      }
      if (lines.length === 0) return;
      if (queue.length === 0) queuedSinceMillis = Date.now();
      for (const line of lines) {
        queue.push(line);
        queueSequences.push(nextSequence);
        nextSequence += 1;
      }
      enforceBound();
      settleWaiters();
      if (queue.length >= options.batchSize && idleApis.length > 0 && Date.now() >= nextAttemptMillis) {
        cancelSchedule();
        pump(false);
      } else schedule();
    },
    flush() {
      if (Date.now() < nextAttemptMillis && queue.length > 0) {
        return Promise.reject(
          new InfluxWriteFailure(`${where} is backing off after a failed write; ${queue.length + inFlightLines} points buffered`, {
            points: 0,
            status: undefined,
            retriable: true,
            failingWrites,
          }),
        );
      }
      return waitForAll(true);
    },
    stats,
    close(timeoutMillis) {
      finalStats ??= closeOnce(timeoutMillis);
      return finalStats;
    },
  };
}

/** The point's line, its non-finite numeric fields left out; undefined when no field is left. */
function lineOf(point: InfluxPoint): string | undefined {
  const entries = Object.entries(point.fields);
  if (entries.every(([, value]) => typeof value === 'string' || Number.isFinite(value))) {
    return entries.length === 0 ? undefined : encodeLineProtocol(point);
  }
  const fields = Object.fromEntries(entries.filter(([, value]) => typeof value === 'string' || Number.isFinite(value)));
  return Object.keys(fields).length === 0 ? undefined : encodeLineProtocol({ ...point, fields });
}

/** First index of a sorted array whose value is ≥ `value`. */
function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * The URL without user:password, for messages.
 *
 * @example urlWithoutCredentials('http://u:p@host:8086/') // 'http://host:8086'
 */
export function urlWithoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '[invalid url]';
  }
}
