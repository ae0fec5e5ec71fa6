import type { KafkaConfig } from 'kafkajs';
import { hostname } from 'node:os';
import { LOCAL_STACK_ADDRESSES } from '../service/index.ts';
import { EstimatorConfigError } from './errors.ts';
import { LABEL_TAGS, TOPICS } from './series.ts';

/** Which histogram loss_predicted is computed from at window close. */
export type PredictionBasis = 'window' | 'current' | 'cumulative';

/** Validated, frozen settings of the estimator; built once by {@link loadEstimatorConfig}. */
/** The kafkajs client options for SASL and TLS. */
export type EstimatorKafkaSecurity = Pick<KafkaConfig, 'sasl' | 'ssl'>;

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
     * SASL/TLS options handed to kafkajs as they are; absent = plaintext without login. Not read
     * from the environment here: the CLI builds them from WARPWATCH_KAFKA_SASL_* and
     * WARPWATCH_KAFKA_TLS* with the collector's parser (cli/kafka-security.ts), so both services
     * read the same variables the same way.
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
        /** v2 API token ('' for an open 1.8 server, or 'user:password'). */
        readonly token: string;
        readonly org: string;
        readonly batchSize: number;
        /** Longest time a point waits before its write request starts (0 = as soon as the event loop is free). */
        readonly flushIntervalMillis: number;
        /** Write requests in flight at a time. */
        readonly maxInFlightBatches: number;
        /** Bound of the in-memory line buffer while InfluxDB is away; overflow is dropped and counted. */
        readonly maxBufferLines: number;
        readonly minRetryDelayMillis: number;
        readonly maxRetryDelayMillis: number;
        readonly requestTimeoutMillis: number;
      }
    | undefined;
  readonly window: {
    readonly windowMillis: number;
    readonly allowedLatenessMillis: number;
    /** A stream that recorded nothing for this long (processing time) has its open windows closed. */
    readonly idleCloseMillis: number;
    /** A stream idle this long (processing time) is forgotten (state tombstoned in the checkpoint). */
    readonly streamRetentionMillis: number;
    readonly current: { readonly mode: 'decay'; readonly halfLifeLaunches: number } | { readonly mode: 'last-n'; readonly launches: number };
    readonly predictionBasis: PredictionBasis;
    readonly dedupeCapacity: number;
    /** A frame whose event time is more than this ahead of the wall clock is rejected (outcome `future`); it never moves a watermark. */
    readonly maxFutureSkewMillis: number;
    readonly maxExactSupport: number;
    readonly subBinsPerOctave: number;
  };
  readonly compute: {
    readonly bootstrapReplicates: number;
    /** Standard error of loss_predicted: auto (linearised when the support is smaller than the replicates), bootstrap, linearised. */
    readonly standardErrorMethod: 'auto' | 'bootstrap' | 'linearised';
    readonly confidenceLevel: number;
    readonly sweepGroupSizes: readonly number[];
    readonly quantiles: boolean;
    readonly quantileExactWorkLimit: number;
    readonly quantileSamples: number;
    readonly fit: boolean;
    /** Write warpwatch_histogram points (one per bin per window). */
    readonly histogramPoints: boolean;
  };
  readonly alerts: {
    readonly warmupWindows: number;
    readonly referenceSigmas: number;
    readonly thresholdSigmas: number;
    readonly minRelativeSigma: number;
    /** Absolute σ floor of the drift detector's log ratio. */
    readonly driftMinSigma: number;
    readonly lossMeasuredThreshold: number | undefined;
    readonly driftThreshold: number | undefined;
    /** A stream silent this long (processing time) raises a `stale` alert; undefined = off. */
    readonly staleAfterMillis: number | undefined;
  };
  /** How often state is checkpointed and offsets committed (processing time). */
  readonly checkpointIntervalMillis: number;
  /** Live streams held at most per instance; beyond, the least recently recorded is evicted (counted). */
  readonly maxStreams: number;
  /** Collector labels written as InfluxDB tags (WARPWATCH_TAG_LABELS). */
  readonly tagLabels: readonly string[];
  /** Port for /metrics and /healthz (0 = any free port), or undefined when disabled. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /** OTLP/HTTP (protobuf) push of the OpenTelemetry metrics, or undefined when off (metrics-export.ts). */
  readonly otlp: { readonly url: string; readonly intervalMillis: number } | undefined;
  /** The per-stream result metrics (result-metrics.ts): cap on exported streams and their idle TTL. */
  readonly resultMetrics: { readonly maxStreams: number; readonly streamTtlMillis: number };
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

