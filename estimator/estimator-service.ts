import { performance } from 'node:perf_hooks';
import { metrics, SpanKind, trace } from '@opentelemetry/api';
import { fitParametric } from '../model/index.ts';
import { createOutageLog, isUnreachableError, unreachableServerHint } from '../service/index.ts';
import { DEFAULT_CUSUM_OPTIONS } from './change-detector.ts';
import type { EstimatorConfig } from './config.ts';
import { createCheckpointProtocol } from './checkpoint-protocol.ts';
import { createEstimatorEngine, type EngineOptions } from './estimator-engine.ts';
import { EstimatorError } from './errors.ts';
import { contextFromTraceparent, createEstimatorTelemetry, frameSpanAttributes } from './estimator-telemetry.ts';
import { createInfluxWriter, ensureInfluxDatabase, type InfluxWriter, type InfluxWriterStats } from './influx-writer.ts';
import { createEstimatorKafka, type CheckpointMirror, type OutgoingRecord } from './kafka.ts';
import { createMetricsExport, type MetricsExport } from './metrics-export.ts';
import { startMetricsServer, type EstimatorHealth, type MetricsServer } from './metrics-server.ts';
import { pipelinePoint } from './series-points.ts';
import type { ParametricFitter } from './window-result.ts';

/**
 * The estimator process (`warpwatch estimate`): Kafka consumer group on the frames topic →
 * engine → InfluxDB, warpwatch.distributions, warpwatch.alerts; periodic checkpoints to the
 * compacted checkpoint topic, and offsets committed only after the checkpoint (and the
 * outputs it depends on) are durable.
 */

/** A running estimator. */
export interface RunningEstimator {
  /** Port of /metrics and /healthz, when enabled. */
  readonly metricsPort: number | undefined;
  health(): EstimatorHealth;
  /** Final checkpoint and commit (bounded by shutdownTimeoutMillis), then disconnect. */
  stop(): Promise<void>;
}

/** The default fitter: model.md §2d families by maximum likelihood, best AIC first. */
export const modelFitter: ParametricFitter = (distribution, sampleSize) => fitParametric(distribution, { sampleSize });

/** Engine options from the config (`fitter` defaults to {@link modelFitter}). */
export function engineOptionsFromConfig(config: EstimatorConfig, fitter: ParametricFitter = modelFitter): EngineOptions {
  return {
    window: {
      windowMillis: config.window.windowMillis,
      allowedLatenessMillis: config.window.allowedLatenessMillis,
      current: config.window.current,
      dedupeCapacity: config.window.dedupeCapacity,
      histogram: { maxExactSupport: config.window.maxExactSupport, subBinsPerOctave: config.window.subBinsPerOctave },
    },
    compute: {
      bootstrapReplicates: config.compute.bootstrapReplicates,
      standardErrorMethod: config.compute.standardErrorMethod,
      confidenceLevel: config.compute.confidenceLevel,
      sweepGroupSizes: config.compute.sweepGroupSizes,
      quantiles: config.compute.quantiles,
      quantileExactWorkLimit: config.compute.quantileExactWorkLimit,
      quantileSamples: config.compute.quantileSamples,
      fitter: config.compute.fit ? fitter : undefined,
    },
    alerts: {
      rising: {
        ...DEFAULT_CUSUM_OPTIONS,
        warmupWindows: config.alerts.warmupWindows,
        referenceSigmas: config.alerts.referenceSigmas,
        thresholdSigmas: config.alerts.thresholdSigmas,
        minRelativeSigma: config.alerts.minRelativeSigma,
      },
      drift: {
        ...DEFAULT_CUSUM_OPTIONS,
        direction: 'both',
        warmupWindows: config.alerts.warmupWindows,
        referenceSigmas: config.alerts.referenceSigmas,
        thresholdSigmas: config.alerts.thresholdSigmas,
        minRelativeSigma: 0,
        minAbsoluteSigma: config.alerts.driftMinSigma,
      },
      lossMeasuredThreshold: config.alerts.lossMeasuredThreshold,
      driftThreshold: config.alerts.driftThreshold,
      staleAfterMillis: config.alerts.staleAfterMillis,
    },
    predictionBasis: config.window.predictionBasis,
    histogramPoints: config.compute.histogramPoints,
    idleCloseMillis: config.window.idleCloseMillis,
    streamRetentionMillis: config.window.streamRetentionMillis,
    maxFutureSkewMillis: config.window.maxFutureSkewMillis,
    maxStreams: config.maxStreams,
    labelTags: config.tagLabels,
    monotonicMillis: () => performance.now(),
  };
}

