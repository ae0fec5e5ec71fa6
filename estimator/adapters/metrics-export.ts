import type { Meter } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { Resource } from '@opentelemetry/resources';
import { SERVICE_NAMES } from '../../contracts/index.ts';
import { serviceResource } from '../../service/index.ts';
import { AggregationTemporality, MeterProvider, PeriodicExportingMetricReader, type MetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { EstimatorError } from '../errors.ts';
import { createResultMetrics, type ResultMetrics } from './result-metrics.ts';

/**
 * Where the estimator's OpenTelemetry metrics go: one MeterProvider with the service's
 * resource (service.name = warpwatch-estimator, service.instance.id, host.name), read by a
 * Prometheus exporter (served on /metrics by metrics-server.ts) and, when an OTLP endpoint is
 * configured, by a periodic OTLP/HTTP (protobuf) push. Both readers see the same
 * instruments: the self-telemetry (estimator-telemetry.ts) and the per-stream results
 * (result-metrics.ts). Push failures never stop the estimator: they are counted and logged.
 */

/** The service name every exported metric carries (resource attribute service.name). */
export const ESTIMATOR_SERVICE_NAME = SERVICE_NAMES.estimator;

/** OTLP push settings. */
export interface OtlpPushOptions {
  /** Full URL of the OTLP/HTTP metrics endpoint, e.g. http://collector:4318/v1/metrics. */
  readonly url: string;
  /** Push period (ms). */
  readonly intervalMillis: number;
  /** Extra request headers (e.g. authorization); OTEL_EXPORTER_OTLP_HEADERS is read as well. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of {@link createMetricsExport}. */
export interface MetricsExportOptions {
  /** service.instance.id (the estimator's --instance). */
  readonly instanceId: string;
  /** Version reported as service.version. */
  readonly serviceVersion?: string;
  /** Create the Prometheus reader (the /metrics endpoint is enabled). */
  readonly prometheus: boolean;
  /** OTLP push, or undefined for none. */
  readonly otlp: OtlpPushOptions | undefined;
  /** Cap and TTL of the per-stream export table (result-metrics.ts). */
  readonly maxMetricStreams: number;
  readonly streamTtlMillis: number;
  /** Collector labels exported as attributes (pod → k8s.pod.name, …; result-metrics.ts). */
  readonly labelAttributes?: readonly string[] | undefined;
  /** One message per OTLP push failure streak (first failure, then every 10th) and per recovery, without prefix: the service's logger adds it (estimator-log.ts). */
  readonly log: (message: string) => void;
}

/** Counts of the OTLP push. */
export interface OtlpPushStats {
  readonly exports: number;
  readonly failures: number;
}

/** The export setup of one estimator. */
export interface MetricsExport {
  readonly meter: Meter;
  readonly resource: Resource;
  /** The Prometheus exporter for /metrics, when enabled. */
  readonly prometheus: PrometheusExporter | undefined;
  readonly results: ResultMetrics;
  otlpStats(): OtlpPushStats | undefined;
  /** Pushes once more (OTLP) and shuts the readers down; never throws. */
  shutdown(): Promise<void>;
}

/**
 * The resource of the estimator's telemetry: the SDK defaults (telemetry.sdk.*) with
 * service.name warpwatch-estimator, service.instance.id and host.name.
 *
 * @example estimatorResource('est-1').attributes['service.name']; // 'warpwatch-estimator'
 */
export function estimatorResource(instanceId: string, serviceVersion?: string): Resource {
  return serviceResource({ serviceName: ESTIMATOR_SERVICE_NAME, instanceId, serviceVersion });
}

/** Wraps an exporter so that every result is counted and failure streaks are logged once. */
function countingExporter(inner: PushMetricExporter, url: string, log: (line: string) => void, stats: { exports: number; failures: number }): PushMetricExporter {
  let streak = 0;
  return {
    export(metrics, resultCallback) {
      inner.export(metrics, (result) => {
        stats.exports += 1;
        if (result.code === 0) {
          if (streak > 0) log(`OTLP push to ${url} works again after ${streak} failed pushes`);
          streak = 0;
        } else {
          stats.failures += 1;
          streak += 1;
          if (streak === 1 || streak % 10 === 0) {
            const error = new EstimatorError('WW_ERR_ESTIMATOR_OTLP_EXPORT', `OTLP push to ${url} failed (${streak} in a row): ${result.error?.message ?? 'unknown error'}`, {
              retriable: true,
              cause: result.error,
            });
            log(`${error.code}: ${error.message}`);
          }
        }
        resultCallback(result);
      });
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
    selectAggregationTemporality: () => AggregationTemporality.CUMULATIVE,
  };
}

/**
 * Sets up the MeterProvider, its readers and the per-stream result table.
 *
 * @throws RangeError for an invalid cap or TTL (the config validates them first).
 * @example
 * const exp = createMetricsExport({ instanceId: 'est-1', prometheus: true, otlp: undefined, maxMetricStreams: 1000, streamTtlMillis: 3_600_000, log: console.error });
 * exp.results.recordWindow(result); // then scrape /metrics
 */
export function createMetricsExport(options: MetricsExportOptions): MetricsExport {
  const resource = estimatorResource(options.instanceId, options.serviceVersion);
  const results = createResultMetrics({ maxMetricStreams: options.maxMetricStreams, streamTtlMillis: options.streamTtlMillis, labelAttributes: options.labelAttributes });
  const readers: MetricReader[] = [];
  let prometheus: PrometheusExporter | undefined;
  if (options.prometheus) {
    prometheus = new PrometheusExporter({ preventServerStart: true, metricProducers: [results.producer] });
    readers.push(prometheus);
  }
  let otlpStats: { exports: number; failures: number } | undefined;
  if (options.otlp !== undefined) {
    otlpStats = { exports: 0, failures: 0 };
    const exporter = new OTLPMetricExporter({
      url: options.otlp.url,
      headers: { ...options.otlp.headers },
      timeoutMillis: Math.min(10_000, options.otlp.intervalMillis),
      temporalityPreference: AggregationTemporality.CUMULATIVE,
    });
    readers.push(
      new PeriodicExportingMetricReader({
        exporter: countingExporter(exporter, options.otlp.url, options.log, otlpStats),
        exportIntervalMillis: options.otlp.intervalMillis,
        exportTimeoutMillis: Math.min(10_000, options.otlp.intervalMillis),
        metricProducers: [results.producer],
      }),
    );
  }
  const provider = new MeterProvider({ resource, readers });
  const meter = provider.getMeter('warpwatch-estimator');
  if (otlpStats !== undefined) {
    const stats = otlpStats;
    meter.createObservableCounter('warpwatch.estimator.otlp.pushes', { description: 'OTLP pushes of the metrics, successful or not', unit: '{push}' }).addCallback((r) => r.observe(stats.exports));
    meter.createObservableCounter('warpwatch.estimator.otlp.push.failures', { description: 'OTLP pushes that failed (WW_ERR_ESTIMATOR_OTLP_EXPORT)', unit: '{push}' }).addCallback((r) => r.observe(stats.failures));
  }
  return {
    meter,
    resource,
    prometheus,
    results,
    otlpStats: () => (otlpStats === undefined ? undefined : { ...otlpStats }),
    async shutdown() {
      await provider.shutdown().catch(() => undefined);
    },
  };
}
