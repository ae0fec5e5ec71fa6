import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Meter } from '@opentelemetry/api';
import { influxHealthReasons, unreachableServerHint } from '../service/index.ts';
import { CollectorMetrics, accountingOf } from './collector-metrics.ts';
import type { CollectorConfig } from './config.ts';
import { CollectorError } from './errors.ts';
import { createDeliveryPipeline, type DeliveryPipeline, type LogFunction } from './delivery-pipeline.ts';
import { openDiskSpool, type DiskSpool } from './disk-spool.ts';
import { createFrameIntake, type FrameIntake } from './frame-intake.ts';
import type { HealthReport } from './health-server.ts';
import { startPipelineReporter, type MetricsPointWriter, type PipelineReporter } from './pipeline-reporter.ts';
import type { ProduceFunction } from './produce-record.ts';
import { startSocketSource, type SocketSource } from './socket-source.ts';
import { readFrameStream } from './stream-source.ts';

/** What {@link startCollector} needs from outside: the config, the Kafka send function and the I/O handles. */
export interface CollectorDependencies {
  readonly config: CollectorConfig;
  /** Sends a batch to Kafka: kafka-producer.ts' `send` in production. */
  readonly produce: ProduceFunction;
  /** Meter for self-telemetry (a no-op meter when no SDK is installed). */
  readonly meter: Meter;
  readonly log: LogFunction;
  /** Standard input, read when `config.sources.stdin`. */
  readonly stdin?: Readable;
  /** Opens a replay file (default fs.createReadStream). */
  readonly openFile?: (path: string) => Readable;
  /**
   * Receives the collector's cumulative counters as `warpwatch_pipeline` points every
   * `config.pipelineIntervalMillis` (influx-metrics-writer.ts in production, when
   * `config.influx` is set); none = no such points. Closed by `stop()`.
   */
  readonly metricsWriter?: MetricsPointWriter;
  /**
   * Problems of the Kafka topics as the last check found them (kafka-producer.ts
   * `topicProblems`): each is a `topic-config: …` reason on /healthz. None = not reported.
   */
  readonly topicProblems?: () => readonly string[];
}

/** A running collector; see {@link startCollector}. */
export interface RunningCollector {
  readonly metrics: CollectorMetrics;
  readonly pipeline: DeliveryPipeline;
  readonly spool: DiskSpool;
  /** Resolves when stdin and every replay file have been read to the end (at once when there are none). */
  readonly inputsDone: Promise<void>;
  /** True when a socket is served (the collector runs until stopped). */
  readonly servesSocket: boolean;
  /**
   * Resolves true once every byte read so far is validated and every record acknowledged by
   * Kafka (validation backlog, memory queue and spool all empty), or false after `timeoutMillis`.
   */
  flush(timeoutMillis: number): Promise<boolean>;
  /** The /healthz body. */
  health(): HealthReport;
  /**
   * SIGTERM path: stops accepting (socket closed, stdin no longer read), flushes to Kafka
   * within `config.shutdownTimeoutMillis`, spools what is left, closes the spool; then writes
   * a last `warpwatch_pipeline` point and closes the metrics writer (at most 2 s more).
   */
  stop(): Promise<{ flushed: boolean }>;
}

/** Longest wait for the last `warpwatch_pipeline` point on stop. */
const METRICS_CLOSE_TIMEOUT_MILLIS = 2_000;

/** The parts of a running collector, as the steps below share them. */
interface CollectorParts {
  readonly config: CollectorConfig;
  readonly deps: CollectorDependencies;
  readonly log: LogFunction;
  readonly metrics: CollectorMetrics;
  readonly spool: DiskSpool;
  readonly pipeline: DeliveryPipeline;
  readonly intake: FrameIntake;
  readonly socket: SocketSource | undefined;
  readonly reporter: PipelineReporter | undefined;
  /** True once stop() was called. */
  readonly stopping: () => boolean;
}

