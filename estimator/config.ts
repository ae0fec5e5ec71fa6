import { hostname } from 'node:os';
import { ESTIMATOR_FIELDS } from '../contracts/index.ts';
import { ConfigReader, readKafkaSecurity, type EnvSource, type KafkaCompression, type KafkaSecurityConfig, type ReadTextFile, type Secret } from '../service/index.ts';
import { EstimatorConfigError } from './errors.ts';
import type { AlertSettings } from './engine/alert-detector.ts';
import type { EngineComputeSettings, EngineWindowSettings } from './engine/estimator-engine.ts';

/** Which histogram loss_predicted is computed from at window close. */
export type PredictionBasis = (typeof ESTIMATOR_FIELDS.predictionBasis.values)[number];

/**
 * The estimator's Kafka SASL/TLS settings: the shared security slice (service/kafka-security.ts),
 * credentials held as Secrets until service/kafka-client.ts hands them to kafkajs.
 */
export type EstimatorKafkaSecurity = KafkaSecurityConfig;

/** Validated, frozen settings of the estimator; built once by {@link loadEstimatorConfig}. */
export interface EstimatorConfig {
  /** Instance name (tag `instance` of warpwatch_pipeline; Kafka client id suffix). */
  readonly instanceId: string;
  readonly kafka: {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly groupId: string;
    readonly framesTopic: string;
    readonly distributionsTopic: string;
    readonly alertsTopic: string;
    readonly checkpointTopic: string;
    /** Kafka compression of the checkpoint records (WARPWATCH_CHECKPOINT_COMPRESSION). */
    readonly checkpointCompression: KafkaCompression;
    /** Kafka compression of the distribution, alert and DLQ records (WARPWATCH_RESULTS_COMPRESSION). */
    readonly resultsCompression: KafkaCompression;
    /** Where rejected frames and quarantined frames and windows go (docs/estimator.md, Quarantine). */
    readonly dlqTopic: string;
    /** Partitions used when the estimator creates a missing topic. */
    readonly partitions: number;
    /** Replication factor for created topics (-1 = broker default). */
    readonly replicationFactor: number;
    /** Where a group without committed offsets or checkpoints starts: earliest (true) or latest. */
    readonly fromBeginning: boolean;
    readonly sessionTimeoutMillis: number;
    readonly heartbeatIntervalMillis: number;
    readonly connectionTimeoutMillis: number;
    /**
     * SASL/TLS from the KAFKA_SECURITY_FIELDS slice (WARPWATCH_KAFKA_SASL_*, WARPWATCH_KAFKA_TLS*),
     * read by the reader the collector uses too (service/kafka-security.ts); absent or
     * `{ sasl: undefined, tls: undefined }` = plaintext without login.
     */
    readonly security?: EstimatorKafkaSecurity;
  };
  /** InfluxDB sink, or undefined when disabled (`--influx-url off`). */
  readonly influx:
    | {
        readonly url: string;
        /** InfluxDB 1.8 database; the v2 API bucket is `<database>/<retentionPolicy>`. */
        readonly database: string;
        readonly retentionPolicy: string;
        /** Duration of the retention policy a database the estimator creates gets (InfluxQL, e.g. 30d; INF = forever). */
        readonly retentionDuration: string;
        /** v2 API token ('' for an open 1.8 server, or 'user:password'), kept a Secret down to service/influx-client.ts. */
        readonly token: Secret;
        /** The file the token was read from (WARPWATCH_INFLUX_TOKEN_FILE), read again after InfluxDB refuses it; undefined when not from a file. */
        readonly tokenFile?: string | undefined;
        readonly org: string;
        readonly batchSize: number;
        /** Longest time a point waits before its write request starts (0 = as soon as the event loop is free). */
        readonly flushIntervalMillis: number;
        /** Write requests in flight at a time. */
        readonly maxInFlightBatches: number;
        /** Bound of the in-memory line buffer while InfluxDB is away; overflow is dropped and counted. */
        readonly maxBufferLines: number;
        /** Consumption pauses while more lines than this are buffered, and goes on at half of it (backpressure, docs/estimator.md); below maxBufferLines. */
        readonly highWaterLines: number;
        readonly minRetryDelayMillis: number;
        readonly maxRetryDelayMillis: number;
        readonly requestTimeoutMillis: number;
      }
    | undefined;
  /** Windows, idle close and retention, prediction basis, future skew: the engine's window settings as they are. */
  readonly window: EngineWindowSettings;
  /** Standard error, quantiles, sweep, fit, histogram points: the engine's compute settings as they are. */
  readonly compute: EngineComputeSettings;
  /** WARPWATCH_ALERT_*: the engine's alerting settings as they are. */
  readonly alerts: AlertSettings;
  /** How often state is checkpointed and offsets committed (processing time). */
  readonly checkpointIntervalMillis: number;
  /** Live streams held at most per instance (WARPWATCH_MAX_STREAMS); beyond, the least recently recorded is evicted (counted). */
  readonly maxLiveStreams: number;
  /** The heap target (WARPWATCH_HEAP_TARGET_MIB) in bytes, or undefined (`off`): service/heap-target.ts. */
  readonly heapTargetBytes: number | undefined;
  /** Consumption pauses while more result records than this wait for Kafka, and goes on at half of it (backpressure, docs/estimator.md). */
  readonly resultsHighWaterRecords: number;
  /** Collector labels written as InfluxDB tags (WARPWATCH_TAG_LABELS). */
  readonly tagLabels: readonly string[];
  /** Port for /metrics and /healthz (0 = any free port), or undefined when disabled. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** OTLP/HTTP (protobuf) push of the OpenTelemetry metrics, or undefined when off (metrics-export.ts). */
  readonly otlp: { readonly url: string; readonly intervalMillis: number } | undefined;
  /** The per-stream result metrics (adapters/result-metrics.ts): cap on exported streams (WARPWATCH_METRICS_MAX_STREAMS) and their idle TTL. */
  readonly resultMetrics: { readonly maxMetricStreams: number; readonly streamTtlMillis: number };
  readonly shutdownTimeoutMillis: number;
}