/** Defaults, in one place. Times in milliseconds. */
export const ESTIMATOR_DEFAULTS = Object.freeze({
  brokers: LOCAL_STACK_ADDRESSES.kafkaBrokers,
  clientId: 'warpwatch-estimator',
  groupId: 'warpwatch-estimator',
  partitions: 6,
  replicationFactor: -1,
  fromBeginning: true,
  // A killed instance's partitions are reassigned once the broker misses its heartbeats for the
  // session timeout: 6 s (the broker's default minimum) + a rejoin within a heartbeat + restore
  // gives failover in < 10 s (test/integration/estimator-failover.int.test.ts).
  sessionTimeoutMillis: 6_000,
  heartbeatIntervalMillis: 1_000,
  connectionTimeoutMillis: 3_000,
  influxUrl: LOCAL_STACK_ADDRESSES.influxUrl,
  influxDatabase: 'warpwatch',
  influxRetentionPolicy: 'autogen',
  /** The one retention default of every deployment (deploy/contracts.ts INFLUX_RETENTION). */
  influxRetentionDuration: '30d',
  influxToken: '',
  influxOrg: '-',
  influxBatchSize: 5_000,
  influxFlushIntervalMillis: 0,
  influxMaxInFlightBatches: 3,
  influxMaxBufferLines: 200_000,
  influxMinRetryDelayMillis: 500,
  influxMaxRetryDelayMillis: 30_000,
  influxRequestTimeoutMillis: 10_000,
  windowMillis: 10_000,
  allowedLatenessMillis: 0,
  streamRetentionMillis: 3_600_000,
  currentMode: 'decay' as 'decay' | 'last-n',
  halfLifeLaunches: 32,
  lastLaunches: 64,
  predictionBasis: 'window' as PredictionBasis,
  dedupeCapacity: 1_024,
  maxFutureSkewMillis: 300_000,
  maxExactSupport: 4_096,
  subBinsPerOctave: 128,
  bootstrapReplicates: 32,
  confidenceLevel: 0.95,
  sweepGroupSizes: [1, 2, 4, 8, 16, 32],
  quantileExactWorkLimit: 2_000_000,
  quantileSamples: 10_000,
  warmupWindows: 16,
  referenceSigmas: 0.5,
  thresholdSigmas: 8,
  minRelativeSigma: 0.01,
  driftMinSigma: 0.01,
  checkpointIntervalMillis: 2_000,
  maxStreams: 10_000,
  tagLabels: Object.values(LABEL_TAGS) as readonly string[],
  metricsPort: 9465,
  metricsHost: '127.0.0.1',
  otlpIntervalMillis: 10_000,
  metricsMaxStreams: 1_000,
  metricsStreamTtlMillis: 3_600_000,
  shutdownTimeoutMillis: 10_000,
});

