import { HttpError, type WriteApi } from '@influxdata/influxdb-client';
import { backoffDelayMillis, createInfluxWriteApi } from '../service/index.ts';
import { EstimatorError } from './errors.ts';
import { toLineProtocol, type SeriesPoint } from './series-points.ts';

/**
 * The one adapter to InfluxDB (@influxdata/influxdb-client, v2 write API; on InfluxDB 1.8
 * the compatibility endpoint takes org '-', bucket '<database>/<retention policy>' and token
 * '' or 'user:password'). Lines wait in a bounded in-memory buffer. When no request is in
 * flight they are sent as soon as they are queued (after `flushIntervalMillis`; 0 = once the
 * event loop is free). While requests are in flight, new lines wait for one to finish (so a
 * burst of window closes goes out in a few large requests rather than many small ones) unless
 * a full batch is ready or the oldest line has waited {@link BUSY_LINGER_MILLIS}: then another
 * request starts, up to `maxInFlightBatches` at a time, so one slow write does not hold back
 * the points of the next window close. Requests carry up to `batchSize` lines. A failed batch goes
 * back into the buffer and is retried with exponential backoff (network errors, 429 and
 * 5xx) while new lines keep queueing; when the buffer is full the oldest lines are dropped
 * and counted, never silently. A 4xx other than 429 (a malformed line) drops the batch and
 * counts it. Concurrent batches may reach InfluxDB out of order; the estimator writes each
 * point once per window close (a re-close after a restart writes identical values), so the
 * order does not change what a query returns.
 */

/** Settings of the writer (the influx slice of EstimatorConfig). */
export interface InfluxWriterOptions {
  readonly url: string;
  readonly database: string;
  readonly retentionPolicy: string;
  readonly token: string;
  readonly org: string;
  /** Lines per write request, at most. */
  readonly batchSize: number;
  /** Longest time a queued line waits before its batch is sent (ms); 0 = as soon as the event loop is free. */
  readonly flushIntervalMillis: number;
  /** Bound of the buffer (queued + in flight); overflow drops the oldest queued lines and counts them. */
  readonly maxBufferLines: number;
  readonly minRetryDelayMillis: number;
  readonly maxRetryDelayMillis: number;
  readonly requestTimeoutMillis: number;
  /** Write requests in flight at a time, 1..64 (default {@link DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES}). */
  readonly maxInFlightBatches?: number | undefined;
}

/** Default of {@link InfluxWriterOptions.maxInFlightBatches}. */
export const DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES = 3;

/**
 * While a request is in flight, a line waits at most this long (ms, or `flushIntervalMillis`
 * if larger) before another request starts beside it; otherwise it rides with the next request
 * once one finishes.
 */
export const BUSY_LINGER_MILLIS = 50;

/** Counters of the writer. */
export interface InfluxWriterStats {
  readonly linesWritten: number;
  /** Write requests that succeeded. */
  readonly batchesWritten: number;
  readonly linesDropped: number;
  readonly writeErrors: number;
  /** Write requests that failed since the last one that succeeded (0 = the last write worked). */
  readonly failingWrites: number;
  /** Lines queued or in flight. */
  readonly buffered: number;
  /** Write requests in flight now. */
  readonly batchesInFlight: number;
}

/** The writer. */
export interface InfluxWriter {
  /** Queues points and schedules their batch (never blocks, never throws; overflow drops the oldest lines and counts them). */
  write(points: readonly SeriesPoint[]): void;
  /**
   * Sends everything queued so far. Resolves when every line queued before the call has been
   * written (or dropped and counted); rejects with an EstimatorError
   * (WW_ERR_ESTIMATOR_INFLUX_WRITE) when a batch failed meanwhile or the writer is backing off
   * after a failure (retriable lines stay queued for the next attempt).
   */
  flush(): Promise<void>;
  stats(): InfluxWriterStats;
  /** Stops scheduling and tries a last flush (bounded by `timeoutMillis`); returns lines left unwritten. */
  close(timeoutMillis: number): Promise<number>;
}

interface Batch {
  readonly lines: string[];
  /** Sequence numbers of the lines (ascending). */
  readonly sequences: number[];
}