/** Command-line flags as strings (undefined = not given); flags take precedence over the environment. */
export interface EstimatorFlags {
  readonly brokers?: string | undefined;
  readonly groupId?: string | undefined;
  readonly windowMillis?: string | undefined;
  readonly influxUrl?: string | undefined;
  readonly influxDatabase?: string | undefined;
  readonly metricsPort?: string | undefined;
  readonly current?: string | undefined;
  readonly halfLifeLaunches?: string | undefined;
  readonly lastLaunches?: string | undefined;
  readonly predictionBasis?: string | undefined;
  readonly bootstrapReplicates?: string | undefined;
  readonly fromBeginning?: boolean | undefined;
  readonly instance?: string | undefined;
}

/** The estimator's configuration fields (contracts/config-fields.ts), by config property. */
const F = ESTIMATOR_FIELDS;

/** First delay of the InfluxDB write retries (not configurable; WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS caps them). */
const INFLUX_MIN_RETRY_DELAY_MILLIS = 500;
/** Longest wait for one InfluxDB write request (not configurable). */
const INFLUX_REQUEST_TIMEOUT_MILLIS = 10_000;

/**
 * The InfluxDB high-water mark when WARPWATCH_INFLUX_HIGH_WATER_LINES is not set: twice
 * (requests in flight + 1) × batch size, so that when consumption goes on (at half the mark)
 * every request slot can be busy and a full batch waits behind them — InfluxDB never idles
 * for want of lines — but at most half the buffer's bound, so that the lines a burst adds
 * between two looks at the level cannot reach the bound.
 *
 * @example defaultInfluxHighWaterLines(200_000, 5_000, 3) // 40000
 * @example defaultInfluxHighWaterLines(30_000, 5_000, 3) // 15000
 */
function defaultInfluxHighWaterLines(maxBufferLines: number, batchSize: number, maxInFlight: number): number {
  return Math.max(1, Math.min(2 * (maxInFlight + 1) * batchSize, Math.floor(maxBufferLines / 2)));
}

/** The input of the estimator's config loaders. */
export interface EstimatorConfigInput {
  readonly env: EnvSource;
  readonly flags?: EstimatorFlags | undefined;
  /** Reads the SASL password, TLS key and certificate files (`*_FILE` variables); tests pass their own. */
  readonly readTextFile?: ReadTextFile | undefined;
}

/**
 * Builds the estimator configuration from environment variables (`WARPWATCH_*`) and
 * command-line flags, once at start-up, from the field definitions ESTIMATOR_FIELDS
 * (contracts/config-fields.ts; their table is docs/estimator.md "Configuration"): every value
 * validated, all problems reported together, the result deeply frozen. Kafka SASL/TLS are read
 * from the KAFKA_SECURITY_FIELDS slice as the collector reads them (credentials held as Secrets).
 *
 * @throws EstimatorConfigError (WW_ERR_ESTIMATOR_CONFIG) listing every invalid setting: name, value, why.
 * @example
 * const config = loadEstimatorConfig({ env: process.env, flags: { windowMillis: '5000' } });
 */
