import { performance } from 'node:perf_hooks';
import { metrics, SpanKind, trace } from '@opentelemetry/api';
import { fitParametric } from '../model/index.ts';
import {
  createOutageLog,
  influxHealthReasons,
  isUnreachableError,
  kafkaPrincipalOf,
  missingAclText,
  startHeapTarget,
  stoppedConsumerDenial,
  unreachableServerHint,
  type InfluxWriter,
  type InfluxWriterStats,
  type KafkaAclNeed,
  type LogLineSink,
  type OutageLog,
} from '../service/index.ts';
import type { EstimatorConfig } from './config.ts';
import { readPartitionMarker } from './engine/checkpoint-codec.ts';
import { checkpointTickMillis, createCheckpointProtocol, createCheckpointTurns } from './engine/checkpoint-protocol.ts';
import { createEstimatorEngine, type EstimatorEngine } from './engine/estimator-engine.ts';
import { createMembershipLease, type MembershipLease, type MembershipLeaseStatus } from './engine/membership-lease.ts';
import { EstimatorError } from './errors.ts';
import { PROGRESS_LOG_MILLIS, progressMessage, type ProgressSnapshot } from './adapters/progress-log.ts';
import { createEstimatorLogger } from './estimator-log.ts';
import { contextFromTraceparent, createEstimatorTelemetry, frameSpanAttributes, type EstimatorTelemetry } from './adapters/estimator-telemetry.ts';
import { createEstimatorInfluxWriter, ensureInfluxDatabase } from './adapters/influx-writer.ts';
import { createEstimatorKafka, outgoingResultRecord, type CheckpointReader, type EstimatorKafka, type FramesHandlers } from './adapters/kafka.ts';
import { createMetricsExport, type MetricsExport } from './adapters/metrics-export.ts';
import { startMetricsServer, type EstimatorHealth, type MetricsServer } from './adapters/metrics-server.ts';
import { createOutgoingQueue, type OutgoingQueue } from './adapters/outgoing-queue.ts';
import { createAlertLog } from './adapters/alert-log.ts';
import { createPartitionMoves, type PartitionMoves } from './adapters/partition-moves.ts';
import { createOncePerStreamLog, dlqRecordOf } from './adapters/quarantine.ts';
import { createBackpressure, type Backpressure } from './backpressure.ts';
import { pipelinePoint } from './engine/series-points.ts';
import type { ParametricFitter } from './engine/window-result.ts';

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
  /**
   * Final checkpoint and commit (bounded by shutdownTimeoutMillis), then disconnect. With the
   * `signal` that stopped the service, says `<signal>: checkpointing and stopping` first and
   * `stopped` at the end. Idempotent.
   */
  stop(signal?: string): Promise<void>;
  /**
   * Resolves when the service cannot work any more and must exit (docs/errors.md, Kafka failures:
   * the frames consumer stopped for good — an unsupported codec, an authorization error, a
   * deleted topic); never rejects. The entry point then stops it and exits 1 with the error's line.
   */
  readonly failed: Promise<EstimatorError>;
}

/** The default fitter: model.md §2d families by maximum likelihood, best AIC first. */
export const modelFitter: ParametricFitter = (distribution, sampleSize) => fitParametric(distribution, { sampleSize });

const MAX_OUTGOING_RECORDS = 100_000;
/** Processing time after which a batch handler yields to the event loop (ms). */
const YIELD_AFTER_MILLIS = 10;

/**
 * The /healthz status of an estimator: `stopping`, `starting` (no partition yet, or one not
 * restored), `degraded` with `reasons` (`influx-write`: its last write requests to InfluxDB
 * failed, so windows are not reaching it; the points wait in a bounded buffer; `influx-auth`:
 * InfluxDB refused its credentials, the points wait likewise; `influx-rejected`: InfluxDB refused
 * points in the last 5 minutes, which are lost; service/influx-writer.ts influxHealthReasons;
 * `topic-config: …`: a Kafka topic cannot take what the estimator reads or writes, one reason
 * per problem, also given while `starting`), else `ok`.
 *
 * @example estimatorStatus({ stopping: false, assigned: new Set([0]), restored: new Set([0]), influx: { failingWrites: 3 } })
 * // { status: 'degraded', reasons: ['influx-write'] }
 */
export function estimatorStatus(input: {
  stopping: boolean;
  assigned: ReadonlySet<number>;
  restored: ReadonlySet<number>;
  influx: (Pick<InfluxWriterStats, 'failingWrites'> & Partial<Pick<InfluxWriterStats, 'rejectedAtMillis' | 'authFailing'>>) | undefined;
  topicProblems?: readonly string[];
  /** Whether the brokers answer (false during a Kafka outage: the consumer, the producer or the lag probe found none). */
  kafkaReachable?: boolean;
  /** The membership lease (docs/estimator.md § Fencing); held false while the coordinator has not confirmed this member within it. */
  membership?: MembershipLeaseStatus;
  /** Why the service cannot work any more (it is exiting), if so. */
  failure?: string;
  /** The broker's refusal of the checkpoint round's writes (WW_ERR_KAFKA_AUTHORIZATION: …) while it lasts. */
  refusal?: string;
}): { status: EstimatorHealth['status']; reasons: string[] } {
  if (input.failure !== undefined) return { status: 'failed', reasons: [input.failure] };
  if (input.stopping) return { status: 'stopping', reasons: [] };
  const topics = (input.topicProblems ?? []).map((problem) => `topic-config: ${problem}`);
  const kafka = input.kafkaReachable === false ? ['kafka: the brokers do not answer (retrying; the consumer lag is unknown meanwhile)'] : [];
  const fence =
    input.membership !== undefined && !input.membership.held && input.assigned.size > 0
      ? [`membership: not confirmed by the group coordinator ${input.membership.confirmedAgoMillis === null ? 'since it ended' : `for ${input.membership.confirmedAgoMillis} ms`} (lease ${input.membership.leaseMillis} ms): nothing is closed or checkpointed meanwhile`]
      : [];
  if (input.assigned.size === 0 || [...input.assigned].some((p) => !input.restored.has(p))) return { status: kafka.length > 0 ? 'degraded' : 'starting', reasons: [...kafka, ...topics] };
  const refusal = input.refusal === undefined ? [] : [`kafka: ${input.refusal}`];
  const reasons = [...kafka, ...refusal, ...fence, ...influxHealthReasons(input.influx), ...topics];
  return { status: reasons.length > 0 ? 'degraded' : 'ok', reasons };
}

/** What the service's steps share: partition bookkeeping and the stop flag. */
interface PartitionState {
  stopping: boolean;
  /** Partitions of the frames topic assigned to this instance now. */
  readonly assigned: Set<number>;
  /** Assigned partitions whose state was restored from the checkpoint topic. */
  readonly restored: Set<number>;
  /** Messages behind the high watermark, per partition (as of its last measurement). */
  readonly lag: Map<number, bigint>;
  /** When each partition's lag was last measured from a broker that answered (ms, Date.now()); none while it does not answer. */
  readonly lagMeasuredAt: Map<number, number>;
  /** Since when each partition's lag has been measured without a gap (ms, Date.now()). */
  readonly reachableSince: Map<number, number>;
  /** The fence: whether this member may still act as the owner of its partitions (engine/membership-lease.ts). */
  readonly lease: MembershipLease;
}

/**
 * How old a lag measurement may be and still count (ms): the probe runs every
 * `probeEveryMillis`, so a measurement older than this means the broker stopped answering.
 *
 * @example lagFreshnessMillis(250) // 2000
 */
export function lagFreshnessMillis(probeEveryMillis: number): number {
  return Math.max(2_000, 3 * probeEveryMillis);
}

/**
 * Records one lag measurement of `partition` that holds as of `nowMillis` from a broker that
 * answered (a fetched batch: as of when it came; the offsets probe: as of when it was asked). A
 * measurement older than the one held is dropped (a batch that ends after a probe measured
 * during it). A measurement after a gap longer than `freshnessMillis` (the broker or the
 * partition did not answer meanwhile) starts a new reachable period.
 *
 * @example noteLag(state, 0, 0n, Date.now(), 2_000);
 */
