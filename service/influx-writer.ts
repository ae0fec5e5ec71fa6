import { createInfluxWriteTransport, InfluxHttpError, type InfluxWriteTransport } from './influx-client.ts';
import type { Secret } from './secret.ts';
import { encodeLineProtocol, InfluxLineError, type InfluxPoint } from './influx-line.ts';
import { backoffDelayMillis, type BackoffPolicy } from './retry.ts';
import { isUnreachableError, unreachableServerHint } from './server-hint.ts';

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
 * points are dropped. Refused credentials (HTTP 401, 403) are retried the same way, after
 * `refreshToken` (the file read again), and say `influx-auth` in /healthz
 * ({@link influxHealthReasons}). Any other 4xx (a malformed line, a missing database) drops the
 * batch; a partial write (InfluxDB 1.8 answers HTTP 400 `partial write: unable to parse '<line>': … dropped=<n>`
 * after storing the other lines) counts the lines it names as rejected and the rest as written.
 * A point that cannot be written unchanged (service/influx-line.ts `lineProtocolTextProblem`) is
 * never sent: it is dropped as 'unwritable'.
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
  /** InfluxDB refused the points for good (HTTP 4xx other than 401/403/408/429; of a partial write, the lines it names). */
  | 'rejected'
  /** The point cannot be written unchanged (a control character or a trailing backslash in a tag; service/influx-line.ts). */
  | 'unwritable'
  /** No finite numeric or string field was left (NaN and ±Infinity fields are left out). */
  | 'no-fields'
  /** Still buffered when `close` gave up, or written after `close`. */
  | 'closed';

/** Every {@link InfluxDropReason}, in the order stats list them. */
export const INFLUX_DROP_REASONS: readonly InfluxDropReason[] = ['overflow', 'rejected', 'unwritable', 'no-fields', 'closed'];

/** Settings of {@link createInfluxWriter}. */
export interface InfluxWriterOptions {
  readonly url: string;
  /** '' (none), an API token, or 'user:password' for InfluxDB 1.8; revealed only by service/influx-client.ts. */
  readonly token: Secret;
  /**
   * Reads the credentials again (e.g. WARPWATCH_INFLUX_TOKEN_FILE), called before the next
   * attempt after InfluxDB refused them (HTTP 401/403), so fixing the file heals a running
   * service without losing its buffer (docs/security.md). Absent: the token never changes.
   */
  readonly refreshToken?: (() => Secret) | undefined;
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
  /** The command-line flag that also sets `url` (`--influx-url`), named in the hint of a failure where nothing answers. */
  readonly urlFlag?: string | undefined;
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
  /** When points were last dropped as 'rejected' or 'unwritable' (ms since the Unix epoch; 0 = never). */
  readonly rejectedAtMillis: number;
  /** True while the last failed request was refused for its credentials (HTTP 401/403). */
  readonly authFailing: boolean;
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
  /**
   * What to try when nothing answered at the URL (service/server-hint.ts: `npm run stack -- up`
   * for the local stack's address, else the variable and flag that set it), also at the end of
   * the message; undefined when InfluxDB answered (an HTTP status) or the failure was another one.
   */
  readonly hint: string | undefined;