const MAX_OUTGOING_RECORDS = 100_000;
/** Processing time after which a batch handler yields to the event loop (ms). */
const YIELD_AFTER_MILLIS = 10;

/**
 * The /healthz status of an estimator: `stopping`, `starting` (no partition yet, or one not
 * restored), `degraded` with `reasons` (`influx-write`: its last write requests to InfluxDB
 * failed, so windows are not reaching it; the points wait in a bounded buffer), else `ok`.
 *
 * @example estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: { failingWrites: 3 } })
 * // { status: 'degraded', reasons: ['influx-write'] }
 */
export function estimatorStatus(input: {
  stopping: boolean;
  assigned: ReadonlySet<number>;
  restored: ReadonlySet<number>;
  influx: Pick<InfluxWriterStats, 'failingWrites'> | undefined;
}): { status: EstimatorHealth['status']; reasons: string[] } {
  if (input.stopping) return { status: 'stopping', reasons: [] };
  if (input.assigned.size === 0 || [...input.assigned].some((p) => !input.restored.has(p))) return { status: 'starting', reasons: [] };
  const reasons = (input.influx?.failingWrites ?? 0) > 0 ? ['influx-write'] : [];
  return { status: reasons.length > 0 ? 'degraded' : 'ok', reasons };
}

/**
 * Starts the estimator and returns once it has joined the consumer group (processing runs
 * in the background until stop()).
 *
 * @param log one line per notable event (start-up, sink errors), without secrets.
 * @throws EstimatorError when Kafka cannot be reached, the metrics port cannot be bound, or the
 *   InfluxDB database is missing and cannot be created (WW_ERR_ESTIMATOR_INFLUX_DATABASE).
 * @example
 * const estimator = await startEstimator(loadEstimatorConfig({ env: process.env }), (line) => process.stderr.write(line + '\n'));
 */