/**
 * Builds the estimator configuration from environment variables (`WARPWATCH_*`) and
 * command-line flags, once at start-up: every value validated, all problems reported
 * together, the result deeply frozen.
 *
 * Environment (flag in brackets): WARPWATCH_KAFKA_BROKERS [--brokers], WARPWATCH_ESTIMATOR_GROUP_ID
 * [--group-id], WARPWATCH_KAFKA_CLIENT_ID, WARPWATCH_FRAMES_TOPIC, WARPWATCH_DISTRIBUTIONS_TOPIC,
 * WARPWATCH_ALERTS_TOPIC, WARPWATCH_CHECKPOINT_TOPIC, WARPWATCH_KAFKA_PARTITIONS,
 * WARPWATCH_KAFKA_REPLICATION_FACTOR, WARPWATCH_ESTIMATOR_FROM_BEGINNING [--from-beginning],
 * WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS, WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS,
 * WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS, WARPWATCH_INFLUX_URL [--influx-url, "off" disables],
 * WARPWATCH_INFLUX_DATABASE [--influx-database], WARPWATCH_INFLUX_RETENTION_POLICY,
 * WARPWATCH_INFLUX_TOKEN, WARPWATCH_INFLUX_ORG, WARPWATCH_INFLUX_BATCH_SIZE,
 * WARPWATCH_INFLUX_FLUSH_INTERVAL_MILLIS, WARPWATCH_INFLUX_MAX_IN_FLIGHT, WARPWATCH_INFLUX_MAX_BUFFER_LINES,
 * WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS, WARPWATCH_WINDOW_MILLIS [--window-millis],
 * WARPWATCH_ALLOWED_LATENESS_MILLIS, WARPWATCH_IDLE_CLOSE_MILLIS (default = window),
 * WARPWATCH_STREAM_RETENTION_MILLIS, WARPWATCH_CURRENT (decay|last-n) [--current],
 * WARPWATCH_HALF_LIFE_LAUNCHES [--half-life-launches], WARPWATCH_LAST_LAUNCHES [--last-launches],
 * WARPWATCH_PREDICTION_BASIS (window|current|cumulative) [--prediction-basis],
 * WARPWATCH_STANDARD_ERROR (auto|bootstrap|linearised),
 * WARPWATCH_DEDUPE_CAPACITY, WARPWATCH_MAX_EXACT_SUPPORT, WARPWATCH_SUB_BINS_PER_OCTAVE,
 * WARPWATCH_BOOTSTRAP_REPLICATES [--bootstrap-replicates], WARPWATCH_CONFIDENCE_LEVEL,
 * WARPWATCH_SWEEP_GROUP_SIZES (comma list), WARPWATCH_QUANTILES, WARPWATCH_QUANTILE_EXACT_WORK_LIMIT,
 * WARPWATCH_QUANTILE_SAMPLES, WARPWATCH_FIT,
 * WARPWATCH_HISTOGRAM_POINTS (true|false), WARPWATCH_ALERT_WARMUP_WINDOWS,
 * WARPWATCH_ALERT_REFERENCE_SIGMAS, WARPWATCH_ALERT_THRESHOLD_SIGMAS,
 * WARPWATCH_ALERT_MIN_RELATIVE_SIGMA, WARPWATCH_ALERT_DRIFT_MIN_SIGMA,
 * WARPWATCH_ALERT_LOSS_THRESHOLD, WARPWATCH_ALERT_DRIFT_THRESHOLD, WARPWATCH_ALERT_STALE_MILLIS,
 * WARPWATCH_CHECKPOINT_INTERVAL_MILLIS, WARPWATCH_METRICS_PORT (or "off") [--metrics-port],
 * WARPWATCH_METRICS_HOST, WARPWATCH_METRICS_MAX_STREAMS, WARPWATCH_METRICS_STREAM_TTL_MILLIS,
 * WARPWATCH_OTLP_ENDPOINT (OTLP/HTTP metrics URL, or "off"), WARPWATCH_OTLP_INTERVAL_MILLIS,
 * WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS, WARPWATCH_INSTANCE [--instance].
 *
 * @throws EstimatorConfigError listing every invalid setting.
 * @example
 * const config = loadEstimatorConfig({ env: process.env, flags: { windowMillis: '5000' } });
 */
