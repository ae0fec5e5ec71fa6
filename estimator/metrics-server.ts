import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { EstimatorError } from './errors.ts';

/** Body of /healthz: 'ok', 'starting' (restoring or not yet assigned) or 'stopping'. */
export interface EstimatorHealth {
  readonly status: 'ok' | 'degraded' | 'starting' | 'stopping';
  readonly [detail: string]: unknown;
}

/** A running /metrics + /healthz endpoint. */
export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves `/metrics` (the Prometheus exporter of metrics-export.ts, created with
 * preventServerStart) and `/healthz` (JSON; 503 while stopping) on host:port.
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_METRICS_PORT when the port cannot be bound.
 * @example
 * const server = await startMetricsServer({ host: '127.0.0.1', port: 9465, exporter: metricsExport.prometheus, health: () => ({ status: 'ok' }) });
 */
export async function startMetricsServer(options: { host: string; port: number; exporter: PrometheusExporter; health: () => EstimatorHealth }): Promise<MetricsServer> {
  const exporter = options.exporter;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = (request.url ?? '/').split('?')[0];
    if (url === '/metrics') {
      exporter.getMetricsRequestHandler(request, response);
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
      reject(
        new EstimatorError('WW_ERR_ESTIMATOR_METRICS_PORT', `cannot serve /metrics on ${options.host}:${options.port}: ${error.message}; choose another --metrics-port (or "off")`, {
          cause: error,
        }),
      ),
    );
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}