/**
 * Wires sources → validation/enrichment → delivery pipeline (memory queue, batches,
 * spool) → `produce`. Opens the spool first (records a previous run left are replayed
 * before new ones; {@link openSpool}), then the delivery pipeline and the intake
 * ({@link createDelivery}), the socket server ({@link startSocket}), the `warpwatch_pipeline`
 * reporter, stdin and replay files ({@link readInputs}).
 *
 * @throws SpoolError (spool locked or unwritable), CollectorError (socket in use or not bindable).
 * @example
 * const collector = await startCollector({ config, produce: kafka.send, meter: metrics.getMeter('warpwatch-collector'), log });
 * process.once('SIGTERM', () => void collector.stop());
 */
export async function startCollector(deps: CollectorDependencies): Promise<RunningCollector> {
  const { config, log } = deps;
  // The gauges read spool and queue, which are created after the metrics that count into them.
  const observed: { spool?: DiskSpool; pipeline?: DeliveryPipeline } = {};
  const metrics = new CollectorMetrics(deps.meter, { spoolBytes: () => observed.spool?.sizeBytes ?? 0, queueBytes: () => observed.pipeline?.queuedBytes ?? 0 });
  const spool = (observed.spool = openSpool(config, metrics, log));
  const { pipeline, intake } = createDelivery(deps, spool, metrics);
  observed.pipeline = pipeline;
  const socket = await startSocket(config, intake, pipeline, metrics, log);
  const reporter: PipelineReporter | undefined =
    deps.metricsWriter === undefined
      ? undefined
      : startPipelineReporter({ instance: config.instance, intervalMillis: config.pipelineIntervalMillis, totals: () => metrics.totals(), writer: deps.metricsWriter, log });

  let stopping = false;
  let stopped: Promise<{ flushed: boolean }> | undefined;
  const parts: CollectorParts = { config, deps, log, metrics, spool, pipeline, intake, socket, reporter, stopping: () => stopping };
  // A delivery loop that failed delivers nothing more: the collector must not look alive. It ends
  // like a failed input, with one line and exit 1, for the supervisor to restart it (the spool keeps the records).
  const inputsDone = Promise.race([
    readInputs(parts),
    pipeline.failed.then((error) => {
      throw new CollectorError(
        'WW_ERR_COLLECTOR_DELIVERY_STOPPED',
        `the delivery loop stopped: ${error.message}; ${spool.recordCount} record(s) stay in the spool ${config.spool.directory} for the next start; exiting 1 so that the supervisor restarts the collector`,
        { cause: error },
      );
    }),
  ]);

  return {
    metrics,
    pipeline,
    spool,
    inputsDone,
    servesSocket: socket !== undefined,
    async flush(timeoutMillis) {
      const started = Date.now();
      const drained = await intake.drain(timeoutMillis);
      return drained && (await pipeline.flush(Math.max(0, timeoutMillis - (Date.now() - started))));
    },
    health: () => collectorHealth(parts),
    stop() {
      stopping = true;
      stopped ??= stopCollector(parts);
      return stopped;
    },
  };
}

/**
 * Opens the write-ahead spool with the collector's callbacks (drops and corrupt records
 * counted, disk faults and recovery logged) and counts the records a previous run left as
 * recovered.
 *
 * @throws SpoolError when the spool is locked by another process or its directory is unwritable.
 */
function openSpool(config: CollectorConfig, metrics: CollectorMetrics, log: LogFunction): DiskSpool {
  const spool = openDiskSpool({
    directory: config.spool.directory,
    maxBytes: config.spool.maxBytes,
    segmentBytes: config.spool.segmentBytes,
    policy: config.spool.policy,
    fsyncIntervalMillis: config.spool.fsyncIntervalMillis,
    memoryMaxBytes: config.maxQueueBytes,
    diskRetryMillis: config.retryBackoffMillis,
    onCorrupt: (error, lostRecords, lostBytes) => {
      metrics.dropped(lostRecords, 'spool-corrupt');
      log('warn', `${error.code}: ${error.message} (${lostRecords} record(s), ${lostBytes} bytes)`);
    },
    onDrop: (count, reason) => metrics.dropped(count, reason),
    onLockTakeOver: (message) => log('warn', message),
    onDiskState: (error) =>
      error === undefined
        ? log('info', `spool directory ${config.spool.directory} takes writes again; records held in memory are written to it`)
        : log('warn', `WW_ERR_SPOOL_IO: spool write failed (${error.code}: ${error.message}); records are held in memory (up to WARPWATCH_QUEUE_MAX_BYTES) and dropped, counted, beyond it; retrying the disk every ${config.retryBackoffMillis} ms`),
  });
  // Records lost to damage found at recovery were counted dropped already; they were recovered too.
  const lost = metrics.totals().droppedByReason['spool-corrupt'] ?? 0;
  metrics.recovered(spool.recordCount + lost);
  if (lost > 0) {
    log('warn', `spool holds ${spool.recordCount} record(s) from a previous run and ${lost} record(s) were lost to damage (counted dropped, reason spool-corrupt; the WW_ERR_SPOOL_CORRUPT lines say where); delivering the rest first`);
  } else if (spool.recordCount > 0) {
    log('info', `spool holds ${spool.recordCount} record(s) from a previous run; delivering them first`);
  }
  return spool;
}

