import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Body of /healthz. `status` is the service's state ('ok', 'degraded', 'starting', 'stopping'
 * and whatever else a service reports); the other fields are service-specific details.
 */
export interface TelemetryHealth {
  readonly status: string;
  readonly [detail: string]: unknown;
}

/** Settings of {@link startTelemetryServer}. */
export interface TelemetryServerOptions {
  readonly host: string;
  /** 0 = any free port (read the chosen one from the result). */
  readonly port: number;
  /** Serves GET /metrics (typically the Prometheus exporter's request handler, so the exporter needs no server of its own). */
  readonly metricsHandler: (request: IncomingMessage, response: ServerResponse) => void;
  /** Builds the /healthz body; called once per request. */
  readonly health: () => TelemetryHealth;
  /**
   * Turns a bind failure (port in use, bad host) into the service's own error, so the
   * caller's `WW_ERR_*` code and advice reach the user. Default: the raw error.
   */
  readonly bindError?: (cause: Error) => Error;
}

/** A running /metrics + /healthz server. */
export interface TelemetryServer {
  /** The port actually bound. */
  readonly port: number;
  /** Drops open connections and stops listening; resolves once closed. */
  close(): Promise<void>;
}

/**
 * The one small HTTP server for a service's self-telemetry, shared by collector and estimator:
 * `/metrics` (delegated to `metricsHandler`), `/healthz` (JSON; 200 while running, even when
 * degraded or starting, since a restart would not help; 503 while stopping or failed: a service
 * that cannot work and is about to exit), anything else 404.
 * A query string is ignored when matching the path.
 *
 * @throws whatever `bindError` returns (default the socket error) when host:port cannot be bound.
 * @example
 * const server = await startTelemetryServer({ host: '127.0.0.1', port: 0, metricsHandler: (q, s) => exporter.getMetricsRequestHandler(q, s), health: () => ({ status: 'ok' }) });
 * await server.close();
 */
export async function startTelemetryServer(options: TelemetryServerOptions): Promise<TelemetryServer> {
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = (request.url ?? '/').split('?')[0];
    if (url === '/metrics') {
      options.metricsHandler(request, response);
      return;
    }
    if (url === '/healthz') {
      const report = options.health();
      response.writeHead(report.status === 'stopping' || report.status === 'failed' ? 503 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(report));
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found: use /metrics or /healthz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(options.bindError ? options.bindError(error) : error));
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
