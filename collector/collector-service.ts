import type { Readable } from 'node:stream';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { SERVICE_NAMES } from '../contracts/index.ts';
import { createServiceLogger, serviceResource, type InfluxWriter, type LogLineSink, type ServiceLogger } from '../service/index.ts';
import { describeTotals } from './collector-metrics.ts';
import { startCollector, type RunningCollector } from './collector.ts';
import { describeCollectorConfig, type CollectorConfig } from './config.ts';
import { CollectorError } from './errors.ts';
import { startHealthServer, type HealthReport, type HealthServer } from './health-server.ts';
import { createInfluxMetricsWriter } from './influx-metrics-writer.ts';
import { createKafkaProducer } from './kafka-producer.ts';

/**
 * The collector process (`warpwatch collect`), as estimator-service.ts is the estimator's: the
 * OpenTelemetry SDK (Prometheus exporter, resource), the Kafka producer, the optional InfluxDB
 * writer of its own counters, the collector itself and the `/metrics` + `/healthz` server,
 * started together and stopped in order. The entry point (cli/commands/collect.ts) only reads
 * the configuration, waits for a stop signal or the end of the inputs, and maps errors to exit
 * codes.
 */

/** The prefix of every line the collector says (docs/collector.md). */
export const COLLECTOR_LOG_PREFIX = 'warpwatch collect';

/** A running collector service; see {@link startCollectorService}. */
export interface RunningCollectorService {
  /** Port of /metrics and /healthz, when enabled. */
  readonly metricsPort: number | undefined;
  /** True when a socket is served: the service then runs until {@link RunningCollectorService.stop}. */
  readonly servesSocket: boolean;
  /**
   * Resolves when the service has nothing left to read and should be stopped: stdin and every
   * replay file read to the end (never, while a socket is served), or reading an input failed
   * (then {@link RunningCollectorService.stop} rejects with that failure). Never rejects.
   */
  readonly finished: Promise<void>;
  /** The /healthz body. */
  health(): HealthReport;
  /**
   * Stops accepting, flushes to Kafka within WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS (the rest stays
   * spooled), closes the producer, the telemetry server and the SDK, and says the totals in one
   * line (`stopped on <signal>: …` when `signal` is given). Idempotent.
   *
   * @param signal the signal that stopped the service, or undefined when its inputs ended.
   * @throws Error `reading input failed: …` when an input could not be read; CollectorError
   *   WW_ERR_COLLECTOR_UNDELIVERED (retriable) when it stopped because its inputs ended (no
   *   `signal`) and records did not reach Kafka (left in the spool, or dropped).
   */
  stop(signal?: string): Promise<void>;
}

/** Settings of {@link startCollectorService} besides the configuration. */
export interface CollectorServiceOptions {
  /** Standard input, read when `config.sources.stdin` (process.stdin from the CLI); destroyed by stop(). */
  readonly stdin?: Readable | undefined;
}

/**
 * Starts the collector service and returns once it accepts frames: a Prometheus exporter and
 * meter provider named by the service's resource (target_info: service_name
 * warpwatch-collector, its instance and host), the Kafka producer (kafka-producer.ts), the
 * InfluxDB writer of its counters when `config.influx` is set, the collector (collector.ts),
 * the topics check (a topic that cannot take the frames is said at once, WW_ERR_KAFKA_TOPIC_CONFIG)
 * and the `/metrics` + `/healthz` server; then it says `started: <config>` once.
 *
 * @param log where its lines go, one at a time without newline (the CLI adds a timestamp and
 *   writes them to stderr); each is `warpwatch collect <level>: <message>`, without secrets.
 * @throws SpoolError (spool locked or unwritable), CollectorError (socket in use, metrics port
 *   not bindable); what was started is stopped first.
 * @example
 * const service = await startCollectorService(loadCollectorConfig({ env: process.env }), (line) => process.stderr.write(line + '\n'));
 * await service.finished;
 * await service.stop();
 */
