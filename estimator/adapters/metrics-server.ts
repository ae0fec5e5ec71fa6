import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { startTelemetryServer, type TelemetryServer } from '../../service/index.ts';
import { EstimatorError } from '../errors.ts';

/** Body of /healthz: 'ok', 'starting' (restoring or not yet assigned) or 'stopping'. */
export interface EstimatorHealth {
  /** `failed`: the service cannot work (a Kafka client stopped for good) and is exiting; /healthz answers 503 then, as while stopping. */
  readonly status: 'ok' | 'degraded' | 'starting' | 'stopping' | 'failed';
  readonly [detail: string]: unknown;
}

/** A running /metrics + /healthz endpoint. */
export type MetricsServer = TelemetryServer;

/**
 * Serves `/metrics` (the Prometheus exporter of metrics-export.ts, created with
 * preventServerStart) and `/healthz` (JSON; 503 while stopping) on host:port, through the
 * shared service/telemetry-server.ts with the estimator's error code.
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_METRICS_PORT when the port cannot be bound.
 * @example
 * const server = await startMetricsServer({ host: '127.0.0.1', port: 9465, exporter: metricsExport.prometheus, health: () => ({ status: 'ok' }) });
 */
export async function startMetricsServer(options: { host: string; port: number; exporter: PrometheusExporter; health: () => EstimatorHealth }): Promise<MetricsServer> {
  const exporter = options.exporter;
  return startTelemetryServer({
    host: options.host,
    port: options.port,
    metricsHandler: (request, response) => exporter.getMetricsRequestHandler(request, response),
    health: options.health,
    bindError: (error) =>
      new EstimatorError('WW_ERR_ESTIMATOR_METRICS_PORT', `cannot serve /metrics on ${options.host}:${options.port}: ${error.message}; choose another --metrics-port (or "off")`, {
        cause: error,
      }),
  });
}