export function noteLag(state: Pick<PartitionState, 'lag' | 'lagMeasuredAt' | 'reachableSince'>, partition: number, lag: bigint, nowMillis: number, freshnessMillis: number): void {
  const previous = state.lagMeasuredAt.get(partition);
  if (previous !== undefined && nowMillis < previous) return;
  if (previous === undefined || nowMillis - previous > freshnessMillis) state.reachableSince.set(partition, nowMillis);
  state.lagMeasuredAt.set(partition, nowMillis);
  state.lag.set(partition, lag > 0n ? lag : 0n);
}

/**
 * Whether idle windows of `partition` may close (docs/estimator.md, late data): it is restored,
 * its lag is known and zero — measured within `freshnessMillis` from a broker that answered —
 * and it has been measured without a gap for at least `idleCloseMillis`, so that after an
 * outage the collectors have that long to deliver what they spooled before a silent stream's
 * windows close. While the broker or the partition does not answer, nothing closes by idleness;
 * nor while this member's membership is not confirmed within its lease (docs/estimator.md § Fencing).
 *
 * @example idleCloseAllowed(state, 0, Date.now(), { freshnessMillis: 2_000, idleCloseMillis: 10_000 }) // false right after an outage
 */
export function idleCloseAllowed(
  state: Pick<PartitionState, 'restored' | 'lag' | 'lagMeasuredAt' | 'reachableSince' | 'lease'>,
  partition: number,
  nowMillis: number,
  limits: { readonly freshnessMillis: number; readonly idleCloseMillis: number },
): boolean {
  if (!state.restored.has(partition) || state.lag.get(partition) !== 0n) return false;
  if (!state.lease.holds(nowMillis)) return false;
  const measuredAt = state.lagMeasuredAt.get(partition);
  const since = state.reachableSince.get(partition);
  if (measuredAt === undefined || since === undefined || nowMillis - measuredAt > limits.freshnessMillis) return false;
  return nowMillis - since >= limits.idleCloseMillis;
}

/**
 * The time as of which `partition` is known caught up, for the engine's idle close
 * (EstimatorEngine.tick): when {@link idleCloseAllowed}, the time its zero lag holds as of (a
 * batch's arrival, a probe's request); else undefined.
 *
 * @example caughtUpAsOf(state, 0, Date.now(), { freshnessMillis: 2_000, idleCloseMillis: 10_000 }) // e.g. 250 ms ago, or undefined
 */
export function caughtUpAsOf(
  state: Pick<PartitionState, 'restored' | 'lag' | 'lagMeasuredAt' | 'reachableSince' | 'lease'>,
  partition: number,
  nowMillis: number,
  limits: { readonly freshnessMillis: number; readonly idleCloseMillis: number },
): number | undefined {
  return idleCloseAllowed(state, partition, nowMillis, limits) ? state.lagMeasuredAt.get(partition) : undefined;
}

/**
 * The partitions a consumer must drop on joining the group (docs/estimator.md, Scale-out): those
 * it held that the new assignment does not list, or, when it joined as a new member
 * (`rejoined`), every partition it held — another member may have served them in between.
 *
 * @example partitionsToRelease(new Set([0, 1, 2]), [0, 1], false) // [2]
 * @example partitionsToRelease(new Set([0, 1, 2]), [0, 1], true) // [0, 1, 2]
 */
export function partitionsToRelease(held: Iterable<number>, assignment: readonly number[], rejoined: boolean): number[] {
  return [...held].filter((partition) => rejoined || !assignment.includes(partition));
}

/**
 * Each server outage is said once: the first failure, with what to try when nothing
 * answers (service/server-hint.ts), then one line when it ends; the retries between are quiet.
 */
interface EstimatorOutages {
  readonly kafka: OutageLog;
  readonly influx: OutageLog;
  readonly checkpoint: OutageLog;
  /** This member acting without a membership confirmed within its lease (docs/estimator.md § Fencing): said once per lapse. */
  readonly fence: OutageLog;
  /** The frames consumer crashing and kafkajs restarting it: said once per streak, ended by a batch. */
  readonly consumerCrash: OutageLog;
  /** The broker's refusal of the last checkpoint round (an ACL missing: `<code>: <line>`), cleared by a round that succeeds. */
  readonly refusal: { text: string | undefined };
  /** The brokers as the lines name them (`host:port,...`). */
  readonly brokers: string;
  /** A connection to Kafka failed because nothing answers (kafkajs' message as `reason`). */
  kafkaUnreachable(reason: string): void;
  /** A TLS handshake with a broker failed (what to change as `reason`, docs/security.md). */
  kafkaTls(reason: string): void;
}

/** The outage logs of an estimator. */
function createOutages(config: EstimatorConfig, log: (line: string) => void): EstimatorOutages {
  const kafka = createOutageLog(log);
  const brokers = config.kafka.brokers.join(',');
  const kafkaHint = unreachableServerHint('kafka', brokers, '--brokers');
  return {
    kafka,
    influx: createOutageLog(log),
    checkpoint: createOutageLog(log),
    fence: createOutageLog(log),
    refusal: { text: undefined },
    consumerCrash: createOutageLog(log),
    brokers,
    kafkaUnreachable: (reason) =>
      kafka.failed(`WW_ERR_ESTIMATOR_KAFKA: Kafka at ${brokers} does not answer (${reason}); retrying, not logged again until it answers; ${kafkaHint}`),
    kafkaTls: (reason) => kafka.failed(`WW_ERR_KAFKA_TLS: TLS handshake with Kafka at ${brokers} failed: ${reason}`),
  };
}

/** The parts of a running estimator the steps below wire together. */
interface EstimatorParts {
  readonly config: EstimatorConfig;
  readonly log: (line: string) => void;
  readonly outages: EstimatorOutages;
  readonly state: PartitionState;
  readonly engine: EstimatorEngine;
  readonly telemetry: EstimatorTelemetry;
  readonly kafka: EstimatorKafka;
  readonly influx: InfluxWriter | undefined;
  /** Sends the queued result records (counts a failure as a Kafka sink error, then rethrows). */
  readonly sendOutgoing: () => Promise<void>;
  /** Holds batches back while the InfluxDB lines or the result records are above their high-water marks. */
  readonly backpressure: Backpressure;
  /** The service cannot work any more: /healthz says `failed` (503) with the reason, and `failed` resolves (the entry point exits 1). */
  readonly fail: (error: EstimatorError) => void;
  /** The frames topic's partition count as first read, and whether it changed (the lag probe reads it). */
  readonly partitionCount: ReturnType<typeof createPartitionCountWatch>;
  /** Streams seen on another partition than their key had at the start count (docs/estimator.md § Adding partitions). */
  readonly moves: PartitionMoves;
}

/** The service's one failure: the first one given wins; see {@link RunningEstimator.failed}. */
function createFailure(): { readonly failed: Promise<EstimatorError>; fail(error: EstimatorError): void; readonly reason: string | undefined } {
  let reason: string | undefined;
  let resolve: (error: EstimatorError) => void = () => {};
  const failed = new Promise<EstimatorError>((done) => {
    resolve = done;
  });
  return {
    failed,
    fail(error) {
      if (reason !== undefined) return;
      reason = `${error.code}: ${error.message}`;
      resolve(error);
    },
    get reason() {
      return reason;
    },
  };
}

/**
 * Starts the estimator and returns once it has joined the consumer group (processing runs
 * in the background until stop()). The steps, in order: the metrics endpoints
 * ({@link startMetricsEndpoints}), the InfluxDB sink ({@link openInfluxSink}), the outgoing
 * queue and the engine ({@link createServiceEngine}), Kafka topics and the checkpoint reader,
 * partition restore ({@link createPartitionRestorer}), the checkpoint-before-commit protocol
 * ({@link createCheckpointer}), the frames consumer ({@link framesHandlers}) and the timers
 * ({@link startTimers}).
 *
 * @param config the configuration, Kafka SASL/TLS included (loadEstimatorConfig reads them).
 * @param write where its lines go, one at a time without newline (the CLI adds a timestamp and
 *   writes them to stderr): one per notable event (start-up, sink errors), each
 *   `warpwatch estimate: <message>` (the service's one logger, estimator-log.ts), without secrets.
 * @throws EstimatorError when Kafka cannot be reached, the metrics port cannot be bound, or the
 *   InfluxDB database is missing and cannot be created (WW_ERR_ESTIMATOR_INFLUX_DATABASE).
 * @example
 * const estimator = await startEstimator(loadEstimatorConfig({ env: process.env }), (line) => process.stderr.write(line + '\n'));
 * process.once('SIGTERM', (signal) => void estimator.stop(signal));
 */