export async function startCollectorService(config: CollectorConfig, log: LogLineSink, options: CollectorServiceOptions = {}): Promise<RunningCollectorService> {
  const logger = createServiceLogger({ prefix: COLLECTOR_LOG_PREFIX, showLevel: true, write: log });
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [exporter], resource: serviceResource({ serviceName: SERVICE_NAMES.collector, instanceId: config.instance, hostName: config.hostName }) });
  const kafka = createKafkaProducer(config.kafka, logger.log);
  const metricsWriter = config.influx === undefined ? undefined : createInfluxMetricsWriter(config.influx, logger.log);
  let collector: RunningCollector;
  try {
    collector = await startCollector({
      config,
      produce: kafka.send,
      meter: meterProvider.getMeter('warpwatch-collector'),
      log: logger.log,
      stdin: config.sources.stdin ? options.stdin : undefined,
      metricsWriter,
      topicProblems: () => kafka.topicProblems(),
    });
  } catch (error) {
    await kafka.close();
    await meterProvider.shutdown();
    throw error;
  }
  // Create or check the topics at once, so a topic that cannot take the frames is said at start
  // (WW_ERR_KAFKA_TOPIC_CONFIG). A broker that does not answer yet is said by the delivery
  // pipeline; the first send checks again.
  void kafka.ensureTopics().catch(() => {});

  let healthServer: HealthServer | undefined;
  try {
    if (config.metricsPort !== undefined) {
      healthServer = await startHealthServer({
        host: config.metricsHost,
        port: config.metricsPort,
        metricsHandler: (request, response) => exporter.getMetricsRequestHandler(request, response),
        health: () => collector.health(),
      });
    }
  } catch (error) {
    await collector.stop();
    await kafka.close();
    await meterProvider.shutdown();
    throw error;
  }
  const metricsText = healthServer === undefined ? 'metrics off' : `metrics http://${config.metricsHost}:${healthServer.port}/metrics and /healthz`;
  logger.info(`started: ${describeCollectorConfig(config)} ${metricsText}`);

  let inputError: unknown;
  const inputs = collector.inputsDone.then(
    () => undefined,
    (error: unknown) => {
      inputError = error;
    },
  );
  // Serving a socket: run until stopped (or an input failure); otherwise until the inputs end.
  const finished = collector.servesSocket ? inputs.then(() => (inputError === undefined ? new Promise<void>(() => {}) : undefined)) : inputs;
  let stopping: Promise<void> | undefined;
  return {
    metricsPort: healthServer?.port,
    servesSocket: collector.servesSocket,
    finished,
    health: () => collector.health(),
    stop(signal) {
      stopping ??= stopService({ config, logger, collector, kafka, healthServer, meterProvider, metricsWriter, inputError: () => inputError, stdin: options.stdin }, signal);
      return stopping;
    },
  };
}

/** What {@link startCollectorService} started, in the order stop() closes it. */
interface ServiceParts {
  readonly config: CollectorConfig;
  readonly logger: ServiceLogger;
  readonly collector: RunningCollector;
  readonly kafka: { close(): Promise<void> };
  readonly healthServer: HealthServer | undefined;
  readonly meterProvider: MeterProvider;
  readonly metricsWriter: InfluxWriter | undefined;
  readonly inputError: () => unknown;
  readonly stdin: Readable | undefined;
}

/** The stop sequence of {@link RunningCollectorService.stop}. */
async function stopService(parts: ServiceParts, signal: string | undefined): Promise<void> {
  const { config, logger, collector } = parts;
  if (config.sources.stdin) parts.stdin?.destroy();
  const result = await collector.stop();
  await parts.kafka.close();
  await parts.healthServer?.close();
  await parts.meterProvider.shutdown();
  const totals = collector.metrics.totals();
  const influx = parts.metricsWriter?.stats();
  logger.info(
    `stopped${signal === undefined ? '' : ` on ${signal}`}: ${describeTotals(totals, collector.spool.recordCount)}` +
      (influx === undefined ? '' : `; pipeline points to InfluxDB: ${influx.pointsWritten} written, ${influx.pointsDropped} dropped, ${influx.writeErrors} write error(s)`),
  );
  const inputError = parts.inputError();
  if (inputError instanceof CollectorError && inputError.code === 'WW_ERR_COLLECTOR_DELIVERY_STOPPED') throw inputError;
  if (inputError !== undefined) {
    throw new Error(`reading input failed: ${(inputError as Error).message}`, { cause: inputError });
  }
  // A run that ended because its inputs ended (replay, stdin) was asked to deliver them: say so
  // when some did not reach Kafka. A served socket stopped by a signal exits 0 (the spool keeps them).
  if (signal === undefined && (!result.flushed || totals.framesDropped > 0)) {
    throw new CollectorError(
      'WW_ERR_COLLECTOR_UNDELIVERED',
      `${collector.spool.recordCount} record(s) did not reach Kafka and stay in the spool ${config.spool.directory} (the next \`warpwatch collect\` with this --spool-dir sends them first); ${totals.framesDropped} record(s) were dropped (reasons on the line above)`,
      { retriable: true },
    );
  }
}
