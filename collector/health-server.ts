import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CollectorError } from './errors.ts';

/** Body of /healthz. `status` is 'ok', 'degraded' (broker unreachable, spooling) or 'stopping'. */
export interface HealthReport {
  readonly status: 'ok' | 'degraded' | 'stopping';
  readonly [detail: string]: unknown;
}

/** Settings of {@link startHealthServer}. */
export interface HealthServerOptions {
  readonly host: string;
  /** 0 = any free port (read the chosen one from the result). */
  readonly port: number;
  /** Serves GET /metrics (the Prometheus exporter's request handler). */
  readonly metricsHandler: (request: IncomingMessage, response: ServerResponse) => void;
  /** Builds the /healthz body. */
  readonly health: () => HealthReport;
}

/** A running /metrics + /healthz server. */
export interface HealthServer {
  /** The port actually bound. */
  readonly port: number;
  close(): Promise<void>;
}

/**
 * One small HTTP server for the collector's self-telemetry: `/metrics` (delegated to the
 * Prometheus exporter, so the exporter needs no server of its own) and `/healthz` (JSON;
 * 200 while running, even when degraded, since spooling through a broker outage is
 * intended behaviour and a restart would not help; 503 while stopping).
 *
 * @throws CollectorError WW_ERR_COLLECTOR_SOURCE_IO when the port cannot be bound.
 * @example const server = await startHealthServer({ host: '127.0.0.1', port: 9464, metricsHandler, health: () => collector.health() });
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((request, response) => {
    const url = (request.url ?? '/').split('?')[0];
    if (url === '/metrics') {
      options.metricsHandler(request, response);
      return;
    }
    if (url === '/healthz') {
      const report = options.health();
      response.writeHead(report.status === 'stopping' ? 503 : 200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(report));
      return;
    }
    response.writeHead(404, { 'content-type': 'text/plain' });
    response.end('not found: use /metrics or /healthz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) =>
      reject(new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot serve /metrics on ${options.host}:${options.port}: ${error.message}; choose another --metrics-port`, { cause: error })),
    );
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