export async function startEstimator(config: EstimatorConfig, write: LogLineSink, options: { fitter?: ParametricFitter } = {}): Promise<RunningEstimator> {
  // The service's one logger: every line below is a message; the logger adds the prefix.
  const log = createEstimatorLogger(write).info;
  const state: PartitionState = {
    stopping: false,
    assigned: new Set(),
    restored: new Set(),
    lag: new Map(),
    lagMeasuredAt: new Map(),
    reachableSince: new Map(),
    lease: createMembershipLease({ sessionTimeoutMillis: config.kafka.sessionTimeoutMillis }),
  };
  // Created below; /healthz and the gauges may be read before (then they show none).
  const created: { engine?: EstimatorEngine; outgoing?: OutgoingQueue; backpressure?: Backpressure } = {};
  let influx: InfluxWriter | undefined;
  const health = (): EstimatorHealth => {
    const now = Date.now();
    const membership = state.lease.status(now);
    return {
      ...estimatorStatus({
        stopping: state.stopping,
        assigned: state.assigned,
        restored: state.restored,
        influx: influx?.stats(),
        topicProblems: [...kafkaTopicProblems(), ...(partitionCount.problem === undefined ? [] : [partitionCount.problem])],
        kafkaReachable: !kafkaDown(),
        membership,
        failure: failure.reason,
        refusal: outages.refusal.text,
      }),
      instance: config.instanceId,
      // null while unknown (a partition without a fresh measurement from a broker that answered), never a stale 0.
      consumerLag: consumerLagOf(state, now, lagFreshnessMillis(probeEveryMillis(config))) ?? null,
      membership,
      partitions: [...state.assigned].sort((a, b) => a - b),
      streamsMoved: moves.streamsMoved,
      streams: created.engine?.liveStreams() ?? 0,
      influx: influx?.stats(),
      kafkaRecordsDropped: created.outgoing?.dropped ?? 0,
      backpressure: created.backpressure?.stats(),
      counters: telemetry.counters,
    };
  };

  let kafkaTopicProblems = (): readonly string[] => [];
  const failure = createFailure();
  const partitionCount = createPartitionCountWatch(config.kafka.framesTopic);
  const moves = createPartitionMoves(config.kafka.framesTopic, log);
  const outages = createOutages(config, log);
  const kafkaDown = (): boolean => outages.kafka.down;
  const { metricsExport, metricsServer } = await startMetricsEndpoints(config, log, health);
  const telemetry = createEstimatorTelemetry(metricsExport?.meter ?? metrics.getMeter('warpwatch-estimator'), trace.getTracer('warpwatch-estimator'), () => ({
    streams: created.engine?.liveStreams() ?? 0,
    influxBuffered: influx?.stats().buffered ?? 0,
    influxDropped: influx?.stats().pointsDropped ?? 0,
  }));
  try {
    influx = await openInfluxSink(config, log, telemetry, outages.influx);
  } catch (error) {
    await metricsServer?.close();
    await metricsExport?.shutdown();
    throw error;
  }

  // A broker that does not answer is said once per outage, at the first failed connection, with
  // what to try (kafkajs retries meanwhile; the start gives up after its retries, exit 1).
  const kafka = createEstimatorKafka({ ...config.kafka, instanceId: config.instanceId }, { onUnreachable: outages.kafkaUnreachable, onTlsFailure: outages.kafkaTls });
  const outgoing = (created.outgoing = createResultsQueue(kafka, telemetry, log));
  const sendOutgoing = (): Promise<void> =>
    outgoing.send().catch((error: unknown) => {
      telemetry.sinkError('kafka');
      throw error;
    });
  const backpressure = (created.backpressure = createServiceBackpressure(config, log, influx, outgoing));
  const engine = (created.engine = createServiceEngine(config, log, { fitter: options.fitter, influx, outgoing, metricsExport, telemetry, backpressure }));
  const parts: EstimatorParts = { config, log, outages, state, engine, telemetry, kafka, influx, sendOutgoing, backpressure, fail: failure.fail, partitionCount, moves };

  // A start that fails (a refused ACL, a broker that never answered) closes what it opened, so
  // that the process exits with its line instead of idling on open connections and timers.
  let checkpointer: ReturnType<typeof createCheckpointer>;
  try {
    await kafka.ensureTopics();
    outages.kafka.recovered(`Kafka at ${outages.brokers} answers`);
    // A topic that cannot take what the estimator reads or writes (contracts/topics.ts): said once here, and on /healthz.
    kafkaTopicProblems = () => kafka.topicProblems();
    for (const problem of kafka.topicProblems()) log(`WW_ERR_KAFKA_TOPIC_CONFIG: ${problem}`);
    // The count the partitions of the frames topic are compared with from now on (§ Adding partitions).
    const startCount = await kafka.framesPartitionCount();
    partitionCount.observe(startCount);
    moves.start(startCount);
    const reader = await kafka.startCheckpointReader(checkpointGroupPrefix(config), (error) => failure.fail(error));
    const restorer = createPartitionRestorer(parts, reader);
    checkpointer = createCheckpointer(parts);
    await kafka.runFramesConsumer(framesHandlers(parts, restorer, checkpointer));
  } catch (error) {
    await kafka.stop().catch(() => undefined);
    await influx?.close(1_000).catch(() => undefined);
    await metricsServer?.close();
    await metricsExport?.shutdown();
    throw error;
  }
  const timers = startTimers(parts, checkpointer);
  // A soft bound on the heap instead of V8's growth to a few times the live heap (docs/estimator.md, The heap target).
  const heapTarget = config.heapTargetBytes === undefined ? undefined : startHeapTarget(config.heapTargetBytes, (millis) => telemetry.heapCollected(millis));
  if (config.heapTargetBytes !== undefined && heapTarget === undefined) log('heap target off: this Node cannot run a garbage collection on demand (V8 manages the heap alone)');

  log(
    `group ${config.kafka.groupId} on ${config.kafka.framesTopic} (${config.kafka.brokers.join(',')}), window ${config.window.windowMillis} ms, influx ${
      config.influx === undefined ? 'off' : `${config.influx.url} db ${config.influx.database}`
    }, metrics ${metricsServer === undefined ? 'off' : `${config.metricsHost}:${metricsServer.port}`}, otlp ${config.otlp === undefined ? 'off' : config.otlp.url}, heap target ${
      heapTarget === undefined ? 'off' : `${(config.heapTargetBytes ?? 0) / 1_048_576} MiB`
    }`,
  );

  return {
    metricsPort: metricsServer?.port,
    health,
    failed: failure.failed,
    async stop(signal) {
      if (state.stopping) return;
      state.stopping = true;
      if (signal !== undefined) log(`${signal}: checkpointing and stopping`);
      for (const timer of timers) clearInterval(timer);
      heapTarget?.stop();
      // One budget for the whole stop (WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS): the last checkpoint gets
      // 60 % of it, disconnecting from Kafka up to 85 %, InfluxDB what is left, so that a broker that
      // went away or restarted cannot hold the stop (the entry point also ends the process at the
      // bound: service/stop-signal.ts). Whatever was not checkpointed is consumed again by the next owner.
      const startedAt = Date.now();
      const until = (fraction: number): Promise<void> =>
        new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, startedAt + fraction * config.shutdownTimeoutMillis - Date.now())).unref());
      await Promise.race([checkpointer.checkpoint(), until(0.6)]);
      await Promise.race([kafka.stop().catch((error: unknown) => log(`disconnecting from Kafka: ${error instanceof Error ? error.message : String(error)}`)), until(0.85)]);
      const influxMillis = Math.max(100, startedAt + 0.95 * config.shutdownTimeoutMillis - Date.now());
      const left = influx === undefined ? 0 : (await influx.close(influxMillis)).dropped.closed;
      if (left > 0) log(`${left} points could not be written to InfluxDB before shutdown`);
      await metricsServer?.close();
      await metricsExport?.shutdown();
      if (signal !== undefined) log('stopped');
    },
  };
}

/**
 * OpenTelemetry metrics (the Prometheus endpoint and/or OTLP push, metrics-export.ts) and the
 * `/metrics` + `/healthz` server, as configured; none when both are off.
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_METRICS_PORT when the port cannot be bound (the export is shut down first).
 */
