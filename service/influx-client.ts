import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Secret } from './secret.ts';

/** Settings of {@link createInfluxWriteTransport}. */
export interface InfluxWriteTransportOptions {
  /** `http://` or `https://` base URL; a path (`http://host:8086/influx`) is kept in front of `/api/v2/write`. */
  readonly url: string;
  /**
   * '' (none), an API token, or 'user:password' for InfluxDB 1.8. Revealed only here, where it
   * becomes the `Authorization` header ({@link influxAuthHeaders}; docs/security.md).
   */
  readonly token: Secret;
  /** '-' on InfluxDB 1.8. */
  readonly org: string;
  /** '<database>/<retention policy>' on InfluxDB 1.8. */
  readonly bucket: string;
  /** Longest wait for one write request, from its start to the end of the answer, in milliseconds. */
  readonly requestTimeoutMillis: number;
}

/** One InfluxDB write endpoint; see {@link createInfluxWriteTransport}. */
export interface InfluxWriteTransport {
  /**
   * Sends the lines (line protocol, millisecond timestamps) in one request. Resolves when
   * InfluxDB answered 2xx; rejects with an {@link InfluxHttpError} for any other status, with
   * an {@link InfluxTimeoutError} after `requestTimeoutMillis`, or with Node's own error when
   * the connection failed (e.g. `ECONNREFUSED`, `ECONNRESET`). Never retries.
   */
  write(lines: readonly string[]): Promise<void>;
  /** Closes the kept-alive connections; a request still in flight fails. Later writes reject. */
  dispose(): void;
}

/** InfluxDB answered a write with a status other than 2xx. */
export class InfluxHttpError extends Error {
  /** The HTTP status, e.g. 400, 401, 503. */
  readonly statusCode: number;
  /**
   * The answer's body as text (InfluxDB 1.8: `{"error":"…"}`, 2.x: `{"code":"…","message":"…"}`;
   * the `X-Influxdb-Error` header when the body is empty). A body that is not JSON is cut at
   * {@link MAX_TEXT_ERROR_BODY_CHARS} characters.
   */
  readonly body: string;

  constructor(statusCode: number, statusMessage: string, body: string) {
    const shown = body.length > MAX_TEXT_ERROR_BODY_CHARS ? `${body.slice(0, MAX_TEXT_ERROR_BODY_CHARS)}…` : body;
    super(`${statusCode} ${statusMessage}${shown === '' ? '' : `: ${shown}`}`);
    this.name = 'InfluxHttpError';
    this.statusCode = statusCode;
    this.body = body;
  }
}

/** A write request had no complete answer within `requestTimeoutMillis` (its socket was destroyed). */
export class InfluxTimeoutError extends Error {
  constructor(timeoutMillis: number) {
    super(`no answer within ${timeoutMillis} ms (request timed out)`);
    this.name = 'InfluxTimeoutError';
  }
}

/** Longest body of a non-JSON error answer kept, in characters (a JSON body is kept whole, to be parsed). */
export const MAX_TEXT_ERROR_BODY_CHARS = 1_000;

/**
 * Idle kept-alive connections close after this long (ms), as Node's global agent does: a
 * server that closes idle connections sooner could otherwise reset the next request.
 */
const IDLE_SOCKET_MILLIS = 5_000;

/**
 * The one HTTP client of InfluxDB's write endpoint for both services (docs/architecture.md):
 * `POST <url>/api/v2/write?org=<org>&bucket=<bucket>&precision=ms` with the lines joined by
 * '\n' as the body (`Content-Type: text/plain; charset=utf-8`, not compressed), the
 * credentials of {@link influxAuthHeaders}, over node:http or node:https (default CAs) through
 * its own keep-alive agent, so consecutive requests reuse one connection. It is what
 * @influxdata/influxdb-client's WriteApi sent, without its per-line buffer, its gzip of every
 * body over 1,000 bytes (zlib on the event loop's callbacks: docs/estimator.md, performance) and
 * its retries: the caller (service/influx-writer.ts) owns buffering, batching and retries. Nothing
 * is logged here.
 *
 * @throws Error when the URL is not a valid `http:` or `https:` URL.
 * @example
 * const transport = createInfluxWriteTransport({ url: 'http://127.0.0.1:8086', token: new Secret(''), org: '-', bucket: 'warpwatch/autogen', requestTimeoutMillis: 10_000 });
 * await transport.write(['warpwatch_window,stream=a/b loss_predicted=1.0 1700000000000']);
 * transport.dispose();
 */