interface Waiter {
  /** Resolve once every line with a sequence below this is settled. */
  readonly target: number;
  resolve(): void;
  reject(error: EstimatorError): void;
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
 * Creates a writer. Nothing is sent until points are written.
 *
 * @param onError called once per failed batch (for logs and the sink-error metric).
 * @param onWritten called after each batch InfluxDB accepted (ends an outage the caller logged once).
 * @throws RangeError when maxInFlightBatches is not an integer 1..64.
 * @example
 * const writer = createInfluxWriter(config.influx, (error) => log(error.message));
 * writer.write(points);
 */
export function createInfluxWriter(options: InfluxWriterOptions, onError: (error: EstimatorError) => void, onWritten: () => void = () => {}): InfluxWriter {
  const maxInFlight = options.maxInFlightBatches ?? DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES;
  if (!Number.isInteger(maxInFlight) || maxInFlight < 1 || maxInFlight > 64) {
    throw new RangeError(`maxInFlightBatches must be an integer 1..64, got ${maxInFlight}`);
  }
  const bucket = `${options.database}/${options.retentionPolicy}`;
  // One WriteApi per concurrent request: each has its own buffer, flushed by us only. The retry
  // budget is ours; the client neither retries, buffers nor logs on its own.
  const idleApis: WriteApi[] = Array.from({ length: maxInFlight }, () =>
    createInfluxWriteApi({ url: options.url, token: options.token, org: options.org, bucket, requestTimeoutMillis: options.requestTimeoutMillis, maxBatchLines: options.batchSize }),
  );
  const allApis = [...idleApis];

  // Queued lines in ascending sequence order (a retried batch is merged back in place).
  const queue: string[] = [];
  const queueSequences: number[] = [];
  const inFlight = new Set<Batch>();
  let inFlightLines = 0;
  let nextSequence = 0;
  let waiters: Waiter[] = [];
  let linesWritten = 0;
  let batchesWritten = 0;
  let linesDropped = 0;
  let writeErrors = 0;
  let failingWrites = 0;
  let attempt = 0;
  let nextAttemptMillis = 0;
  let closed = false;
  /** When the oldest line now queued was queued (ms since epoch; meaningful while the queue is not empty). */
  let queuedSinceMillis = 0;
  const busyLingerMillis = Math.max(options.flushIntervalMillis, BUSY_LINGER_MILLIS);
  let scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;

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

  const enforceBound = (): void => {
    const excess = queue.length + inFlightLines - options.maxBufferLines;
    if (excess <= 0) return;
    // Drop the oldest queued lines (lines in flight are never dropped; the buffer may exceed its bound by those meanwhile).
    const count = Math.min(excess, queue.length);
    queue.splice(0, count);
    queueSequences.splice(0, count);
    linesDropped += count;
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

  const send = async (api: WriteApi, batch: Batch): Promise<void> => {
    let failure: EstimatorError | undefined;
    try {
      api.writeRecords(batch.lines);
      await api.flush();
      linesWritten += batch.lines.length;
      batchesWritten += 1;
      failingWrites = 0;
      attempt = 0;
      nextAttemptMillis = 0;
      onWritten();
    } catch (error) {
      writeErrors += 1;
      failingWrites += 1;
      const status = error instanceof HttpError ? error.statusCode : undefined;
      const retriable = status === undefined || status === 429 || status >= 500;
      if (!retriable) {
        linesDropped += batch.lines.length;
      } else {
        // Back into the buffer, in sequence order, for the next attempt.
        if (queue.length === 0) queuedSinceMillis = Date.now();
        const at = lowerBound(queueSequences, batch.sequences[0]!);
        queue.splice(at, 0, ...batch.lines);
        queueSequences.splice(at, 0, ...batch.sequences);
        attempt += 1;
        nextAttemptMillis = Date.now() + backoffDelayMillis(attempt, { initialMillis: options.minRetryDelayMillis, maxMillis: options.maxRetryDelayMillis, jitter: 0.5 });
      }
      failure = new EstimatorError(
        'WW_ERR_ESTIMATOR_INFLUX_WRITE',
        `writing ${batch.lines.length} lines to InfluxDB ${options.url} (bucket ${bucket}) failed${status === undefined ? '' : ` with HTTP ${status}`}: ${error instanceof Error ? error.message : String(error)}${retriable ? `; retrying in up to ${options.maxRetryDelayMillis} ms, ${queue.length + inFlightLines} lines buffered` : '; batch dropped (not retriable)'}`,
        { retriable, cause: error },
      );
    } finally {
      inFlight.delete(batch);
      inFlightLines -= batch.lines.length;
      idleApis.push(api);
    }
    if (failure !== undefined) {
      enforceBound();
      const rejected = waiters;
      waiters = [];
      for (const waiter of rejected) waiter.reject(failure);
      onError(failure);
    }
    settleWaiters();
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

  const waitForAll = (force: boolean): Promise<void> => {
    const target = nextSequence;
    if (lowestOutstanding() >= target) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => waiters.push({ target, resolve, reject }));
    pump(force);
    return settled;
  };

  return {
    write(points) {
      if (points.length === 0) return;
      if (queue.length === 0) queuedSinceMillis = Date.now();
      for (const point of points) {
        queue.push(toLineProtocol(point));
        queueSequences.push(nextSequence);
        nextSequence += 1;
      }
      enforceBound();
      settleWaiters();
      if (queue.length >= options.batchSize && idleApis.length > 0 && Date.now() >= nextAttemptMillis && !closed) {
        cancelSchedule();
        pump(false);
      } else schedule();
    },
    flush() {
      if (Date.now() < nextAttemptMillis && queue.length > 0) {
        return Promise.reject(
          new EstimatorError('WW_ERR_ESTIMATOR_INFLUX_WRITE', `InfluxDB ${options.url} is backing off after a failed write; ${queue.length + inFlightLines} lines buffered`, {
            retriable: true,
          }),
        );
      }
      return waitForAll(true);
    },
    stats() {
      return { linesWritten, batchesWritten, linesDropped, writeErrors, failingWrites, buffered: queue.length + inFlightLines, batchesInFlight: inFlight.size };
    },
    async close(timeoutMillis) {
      closed = true;
      cancelSchedule();
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        waitForAll(true).catch(() => undefined),
        new Promise<void>((resolve) => {
          timeout = setTimeout(resolve, timeoutMillis);
        }),
      ]);
      if (timeout !== undefined) clearTimeout(timeout);
      const left = queue.length + inFlightLines;
      for (const api of allApis) api.dispose();
      return left;
    },
  };
}