/** The delivery pipeline (batches from the spool to `produce`) and the intake that validates and enriches frames into it, from the config. */
function createDelivery(deps: CollectorDependencies, spool: DiskSpool, metrics: CollectorMetrics): { pipeline: DeliveryPipeline; intake: FrameIntake } {
  const { config, log } = deps;
  const pipeline = createDeliveryPipeline({
    produce: deps.produce,
    spool,
    metrics,
    maxBatchBytes: config.batch.maxBatchBytes,
    maxBatchRecords: config.batch.maxBatchRecords,
    lingerMillis: config.batch.lingerMillis,
    retryBackoffMillis: config.retryBackoffMillis,
    produceTimeoutMillis: config.produceTimeoutMillis,
    stallMillis: config.brokerStallMillis,
    maxMessageBytes: config.kafka.maxMessageBytes,
    dlqTopic: config.kafka.dlqTopic,
    dlqMaxValueBytes: config.dlqMaxValueBytes,
    unreachableHint: unreachableServerHint('kafka', config.kafka.brokers.join(','), '--brokers'),
    log,
  });
  const intake = createFrameIntake({
    pipeline,
    metrics,
    framesTopic: config.kafka.framesTopic,
    dlqTopic: config.kafka.dlqTopic,
    hostName: config.hostName,
    labels: config.labels,
    useWorker: config.sources.validationWorker,
    maxBacklogBytes: config.maxQueueBytes,
    log,
  });
  return { pipeline, intake };
}

/**
 * Serves the unix socket when configured (none otherwise).
 *
 * @throws CollectorError when the socket is in use or cannot be bound (intake and pipeline are closed first).
 */
async function startSocket(config: CollectorConfig, intake: FrameIntake, pipeline: DeliveryPipeline, metrics: CollectorMetrics, log: LogFunction): Promise<SocketSource | undefined> {
  if (config.sources.socketPath === undefined) return undefined;
  try {
    return await startSocketSource({
      path: config.sources.socketPath,
      mode: config.sources.socketMode,
      intake,
      metrics,
      maxConnectionErrors: config.sources.maxConnectionErrors,
      log,
    });
  } catch (error) {
    await intake.close();
    await pipeline.close(0);
    throw error;
  }
}

/**
 * Reads stdin (when configured) and the replay files one after the other; resolves when all
 * are read to the end. File replay waits while the spool holds more than a few batches or the
 * memory cache is half full, so a large file never fills the spool (or pushes live frames out
 * of the cache).
 */