export function loadEstimatorConfig(input: EstimatorConfigInput): EstimatorConfig {
  const reader = new ConfigReader({ env: input.env, flags: input.flags ?? {}, readTextFile: input.readTextFile });
  const kafka = readKafka(reader);
  const v = reader.read({
    instance: F.instance,
    checkpointIntervalMillis: F.checkpointIntervalMillis,
    maxLiveStreams: F.maxLiveStreams,
    heapTargetMebibytes: F.heapTargetMebibytes,
    resultsHighWaterRecords: F.resultsHighWaterRecords,
    tagLabels: F.tagLabels,
    metricsPort: F.metricsPort,
    metricsHost: F.metricsHost,
    otlpEndpoint: F.otlpEndpoint,
    otlpIntervalMillis: F.otlpIntervalMillis,
    maxMetricStreams: F.maxMetricStreams,
    metricsStreamTtlMillis: F.metricsStreamTtlMillis,
    shutdownTimeoutMillis: F.shutdownTimeoutMillis,
  });
  const config: EstimatorConfig = {
    instanceId: v.instance ?? `${hostname()}-${process.pid}`,
    kafka,
    influx: readInflux(reader),
    window: readWindow(reader),
    compute: readCompute(reader),
    alerts: readAlerts(reader),
    checkpointIntervalMillis: v.checkpointIntervalMillis,
    maxLiveStreams: v.maxLiveStreams,
    heapTargetBytes: v.heapTargetMebibytes === undefined ? undefined : v.heapTargetMebibytes * 1_048_576,
    resultsHighWaterRecords: v.resultsHighWaterRecords,
    tagLabels: v.tagLabels,
    metricsPort: v.metricsPort,
    metricsHost: v.metricsHost,
    otlp: v.otlpEndpoint === undefined ? undefined : Object.freeze({ url: v.otlpEndpoint, intervalMillis: v.otlpIntervalMillis }),
    resultMetrics: Object.freeze({ maxMetricStreams: v.maxMetricStreams, streamTtlMillis: v.metricsStreamTtlMillis }),
    shutdownTimeoutMillis: v.shutdownTimeoutMillis,
  };
  if (reader.problems.length > 0) throw new EstimatorConfigError(reader.problems);
  return Object.freeze(config);
}

/**
 * Only the estimator's Kafka slice (brokers, group, topics, consumer timeouts, SASL/TLS): what a command
 * that reads the estimator's topics without running it (`advise --stream`) needs. Other settings
 * are not read, so a bad unrelated one does not stop it.
 *
 * @throws EstimatorConfigError listing every invalid Kafka setting.
 * @example const kafka = loadEstimatorKafkaConfig({ env: process.env }); // kafka.distributionsTopic
 */
export function loadEstimatorKafkaConfig(input: EstimatorConfigInput): EstimatorConfig['kafka'] {
  const reader = new ConfigReader({ env: input.env, flags: input.flags ?? {}, readTextFile: input.readTextFile });
  const kafka = readKafka(reader);
  if (reader.problems.length > 0) throw new EstimatorConfigError(reader.problems);
  return kafka;
}

/** The Kafka slice: brokers, group, topics, consumer settings and the shared SASL/TLS slice. */
function readKafka(reader: ConfigReader): EstimatorConfig['kafka'] {
  const v = reader.read({
    brokers: F.brokers,
    clientId: F.clientId,
    groupId: F.groupId,
    framesTopic: F.framesTopic,
    distributionsTopic: F.distributionsTopic,
    alertsTopic: F.alertsTopic,
    checkpointTopic: F.checkpointTopic,
    checkpointCompression: F.checkpointCompression,
    resultsCompression: F.resultsCompression,
    dlqTopic: F.dlqTopic,
    partitions: F.partitions,
    replicationFactor: F.replicationFactor,
    fromBeginning: F.fromBeginning,
    sessionTimeoutMillis: F.sessionTimeoutMillis,
    heartbeatIntervalMillis: F.heartbeatIntervalMillis,
    connectionTimeoutMillis: F.connectionTimeoutMillis,
  });
  if (v.heartbeatIntervalMillis * 3 > v.sessionTimeoutMillis) {
    reader.report({
      name: F.heartbeatIntervalMillis.env,
      value: String(v.heartbeatIntervalMillis),
      why: `must be at most a third of ${F.sessionTimeoutMillis.env} (${v.sessionTimeoutMillis})`,
    });
  }
  return Object.freeze({ ...v, security: readKafkaSecurity(reader) });
}