export async function startEstimator(
  config: EstimatorConfig,
  log: (line: string) => void,
  options: { fitter?: ParametricFitter } = {},
): Promise<RunningEstimator> {
  let stopping = false;
  const assigned = new Set<number>();
  const restored = new Set<number>();
  const lag = new Map<number, bigint>();
  let outgoing: { topic: string; record: OutgoingRecord }[] = [];
  let outgoingDropped = 0;
  let influx: InfluxWriter | undefined;
  let metricsServer: MetricsServer | undefined;
  const timers: NodeJS.Timeout[] = [];
  // Each outage is said once (issue 18): the first failure with what to try, then one line when it ends.
  const kafkaOutage = createOutageLog(log);
  const influxOutage = createOutageLog(log);
  const checkpointOutage = createOutageLog(log);

  const health = (): EstimatorHealth => ({
    ...estimatorStatus({ stopping, assigned, restored, influx: influx?.stats() }),
    instance: config.instanceId,
    partitions: [...assigned].sort((a, b) => a - b),
    streams: engine.liveStreams(),
    influx: influx?.stats(),
    kafkaRecordsDropped: outgoingDropped,
    counters: telemetry.counters,
  });

  // OpenTelemetry metrics: the Prometheus endpoint and/or OTLP push (metrics-export.ts).
  let metricsExport: MetricsExport | undefined;
  if (config.metricsPort !== undefined || config.otlp !== undefined) {
    metricsExport = createMetricsExport({
      instanceId: config.instanceId,
      prometheus: config.metricsPort !== undefined,
      otlp: config.otlp,
      maxStreams: config.resultMetrics.maxStreams,
      streamTtlMillis: config.resultMetrics.streamTtlMillis,
      log,
    });
  }
  if (config.metricsPort !== undefined && metricsExport?.prometheus !== undefined) {
    try {
      metricsServer = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, exporter: metricsExport.prometheus, health: () => health() });
    } catch (error) {
      await metricsExport.shutdown();
      throw error;
    }
  }
  const meter = metricsExport?.meter ?? metrics.getMeter('warpwatch-estimator');
  const tracer = trace.getTracer('warpwatch-estimator');
  const telemetry = createEstimatorTelemetry(meter, tracer, () => ({
    streams: engine.liveStreams(),
    influxBuffered: influx?.stats().buffered ?? 0,
    influxDropped: influx?.stats().linesDropped ?? 0,
  }));

  if (config.influx !== undefined) {
    // A missing database is created, or the service refuses to start (every write would be refused).
    let check: Awaited<ReturnType<typeof ensureInfluxDatabase>>;
    try {
      check = await ensureInfluxDatabase(config.influx);
    } catch (error) {
      await metricsServer?.close();
      await metricsExport?.shutdown();
      throw error;
    }
    if (check === 'created') log(`warpwatch estimate: created InfluxDB database "${config.influx.database}" at ${config.influx.url}`);
    // An InfluxDB that does not answer is said once per outage, with what to try (issue 18).
    const influxUrl = config.influx.url;
    const influxHint = unreachableServerHint('influx', influxUrl, '--influx-url');
    if (check === 'unreachable') influxOutage.failed(`warpwatch estimate: InfluxDB at ${influxUrl} does not answer yet; points wait in the buffer and are retried (not logged again until a write succeeds); ${influxHint}`);
    influx = createInfluxWriter(
      config.influx,
      (error) => {
        telemetry.sinkError('influx');
        if (!error.retriable) log(`warpwatch estimate: ${error.code}: ${error.message}`);
        else influxOutage.failed(`warpwatch estimate: ${error.code}: ${error.message} (not logged again until a write succeeds)${isUnreachableError(error) ? `; ${influxHint}` : ''}`);
      },
      () => influxOutage.recovered(`warpwatch estimate: InfluxDB at ${influxUrl} takes writes again`),
    );
  }

  /** Keeps the outgoing queue within MAX_OUTGOING_RECORDS by dropping the oldest records, counted with their reason. */
  const boundOutgoing = (): void => {
    if (outgoing.length <= MAX_OUTGOING_RECORDS) return;
    const excess = outgoing.length - MAX_OUTGOING_RECORDS;
    outgoing = outgoing.slice(excess);
    outgoingDropped += excess;
    telemetry.outgoingDropped(excess);
    log(`warpwatch estimate: ${excess} result record(s) for Kafka dropped: the outgoing queue is full (${MAX_OUTGOING_RECORDS}); ${outgoingDropped} in total`);
  };
  const queueOutgoing = (topic: string, record: OutgoingRecord): void => {
    outgoing.push({ topic, record });
    boundOutgoing();
  };

  const engine = createEstimatorEngine(
    engineOptionsFromConfig(config, options.fitter),
    {
      writePoints: (points) => influx?.write(points),
      publishDistribution: (key, value) => queueOutgoing(config.kafka.distributionsTopic, { key, value }),
      publishAlert: (key, value) => queueOutgoing(config.kafka.alertsTopic, { key, value }),
      recordWindow: metricsExport === undefined ? undefined : (result) => metricsExport.results.recordWindow(result),
      recordAlert: metricsExport === undefined ? undefined : (alert) => metricsExport.results.recordAlert(alert),
    },
    {
      ...telemetry.engine,
      streamEvicted(streamKey) {
        telemetry.engine.streamEvicted?.(streamKey);
        log(`warpwatch estimate: stream ${streamKey} evicted (WARPWATCH_MAX_STREAMS = ${config.maxStreams} live streams); its open windows were written first`);
      },
      checkpointCorrupt(key, error) {
        telemetry.engine.checkpointCorrupt?.(key, error);
        log(`warpwatch estimate: WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT: checkpoint record '${key}' ignored, its stream starts empty: ${error instanceof Error ? error.message : String(error)}`);
      },
    },
  );

  // A broker that does not answer is said once per outage, at the first failed connection, with
  // what to try (kafkajs retries meanwhile; the start gives up after its retries, exit 1).
  const brokers = config.kafka.brokers.join(',');
  const kafkaHint = unreachableServerHint('kafka', brokers, '--brokers');
  const kafkaUnreachable = (reason: string): void =>
    kafkaOutage.failed(`warpwatch estimate: WW_ERR_ESTIMATOR_KAFKA: Kafka at ${brokers} does not answer (${reason}); retrying, not logged again until it answers; ${kafkaHint}`);
  const kafka = createEstimatorKafka({ ...config.kafka, instanceId: config.instanceId }, { onUnreachable: kafkaUnreachable });
  await kafka.ensureTopics();
  kafkaOutage.recovered(`warpwatch estimate: Kafka at ${brokers} answers`);
  const mirror: CheckpointMirror = await kafka.startCheckpointMirror();
  const checkpointPrefix = (partition: number): string => `${config.kafka.groupId}|${config.kafka.framesTopic}|${partition}`;

  let sendingOutgoing: Promise<void> | undefined;
  const sendOutgoing = async (): Promise<void> => {
    while (sendingOutgoing !== undefined) await sendingOutgoing.catch(() => undefined);
    if (outgoing.length === 0) return;
    const batch = outgoing;
    outgoing = [];
    const byTopic = new Map<string, OutgoingRecord[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.record);
      byTopic.set(item.topic, list);
    }
    const run = (async () => {
      for (const [topic, records] of byTopic) await kafka.produce(topic, records);
    })();
    sendingOutgoing = run;
    try {
      await run;
    } catch (error) {
      // Put the batch back for the next attempt (bounded: what does not fit is counted as dropped).
      outgoing = [...batch, ...outgoing];
      boundOutgoing();
      telemetry.sinkError('kafka');
      throw error;
    } finally {
      sendingOutgoing = undefined;
    }
  };

  // Frames from the future: the first of each stream, then every 1,000th, say so (all are counted).
  const futureSeen = new Map<string, number>();
  const reportFuture = (partition: number, offset: string, key: string | undefined): void => {
    const stream = key ?? '?';
    const seen = (futureSeen.get(stream) ?? 0) + 1;
    if (futureSeen.size < 10_000 || futureSeen.has(stream)) futureSeen.set(stream, seen);
    if (seen === 1 || seen % 1000 === 0) {
      log(
        `warpwatch estimate: WW_ERR_ESTIMATOR_FRAME_FROM_FUTURE: stream ${stream} (partition ${partition}, offset ${offset}): frame dated more than ${config.window.maxFutureSkewMillis} ms ahead of this host's clock, not recorded (${seen} so far for this stream; WARPWATCH_MAX_FUTURE_SKEW_MILLIS)`,
      );
    }
  };

  // Assignment generation per partition: a restore started before a revocation must not install stale state.
  const generation = new Map<number, number>();
  const restoring = new Map<number, Promise<void>>();
  const restorePartition = async (partition: number, expectedGeneration: number): Promise<void> => {
    await mirror.catchUp(60_000);
    if (!assigned.has(partition) || (generation.get(partition) ?? 0) !== expectedGeneration) return;
    const prefix = checkpointPrefix(partition);
    const records = new Map<string, string>();
    let marker: string | undefined;
    for (const [key, value] of mirror.entries(prefix)) {
      if (key === prefix) marker = value;
      else if (key.startsWith(`${prefix}|`)) records.set(key.slice(prefix.length + 1), value);
    }
    engine.restorePartition(partition, records, marker, Date.now());
    restored.add(partition);
    log(`warpwatch estimate: partition ${partition} restored (${records.size} streams${marker === undefined ? ', no checkpoint' : ''})`);
  };
  /** Restores a partition once per assignment; started on assignment, awaited by its first batch. */
  const ensureRestored = (partition: number): Promise<void> => {
    if (restored.has(partition)) return Promise.resolve();
    let pendingRestore = restoring.get(partition);
    if (pendingRestore === undefined) {
      const expected = generation.get(partition) ?? 0;
      pendingRestore = restorePartition(partition, expected).finally(() => {
        if (restoring.get(partition) === pendingRestore) restoring.delete(partition);
      });
      restoring.set(partition, pendingRestore);
    }
    return pendingRestore;
  };

  let checkpointing: Promise<void> | undefined;
  const protocol = createCheckpointProtocol({
    assigned: () => assigned,
    isRestored: (partition) => restored.has(partition),
    snapshot: (partition) => engine.checkpoint(partition),
    keyOf: (partition, streamKey) => (streamKey === undefined ? checkpointPrefix(partition) : `${checkpointPrefix(partition)}|${streamKey}`),
    flushInflux: async () => {
      if (influx !== undefined) await influx.flush();
    },
    flushResults: () => sendOutgoing(),
    writeCheckpoint: (records) => kafka.produce(config.kafka.checkpointTopic, records),
    commit: (partition, nextOffset) => kafka.commit(partition, nextOffset),
  });
  const checkpointOnce = (): Promise<void> => protocol.run();
  const checkpoint = (): Promise<void> => {
    if (checkpointing !== undefined) return checkpointing;
    checkpointing = checkpointOnce()
      .then(() => checkpointOutage.recovered('warpwatch estimate: checkpoints are written again'))
      .catch((error: unknown) => {
        telemetry.sinkError('checkpoint');
        checkpointOutage.failed(`warpwatch estimate: checkpoint postponed (offsets are not committed; tried again every ${config.checkpointIntervalMillis} ms, not logged again until one succeeds): ${error instanceof Error ? error.message : String(error)}`);
      })
      .finally(() => {
        checkpointing = undefined;
      });
    return checkpointing;
  };

  await kafka.runFramesConsumer({
    onAssignment(partitions) {
      for (const partition of [...assigned]) {
        if (!partitions.includes(partition)) {
          assigned.delete(partition);
          generation.set(partition, (generation.get(partition) ?? 0) + 1);
          restoring.delete(partition);
          restored.delete(partition);
          protocol.forget(partition);
          lag.delete(partition);
          engine.releasePartition(partition);
        }
      }
      for (const partition of partitions) assigned.add(partition);
      log(`warpwatch estimate: assigned partitions [${[...assigned].sort((a, b) => a - b).join(', ')}] of ${config.kafka.framesTopic}`);
      // Restore now rather than at the first batch, so a partition is ready before its frames arrive.
      for (const partition of partitions) {
        ensureRestored(partition).catch((error: unknown) => {
          log(`warpwatch estimate: restoring partition ${partition} failed (retried at its next batch): ${error instanceof Error ? error.message : String(error)}`);
        });
      }
    },
    async onBatch(batch) {
      kafkaOutage.recovered(`warpwatch estimate: Kafka at ${brokers} answers again`);
      if (!assigned.has(batch.partition)) assigned.add(batch.partition);
      if (!restored.has(batch.partition)) await ensureRestored(batch.partition);
      if (!restored.has(batch.partition)) {
        if (!assigned.has(batch.partition) || batch.isStale()) return; // revoked while restoring
        // Never skip a batch of an assigned partition: failing makes kafkajs fetch it again.
        throw new EstimatorError('WW_ERR_ESTIMATOR_CHECKPOINT_READ', `partition ${batch.partition} of ${config.kafka.framesTopic} is assigned but not restored`, { retriable: true });
      }
      let last: string | undefined;
      let sliceStart = performance.now();
      for (const message of batch.messages) {
        if (batch.isStale() || stopping || !restored.has(batch.partition)) break;
        if (performance.now() - sliceStart >= YIELD_AFTER_MILLIS) {
          // A long batch (window closes run the model) yields now and then, so the InfluxDB
          // writes of windows closed so far start while the rest of the batch is processed.
          // Each message is applied atomically, so a checkpoint taken meanwhile is consistent.
          await new Promise<void>((resolve) => setImmediate(resolve));
          // kafkajs sends heartbeats only when asked (throttled to the heartbeat interval): a
          // long batch must not look like a dead member after the session timeout.
          await batch.heartbeat();
          sliceStart = performance.now();
          if (batch.isStale() || stopping || !restored.has(batch.partition)) break;
        }
        const parent = contextFromTraceparent(message.headers.traceparent);
        const span = tracer.startSpan('warpwatch.estimator.frame', { kind: SpanKind.CONSUMER }, parent);
        const outcome = engine.handleMessage(batch.partition, message.offset, message.value, Date.now(), message.headers);
        if (outcome === 'future') reportFuture(batch.partition, message.offset, message.key);
        span.setAttributes(frameSpanAttributes(batch.partition, message.offset, message.key, outcome));
        span.end();
        last = message.offset;
      }
      if (last !== undefined) {
        const remaining = BigInt(batch.highWatermark) - (BigInt(last) + 1n);
        lag.set(batch.partition, remaining > 0n ? remaining : 0n);
        let total = 0n;
        for (const value of lag.values()) total += value;
        telemetry.counters.consumerLag = Number(total);
      }
      await batch.heartbeat();
    },
    onCrash(error, restart) {
      if (restart && isUnreachableError(error)) kafkaUnreachable(`consumer: ${error.message}`);
      else log(`warpwatch estimate: consumer crashed (${restart ? 'restarting' : 'not restarting'}): ${error.message}`);
    },
  });

  const tickEveryMillis = Math.max(50, Math.min(1_000, Math.floor(config.window.idleCloseMillis / 4)));
  timers.push(
    setInterval(() => {
      if (!stopping) engine.tick(Date.now(), (partition) => restored.has(partition) && (lag.get(partition) ?? 0n) === 0n);
    }, tickEveryMillis),
  );
  timers.push(
    setInterval(() => {
      sendOutgoing().catch((error: unknown) => log(`warpwatch estimate: ${error instanceof Error ? error.message : String(error)}`));
    }, 100),
  );
  timers.push(setInterval(() => void checkpoint(), config.checkpointIntervalMillis));
  timers.push(
    setInterval(() => {
      const stats = influx?.stats();
      influx?.write([
        pipelinePoint(
          config.instanceId,
          {
            framesIn: telemetry.counters.framesIn,
            framesOut: telemetry.counters.framesOut,
            framesRejected: telemetry.counters.framesRejected,
            framesDropped: telemetry.counters.framesDropped,
            consumerLag: telemetry.counters.consumerLag,
            windowLatencyMillis: telemetry.counters.lastWindowLatencyMillis,
            influxWriteErrors: stats?.writeErrors ?? 0,
          },
          Date.now(),
        ),
      ]);
    }, 10_000),
  );

  log(
    `warpwatch estimate: group ${config.kafka.groupId} on ${config.kafka.framesTopic} (${config.kafka.brokers.join(',')}), window ${config.window.windowMillis} ms, influx ${
      config.influx === undefined ? 'off' : `${config.influx.url} db ${config.influx.database}`
    }, metrics ${metricsServer === undefined ? 'off' : `${config.metricsHost}:${metricsServer.port}`}, otlp ${config.otlp === undefined ? 'off' : config.otlp.url}`,
  );

  return {
    metricsPort: metricsServer?.port,
    health,
    async stop() {
      if (stopping) return;
      stopping = true;
      for (const timer of timers) clearInterval(timer);
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownTimeoutMillis).unref());
      await Promise.race([checkpoint(), deadline]);
      await kafka.stop();
      const left = influx === undefined ? 0 : await influx.close(Math.max(100, config.shutdownTimeoutMillis / 2));
      if (left > 0) log(`warpwatch estimate: ${left} lines could not be written to InfluxDB before shutdown`);
      await metricsServer?.close();
      await metricsExport?.shutdown();
    },
  };
}