async function readInputs(parts: CollectorParts): Promise<void> {
  const { config, deps, intake, pipeline, spool } = parts;
  const waitForCapacity = async (): Promise<void> => {
    while (!parts.stopping() && (pipeline.queuedBytes + intake.backlogBytes > config.maxQueueBytes / 2 || spool.recordCount > 4 * config.batch.maxBatchRecords)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const openFile = deps.openFile ?? ((path: string) => createReadStream(path, { highWaterMark: 256 * 1024 }));
  const reads: Promise<unknown>[] = [];
  if (config.sources.stdin && deps.stdin !== undefined) reads.push(readFrameStream(deps.stdin, intake.openStream('stdin', Number.POSITIVE_INFINITY), undefined, intake));
  reads.push(
    (async () => {
      for (const path of config.sources.replayFiles) {
        if (parts.stopping()) return;
        await readFrameStream(openFile(path), intake.openStream('file', Number.POSITIVE_INFINITY), waitForCapacity, intake);
      }
    })(),
  );
  await Promise.all(reads);
}

/**
 * The SIGTERM path (run once): stops accepting (socket closed, stdin destroyed), validates and
 * submits the bytes already read, flushes to Kafka within `shutdownTimeoutMillis` (what is left
 * stays in the spool, logged as WW_ERR_COLLECTOR_SHUTDOWN_TIMEOUT), then writes the last
 * `warpwatch_pipeline` point with the final totals and closes the metrics writer.
 */
async function stopCollector(parts: CollectorParts): Promise<{ flushed: boolean }> {
  const { config, deps, log, intake, pipeline, spool } = parts;
  const started = Date.now();
  const graceMillis = Math.min(1_000, Math.floor(config.shutdownTimeoutMillis / 4));
  await parts.socket?.close(graceMillis);
  deps.stdin?.destroy();
  // Bytes already read are still validated and submitted, then flushed.
  await intake.drain(Math.max(0, config.shutdownTimeoutMillis / 2 - (Date.now() - started)));
  await intake.close();
  const left = Math.max(0, config.shutdownTimeoutMillis - (Date.now() - started));
  const result = await pipeline.close(left);
  if (!result.flushed) {
    const error = new CollectorError(
      'WW_ERR_COLLECTOR_SHUTDOWN_TIMEOUT',
      `not everything reached Kafka within ${config.shutdownTimeoutMillis} ms (WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS); ${spool.recordCount} record(s) stay in the spool ${config.spool.directory} for the next start`,
    );
    log('warn', `${error.code}: ${error.message}`);
  }
  // The final totals (everything delivered or spooled by now) as the last point.
  await parts.reporter?.stop(METRICS_CLOSE_TIMEOUT_MILLIS);
  return result;
}

/** The /healthz body: status and reasons ({@link degradedReasons}; `kafka: <code>: …` while an ACL, login or certificate refuses the sends; plus `influx-write` and `influx-rejected` from the metrics writer: service/influx-writer.ts influxHealthReasons, and `topic-config: …` per topic problem), delivery state, sizes, totals and accounting. */
function collectorHealth(parts: CollectorParts): HealthReport {
  const { config, pipeline, spool, metrics } = parts;
  const state = pipeline.state;
  const influx = parts.deps.metricsWriter?.stats();
  const topics = (parts.deps.topicProblems?.() ?? []).map((problem) => `topic-config: ${problem}`);
  const configuration = pipeline.configurationFailure;
  const reasons = [...degradedReasons(state, spool, config.spool.maxBytes), ...(configuration === undefined ? [] : [`kafka: ${configuration}`]), ...influxHealthReasons(influx), ...topics];
  return {
    status: parts.stopping() || state === 'closed' ? 'stopping' : reasons.length > 0 ? 'degraded' : 'ok',
    reasons,
    delivery: state,
    queuedBytes: pipeline.queuedBytes,
    spoolBytes: spool.sizeBytes,
    spoolRecords: spool.recordCount,
    memoryOnlyRecords: spool.memoryOnlyRecords,
    connections: parts.socket?.connectionCount ?? 0,
    ...metrics.totals(),
    accounting: accountingOf(metrics.totals(), spool.recordCount),
    ...(influx === undefined ? {} : { influx }),
  };
}

/**
 * Why the collector is degraded right now, each a short code with detail: `broker-unavailable`
 * (the last send failed), `broker-stalled` (a send has been outstanding longer than the stall
 * limit: a frozen broker), `disk:<errno>` (the spool disk refuses writes; records are held in
 * memory), `spool-full` (the spool is at 95 % of its bound). Empty = ok.
 *
 * @example degradedReasons('broker-stalled', spool, 1 << 30) // ['broker-stalled']
 */
export function degradedReasons(state: string, spool: Pick<DiskSpool, 'diskError' | 'sizeBytes'>, spoolMaxBytes: number): string[] {
  const reasons: string[] = [];
  if (state === 'broker-unavailable' || state === 'broker-stalled') reasons.push(state);
  if (spool.diskError !== undefined) reasons.push(`disk:${spool.diskError.code}`);
  if (spool.sizeBytes >= 0.95 * spoolMaxBytes) reasons.push('spool-full');
  return reasons;
}
