import { ESTIMATOR_FIELDS } from '../../contracts/index.ts';
import { createInfluxWriter, encodeLineProtocol, influxAuthHeaders, InfluxWriteFailure, readSecretFile, type InfluxWriter, type Secret } from '../../service/index.ts';
import type { SeriesPoint } from '../engine/series-points.ts';
import { EstimatorError } from '../errors.ts';

/**
 * The estimator's InfluxDB adapter: the shared writer of service/influx-writer.ts (bounded
 * buffer, batching, concurrent requests, retries with backoff, drops counted by reason) set up
 * from the estimator's `influx` config, with failures as EstimatorError
 * WW_ERR_ESTIMATOR_INFLUX_WRITE; and the database check that runs before the writer starts.
 * On InfluxDB 1.8 the v2 compatibility endpoint takes org '-', bucket
 * '<database>/<retention policy>' and token '' or 'user:password'.
 */

/** Settings of {@link createEstimatorInfluxWriter} (the influx slice of EstimatorConfig). */
export interface EstimatorInfluxOptions {
  readonly url: string;
  readonly database: string;
  readonly retentionPolicy: string;
  /** '' (none), an API token, or 'user:password'; revealed only by service/influx-client.ts (docs/security.md). */
  readonly token: Secret;
  /** Read again after InfluxDB refuses the token (WARPWATCH_INFLUX_TOKEN_FILE); undefined: the token never changes. */
  readonly tokenFile?: string | undefined;
  readonly org: string;
  /** Points (lines) per write request, at most. */
  readonly batchSize: number;
  /** Longest time a queued point waits before its batch is sent (ms); 0 = as soon as the event loop is free. */
  readonly flushIntervalMillis: number;
  /** Bound of the buffer in points (queued + in flight); overflow drops the oldest queued points and counts them. */
  readonly maxBufferLines: number;
  /** First pause after a failed write (ms); doubles per failure up to maxRetryDelayMillis, ±25 % jitter. */
  readonly minRetryDelayMillis: number;
  readonly maxRetryDelayMillis: number;
  readonly requestTimeoutMillis: number;
  /** Write requests in flight at a time, 1..64 (default 3, service/influx-writer.ts). */
  readonly maxInFlightBatches?: number | undefined;
}

/**
 * The writer's failure as the estimator reports it (log, sink-error metric, a rejected flush).
 *
 * @example estimatorInfluxError(failure).code // 'WW_ERR_ESTIMATOR_INFLUX_WRITE'
 */
export function estimatorInfluxError(failure: unknown): EstimatorError {
  if (failure instanceof EstimatorError) return failure;
  const retriable = failure instanceof InfluxWriteFailure ? failure.retriable : true;
  return new EstimatorError('WW_ERR_ESTIMATOR_INFLUX_WRITE', failure instanceof Error ? failure.message : String(failure), { retriable, cause: failure });
}

/**
 * Creates the estimator's writer (nothing is sent until points are written). `flush` rejects
 * with an EstimatorError (WW_ERR_ESTIMATOR_INFLUX_WRITE, `retriable` false when InfluxDB refused
 * the batch for good); `close` returns the final stats, points it could not write counted in
 * `dropped.closed`.
 *
 * @param onError called once per failed write request (for logs and the sink-error metric).
 * @param onRecovered called when a write succeeds after failed ones (ends an outage the caller logged once).
 * @throws RangeError when maxInFlightBatches is not an integer 1..64.
 * @example
 * const writer = createEstimatorInfluxWriter(config.influx, (error) => log(error.message));
 * writer.write(points);
 */
export function createEstimatorInfluxWriter(options: EstimatorInfluxOptions, onError: (error: EstimatorError) => void, onRecovered: () => void = () => {}): InfluxWriter {
  const writer = createInfluxWriter(
    {
      url: options.url,
      token: options.token,
      refreshToken: options.tokenFile === undefined ? undefined : () => readSecretFile(options.tokenFile as string),
      org: options.org,
      bucket: `${options.database}/${options.retentionPolicy}`,
      batchSize: options.batchSize,
      flushIntervalMillis: options.flushIntervalMillis,
      maxBufferPoints: options.maxBufferLines,
      maxInFlightBatches: options.maxInFlightBatches,
      retry: { initialMillis: options.minRetryDelayMillis, maxMillis: options.maxRetryDelayMillis, jitter: 0.5 },
      requestTimeoutMillis: options.requestTimeoutMillis,
      urlFlag: ESTIMATOR_FIELDS.influxUrl.flag,
    },
    { onError: (failure) => onError(estimatorInfluxError(failure)), onRecovered: () => onRecovered() },
  );
  return {
    write: (points) => writer.write(points),
    flush: () =>
      writer.flush().catch((failure: unknown) => {
        throw estimatorInfluxError(failure);
      }),
    stats: () => writer.stats(),
    close: (timeoutMillis) => writer.close(timeoutMillis),
  };
}

/** What {@link ensureInfluxDatabase} found. */
export type InfluxDatabaseCheck = 'exists' | 'created' | 'unreachable' | 'unauthorized';

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
 * @returns 'exists', 'created', 'unreachable', or 'unauthorized' (HTTP 401: wrong credentials; the writer buffers and retries)
 * @throws EstimatorError WW_ERR_ESTIMATOR_INFLUX_DATABASE when the database is missing and
 *   cannot be created (not permitted, or InfluxDB 2.x without a mapping), or InfluxDB refuses
 *   the check itself (authentication)
 * @example await ensureInfluxDatabase(config.influx) // 'created' on a fresh InfluxDB
 */
export async function ensureInfluxDatabase(
  options: Pick<EstimatorInfluxOptions, 'url' | 'database' | 'token' | 'requestTimeoutMillis'> & { readonly retentionPolicy?: string; readonly retentionDuration?: string },
  fetchImpl: typeof fetch = fetch,
): Promise<InfluxDatabaseCheck> {
  const headers = influxAuthHeaders(options.token);
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
  // Wrong credentials are not fatal: the writer keeps the points and reads the token file again (docs/security.md).
  if (shown.status === 401) return 'unauthorized';
  if (shown.status === 403) throw refuse(`cannot be checked: HTTP ${shown.status} ${shown.body.trim().slice(0, 200)}`);
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

/**
 * InfluxDB line protocol of a point: the one encoding both services write (service/influx-line.ts).
 * The engine hands points as objects; only this adapter turns them into text.
 *
 * @param point a window, alert or pipeline point of estimator/engine/series-points.ts.
 * @returns one line, without a trailing newline.
 * @throws Error from service/influx-line.ts when a name or value cannot be written unchanged.
 * @example toLineProtocol({ measurement: 'm', tags: { a: 'x' }, fields: { f: 1 }, timestampMillis: 0 }) // 'm,a=x f=1 0' (format per service/influx-line.ts)
 */
export const toLineProtocol: (point: SeriesPoint) => string = encodeLineProtocol;