  constructor(message: string, details: { points: number; status: number | undefined; retriable: boolean; failingWrites: number; hint?: string | undefined; cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = 'InfluxWriteFailure';
    this.points = details.points;
    this.status = details.status;
    this.retriable = details.retriable;
    this.failingWrites = details.failingWrites;
    this.hint = details.hint;
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
   * and closes its connections. Idempotent; never rejects; returns the final stats (buffered 0).
   */
  close(timeoutMillis: number): Promise<InfluxWriterStats>;
}

/**
 * How long `/healthz` says `influx-rejected` after InfluxDB last refused points (ms): long
 * enough for a probe every few seconds to a minute to see it while a stream's every window is
 * refused.
 */
export const INFLUX_REJECTED_HEALTH_MILLIS = 5 * 60_000;

/**
 * The `/healthz` reasons an InfluxDB writer contributes: `influx-write` while its last write
 * requests failed (points wait in the buffer; `influx-auth` instead when the last one was refused
 * for its credentials, HTTP 401/403), `influx-rejected` while InfluxDB refuses points
 * (dropped as 'rejected' or 'unwritable' within the last {@link INFLUX_REJECTED_HEALTH_MILLIS}:
 * those points are lost), else none.
 *
 * @param nowMillis - the time to judge at (ms since the Unix epoch; default now)
 * @example influxHealthReasons({ failingWrites: 2 }) // ['influx-write']
 * @example influxHealthReasons({ failingWrites: 0, rejectedAtMillis: Date.now() }) // ['influx-rejected']
 */
export function influxHealthReasons(
  stats: (Pick<InfluxWriterStats, 'failingWrites'> & Partial<Pick<InfluxWriterStats, 'rejectedAtMillis' | 'authFailing'>>) | undefined,
  nowMillis: number = Date.now(),
): string[] {
  const reasons: string[] = [];
  if ((stats?.failingWrites ?? 0) > 0) reasons.push(stats?.authFailing === true ? 'influx-auth' : 'influx-write');
  const rejectedAt = stats?.rejectedAtMillis ?? 0;
  if (rejectedAt > 0 && nowMillis - rejectedAt < INFLUX_REJECTED_HEALTH_MILLIS) reasons.push('influx-rejected');
  return reasons;
}

/**
 * How many points of a batch of `points` an InfluxDB error refused, when it was a partial write
 * (InfluxDB 1.8: HTTP 400 `partial write: unable to parse '<line>': <why>\nunable to parse …
 * dropped=<n>`, one `unable to parse` per refused line, `dropped` for points refused after
 * parsing, e.g. outside the retention policy or of a conflicting field type); undefined for any
 * other error (the whole batch was refused).
 *
 * @example partialWriteRejections("partial write: unable to parse 'm,t=a\\ f=1 1': invalid tag format dropped=0", 100) // 1
 */
export function partialWriteRejections(errorText: string, points: number): number | undefined {
  if (!errorText.startsWith('partial write:')) return undefined;
  const unparsed = errorText.match(/(?:^partial write: |\n)unable to parse '/g)?.length ?? 0;
  const dropped = Number(/ dropped=(\d+)\s*$/.exec(errorText)?.[1] ?? 0);
  return Math.min(points, unparsed + dropped);
}

/** The `error` text of an InfluxDB error answer (`{"error": "…"}` on 1.x, `{"message": "…"}` on 2.x), or ''. */
function influxErrorText(error: InfluxHttpError): string {
  let json: unknown;
  try {
    json = JSON.parse(error.body) as unknown;
  } catch {
    return '';
  }
  if (typeof json !== 'object' || json === null) return '';
  const text = (json as { error?: unknown; message?: unknown }).error ?? (json as { message?: unknown }).message;
  return typeof text === 'string' ? text : '';
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
 *   { url: 'http://127.0.0.1:8086', token: new Secret(''), org: '-', bucket: 'warpwatch/autogen', batchSize: 5_000, flushIntervalMillis: 0,
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
  return new BufferedInfluxWriter(options, maxInFlight, hooks);
}

/** The writer of {@link createInfluxWriter}: the buffer, the scheduling of requests, their outcome, and close. */
class BufferedInfluxWriter implements InfluxWriter {
  readonly #o: InfluxWriterOptions;
  readonly #hooks: InfluxWriterHooks;
  /** The target in messages, credentials left out. */
  readonly #where: string;
  /** One transport (service/influx-client.ts) per concurrent request slot, each keeping its own connection alive. */
  readonly #idleTransports: InfluxWriteTransport[];
  /** Every transport created, with the credentials generation it was made with. */
  readonly #allTransports = new Map<InfluxWriteTransport, number>();
  #token: Secret;
  #tokenGeneration = 0;
  /** InfluxDB refused the credentials: read them again before the next request. */
  #tokenStale = false;
  #authFailing = false;
  readonly #busyLingerMillis: number;

  /** Queued lines in ascending sequence order (a retried batch is merged back in place). */
  readonly #queue: string[] = [];
  readonly #queueSequences: number[] = [];
  readonly #inFlight = new Set<Batch>();
  #inFlightLines = 0;
  #nextSequence = 0;
  #waiters: Waiter[] = [];
  /** Called whenever a request ends (close waits for the requests in flight through it). */
  #onRequestEnd: (() => void) | undefined;

  #pointsIn = 0;
  #pointsWritten = 0;
  readonly #dropped: Record<InfluxDropReason, number> = { overflow: 0, rejected: 0, unwritable: 0, 'no-fields': 0, closed: 0 };
  #rejectedAtMillis = 0;
  #batchesWritten = 0;
  #writeErrors = 0;
  #failingWrites = 0;
  /** No request starts before this (ms since epoch; the backoff after a failure). */
  #nextAttemptMillis = 0;
  /** When the oldest line now queued was queued (ms since epoch; meaningful while the queue is not empty). */
  #queuedSinceMillis = 0;
  #scheduled: NodeJS.Timeout | NodeJS.Immediate | undefined;

  /** No more scheduling (close called). */
  #closed = false;
  /** Close has given up: late answers of requests in flight are ignored (their points counted 'closed'). */
  #finished = false;
  #finalStats: Promise<InfluxWriterStats> | undefined;

  constructor(options: InfluxWriterOptions, maxInFlight: number, hooks: InfluxWriterHooks) {
    this.#o = options;
    this.#hooks = hooks;
    this.#where = `InfluxDB ${urlWithoutCredentials(options.url)} (bucket ${options.bucket})`;
    this.#token = options.token;
    this.#idleTransports = Array.from({ length: maxInFlight }, () => this.#createTransport());
    this.#busyLingerMillis = Math.max(options.flushIntervalMillis, BUSY_LINGER_MILLIS);
  }

  write(points: readonly InfluxPoint[]): void {
    this.#pointsIn += points.length;
    if (this.#closed) {
      this.#drop('closed', points.length);
      return;
    }
    const lines: string[] = [];
    let unwritable: InfluxLineError | undefined;
    for (const point of points) {
      let line: string | undefined;
      try {
        line = lineOf(point);
      } catch (error) {
        if (!(error instanceof InfluxLineError)) throw error;
        unwritable ??= error;
        this.#drop('unwritable', 1);
        continue;
      }
      if (line === undefined) this.#drop('no-fields', 1);
      else lines.push(line);
    }
    if (unwritable !== undefined) {
      // Reported once per call (the first such point), like a refused batch.
      const message = `a point for ${this.#where} was not written: ${unwritable.message}; dropped (counted as 'unwritable')`;
      this.#hooks.onError?.(new InfluxWriteFailure(message, { points: 1, status: undefined, retriable: false, failingWrites: this.#failingWrites, cause: unwritable }));
    }
    if (lines.length === 0) return;
    if (this.#queue.length === 0) this.#queuedSinceMillis = Date.now();
    for (const line of lines) {
      this.#queue.push(line);
      this.#queueSequences.push(this.#nextSequence);
      this.#nextSequence += 1;
    }
    this.#enforceBound();
    this.#settleWaiters();
    if (this.#queue.length >= this.#o.batchSize && this.#idleTransports.length > 0 && Date.now() >= this.#nextAttemptMillis) {
      this.#cancelSchedule();
      this.#pump(false);
    } else this.#schedule();
  }

  flush(): Promise<void> {
    if (Date.now() < this.#nextAttemptMillis && this.#queue.length > 0) {
      const message = `${this.#where} is backing off after a failed write; ${this.#buffered()} points buffered`;
      return Promise.reject(new InfluxWriteFailure(message, { points: 0, status: undefined, retriable: true, failingWrites: this.#failingWrites }));
    }
    return this.#waitForAll(true);
  }

  stats(): InfluxWriterStats {
    return {
      pointsIn: this.#pointsIn,
      pointsWritten: this.#pointsWritten,
      pointsDropped: INFLUX_DROP_REASONS.reduce((sum, reason) => sum + this.#dropped[reason], 0),
      dropped: { ...this.#dropped },
      buffered: this.#buffered(),
      batchesWritten: this.#batchesWritten,
      batchesInFlight: this.#inFlight.size,
      writeErrors: this.#writeErrors,
      failingWrites: this.#failingWrites,
      rejectedAtMillis: this.#rejectedAtMillis,
      authFailing: this.#failingWrites > 0 && this.#authFailing,
    };
  }

  close(timeoutMillis: number): Promise<InfluxWriterStats> {
    this.#finalStats ??= this.#closeOnce(timeoutMillis);
    return this.#finalStats;
  }

  #createTransport(): InfluxWriteTransport {
    const o = this.#o;
    const transport = createInfluxWriteTransport({ url: o.url, token: this.#token, org: o.org, bucket: o.bucket, requestTimeoutMillis: o.requestTimeoutMillis });
    this.#allTransports.set(transport, this.#tokenGeneration);
    return transport;
  }

  /** An idle transport with the current credentials (read again after a refusal; a stale one is replaced). */
  #takeTransport(): InfluxWriteTransport {
    if (this.#tokenStale && this.#o.refreshToken !== undefined) {
      this.#tokenStale = false;
      try {
        const token = this.#o.refreshToken();
        if (!token.equals(this.#token)) {
          this.#token = token;
          this.#tokenGeneration += 1;
        }
      } catch {
        // Unreadable right now (being replaced): keep the credentials, read again after the next refusal.
      }
    }
    const transport = this.#idleTransports.pop()!;
    if (this.#allTransports.get(transport) === this.#tokenGeneration) return transport;
    this.#allTransports.delete(transport);
    transport.dispose();
    return this.#createTransport();
  }

  #buffered(): number {
    return this.#queue.length + this.#inFlightLines;
  }

  #drop(reason: InfluxDropReason, count: number): void {
    if (count <= 0) return;
    this.#dropped[reason] += count;
    if (reason === 'rejected' || reason === 'unwritable') this.#rejectedAtMillis = Date.now();
    this.#hooks.onDrop?.(reason, count);
  }

  /** Smallest sequence not yet settled (written or dropped); nextSequence when none. */
  #lowestOutstanding(): number {
    let lowest = this.#queueSequences[0] ?? this.#nextSequence;
    for (const batch of this.#inFlight) lowest = Math.min(lowest, batch.sequences[0]!);
    return lowest;
  }

  #settleWaiters(): void {
    if (this.#waiters.length === 0) return;
    const lowest = this.#lowestOutstanding();
    const still: Waiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.target <= lowest) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }

  #rejectWaiters(failure: InfluxWriteFailure): void {
    const rejected = this.#waiters;
    this.#waiters = [];
    for (const waiter of rejected) waiter.reject(failure);
  }

  /** Drops the oldest queued lines beyond the bound (lines in flight are never dropped; the buffer may exceed its bound by those meanwhile). */
  #enforceBound(): void {
    const excess = this.#buffered() - this.#o.maxBufferPoints;
    if (excess <= 0) return;
    const count = Math.min(excess, this.#queue.length);
    this.#queue.splice(0, count);
    this.#queueSequences.splice(0, count);
    this.#drop('overflow', count);
  }

  #cancelSchedule(): void {
    if (this.#scheduled === undefined) return;
    clearTimeout(this.#scheduled as NodeJS.Timeout);
    clearImmediate(this.#scheduled as NodeJS.Immediate);
    this.#scheduled = undefined;
  }

  /** Milliseconds until queued lines may start a request (0 = now), ignoring free slots. */
  #delayUntilSend(now: number): number {
    if (now < this.#nextAttemptMillis) return this.#nextAttemptMillis - now;
    if (this.#queue.length >= this.#o.batchSize) return 0;
    const linger = this.#inFlight.size === 0 ? this.#o.flushIntervalMillis : this.#busyLingerMillis;
    return Math.max(0, this.#queuedSinceMillis + linger - now);
  }

  /** Arranges the next send: now-ish, after the linger time, or when the backoff ends. */
  #schedule(): void {
    if (this.#closed || this.#scheduled !== undefined || this.#queue.length === 0 || this.#idleTransports.length === 0) return;
    const delay = this.#delayUntilSend(Date.now());
    const fire = (): void => {
      this.#scheduled = undefined;
      this.#pump(false);
    };
    if (delay <= 0) {
      this.#scheduled = setImmediate(fire);
    } else {
      const timer = setTimeout(fire, delay);
      timer.unref();
      this.#scheduled = timer;
    }
  }

  /** Starts batches while there are lines and free request slots (`force`: now, even while backing off). */
  #pump(force: boolean): void {
    while (this.#queue.length > 0 && this.#idleTransports.length > 0) {
      if (!force && this.#delayUntilSend(Date.now()) > 0) break;
      const count = Math.min(this.#o.batchSize, this.#queue.length);
      const batch: Batch = { lines: this.#queue.splice(0, count), sequences: this.#queueSequences.splice(0, count) };
      const transport = this.#takeTransport();
      this.#inFlight.add(batch);
      this.#inFlightLines += count;
      void this.#send(transport, batch);
    }
    this.#schedule();
  }

  /** One request: books its outcome, then lets what waited for the slot go. */
  async #send(transport: InfluxWriteTransport, batch: Batch): Promise<void> {
    let failure: InfluxWriteFailure | undefined;
    try {
      await transport.write(batch.lines);
      if (!this.#finished) this.#succeeded(batch);
    } catch (error) {
      if (!this.#finished) failure = this.#failed(batch, error);
    }
    if (this.#finished) return;
    this.#inFlight.delete(batch);
    this.#inFlightLines -= batch.lines.length;
    this.#idleTransports.push(transport);
    if (failure !== undefined) {
      this.#enforceBound();
      this.#rejectWaiters(failure);
      this.#hooks.onError?.(failure);
    }
    this.#settleWaiters();
    this.#onRequestEnd?.();
    // A slot is free: what waited for it goes now (a flush or close in progress sends on regardless of linger).
    this.#cancelSchedule();
    if (!this.#closed || this.#waiters.length > 0) this.#pump(this.#waiters.length > 0);
  }

  /** Books a successful request. */
  #succeeded(batch: Batch): void {
    this.#pointsWritten += batch.lines.length;
    this.#batchesWritten += 1;
    const failedBefore = this.#failingWrites;
    this.#failingWrites = 0;
    this.#authFailing = false;
    this.#nextAttemptMillis = 0;
    if (failedBefore > 0) this.#hooks.onRecovered?.(failedBefore);
  }

  /** Books a failed request (still counted in flight): back into the buffer when retriable, else dropped; returns the failure to report. */
  #failed(batch: Batch, error: unknown): InfluxWriteFailure {
    this.#writeErrors += 1;
    this.#failingWrites += 1;
    const status = error instanceof InfluxHttpError ? error.statusCode : undefined;
    const refusedCredentials = status === 401 || status === 403;
    this.#authFailing = refusedCredentials;
    if (refusedCredentials) this.#tokenStale = true;
    const retriable = refusedCredentials || status === undefined || status === 408 || status === 429 || status >= 500;
    const rejected = error instanceof InfluxHttpError && status === 400 ? partialWriteRejections(influxErrorText(error), batch.lines.length) : undefined;
    if (retriable) {
      // Back into the buffer, in sequence order, for the next attempt.
      if (this.#queue.length === 0) this.#queuedSinceMillis = Date.now();
      const at = lowerBound(this.#queueSequences, batch.sequences[0]!);
      this.#queue.splice(at, 0, ...batch.lines);
      this.#queueSequences.splice(at, 0, ...batch.sequences);
      this.#nextAttemptMillis = Date.now() + backoffDelayMillis(this.#failingWrites, this.#o.retry);
    } else if (rejected !== undefined) {
      // A partial write: InfluxDB stored the lines it did not name.
      this.#pointsWritten += batch.lines.length - rejected;
      this.#drop('rejected', rejected);
    } else {
      this.#drop('rejected', batch.lines.length);
    }
    const retry = this.#o.retry;
    const outcome = retriable
      ? `; retrying in up to ${Math.round(retry.maxMillis * (1 + (retry.jitter ?? 0) / 2))} ms, ${this.#buffered() - batch.lines.length} points buffered`
      : rejected !== undefined
        ? `; ${rejected} of ${batch.lines.length} points dropped (InfluxDB refused them), the others written`
        : '; batch dropped (InfluxDB refused it)';
    const hint = refusedCredentials
      ? `InfluxDB refused the credentials: check WARPWATCH_INFLUX_TOKEN or the file WARPWATCH_INFLUX_TOKEN_FILE names ('user:password' on InfluxDB 1.8)${this.#o.refreshToken === undefined ? '' : '; the file is read again before each retry'}`
      : status === undefined && isUnreachableError(error)
        ? unreachableServerHint('influx', urlWithoutCredentials(this.#o.url), this.#o.urlFlag)
        : undefined;
    return new InfluxWriteFailure(
      `writing ${batch.lines.length} points to ${this.#where} failed${status === undefined ? '' : ` with HTTP ${status}`}: ${error instanceof Error ? error.message : String(error)}${outcome}${hint === undefined ? '' : `; ${hint}`}`,
      { points: batch.lines.length, status, retriable, failingWrites: this.#failingWrites, hint, cause: error },
    );
  }

  /** Resolves once every point queued so far is settled; rejects at the next failed request. */
  #waitForAll(force: boolean): Promise<void> {
    const target = this.#nextSequence;
    if (this.#lowestOutstanding() >= target) return Promise.resolve();
    const settled = new Promise<void>((resolve, reject) => this.#waiters.push({ target, resolve, reject }));
    this.#pump(force);
    return settled;
  }

  /** Resolves once no request is in flight. */
  #requestsEnded(): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = (): void => {
        if (this.#inFlight.size > 0) return;
        this.#onRequestEnd = undefined;
        resolve();
      };
      this.#onRequestEnd = check;
      check();
    });
  }

  async #closeOnce(timeoutMillis: number): Promise<InfluxWriterStats> {
    this.#closed = true;
    this.#cancelSchedule();
    let timeout: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timeout = setTimeout(resolve, Math.max(0, timeoutMillis));
    });
    // Everything buffered gets one forced attempt; after a failure, requests already in flight may still succeed.
    await Promise.race([this.#waitForAll(true).catch(() => this.#requestsEnded()), timedOut]);
    if (timeout !== undefined) clearTimeout(timeout);
    this.#finished = true;
    this.#onRequestEnd = undefined;
    this.#drop('closed', this.#buffered());
    this.#queue.length = 0;
    this.#queueSequences.length = 0;
    this.#inFlight.clear();
    this.#inFlightLines = 0;
    for (const transport of this.#allTransports.keys()) transport.dispose();
    return this.stats();
  }
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