/** What {@link ensureInfluxDatabase} found. */
export type InfluxDatabaseCheck = 'exists' | 'created' | 'unreachable';

/**
 * Makes sure the database the writer writes into exists, before the estimator starts: asks
 * InfluxDB (`SHOW DATABASES` on the 1.x query API, which InfluxDB 2.x also answers for its
 * database/retention-policy mappings) and, when the database is missing, creates it
 * (`CREATE DATABASE … WITH DURATION <retentionDuration> NAME <retentionPolicy>` when a duration
 * is given; needs an admin user when authentication is on). Without this, every
 * write would be refused (HTTP 404) and dropped for the whole life of the process.
 * InfluxDB not answering at all is not fatal: the writer buffers and retries until it comes
 * (returns 'unreachable').
 *
 * @param fetchImpl - the HTTP client (default the global fetch; tests inject failures)
 * @returns 'exists', 'created', or 'unreachable'
 * @throws EstimatorError WW_ERR_ESTIMATOR_INFLUX_DATABASE when the database is missing and
 *   cannot be created (not permitted, or InfluxDB 2.x without a mapping), or InfluxDB refuses
 *   the check itself (authentication)
 * @example await ensureInfluxDatabase(config.influx) // 'created' on a fresh InfluxDB
 */
export async function ensureInfluxDatabase(
  options: Pick<InfluxWriterOptions, 'url' | 'database' | 'token' | 'requestTimeoutMillis'> & { readonly retentionPolicy?: string; readonly retentionDuration?: string },
  fetchImpl: typeof fetch = fetch,
): Promise<InfluxDatabaseCheck> {
  const headers: Record<string, string> = {};
  if (options.token !== '') {
    // 1.x: 'user:password' (basic auth); 2.x: an API token.
    headers['Authorization'] = options.token.includes(':') ? `Basic ${Buffer.from(options.token).toString('base64')}` : `Token ${options.token}`;
  }
  const query = async (method: 'GET' | 'POST', text: string): Promise<{ status: number; body: string }> => {
    const response = await fetchImpl(`${options.url.replace(/\/$/, '')}/query?q=${encodeURIComponent(text)}`, {
      method,
      headers,
      signal: AbortSignal.timeout(options.requestTimeoutMillis),
    });
    return { status: response.status, body: await response.text() };
  };
  const refuse = (why: string): EstimatorError =>
    new EstimatorError(
      'WW_ERR_ESTIMATOR_INFLUX_DATABASE',
      `InfluxDB database "${options.database}" at ${options.url} ${why}; create it (InfluxQL: CREATE DATABASE "${options.database}"; InfluxDB 2.x: a bucket and a DBRP mapping), or give WARPWATCH_INFLUX_TOKEN a user allowed to, or set --influx-database`,
    );
  let shown: { status: number; body: string };
  try {
    shown = await query('GET', 'SHOW DATABASES');
  } catch {
    return 'unreachable';
  }
  if (shown.status === 401 || shown.status === 403) throw refuse(`cannot be checked: HTTP ${shown.status} ${shown.body.trim().slice(0, 200)}`);
  if (shown.status >= 500) return 'unreachable';
  const names = new Set<string>();
  try {
    const parsed = JSON.parse(shown.body) as { results?: { series?: { values?: unknown[][] }[] }[] };
    for (const series of parsed.results?.[0]?.series ?? []) for (const row of series.values ?? []) names.add(String(row[0]));
  } catch {
    throw refuse(`cannot be checked: SHOW DATABASES answered HTTP ${shown.status} ${shown.body.trim().slice(0, 200)}`);
  }
  if (names.has(options.database)) return 'exists';
  let created: { status: number; body: string };
  try {
    // With the deployment's retention default (30d) on its retention policy, not InfluxDB's infinite one.
    const retention = options.retentionDuration === undefined ? '' : ` WITH DURATION ${options.retentionDuration} NAME "${options.retentionPolicy ?? 'autogen'}"`;
    created = await query('POST', `CREATE DATABASE "${options.database}"${retention}`);
  } catch {
    return 'unreachable';
  }
  if (created.status === 200 && !/"error"/.test(created.body)) return 'created';
  throw refuse(`does not exist and could not be created: HTTP ${created.status} ${created.body.trim().slice(0, 200)}`);
}