async function startMetricsEndpoints(
  config: EstimatorConfig,
  log: (line: string) => void,
  health: () => EstimatorHealth,
): Promise<{ metricsExport: MetricsExport | undefined; metricsServer: MetricsServer | undefined }> {
  if (config.metricsPort === undefined && config.otlp === undefined) return { metricsExport: undefined, metricsServer: undefined };
  const metricsExport = createMetricsExport({
    instanceId: config.instanceId,
    prometheus: config.metricsPort !== undefined,
    otlp: config.otlp,
    maxMetricStreams: config.resultMetrics.maxMetricStreams,
    streamTtlMillis: config.resultMetrics.streamTtlMillis,
    labelAttributes: config.tagLabels,
    log,
  });
  if (config.metricsPort === undefined || metricsExport.prometheus === undefined) return { metricsExport, metricsServer: undefined };
  try {
    const metricsServer = await startMetricsServer({ host: config.metricsHost, port: config.metricsPort, exporter: metricsExport.prometheus, health });
    return { metricsExport, metricsServer };
  } catch (error) {
    await metricsExport.shutdown();
    throw error;
  }
}

/**
 * The InfluxDB writer, when configured, after making sure its database exists (a missing one is
 * created, or the service refuses to start: every write would be refused). An InfluxDB that
 * does not answer yet is not fatal: points wait in the writer's buffer. An outage is logged
 * once (`outage`), with what to try when nothing answers, and its end once; a batch InfluxDB
 * refuses for good is logged each time.
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_INFLUX_DATABASE (see ensureInfluxDatabase).
 */
async function openInfluxSink(config: EstimatorConfig, log: (line: string) => void, telemetry: EstimatorTelemetry, outage: OutageLog): Promise<InfluxWriter | undefined> {
  if (config.influx === undefined) return undefined;
  const influxUrl = config.influx.url;
  const check = await ensureInfluxDatabase(config.influx);
  if (check === 'created') log(`created InfluxDB database "${config.influx.database}" at ${influxUrl}`);
  if (check === 'unauthorized') {
    outage.failed(
      `WW_ERR_ESTIMATOR_INFLUX_WRITE: InfluxDB at ${influxUrl} refused the credentials (HTTP 401); points wait in the buffer and are retried${config.influx.tokenFile === undefined ? '' : `, the token file read again before each retry`} (not logged again until a write succeeds); check WARPWATCH_INFLUX_TOKEN(_FILE)`,
    );
  }
  if (check === 'unreachable') {
    const hint = unreachableServerHint('influx', influxUrl, '--influx-url');
    outage.failed(`InfluxDB at ${influxUrl} does not answer yet; points wait in the buffer and are retried (not logged again until a write succeeds); ${hint}`);
  }
  return createEstimatorInfluxWriter(
    config.influx,
    (error) => {
      telemetry.sinkError('influx');
      // The shared writer ends the message with what to try when nothing answered (service/influx-writer.ts).
      if (!error.retriable) log(`${error.code}: ${error.message}`);
      else outage.failed(`${error.code}: ${error.message} (not logged again until a write succeeds)`);
    },
    () => outage.recovered(`InfluxDB at ${influxUrl} takes writes again`),
  );
}

/** The bounded queue of result records for Kafka (warpwatch.distributions, warpwatch.alerts); drops are counted and logged. */
function createResultsQueue(kafka: EstimatorKafka, telemetry: EstimatorTelemetry, log: (line: string) => void): OutgoingQueue {
  return createOutgoingQueue({
    maxRecords: MAX_OUTGOING_RECORDS,
    produce: (topic, records) => kafka.produce(topic, records),
    onDropped: (dropped, total) => {
      telemetry.outgoingDropped(dropped);
      log(`${dropped} result record(s) for Kafka dropped: the outgoing queue is full (${MAX_OUTGOING_RECORDS}); ${total} in total`);
    },
  });
}

/**
 * The consumer's backpressure (backpressure.ts) over the InfluxDB writer's buffered lines
 * (WARPWATCH_INFLUX_HIGH_WATER_LINES) and the result records held for Kafka
 * (WARPWATCH_RESULTS_HIGH_WATER_RECORDS), each going on again at half of its mark.
 */
function createServiceBackpressure(config: EstimatorConfig, log: (line: string) => void, influx: InfluxWriter | undefined, outgoing: OutgoingQueue): Backpressure {
  const results = { name: 'kafka-results', level: () => outgoing.held, highWater: config.resultsHighWaterRecords, lowWater: Math.floor(config.resultsHighWaterRecords / 2) };
  if (influx === undefined || config.influx === undefined) return createBackpressure({ sinks: [results], log });
  const mark = config.influx.highWaterLines;
  return createBackpressure({ sinks: [{ name: 'influx', level: () => influx.stats().buffered, highWater: mark, lowWater: Math.floor(mark / 2) }, results], log });
}

/** The engine with the service's outputs (InfluxDB, the outgoing queue, result metrics) and telemetry that also logs evictions and corrupt checkpoints. */
function createServiceEngine(
  config: EstimatorConfig,
  log: (line: string) => void,
  sinks: {
    fitter: ParametricFitter | undefined;
    influx: InfluxWriter | undefined;
    outgoing: OutgoingQueue;
    metricsExport: MetricsExport | undefined;
    telemetry: EstimatorTelemetry;
    backpressure: Backpressure;
  },
): EstimatorEngine {
  const { influx, outgoing, metricsExport, telemetry, backpressure } = sinks;
  // Every output the engine hands on makes the consumer look at the buffers before its next message.
  const queue = (topic: string, record: Parameters<OutgoingQueue['queue']>[1]): void => {
    outgoing.queue(topic, record);
    backpressure.noteOutput();
  };
  const quarantineLog = createOncePerStreamLog(log);
  // Every alert also gets a line (rate-limited), so that the log says what InfluxDB and /metrics hold.
  const logAlert = createAlertLog(log, { alertsTopic: config.kafka.alertsTopic });
  const overflowLog = createOncePerStreamLog(log);
  return createEstimatorEngine(
    // The config's slices are the engine's options as they are; the fitter and the clock are passed in.
    { ...config, fitter: sinks.fitter ?? modelFitter, monotonicMillis: () => performance.now() },
    {
      writePoints: (points) => {
        if (influx === undefined) return;
        influx.write(points);
        backpressure.noteOutput();
      },
      publishDistribution: (key, record) => queue(config.kafka.distributionsTopic, outgoingResultRecord(key, record)),
      publishAlert: (key, record) => queue(config.kafka.alertsTopic, outgoingResultRecord(key, record)),
      recordWindow: metricsExport === undefined ? undefined : (result) => metricsExport.results.recordWindow(result),
      recordAlert: (alert) => {
        logAlert(alert);
        metricsExport?.results.recordAlert(alert);
      },
      // Queued with the result records: the checkpoint flushes them before it commits the offsets.
      quarantine: (record) => queue(config.kafka.dlqTopic, dlqRecordOf(record, config.kafka.framesTopic)),
    },
    {
      ...telemetry.engine,
      streamEvicted(streamKey) {
        telemetry.engine.streamEvicted?.(streamKey);
        log(`stream ${streamKey} evicted (WARPWATCH_MAX_STREAMS = ${config.maxLiveStreams} live streams); its open windows were written first`);
      },
      quarantined(record, error) {
        telemetry.engine.quarantined?.(record, error);
        quarantineLog(record.streamKey ?? `?${record.partition}`, () =>
          `${record.code}: ${record.kind} of ${record.streamKey === undefined ? `an unknown stream (partition ${record.partition})` : `stream ${record.streamKey}`} at partition ${record.partition} offset ${record.offset ?? '-'} ${record.reason === 'rejected' ? 'rejected' : 'quarantined'} to ${config.kafka.dlqTopic}: ${record.message}; processing goes on (the stream's later ones are counted in /healthz counters, not logged)`,
        );
      },
      windowOverflowed(streamKey, startMillis, sums) {
        telemetry.engine.windowOverflowed?.(streamKey, startMillis, sums);
        overflowLog(streamKey, () =>
          `WW_ERR_ESTIMATOR_WINDOW_OVERFLOW: stream ${streamKey}, window at ${startMillis}: the sum(s) ${sums.join(', ')} overflowed; the window is written without the fields derived from them (docs/estimator.md, Overflow); later ones of this stream are counted, not logged`,
        );
      },
      checkpointCorrupt(key, error) {
        telemetry.engine.checkpointCorrupt?.(key, error);
        log(`WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT: checkpoint record '${key}' ignored, its stream starts empty: ${error instanceof Error ? error.message : String(error)}`);
      },
    },
  );
}