export function loadEstimatorConfig(input: {
  env: Readonly<Record<string, string | undefined>>;
  flags?: EstimatorFlags;
}): EstimatorConfig {
  const env = input.env;
  const flags = input.flags ?? {};
  const problems: string[] = [];
  const d = ESTIMATOR_DEFAULTS;

  const pick = (flag: string | undefined, flagName: string | undefined, envName: string): { text: string | undefined; name: string } => {
    if (flag !== undefined && flagName !== undefined) return { text: flag, name: flagName };
    const fromEnv = env[envName];
    return { text: fromEnv === '' ? undefined : fromEnv, name: envName };
  };
  const integer = (flag: string | undefined, flagName: string | undefined, envName: string, fallback: number, min: number, max: number): number => {
    const { text, name } = pick(flag, flagName, envName);
    if (text === undefined) return fallback;
    const value = Number(text.trim());
    if (!/^-?\d+$/.test(text.trim()) || !Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be an integer ${min}..${max}, got "${text}"`);
      return fallback;
    }
    return value;
  };
  const real = (envName: string, fallback: number, min: number, max: number, flag?: string, flagName?: string): number => {
    const { text, name } = pick(flag, flagName, envName);
    if (text === undefined) return fallback;
    const value = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(value) || value < min || value > max) {
      problems.push(`${name} must be a number ${min}..${max}, got "${text}"`);
      return fallback;
    }
    return value;
  };
  const optionalReal = (envName: string, min: number, max: number): number | undefined => {
    const text = env[envName];
    if (text === undefined || text === '' || text.trim().toLowerCase() === 'off') return undefined;
    return real(envName, min, min, max);
  };
  const oneOf = <T extends string>(flag: string | undefined, flagName: string | undefined, envName: string, fallback: T, allowed: readonly T[]): T => {
    const { text, name } = pick(flag, flagName, envName);
    if (text === undefined) return fallback;
    const value = text.trim().toLowerCase() as T;
    if (!allowed.includes(value)) {
      problems.push(`${name} must be one of ${allowed.join('|')}, got "${text}"`);
      return fallback;
    }
    return value;
  };
  const boolean = (envName: string, fallback: boolean, flag?: boolean): boolean => {
    if (flag !== undefined) return flag;
    const text = env[envName];
    if (text === undefined || text === '') return fallback;
    const lower = text.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
    if (['0', 'false', 'no', 'off'].includes(lower)) return false;
    problems.push(`${envName} must be true or false, got "${text}"`);
    return fallback;
  };
  const topicName = (envName: string, fallback: string): string => {
    const text = env[envName];
    if (text === undefined || text === '') return fallback;
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(text)) problems.push(`${envName} must be a Kafka topic name ([A-Za-z0-9._-], 1..249 chars), got "${text}"`);
    return text;
  };

  const brokersText = pick(flags.brokers, '--brokers', 'WARPWATCH_KAFKA_BROKERS');
  const brokers = (brokersText.text ?? d.brokers).split(',').map((b) => b.trim()).filter((b) => b !== '');
  for (const broker of brokers) {
    if (!/^[^\s:]+:\d{1,5}$/.test(broker) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(broker)) {
      problems.push(`${brokersText.name} entries must be host:port, got "${broker}"`);
    }
  }
  if (brokers.length === 0) problems.push(`${brokersText.name} must list at least one host:port`);

  const groupIdText = pick(flags.groupId, '--group-id', 'WARPWATCH_ESTIMATOR_GROUP_ID');
  const groupId = groupIdText.text ?? d.groupId;
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(groupId)) problems.push(`${groupIdText.name} must match [A-Za-z0-9._-]{1,200}, got "${groupId}"`);

  const sessionTimeoutMillis = integer(undefined, undefined, 'WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS', d.sessionTimeoutMillis, 6_000, 300_000);
  const heartbeatIntervalMillis = integer(undefined, undefined, 'WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS', d.heartbeatIntervalMillis, 100, 60_000);
  if (heartbeatIntervalMillis * 3 > sessionTimeoutMillis) {
    problems.push(
      `WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS (${heartbeatIntervalMillis}) must be at most a third of WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS (${sessionTimeoutMillis})`,
    );
  }

  const influxUrlText = pick(flags.influxUrl, '--influx-url', 'WARPWATCH_INFLUX_URL');
  const influxUrl = influxUrlText.text ?? d.influxUrl;
  const influxEnabled = influxUrl.trim().toLowerCase() !== 'off';
  if (influxEnabled) {
    try {
      const parsed = new URL(influxUrl);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
    } catch {
      problems.push(`${influxUrlText.name} must be an http(s) URL or "off", got "${influxUrl}"`);
    }
  }
  const influxDatabaseText = pick(flags.influxDatabase, '--influx-database', 'WARPWATCH_INFLUX_DATABASE');
  const influxDatabase = influxDatabaseText.text ?? d.influxDatabase;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(influxDatabase)) problems.push(`${influxDatabaseText.name} must match [A-Za-z0-9._-]{1,128}, got "${influxDatabase}"`);

  const windowMillis = integer(flags.windowMillis, '--window-millis', 'WARPWATCH_WINDOW_MILLIS', d.windowMillis, 10, 86_400_000);
  const currentMode = oneOf<'decay' | 'last-n'>(flags.current, '--current', 'WARPWATCH_CURRENT', d.currentMode, ['decay', 'last-n']);
  const halfLifeLaunches = real('WARPWATCH_HALF_LIFE_LAUNCHES', d.halfLifeLaunches, 0.01, 1e9, flags.halfLifeLaunches, '--half-life-launches');
  const lastLaunches = integer(flags.lastLaunches, '--last-launches', 'WARPWATCH_LAST_LAUNCHES', d.lastLaunches, 1, 100_000);

  const sweepText = env.WARPWATCH_SWEEP_GROUP_SIZES;
  const influxRetentionDuration = (env.WARPWATCH_INFLUX_RETENTION ?? d.influxRetentionDuration).trim();
  if (!/^(INF|\d+[hdw])$/.test(influxRetentionDuration)) problems.push(`WARPWATCH_INFLUX_RETENTION must be an InfluxQL duration like 30d, 720h or 4w, or INF, got "${influxRetentionDuration}"`);
  const tagLabelsText = env.WARPWATCH_TAG_LABELS;
  const tagLabels: string[] = tagLabelsText === undefined ? [...d.tagLabels] : tagLabelsText.split(',').map((name) => name.trim()).filter((name) => name !== '' && name.toLowerCase() !== 'off');
  for (const name of tagLabels) {
    if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(name)) problems.push(`WARPWATCH_TAG_LABELS must list label names matching [A-Za-z_][A-Za-z0-9_.-]{0,63}, or "off", got "${name}"`);
  }
  let sweepGroupSizes: number[] = [...d.sweepGroupSizes];
  if (sweepText !== undefined && sweepText !== '') {
    const parts = sweepText.trim().toLowerCase() === 'off' ? [] : sweepText.split(',').map((p) => p.trim());
    const parsed = parts.map(Number);
    if (parsed.some((v) => !Number.isInteger(v) || v < 1 || v > 32)) {
      problems.push(`WARPWATCH_SWEEP_GROUP_SIZES must be a comma list of integers 1..32 or "off", got "${sweepText}"`);
    } else sweepGroupSizes = parsed;
  }

  let metricsPort: number | undefined;
  const metricsText = pick(flags.metricsPort, '--metrics-port', 'WARPWATCH_METRICS_PORT');
  if (metricsText.text !== undefined && metricsText.text.trim().toLowerCase() === 'off') metricsPort = undefined;
  else metricsPort = integer(flags.metricsPort, '--metrics-port', 'WARPWATCH_METRICS_PORT', d.metricsPort, 0, 65_535);

  let otlp: EstimatorConfig['otlp'];
  const otlpText = env.WARPWATCH_OTLP_ENDPOINT?.trim();
  const otlpIntervalMillis = integer(undefined, undefined, 'WARPWATCH_OTLP_INTERVAL_MILLIS', d.otlpIntervalMillis, 100, 3_600_000);
  if (otlpText !== undefined && otlpText !== '' && otlpText.toLowerCase() !== 'off') {
    try {
      const parsed = new URL(otlpText);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme');
      otlp = Object.freeze({ url: otlpText, intervalMillis: otlpIntervalMillis });
    } catch {
      problems.push(`WARPWATCH_OTLP_ENDPOINT must be the http(s) URL of an OTLP/HTTP metrics endpoint (e.g. http://collector:4318/v1/metrics) or "off", got "${otlpText}"`);
    }
  }

  const subBinsPerOctave = Number(
    oneOf<string>(undefined, undefined, 'WARPWATCH_SUB_BINS_PER_OCTAVE', String(d.subBinsPerOctave), ['16', '32', '64', '128', '256', '512', '1024']),
  );
  const instanceId = pick(flags.instance, '--instance', 'WARPWATCH_INSTANCE').text ?? `${hostname()}-${process.pid}`;
  const minRetryDelayMillis = d.influxMinRetryDelayMillis;
  const maxRetryDelayMillis = integer(undefined, undefined, 'WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS', d.influxMaxRetryDelayMillis, minRetryDelayMillis, 3_600_000);

  const config: EstimatorConfig = {
    instanceId,
    kafka: Object.freeze({
      brokers: Object.freeze(brokers),
      clientId: env.WARPWATCH_KAFKA_CLIENT_ID || d.clientId,
      groupId,
      framesTopic: topicName('WARPWATCH_FRAMES_TOPIC', TOPICS.frames),
      distributionsTopic: topicName('WARPWATCH_DISTRIBUTIONS_TOPIC', TOPICS.distributions),
      alertsTopic: topicName('WARPWATCH_ALERTS_TOPIC', TOPICS.alerts),
      checkpointTopic: topicName('WARPWATCH_CHECKPOINT_TOPIC', TOPICS.estimatorCheckpoints),
      partitions: integer(undefined, undefined, 'WARPWATCH_KAFKA_PARTITIONS', d.partitions, 1, 10_000),
      replicationFactor: integer(undefined, undefined, 'WARPWATCH_KAFKA_REPLICATION_FACTOR', d.replicationFactor, -1, 32),
      fromBeginning: boolean('WARPWATCH_ESTIMATOR_FROM_BEGINNING', d.fromBeginning, flags.fromBeginning),
      sessionTimeoutMillis,
      heartbeatIntervalMillis,
      connectionTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS', d.connectionTimeoutMillis, 100, 600_000),
    }),
    influx: influxEnabled
      ? Object.freeze({
          url: influxUrl,
          database: influxDatabase,
          retentionPolicy: env.WARPWATCH_INFLUX_RETENTION_POLICY || d.influxRetentionPolicy,
          retentionDuration: influxRetentionDuration,
          token: env.WARPWATCH_INFLUX_TOKEN ?? d.influxToken,
          org: env.WARPWATCH_INFLUX_ORG || d.influxOrg,
          batchSize: integer(undefined, undefined, 'WARPWATCH_INFLUX_BATCH_SIZE', d.influxBatchSize, 1, 1_000_000),
          flushIntervalMillis: integer(undefined, undefined, 'WARPWATCH_INFLUX_FLUSH_INTERVAL_MILLIS', d.influxFlushIntervalMillis, 0, 600_000),
          maxInFlightBatches: integer(undefined, undefined, 'WARPWATCH_INFLUX_MAX_IN_FLIGHT', d.influxMaxInFlightBatches, 1, 64),
          maxBufferLines: integer(undefined, undefined, 'WARPWATCH_INFLUX_MAX_BUFFER_LINES', d.influxMaxBufferLines, 1, 100_000_000),
          minRetryDelayMillis,
          maxRetryDelayMillis,
          requestTimeoutMillis: d.influxRequestTimeoutMillis,
        })
      : undefined,
    window: Object.freeze({
      windowMillis,
      allowedLatenessMillis: integer(undefined, undefined, 'WARPWATCH_ALLOWED_LATENESS_MILLIS', d.allowedLatenessMillis, 0, 86_400_000),
      idleCloseMillis: integer(undefined, undefined, 'WARPWATCH_IDLE_CLOSE_MILLIS', windowMillis, 10, 86_400_000),
      streamRetentionMillis: integer(undefined, undefined, 'WARPWATCH_STREAM_RETENTION_MILLIS', d.streamRetentionMillis, 1_000, 30 * 86_400_000),
      current: Object.freeze(
        currentMode === 'decay' ? { mode: 'decay' as const, halfLifeLaunches } : { mode: 'last-n' as const, launches: lastLaunches },
      ),
      predictionBasis: oneOf<PredictionBasis>(flags.predictionBasis, '--prediction-basis', 'WARPWATCH_PREDICTION_BASIS', d.predictionBasis, [
        'window',
        'current',
        'cumulative',
      ]),
      dedupeCapacity: integer(undefined, undefined, 'WARPWATCH_DEDUPE_CAPACITY', d.dedupeCapacity, 1, 1_000_000),
      maxFutureSkewMillis: integer(undefined, undefined, 'WARPWATCH_MAX_FUTURE_SKEW_MILLIS', d.maxFutureSkewMillis, 0, 7 * 86_400_000),
      maxExactSupport: integer(undefined, undefined, 'WARPWATCH_MAX_EXACT_SUPPORT', d.maxExactSupport, 16, 1_000_000),
      subBinsPerOctave,
    }),
    compute: Object.freeze({
      bootstrapReplicates: integer(flags.bootstrapReplicates, '--bootstrap-replicates', 'WARPWATCH_BOOTSTRAP_REPLICATES', d.bootstrapReplicates, 0, 10_000),
      standardErrorMethod: oneOf<'auto' | 'bootstrap' | 'linearised'>(undefined, undefined, 'WARPWATCH_STANDARD_ERROR', 'auto', ['auto', 'bootstrap', 'linearised']),
      confidenceLevel: real('WARPWATCH_CONFIDENCE_LEVEL', d.confidenceLevel, 0.5, 0.9999),
      sweepGroupSizes: Object.freeze(sweepGroupSizes),
      quantiles: boolean('WARPWATCH_QUANTILES', true),
      quantileExactWorkLimit: integer(undefined, undefined, 'WARPWATCH_QUANTILE_EXACT_WORK_LIMIT', d.quantileExactWorkLimit, 0, 1e12),
      quantileSamples: integer(undefined, undefined, 'WARPWATCH_QUANTILE_SAMPLES', d.quantileSamples, 100, 10_000_000),
      fit: boolean('WARPWATCH_FIT', true),
      histogramPoints: boolean('WARPWATCH_HISTOGRAM_POINTS', true),
    }),
    alerts: Object.freeze({
      warmupWindows: integer(undefined, undefined, 'WARPWATCH_ALERT_WARMUP_WINDOWS', d.warmupWindows, 2, 10_000),
      referenceSigmas: real('WARPWATCH_ALERT_REFERENCE_SIGMAS', d.referenceSigmas, 0, 100),
      thresholdSigmas: real('WARPWATCH_ALERT_THRESHOLD_SIGMAS', d.thresholdSigmas, 0.1, 1000),
      minRelativeSigma: real('WARPWATCH_ALERT_MIN_RELATIVE_SIGMA', d.minRelativeSigma, 0, 10),
      driftMinSigma: real('WARPWATCH_ALERT_DRIFT_MIN_SIGMA', d.driftMinSigma, 0, 10),
      lossMeasuredThreshold: optionalReal('WARPWATCH_ALERT_LOSS_THRESHOLD', 1, 1e6),
      driftThreshold: optionalReal('WARPWATCH_ALERT_DRIFT_THRESHOLD', 0, 1e6),
      staleAfterMillis: optionalReal('WARPWATCH_ALERT_STALE_MILLIS', 1_000, 30 * 86_400_000),
    }),
    checkpointIntervalMillis: integer(undefined, undefined, 'WARPWATCH_CHECKPOINT_INTERVAL_MILLIS', d.checkpointIntervalMillis, 10, 3_600_000),
    maxStreams: integer(undefined, undefined, 'WARPWATCH_MAX_STREAMS', d.maxStreams, 1, 10_000_000),
    tagLabels: Object.freeze(tagLabels),
    metricsPort,
    metricsHost: env.WARPWATCH_METRICS_HOST || d.metricsHost,
    otlp,
    resultMetrics: Object.freeze({
      maxStreams: integer(undefined, undefined, 'WARPWATCH_METRICS_MAX_STREAMS', d.metricsMaxStreams, 1, 1_000_000),
      streamTtlMillis: integer(undefined, undefined, 'WARPWATCH_METRICS_STREAM_TTL_MILLIS', d.metricsStreamTtlMillis, 1_000, 30 * 86_400_000),
    }),
    shutdownTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS', d.shutdownTimeoutMillis, 100, 3_600_000),
  };
  if (problems.length > 0) throw new EstimatorConfigError(problems);
  return Object.freeze(config);
}