function readInflux(reader: ConfigReader): EstimatorConfig['influx'] {
  const v = reader.read({
    influxUrl: F.influxUrl,
    influxDatabase: F.influxDatabase,
    influxRetentionPolicy: F.influxRetentionPolicy,
    influxRetention: F.influxRetention,
    influxToken: F.influxToken,
    influxOrg: F.influxOrg,
    influxBatchSize: F.influxBatchSize,
    influxFlushIntervalMillis: F.influxFlushIntervalMillis,
    influxMaxInFlight: F.influxMaxInFlight,
    influxMaxBufferLines: F.influxMaxBufferLines,
    influxMaxRetryDelayMillis: F.influxMaxRetryDelayMillis,
    influxHighWaterLines: F.influxHighWaterLines,
  });
  if (v.influxHighWaterLines !== undefined && v.influxHighWaterLines >= v.influxMaxBufferLines) {
    reader.report({
      name: F.influxHighWaterLines.env,
      value: String(v.influxHighWaterLines),
      why: `must be below ${F.influxMaxBufferLines.env} (${v.influxMaxBufferLines}): the buffer would drop points before consumption pauses`,
    });
  }
  if (v.influxUrl === undefined) return undefined;
  return Object.freeze({
    url: v.influxUrl,
    database: v.influxDatabase,
    retentionPolicy: v.influxRetentionPolicy,
    retentionDuration: v.influxRetention,
    token: v.influxToken,
    tokenFile: reader.secretFile(F.influxToken),
    org: v.influxOrg,
    batchSize: v.influxBatchSize,
    flushIntervalMillis: v.influxFlushIntervalMillis,
    maxInFlightBatches: v.influxMaxInFlight,
    maxBufferLines: v.influxMaxBufferLines,
    highWaterLines: v.influxHighWaterLines ?? defaultInfluxHighWaterLines(v.influxMaxBufferLines, v.influxBatchSize, v.influxMaxInFlight),
    minRetryDelayMillis: INFLUX_MIN_RETRY_DELAY_MILLIS,
    maxRetryDelayMillis: v.influxMaxRetryDelayMillis,
    requestTimeoutMillis: INFLUX_REQUEST_TIMEOUT_MILLIS,
  });
}

function readWindow(reader: ConfigReader): EstimatorConfig['window'] {
  const v = reader.read({
    windowMillis: F.windowMillis,
    allowedLatenessMillis: F.allowedLatenessMillis,
    idleCloseMillis: F.idleCloseMillis,
    streamRetentionMillis: F.streamRetentionMillis,
    current: F.current,
    halfLifeLaunches: F.halfLifeLaunches,
    lastLaunches: F.lastLaunches,
    predictionBasis: F.predictionBasis,
    dedupeCapacity: F.dedupeCapacity,
    maxFutureSkewMillis: F.maxFutureSkewMillis,
    maxExactSupport: F.maxExactSupport,
    subBinsPerOctave: F.subBinsPerOctave,
  });
  return Object.freeze({
    windowMillis: v.windowMillis,
    allowedLatenessMillis: v.allowedLatenessMillis,
    idleCloseMillis: v.idleCloseMillis ?? v.windowMillis,
    streamRetentionMillis: v.streamRetentionMillis,
    current: Object.freeze(v.current === 'decay' ? { mode: 'decay' as const, halfLifeLaunches: v.halfLifeLaunches } : { mode: 'last-n' as const, launches: v.lastLaunches }),
    predictionBasis: v.predictionBasis,
    dedupeCapacity: v.dedupeCapacity,
    maxFutureSkewMillis: v.maxFutureSkewMillis,
    histogram: Object.freeze({ maxExactSupport: v.maxExactSupport, subBinsPerOctave: Number(v.subBinsPerOctave) }),
  });
}

function readCompute(reader: ConfigReader): EstimatorConfig['compute'] {
  const v = reader.read({
    bootstrapReplicates: F.bootstrapReplicates,
    standardError: F.standardError,
    confidenceLevel: F.confidenceLevel,
    sweepGroupSizes: F.sweepGroupSizes,
    quantiles: F.quantiles,
    quantileExactWorkLimit: F.quantileExactWorkLimit,
    quantileSamples: F.quantileSamples,
    fit: F.fit,
    histogramPoints: F.histogramPoints,
    sweepIntervalMillis: F.sweepIntervalMillis,
  });
  const { standardError, ...rest } = v;
  return Object.freeze({ ...rest, standardErrorMethod: standardError });
}

function readAlerts(reader: ConfigReader): EstimatorConfig['alerts'] {
  const v = reader.read({
    alertWarmupWindows: F.alertWarmupWindows,
    alertReferenceSigmas: F.alertReferenceSigmas,
    alertThresholdSigmas: F.alertThresholdSigmas,
    alertMinRelativeSigma: F.alertMinRelativeSigma,
    alertDriftMinSigma: F.alertDriftMinSigma,
    alertLossThreshold: F.alertLossThreshold,
    alertDriftThreshold: F.alertDriftThreshold,
    alertStaleMillis: F.alertStaleMillis,
  });
  return Object.freeze({
    warmupWindows: v.alertWarmupWindows,
    referenceSigmas: v.alertReferenceSigmas,
    thresholdSigmas: v.alertThresholdSigmas,
    minRelativeSigma: v.alertMinRelativeSigma,
    driftMinSigma: v.alertDriftMinSigma,
    lossMeasuredThreshold: v.alertLossThreshold,
    driftThreshold: v.alertDriftThreshold,
    staleAfterMillis: v.alertStaleMillis,
  });
}