/** The checkpoint-topic key prefix of a partition: `<group>|<frames topic>|<partition>` (the partition marker's key; streams append `|<stream key>`). */
function checkpointPrefix(config: EstimatorConfig, partition: number): string {
  return `${checkpointGroupPrefix(config)}${partition}`;
}

/**
 * The checkpoint-topic key of a record of `partition`: the partition marker (no stream key),
 * `<prefix>|<stream key>` for a stream, `<prefix>#d|<stream key>` for its dedupe base record
 * (docs/estimator.md, Checkpoints of the dedupe memory). The prefix ends in the partition's
 * digits, so the three never collide, whatever the stream key holds.
 */
function checkpointKey(config: EstimatorConfig, partition: number, streamKey: string | undefined, dedupeBase: boolean): string {
  const prefix = checkpointPrefix(config, partition);
  if (streamKey === undefined) return prefix;
  return dedupeBase ? `${prefix}${DEDUPE_BASE_KEY_MARK}${streamKey}` : `${prefix}|${streamKey}`;
}

/** What follows the partition in a dedupe base record's key, before the stream key. */
const DEDUPE_BASE_KEY_MARK = '#d|';

/** The start of every checkpoint key of this consumer group and frames topic: `<group>|<frames topic>|`. */
function checkpointGroupPrefix(config: EstimatorConfig): string {
  return `${config.kafka.groupId}|${config.kafka.framesTopic}|`;
}

/**
 * The `nextOffset` of a partition marker's text (`{"v":1,"nextOffset":"…"}`), or undefined when
 * there is none or it cannot be read (the engine reports a corrupt marker when it restores).
 *
 * @example markerNextOffset('{"v":1,"nextOffset":"42"}') // 42n
 */
export function markerNextOffset(marker: string | undefined): bigint | undefined {
  if (marker === undefined) return undefined;
  const read = readPartitionMarker(marker);
  return 'nextOffset' in read ? BigInt(read.nextOffset) : undefined;
}

/** How long a partition's restore may read its checkpoint partition before it fails (tried again at the partition's next batch). */
const RESTORE_READ_TIMEOUT_MILLIS = 60_000;

/** Restores partitions from the checkpoint topic; see {@link createPartitionRestorer}. */
interface PartitionRestorer {
  /** Restores a partition once per assignment; started on assignment, awaited by its first batch. */
  ensureRestored(partition: number): Promise<void>;
  /** The partition was revoked: a restore still running for it must not install its state. */
  revoke(partition: number): void;
}

/**
 * Restore of a partition's streams into the engine from the checkpoint partition that holds its
 * records, read to its end as at the start of the restore. Each assignment of a partition has a
 * generation: a restore started before a revocation does not install stale state.
 */
function createPartitionRestorer(parts: EstimatorParts, reader: CheckpointReader): PartitionRestorer {
  const { config, state, engine, kafka, log } = parts;
  const generation = new Map<number, number>();
  const restoring = new Map<number, Promise<void>>();

  const restorePartition = async (partition: number, expectedGeneration: number): Promise<void> => {
    const prefix = checkpointPrefix(config, partition);
    const read = await reader.read(partition, prefix, RESTORE_READ_TIMEOUT_MILLIS);
    if (!state.assigned.has(partition) || (generation.get(partition) ?? 0) !== expectedGeneration) return;
    const records = new Map<string, string>();
    const dedupeBases = new Map<string, string>();
    let marker: string | undefined;
    for (const [key, value] of read) {
      if (key === prefix) marker = value;
      else if (key.startsWith(`${prefix}|`)) records.set(key.slice(prefix.length + 1), value);
      else if (key.startsWith(`${prefix}${DEDUPE_BASE_KEY_MARK}`)) dedupeBases.set(key.slice(prefix.length + DEDUPE_BASE_KEY_MARK.length), value);
    }
    // The protocol writes a checkpoint before it commits its offset, so the committed offset is
    // never past the marker — unless a checkpoint write of an earlier owner landed late, over
    // the newer one (docs/estimator.md, Fault tolerance). Then the frames from the marker on are
    // consumed again (each stream skips what its record already holds): asked before the
    // partition counts as restored, so no batch from the committed offset is processed first.
    const markerOffset = markerNextOffset(marker);
    const committed = await kafka.committedOffset(partition);
    if (!state.assigned.has(partition) || (generation.get(partition) ?? 0) !== expectedGeneration) return;
    if (marker === undefined && committed !== undefined && committed > 0n) {
      // Offsets are committed only after their checkpoint is written, so the checkpoint is not
      // where this instance looks: the topic was deleted or emptied, or its partition count
      // changed (records are placed by it). Consuming goes on from the committed offset.
      log(
        `WW_ERR_ESTIMATOR_CHECKPOINT_MISSING: partition ${partition} of ${config.kafka.framesTopic} has offset ${committed} committed by group ${config.kafka.groupId} but no checkpoint in ${config.kafka.checkpointTopic}: ` +
          `its streams start empty at that offset (frames before it are missing from windows still open); was the checkpoint topic deleted, or its partition count changed? (docs/estimator.md, Fault tolerance: Restore)`,
      );
    }
    if (markerOffset !== undefined && committed !== undefined && committed > markerOffset) {
      kafka.seek(partition, markerOffset);
      log(`partition ${partition}: the checkpoint ends at offset ${markerOffset}, before the committed offset ${committed} (an earlier owner's late write); consuming again from ${markerOffset}`);
    }
    engine.restorePartition(partition, records, marker, Date.now(), dedupeBases);
    state.restored.add(partition);
    log(`partition ${partition} restored (${records.size} streams${marker === undefined ? ', no checkpoint' : ''})`);
  };

  return {
    ensureRestored(partition) {
      if (state.restored.has(partition)) return Promise.resolve();
      let pendingRestore = restoring.get(partition);
      if (pendingRestore === undefined) {
        const expected = generation.get(partition) ?? 0;
        pendingRestore = restorePartition(partition, expected).finally(() => {
          if (restoring.get(partition) === pendingRestore) restoring.delete(partition);
        });
        restoring.set(partition, pendingRestore);
      }
      return pendingRestore;
    },
    revoke(partition) {
      generation.set(partition, (generation.get(partition) ?? 0) + 1);
      restoring.delete(partition);
    },
  };
}

/** Runs checkpoint rounds; see {@link createCheckpointer}. */
interface Checkpointer {
  /**
   * A round over every assigned partition, after the round in progress if there is one (the
   * last checkpoint at shutdown); never rejects (a failure is counted, logged and retried).
   */
  checkpoint(): Promise<void>;
  /** The timer's turn, every {@link checkpointTickMillis}: a round over the partitions due now ({@link createCheckpointTurns}), unless a round is running. */
  tick(): void;
  /** A partition was revoked: forget its pending checkpoint records. */
  forget(partition: number): void;
}

/**
 * The checkpoint-before-commit protocol (checkpoint-protocol.ts) over the service's I/O: the
 * InfluxDB points and result records a checkpoint depends on are flushed first, the
 * checkpoint records written, then offsets committed. One round at a time.
 *
 * A round is spread over the checkpoint interval (docs/estimator.md § Checkpoints spread over the
 * interval): the timer runs every {@link checkpointTickMillis}, and each time the partitions whose
 * turn has come ({@link createCheckpointTurns}) are checkpointed. So each partition is
 * checkpointed once per interval, but the work (encoding the records, producing them, the garbage
 * they leave) comes in slices, not all at once.
 */
