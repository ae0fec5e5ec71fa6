import type { IncomingMessage, ServerResponse } from 'node:http';
import { startTelemetryServer, type TelemetryServer } from '../service/index.ts';
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
export type HealthServer = TelemetryServer;

/**
 * The collector's self-telemetry server: the shared service/telemetry-server.ts with the
 * collector's error code. `/metrics` (delegated to the Prometheus exporter, so the exporter
 * needs no server of its own) and `/healthz` (JSON; 200 while running, even when degraded,
 * since spooling through a broker outage is intended behaviour and a restart would not help;
 * 503 while stopping).
 *
 * @throws CollectorError WW_ERR_COLLECTOR_SOURCE_IO when the port cannot be bound.
 * @example const server = await startHealthServer({ host: '127.0.0.1', port: 9464, metricsHandler, health: () => collector.health() });
 */
export async function startHealthServer(options: HealthServerOptions): Promise<HealthServer> {
  return startTelemetryServer({
    ...options,
    bindError: (error) =>
      new CollectorError('WW_ERR_COLLECTOR_SOURCE_IO', `cannot serve /metrics on ${options.host}:${options.port}: ${error.message}; choose another --metrics-port`, { cause: error }),
  });
}