export function createInfluxWriteTransport(options: InfluxWriteTransportOptions): InfluxWriteTransport {
  let parsed: URL;
  try {
    parsed = new URL(options.url);
  } catch {
    throw new Error(`InfluxDB URL is not a valid URL: ${JSON.stringify(options.url)}`);
  }
  const secure = parsed.protocol === 'https:';
  if (!secure && parsed.protocol !== 'http:') throw new Error(`Unsupported protocol "${parsed.protocol}" in InfluxDB URL ${parsed.origin}`);
  // A base path is kept (without its trailing '/'), as the client did.
  const basePath = parsed.pathname.replace(/\/+$/, '');
  const path = `${basePath}/api/v2/write?org=${encodeURIComponent(options.org)}&bucket=${encodeURIComponent(options.bucket)}&precision=ms`;
  const agentOptions = { keepAlive: true, scheduling: 'lifo' as const, timeout: IDLE_SOCKET_MILLIS };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const send = secure ? httpsRequest : httpRequest;
  const baseHeaders: Record<string, string> = {
    'Content-Type': 'text/plain; charset=utf-8',
    'User-Agent': 'warpwatch',
    ...influxAuthHeaders(options.token),
  };
  const requestOptions = (length: number): RequestOptions => ({
    method: 'POST',
    protocol: parsed.protocol,
    // `URL` keeps an IPv6 address in brackets; http.request wants it bare.
    hostname: parsed.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: parsed.port === '' ? undefined : Number(parsed.port),
    path,
    agent,
    headers: { ...baseHeaders, 'Content-Length': length },
  });
  const timeoutMillis = options.requestTimeoutMillis;
  let disposed = false;

  return {
    write(lines: readonly string[]): Promise<void> {
      if (disposed) return Promise.reject(new Error('InfluxDB write transport is disposed'));
      const body = Buffer.from(lines.join('\n'), 'utf8');
      return new Promise<void>((resolve, reject) => {
        let settled = false;
        const settle = (error: Error | undefined): void => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (error === undefined) resolve();
          else reject(error);
        };
        const request = send(requestOptions(body.length), (response: IncomingMessage) => {
          const status = response.statusCode ?? 0;
          response.on('error', settle);
          response.on('close', () => {
            if (!response.complete) settle(new Error('InfluxDB closed the connection during its answer'));
          });
          if (status >= 200 && status < 300) {
            // Read to the end so the connection goes back to the agent for the next request.
            response.on('end', () => settle(undefined));
            response.resume();
            return;
          }
          const chunks: Buffer[] = [];
          const json = String(response.headers['content-type'] ?? '').startsWith('application/json');
          let length = 0;
          response.on('data', (chunk: Buffer) => {
            // A text answer is kept to its start only; the rest is still read (for keep-alive).
            if (json || length < MAX_TEXT_ERROR_BODY_CHARS * 4) chunks.push(chunk);
            length += chunk.length;
          });
          response.on('end', () => {
            let text = Buffer.concat(chunks).toString('utf8');
            if (!json && text.length > MAX_TEXT_ERROR_BODY_CHARS) text = text.slice(0, MAX_TEXT_ERROR_BODY_CHARS);
            const header = response.headers['x-influxdb-error'];
            if (text === '' && header !== undefined) text = String(header);
            settle(new InfluxHttpError(status, response.statusMessage ?? '', text));
          });
        });
        const timer = setTimeout(() => {
          const error = new InfluxTimeoutError(timeoutMillis);
          request.destroy(error);
          settle(error);
        }, timeoutMillis);
        request.on('error', settle);
        request.end(body);
      });
    },
    dispose(): void {
      disposed = true;
      agent.destroy();
    },
  };
}

/**
 * The HTTP headers that carry InfluxDB credentials: none for '' (an open server), `Basic` auth
 * for 'user:password' (InfluxDB 1.x), otherwise `Token <token>` (an InfluxDB 2.x API token).
 * Used by {@link createInfluxWriteTransport} and the estimator's database check (the 1.x
 * `/query` endpoint); the one place the token is revealed (docs/security.md).
 *
 * @example influxAuthHeaders(new Secret('')) // {}
 * @example influxAuthHeaders(new Secret('user:pass')) // { Authorization: 'Basic dXNlcjpwYXNz' }
 */
export function influxAuthHeaders(token: Secret): Record<string, string> {
  const value = token.reveal();
  if (value === '') return {};
  return { Authorization: value.includes(':') ? `Basic ${Buffer.from(value).toString('base64')}` : `Token ${value}` };
}