function createCheckpointer(parts: EstimatorParts): Checkpointer {
  const { config, state, engine, kafka, influx, telemetry, outages } = parts;
  const protocol = createCheckpointProtocol({
    assigned: () => state.assigned,
    isRestored: (partition) => state.restored.has(partition),
    snapshot: (partition) => engine.checkpoint(partition),
    keyOf: (partition, streamKey, dedupeBase) => checkpointKey(config, partition, streamKey, dedupeBase === true),
    flushInflux: async () => {
      if (influx !== undefined) await influx.flush();
    },
    flushResults: () => parts.sendOutgoing(),
    // A member that may have lost its partitions writes no checkpoint (it could land over the new owner's).
    writeCheckpoint: async (partition, records) => {
      if (fenced(parts)) throw fencedError(config, `checkpoint of partition ${partition}`);
      await kafka.writeCheckpoint(partition, records);
    },
    // The broker refuses a commit of an older generation or an expired member by itself. A commit
    // is not taken as a confirmation: only heartbeats and joins restart the coordinator's session clock.
    commit: (partition, nextOffset) => kafka.commit(partition, nextOffset),
  });
  const turns = createCheckpointTurns(checkpointTickMillis(config.checkpointIntervalMillis) / config.checkpointIntervalMillis);
  let checkpointing: Promise<void> | undefined;
  const round = (partitions: readonly number[] | undefined): Promise<void> => {
    const running = protocol
      .run(partitions)
      .then(() => {
        outages.refusal.text = undefined;
        outages.checkpoint.recovered('checkpoints are written again');
      })
      .catch((error: unknown) => {
        telemetry.sinkError('checkpoint');
        const code = (error as { code?: unknown }).code;
        if (code === 'WW_ERR_KAFKA_AUTHORIZATION') outages.refusal.text = `${code}: ${(error as Error).message}`;
        outages.checkpoint.failed(
          `checkpoint postponed (offsets are not committed; tried again within ${config.checkpointIntervalMillis} ms, not logged again until one succeeds): ${code === 'WW_ERR_KAFKA_AUTHORIZATION' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`,
        );
      })
      .finally(() => {
        if (checkpointing === running) checkpointing = undefined;
      });
    checkpointing = running;
    return running;
  };
  return {
    async checkpoint() {
      while (checkpointing !== undefined) await checkpointing;
      await round(undefined);
    },
    tick() {
      const held = [...state.assigned].filter((partition) => state.restored.has(partition));
      const due = turns.next(held, checkpointing !== undefined);
      if (due.length > 0) void round(due);
    },
    forget: (partition) => protocol.forget(partition),
  };
}

/**
 * The frames consumer's handlers: assignment (revoked partitions released, new ones restored
 * at once; all of them when this consumer joined as a new member), batches ({@link processBatch};
 * one ends a Kafka outage) and crashes (every partition released; logged, and one where the
 * broker does not answer is part of the Kafka outage, said once).
 */
function framesHandlers(parts: EstimatorParts, restorer: PartitionRestorer, checkpointer: Checkpointer): FramesHandlers {
  const { config, state, engine, log, outages, kafka } = parts;
  const reportFuture = createFutureFrameReporter(config, log);
  /** Forgets a partition this member no longer holds: its state lives on in the checkpoint topic. */
  const release = (partition: number): void => {
    state.assigned.delete(partition);
    restorer.revoke(partition);
    state.restored.delete(partition);
    checkpointer.forget(partition);
    state.lag.delete(partition);
    state.lagMeasuredAt.delete(partition);
    state.reachableSince.delete(partition);
    engine.releasePartition(partition);
  };
  return {
    onAssignment(partitions, membership) {
      // The join and sync answered: the coordinator counts this member's session from then.
      state.lease.confirm({ sentAtMillis: membership.joinStartedAtMillis });
      // A new member holds nothing from before: between the old membership and this one other
      // members may have served these partitions and committed past this process's state of
      // them, so every partition is restored again from the checkpoints (and consumed again
      // from the committed offsets), kept or not.
      const held = partitionsToRelease(state.assigned, partitions, membership.rejoined);
      for (const partition of held) release(partition);
      if (membership.rejoined && partitions.some((partition) => held.includes(partition))) {
        log(`joined the group again as a new member: partitions restored again from the checkpoint topic (others may have served them meanwhile)`);
      }
      for (const partition of partitions) state.assigned.add(partition);
      log(`assigned partitions [${[...state.assigned].sort((a, b) => a - b).join(', ')}] of ${config.kafka.framesTopic}`);
      // Restore now rather than at the first batch, so a partition is ready before its frames arrive.
      for (const partition of partitions) {
        restorer.ensureRestored(partition).catch((error: unknown) => {
          log(`restoring partition ${partition} failed (retried at its next batch): ${error instanceof Error ? error.message : String(error)}`);
        });
      }
    },
    onBatch: (batch) => {
      outages.kafka.recovered(`Kafka at ${outages.brokers} answers again`);
      outages.consumerCrash.recovered('the consumer reads again');
      return processBatch(parts, restorer, reportFuture, batch);
    },
    onMembershipConfirmed(sentAtMillis) {
      state.lease.confirm({ sentAtMillis });
      if (state.lease.holds(Date.now())) outages.fence.recovered('the group coordinator confirms this member again: its partitions are served again');
    },
    onCrash(error, restart) {
      state.lease.end(Date.now());
      // kafkajs has left the group: its partitions may be served by other members from now on,
      // so this process holds none of them until it joins again (then restored afresh).
      for (const partition of [...state.assigned]) release(partition);
      // A broker that went away is one outage (said once), not a line per crash and restart.
      if (restart && isUnreachableError(error)) outages.kafkaUnreachable(`consumer: ${error.message}`);
      else if (restart) {
        // kafkajs restarts it at once, again and again while the cause lasts: one line per streak.
        outages.consumerCrash.failed(`consumer crashed (restarting; not logged again until a batch arrives): ${error.message}`);
        // A frames topic that is gone (deleted) answers "does not host this topic-partition" to
        // every restart: nothing will ever come, so the process ends for its supervisor.
        if ((error as { type?: unknown }).type === 'UNKNOWN_TOPIC_OR_PARTITION' || /does not host this topic-partition/i.test(error.message)) {
          void kafka.framesTopicExists().then(
            (exists) => {
              if (!exists) {
                parts.fail(
                  new EstimatorError(
                    'WW_ERR_ESTIMATOR_KAFKA',
                    `the frames topic ${config.kafka.framesTopic} does not exist any more (deleted?): there is nothing to consume; exiting 1 so that the supervisor restarts the estimator once it is created again (docs/errors.md, Kafka failures)`,
                    { retriable: false, cause: error },
                  ),
                );
              }
            },
            () => undefined,
          );
        }
      }
      else {
        // kafkajs will not restart it (a non-retriable error: an unsupported codec, an authorization
        // error, a deleted topic): a process without a consumer must not look alive (docs/errors.md, Kafka failures).
        // A refusal names the ACL: Read on the group (joins, commits) or on the frames topic (fetches).
        // kafkajs drops the broker's answer when it cannot find the group coordinator for good:
        // with an authorizer, that is the answer to a principal that may not use the group.
        const coordinatorRefused = error.name === 'KafkaJSGroupCoordinatorNotFound';
        const denial = stoppedConsumerDenial(error);
        const needs: KafkaAclNeed[] | undefined =
          denial === 'Group'
            ? [{ operation: 'Read', resourceType: 'Group', name: config.kafka.groupId, pattern: 'PREFIXED' }]
            : denial === 'Topic'
              ? [{ operation: 'Read', resourceType: 'Topic', name: config.kafka.framesTopic }]
              : undefined;
        const acl = needs === undefined ? '' : missingAclText(kafkaPrincipalOf(config.kafka.security ?? { sasl: undefined, tls: undefined }), needs);
        const why =
          needs === undefined
            ? error.message
            : coordinatorRefused
              ? `Kafka would not name the coordinator of group ${config.kafka.groupId} (kafkajs: ${error.message}), the answer an authorizer gives a principal that may not use the group: ${acl}`
              : `Kafka refused: ${acl}`;
        parts.fail(
          new EstimatorError(
            needs === undefined ? 'WW_ERR_ESTIMATOR_KAFKA' : 'WW_ERR_KAFKA_AUTHORIZATION',
            `the consumer of ${config.kafka.framesTopic} stopped for good (kafkajs does not restart it): ${why}; exiting 1 so that the supervisor restarts the estimator (docs/errors.md, Kafka failures)`,
            { retriable: false, cause: error },
          ),
        );
      }
    },
  };
}

/**
 * One batch of a partition: waits for the partition's restore, hands each message to the
 * engine under a consumer span, yields to the event loop every {@link YIELD_AFTER_MILLIS}
 * (heartbeating), waits (heartbeating) while an output buffer is above its high-water mark
 * (backpressure.ts: before the batch, after a message that made outputs, and at every yield),
 * and updates the consumer lag.
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_CHECKPOINT_READ when the partition is assigned but
 *   could not be restored (kafkajs then fetches the batch again; a batch is never skipped).
 */
