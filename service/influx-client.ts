import { InfluxDB, type WriteApi } from '@influxdata/influxdb-client';
import type { Secret } from './secret.ts';

/** Settings of {@link createInfluxWriteApi}. */
export interface InfluxWriteApiOptions {
  readonly url: string;
  /**
   * '' (none), an API token, or 'user:password' for InfluxDB 1.8. Revealed only here, where it
   * becomes the client's `token` option (docs/security.md).
   */
  readonly token: Secret;
  /** '-' on InfluxDB 1.8. */
  readonly org: string;
  /** '<database>/<retention policy>' on InfluxDB 1.8. */
  readonly bucket: string;
  /** Longest wait for one write request, in milliseconds. */
  readonly requestTimeoutMillis: number;
  /** Most lines the caller puts into one request (the client's own buffer is sized from it). */
  readonly maxBatchLines: number;
}

/**
 * Creates the client's WriteApi (@influxdata/influxdb-client, v2 write API, millisecond
 * precision) under the policy both services' writers share: the caller owns buffering, batching
 * and retries, so the client neither batches on a timer, retries, nor keeps a retry buffer; a
 * failed request rejects the caller's `flush()` with the client's error (an `HttpError` carries
 * the status) and is never logged by the client. That is done through the per-API `writeFailed`
 * hook returning the rejection, so the client's process-wide logger (`setLogger`) is left alone.
 *
 * Use: `api.writeRecords(lines)` (at most `maxBatchLines`), then `await api.flush()`; `api.dispose()` when done.
 *
 * @example
 * const api = createInfluxWriteApi({ url: 'http://127.0.0.1:8086', token: new Secret(''), org: '-', bucket: 'warpwatch/autogen', requestTimeoutMillis: 10_000, maxBatchLines: 5_000 });
 * api.writeRecords(['warpwatch_window,stream=a/b loss_predicted=1.0 1700000000000']);
 * await api.flush();
 */
export function createInfluxWriteApi(options: InfluxWriteApiOptions): WriteApi {
  const client = new InfluxDB({ url: options.url, token: options.token.reveal(), timeout: options.requestTimeoutMillis });
  return client.getWriteApi(options.org, options.bucket, 'ms', {
    batchSize: options.maxBatchLines + 1,
    flushInterval: 0,
    maxRetries: 0,
    maxBufferLines: options.maxBatchLines + 1,
    // Returning the rejection settles the request here: the client neither logs nor retries it.
    writeFailed: (error: Error) => Promise.reject(error),
  });
}

/**
 * The HTTP headers that carry InfluxDB credentials on a request made without the client (the
 * 1.x `/query` endpoint): none for '' (an open server), `Basic` auth for 'user:password'
 * (InfluxDB 1.x), otherwise `Token <token>` (an InfluxDB 2.x API token). Besides
 * {@link createInfluxWriteApi}, the one place the token is revealed (docs/security.md).
 *
 * @example influxAuthHeaders(new Secret('')) // {}
 * @example influxAuthHeaders(new Secret('user:pass')) // { Authorization: 'Basic dXNlcjpwYXNz' }
 */
export function influxAuthHeaders(token: Secret): Record<string, string> {
  const value = token.reveal();
  if (value === '') return {};
  return { Authorization: value.includes(':') ? `Basic ${Buffer.from(value).toString('base64')}` : `Token ${value}` };
}