async function processBatch(
  parts: EstimatorParts,
  restorer: PartitionRestorer,
  reportFuture: (partition: number, offset: string, key: string | undefined) => void,
  batch: Parameters<FramesHandlers['onBatch']>[0],
): Promise<void> {
  const { config, state, engine, telemetry } = parts;
  if (!state.assigned.has(batch.partition)) {
    if (batch.isStale()) return; // revoked in a rebalance: the batch is kafkajs' to drop
    // A batch of a membership that ended (a crash released every partition): restoring here
    // would drop the frames between the committed offset and this batch. Failing makes kafkajs
    // start again from the committed offsets, after a join that assigns and restores.
    throw new EstimatorError('WW_ERR_ESTIMATOR_KAFKA', `a batch of partition ${batch.partition} of ${config.kafka.framesTopic}, which this member does not hold; consuming again from the committed offset`, { retriable: true });
  }
  if (!state.restored.has(batch.partition)) await restorer.ensureRestored(batch.partition);
  if (!state.restored.has(batch.partition)) {
    if (!state.assigned.has(batch.partition) || batch.isStale()) return; // revoked while restoring
    // Never skip a batch of an assigned partition: failing makes kafkajs fetch it again.
    throw new EstimatorError('WW_ERR_ESTIMATOR_CHECKPOINT_READ', `partition ${batch.partition} of ${config.kafka.framesTopic} is assigned but not restored`, { retriable: true });
  }
  // A member whose membership is not confirmed within its lease asks the coordinator (a
  // heartbeat); if that does not confirm it, the batch ends with an error, unprocessed from here:
  // kafkajs fetches it again, and the engine skips what it already applied (docs/estimator.md § Fencing).
  const ensureOwner = async (): Promise<void> => {
    if (state.lease.holds(Date.now())) return;
    await batch.heartbeat();
    if (fenced(parts)) throw fencedError(config, `a batch of partition ${batch.partition}`);
  };
  await ensureOwner();
  // The batch's high watermark is what the broker had when the fetch was answered, no later than
  // now: "caught up" from it holds as of now, never as of the batch's end (frames produced while
  // the batch is processed are unknown). And while the batch is processed the partition is not
  // caught up: its own frames still wait. So the partition reads `behind` (lag ≥ the batch) until
  // the batch is done, then the batch's lag dated now; a long batch thus leaves a measurement too
  // old to let windows close by idleness until the offsets probe measures again (docs/estimator.md,
  // Late data: an overloaded estimator falls behind, it does not close windows early).
  const fetchedBy = Date.now();
  const firstOffset = batch.firstOffset;
  if (firstOffset !== undefined) noteLag(state, batch.partition, BigInt(batch.highWatermark) - BigInt(firstOffset), fetchedBy, lagFreshnessMillis(probeEveryMillis(config)));
  const interrupted = (): boolean => batch.isStale() || state.stopping || !state.restored.has(batch.partition);
  let last: string | undefined;
  let sliceStart = performance.now();
  // Backpressure: the frames wait in Kafka while the outputs of earlier ones wait for their sinks
  // (docs/estimator.md, Backpressure). Each message is applied atomically, so a pause between two is safe.
  const roomToGoOn = async (): Promise<boolean> => {
    const { outcome } = await parts.backpressure.waitForRoom({ heartbeat: () => batch.heartbeat(), interrupted });
    if (outcome === 'room') await ensureOwner();
    sliceStart = performance.now();
    return outcome === 'room';
  };
  const blocked = parts.backpressure.check() && !(await roomToGoOn());
  // Whether the batch was interrupted (revoked, stopping, released) can only change while this
  // function awaits: it is asked before the first message and after every await below, not per
  // message (kafkajs' isStale() costs ~0.4 µs, a twentieth of a frame's work).
  const stopped = blocked || interrupted();
  for (const message of batch.messages) {
    if (stopped) break;
    if (parts.backpressure.mustWait() && !(await roomToGoOn())) break;
    if (performance.now() - sliceStart >= YIELD_AFTER_MILLIS) {
      // A long batch (window closes run the model) yields now and then, so the InfluxDB
      // writes of windows closed so far start while the rest of the batch is processed.
      // Each message is applied atomically, so a checkpoint taken meanwhile is consistent.
      await new Promise<void>((resolve) => setImmediate(resolve));
      // kafkajs sends heartbeats only when asked (throttled to the heartbeat interval): a
      // long batch must not look like a dead member after the session timeout.
      await batch.heartbeat();
      sliceStart = performance.now();
      if (interrupted()) break;
      await ensureOwner();
      // The timers' outputs (idle closes, pipeline points) come between messages: looked at per slice.
      if (parts.backpressure.check() && !(await roomToGoOn())) break;
    }
    // Without a tracer SDK the span would be a no-op nobody sees: not built (docs/estimator.md, Self-telemetry).
    const span = telemetry.spansRecordable()
      ? telemetry.tracer.startSpan('warpwatch.estimator.frame', { kind: SpanKind.CONSUMER }, contextFromTraceparent(message.headers.traceparent))
      : undefined;
    const outcome = engine.handleMessage(batch.partition, message.offset, message.value, Date.now(), message.headers, message.timestampMillis);
    parts.moves.observe(batch.partition, message.key);
    if (outcome === 'future') reportFuture(batch.partition, message.offset, message.key);
    if (span !== undefined) {
      span.setAttributes(frameSpanAttributes(batch.partition, message.offset, message.key, outcome));
      span.end();
    }
    last = message.offset;
  }
  if (last !== undefined) {
    // The fetch that brought this batch is a measurement from a broker that answered, dated when the batch came.
    noteLag(state, batch.partition, BigInt(batch.highWatermark) - (BigInt(last) + 1n), fetchedBy, lagFreshnessMillis(probeEveryMillis(config)));
    reportLag(state, telemetry, config);
  }
  await batch.heartbeat();
}

/**
 * Logs frames dated too far ahead of this host's clock: the first of each stream, then every
 * 1,000th (all are counted by the engine's telemetry). Remembers at most 10,000 streams.
 */
function createFutureFrameReporter(config: EstimatorConfig, log: (line: string) => void): (partition: number, offset: string, key: string | undefined) => void {
  const futureSeen = new Map<string, number>();
  return (partition, offset, key) => {
    const stream = key ?? '?';
    const seen = (futureSeen.get(stream) ?? 0) + 1;
    if (futureSeen.size < 10_000 || futureSeen.has(stream)) futureSeen.set(stream, seen);
    if (seen === 1 || seen % 1000 === 0) {
      log(
        `WW_ERR_ESTIMATOR_FRAME_FROM_FUTURE: stream ${stream} (partition ${partition}, offset ${offset}): frame dated more than ${config.window.maxFutureSkewMillis} ms ahead of this host's clock, not recorded (${seen} so far for this stream; WARPWATCH_MAX_FUTURE_SKEW_MILLIS)`,
      );
    }
  };
}

/** How often the lag probe asks the broker for the frames topic's partition count (ms; docs/estimator.md § Adding partitions). */
const PARTITION_COUNT_EVERY_MILLIS = 30_000;

/** How often the engine ticks and the lag of idle partitions is measured (ms): a quarter of the idle-close time, within 50..1,000. */
function probeEveryMillis(config: EstimatorConfig): number {
  return Math.max(50, Math.min(1_000, Math.floor(config.window.idleCloseMillis / 4)));
}

/**
 * The total consumer lag over the restored partitions, or undefined while it is unknown: some
 * restored partition has no measurement from a broker that answered within `freshnessMillis`.
 *
 * @example consumerLagOf(state, Date.now(), 2_000) // 0 when caught up; undefined while the broker does not answer
 */
export function consumerLagOf(state: Pick<PartitionState, 'restored' | 'lag' | 'lagMeasuredAt'>, nowMillis: number, freshnessMillis: number): number | undefined {
  let total = 0n;
  for (const partition of state.restored) {
    const measuredAt = state.lagMeasuredAt.get(partition);
    if (measuredAt === undefined || nowMillis - measuredAt > freshnessMillis) return undefined;
    total += state.lag.get(partition) ?? 0n;
  }
  return Number(total);
}

/** The consumer lag gauge from the per-partition lags (undefined while unknown). */
function reportLag(state: PartitionState, telemetry: EstimatorTelemetry, config: EstimatorConfig): void {
  telemetry.counters.consumerLag = consumerLagOf(state, Date.now(), lagFreshnessMillis(probeEveryMillis(config)));
}

/**
 * The partition count of the frames topic as this instance first read it, and whether it
 * changed since (docs/estimator.md § Adding partitions): a producer places a stream by its key's
 * hash modulo the count, so a new count moves most streams to another partition, and a window
 * open at that moment is split between the two partitions' states. Returns the line to say (and
 * keep on /healthz) the first time a different count is read, else undefined.
 *
 * @example const watch = createPartitionCountWatch('warpwatch.frames'); watch.observe(6); watch.observe(12) // 'WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: …'
 */
export function createPartitionCountWatch(topic: string): { observe(count: number): string | undefined; readonly problem: string | undefined } {
  let first: number | undefined;
  let problem: string | undefined;
  return {
    observe(count) {
      if (count <= 0) return undefined;
      first ??= count;
      if (count === first || problem !== undefined) return undefined;
      problem =
        `WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: ${topic} has ${count} partitions, ${first} when this instance started: the collectors move most streams to another partition when they next read the topic's metadata (within 5 minutes), ` +
        `and a window open at that moment is split between two partitions (both halves written to the same InfluxDB point, the last one kept). Follow docs/estimator.md § Adding partitions; restart the estimators once done to clear this`;
      return problem;
    },
    get problem() {
      return problem;
    },
  };
}

/**
 * Whether this member must not act as the owner of its partitions now: the group coordinator has
 * not confirmed its membership within the lease (engine/membership-lease.ts; docs/estimator.md §
 * Fencing). Said once per lapse (with the partitions concerned), and once when it ends.
 */
function fenced(parts: Pick<EstimatorParts, 'state' | 'outages' | 'config'>, nowMillis: number = Date.now()): boolean {
  const { state, outages, config } = parts;
  if (state.lease.holds(nowMillis)) return false;
  if (state.assigned.size > 0) {
    const status = state.lease.status(nowMillis);
    outages.fence.failed(
      `WW_ERR_ESTIMATOR_FENCED: the group coordinator has not confirmed this member ${status.confirmedAgoMillis === null ? 'since its membership ended' : `for ${status.confirmedAgoMillis} ms`} (the lease is ${status.leaseMillis} ms, half the session timeout): ` +
        `another member may own partitions [${[...state.assigned].sort((a, b) => a - b).join(', ')}] of ${config.kafka.framesTopic} now, so this one closes no window, writes no checkpoint and commits nothing for them until a heartbeat is answered (or it joins again and restores them); docs/estimator.md § Fencing`,
    );
  }
  return true;
}

/** The error a batch or a checkpoint write of a fenced member ends with (retriable: kafkajs fetches the batch again; the checkpoint stays pending). */
function fencedError(config: EstimatorConfig, what: string): EstimatorError {
  return new EstimatorError('WW_ERR_ESTIMATOR_FENCED', `${what} of ${config.kafka.framesTopic}: this member's membership is not confirmed within its lease (docs/estimator.md § Fencing)`, { retriable: true });
}

/**
 * Measures the lag of every restored partition from the frames topic's high watermarks (a
 * partition without new frames gets no batches, so batches alone cannot say that it is caught
 * up). When the broker does not answer, the measurements are dropped: nothing closes by
 * idleness until it answers again ({@link idleCloseAllowed}). One probe at a time.
 */
function createLagProbe(parts: EstimatorParts): () => void {
  const { config, state, engine, kafka, telemetry, outages, log } = parts;
  const freshness = lagFreshnessMillis(probeEveryMillis(config));
  // A broker that does not answer is the Kafka outage (said once); any other failure (a topic
  // that went away, a missing permission) is said once here, and once when it ends.
  const probeFailure = createOutageLog(log);
  let running = false;
  const partitionCount = parts.partitionCount;
  let countReadAt = Date.now();
  return () => {
    if (running || state.stopping || state.restored.size === 0) return;
    running = true;
    // The offsets hold as of the request: a frame produced while it is answered is not in them.
    const askedAt = Date.now();
    kafka
      .frameOffsets()
      .then((offsets) => {
        const now = Date.now();
        // The partition count, asked of the broker itself every 30 s (the offsets come from kafkajs' cached metadata).
        if (now - countReadAt >= PARTITION_COUNT_EVERY_MILLIS) {
          countReadAt = now;
          kafka
            .framesPartitionCount()
            .then((count) => {
              const changed = partitionCount.observe(count);
              if (changed !== undefined) log(changed);
            })
            .catch(() => undefined); // the offsets probe says an outage; the count is read again in 30 s
        }
        for (const partition of state.restored) {
          const offset = offsets.get(partition);
          const position = engine.nextOffset(partition);
          if (offset === undefined || position === undefined) {
            state.lagMeasuredAt.delete(partition);
            continue;
          }
          noteLag(state, partition, offset.high - (position > offset.low ? position : offset.low), askedAt, freshness);
        }
        reportLag(state, telemetry, config);
        // A broker answered: the Kafka outage is over even when no partition has frames to fetch.
        outages.kafka.recovered(`Kafka at ${outages.brokers} answers again`);
        probeFailure.recovered(`the offsets of ${config.kafka.framesTopic} are read again; idle windows close again`);
      })
      .catch((error: unknown) => {
        // Not answered: the lag is unknown, so nothing closes by idleness until it is known again.
        state.lagMeasuredAt.clear();
        reportLag(state, telemetry, config);
        const reason = error instanceof Error ? error.message : String(error);
        if (isUnreachableError(error)) outages.kafkaUnreachable(`lag probe: ${reason}`);
        else
          probeFailure.failed(
            `WW_ERR_ESTIMATOR_KAFKA: the offsets of ${config.kafka.framesTopic} cannot be read (${reason}); windows of silent streams stay open until they can (retried every ${probeEveryMillis(config)} ms, not logged again until then)`,
          );
      })
      .finally(() => {
        running = false;
      });
  };
}

/**
 * The service's timers: engine ticks (idle windows close in restored partitions whose lag is
 * known to be zero, {@link idleCloseAllowed}) with a lag probe, the outgoing queue every 100 ms,
 * checkpoints (each partition once per `checkpointIntervalMillis`, in slices: {@link createCheckpointer}), a `warpwatch_pipeline` point every 10 s, and a
 * progress line in the log every minute (progress-log.ts). Cleared by stop().
 */
function startTimers(parts: EstimatorParts, checkpointer: Checkpointer): NodeJS.Timeout[] {
  const { config, state, engine, telemetry, influx, log } = parts;
  let lastProgress: ProgressSnapshot = { framesIn: 0, framesRejected: 0, windowsClosed: 0 };
  const tickEveryMillis = probeEveryMillis(config);
  const limits = { freshnessMillis: lagFreshnessMillis(tickEveryMillis), idleCloseMillis: config.window.idleCloseMillis };
  const probeLag = createLagProbe(parts);
  return [
    setInterval(() => {
      if (state.stopping) return;
      probeLag();
      const now = Date.now();
      // A fenced member's timers close nothing (docs/estimator.md § Fencing).
      if (state.assigned.size > 0 && fenced(parts, now)) return;
      engine.tick(now, (partition) => caughtUpAsOf(state, partition, now, limits));
    }, tickEveryMillis),
    setInterval(() => {
      parts.sendOutgoing().catch((error: unknown) => log(`${error instanceof Error ? error.message : String(error)}`));
    }, 100),
    setInterval(() => checkpointer.tick(), checkpointTickMillis(config.checkpointIntervalMillis)),
    setInterval(() => {
      const counters = telemetry.counters;
      influx?.write([
        pipelinePoint(
          config.instanceId,
          {
            framesIn: counters.framesIn,
            framesOut: counters.framesOut,
            framesRejected: counters.framesRejected,
            framesDropped: counters.framesDropped,
            consumerLag: counters.consumerLag,
            windowLatencyMillis: counters.lastWindowLatencyMillis,
            influxWriteErrors: influx.stats().writeErrors,
          },
          Date.now(),
        ),
      ]);
    }, 10_000),
    setInterval(() => {
      const counters = telemetry.counters;
      log(progressMessage(lastProgress, counters, engine.liveStreams(), engine.partitions().length));
      lastProgress = { framesIn: counters.framesIn, framesRejected: counters.framesRejected, windowsClosed: counters.windowsClosed };
    }, PROGRESS_LOG_MILLIS),
  ];
}
