import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { COLLECTOR_FIELDS, hostProblem, labelProblem } from '../contracts/index.ts';
import { ConfigReader, readKafkaSecurity, type EnvSource, type KafkaSecurityConfig, type ReadTextFile, type Secret } from '../service/index.ts';
import { CollectorConfigError } from './errors.ts';

/** What to do when the disk spool is full: discard the oldest segment or the incoming record. */
export type SpoolPolicy = (typeof COLLECTOR_FIELDS.spoolPolicy.values)[number];

/** Kafka message compression the collector can apply (gzip is built into kafkajs). */
export type CompressionName = (typeof COLLECTOR_FIELDS.compression.values)[number];

/** Validated, frozen settings of the collector; built once by {@link loadCollectorConfig}. */
export interface CollectorConfig {
  readonly sources: {
    /** Unix domain socket path to serve, or undefined when no socket is served. */
    readonly socketPath: string | undefined;
    /** Permission bits of the socket file (default 0o660). */
    readonly socketMode: number;
    /** Read frames from standard input. */
    readonly stdin: boolean;
    /** Recorded frame files to replay, in order. */
    readonly replayFiles: readonly string[];
    /** A connection that sent this many invalid frames is closed. */
    readonly maxConnectionErrors: number;
    /** Split and decode frames in a worker thread instead of on the event loop. */
    readonly validationWorker: boolean;
  };
  /** Host name put in the ww-host header. */
  readonly hostName: string;
  /** Job labels, sent as `ww-label-<name>` headers on every message. */
  readonly labels: Readonly<Record<string, string>>;
  readonly kafka: KafkaSecurityConfig & {
    readonly brokers: readonly string[];
    readonly clientId: string;
    readonly framesTopic: string;
    readonly dlqTopic: string;
    /** Partitions used when the collector creates a missing topic. */
    readonly partitions: number;
    /** Replication factor used when creating a missing topic (-1 = broker default). */
    readonly replicationFactor: number;
    readonly compression: CompressionName;
    /** In-flight requests per broker connection, 1..5 (idempotence keeps order up to 5). */
    readonly maxInFlightRequests: number;
    /** Producer retries before a batch is declared failed and spooled. */
    readonly retries: number;
    readonly connectionTimeoutMillis: number;
    readonly requestTimeoutMillis: number;
    /**
     * Largest record the broker takes, bytes (its message.max.bytes); topics the collector
     * creates get this max.message.bytes. A larger record goes to the DLQ, capped.
     */
    readonly maxMessageBytes: number;
  };
  readonly batch: {
    /** A batch is sent when it holds this many bytes ... */
    readonly maxBatchBytes: number;
    /** ... or this many records ... */
    readonly maxBatchRecords: number;
    /** ... or when its first record has waited this long. */
    readonly lingerMillis: number;
  };
  /** Bound of the in-memory queue in bytes; overflow goes to the spool. */
  readonly maxQueueBytes: number;
  readonly spool: {
    readonly directory: string;
    readonly maxBytes: number;
    readonly segmentBytes: number;
    readonly policy: SpoolPolicy;
    /** Dirty segment data is fsync'ed at least this often. */
    readonly fsyncIntervalMillis: number;
  };
  /** How often a failed broker is probed again (replaying the spool head). */
  readonly retryBackoffMillis: number;
  /** Longest wait for one batch; past it the batch counts as failed and stays at the spool head. */
  readonly produceTimeoutMillis: number;
  /** A send outstanding this long reports the broker as stalled on /healthz (a frozen broker). */
  readonly brokerStallMillis: number;
  /** Bytes of a record's value kept when the agent moves it to the DLQ (too large, rejected by Kafka). */
  readonly dlqMaxValueBytes: number;
  /** SIGTERM: stop accepting and flush within this time; what is left is spooled. */
  readonly shutdownTimeoutMillis: number;
  /** Port for /metrics and /healthz (0 = any free port), or undefined when disabled. */
  readonly metricsPort: number | undefined;
  readonly metricsHost: string;
  /**
   * InfluxDB for the collector's own counters (measurement `warpwatch_pipeline`, tag
   * service=collector), or undefined when no URL is configured (the default) or it is "off".
   */
  readonly influx:
    | {
        readonly url: string;
        /** InfluxDB 1.8 database; the v2 write API bucket is `<database>/<retentionPolicy>`. */
        readonly database: string;
        readonly retentionPolicy: string;
        /** v2 API org ('-' for InfluxDB 1.8). */
        readonly org: string;
        /** v2 API token ('' for an open 1.8 server, 'user:password', or a 2.x token). */
        readonly token: Secret;
        /** The file the token was read from (WARPWATCH_INFLUX_TOKEN_FILE), read again after InfluxDB refuses it; undefined when not from a file. */
        readonly tokenFile: string | undefined;
        /** Points kept while InfluxDB is away; the oldest are dropped (and counted) beyond it. */
        readonly maxBufferPoints: number;
        /** Longest wait for one write request. */
        readonly requestTimeoutMillis: number;
      }
    | undefined;
  /** How often the cumulative counters are written to InfluxDB (milliseconds). */
  readonly pipelineIntervalMillis: number;
  /** Tag `instance` of the collector's `warpwatch_pipeline` points (default `<host>:<pid>`). */
  readonly instance: string;
}

/**
 * Command-line flags as strings, exactly as the CLI received them (undefined = not given).
 * Flags take precedence over the environment.
 */
export interface CollectorFlags {
  readonly socket?: string | undefined;
  readonly socketMode?: string | undefined;
  readonly stdin?: boolean | undefined;
  readonly replay?: readonly string[] | undefined;
  readonly brokers?: string | undefined;
  readonly partitions?: string | undefined;
  readonly compression?: string | undefined;
  readonly spoolDir?: string | undefined;
  readonly spoolMaxBytes?: string | undefined;
  readonly spoolPolicy?: string | undefined;
  readonly label?: readonly string[] | undefined;
  readonly metricsPort?: string | undefined;
  readonly host?: string | undefined;
  readonly influxUrl?: string | undefined;
  readonly influxDatabase?: string | undefined;
  readonly pipelineIntervalMillis?: string | undefined;
  readonly instance?: string | undefined;
}

/**
 * The default socket path: under `$XDG_RUNTIME_DIR` (a directory only this user may use)
 * when set, else in a per-user directory of /tmp (`/tmp/warpwatch-<uid>`), so another user
 * cannot create it first without the collector refusing it (WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE).
 *
 * @example defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000' }) // '/run/user/1000/warpwatch/collector.sock'
 */
export function defaultSocketPath(env: Readonly<Record<string, string | undefined>>): string {
  const runtime = env['XDG_RUNTIME_DIR'];
  if (runtime !== undefined && runtime.startsWith('/')) return join(runtime, 'warpwatch', 'collector.sock');
  return join('/tmp', `warpwatch-${process.getuid?.() ?? 0}`, 'collector.sock');
}

/** The collector's configuration fields (contracts/config-fields.ts), by config property. */
const F = COLLECTOR_FIELDS;

/** The default spool directory (COLLECTOR_FIELDS.spoolDir's documented default). */
function defaultSpoolDirectory(): string {
  return join(homedir(), '.local', 'state', 'warpwatch', 'spool');
}

/** The input of the collector's config loaders. */
export interface CollectorConfigInput {
  readonly env: EnvSource;
  readonly flags?: CollectorFlags | undefined;
  readonly readTextFile?: ReadTextFile | undefined;
}

/**
 * Builds the collector configuration from environment variables (`WARPWATCH_*`) and
 * command-line flags, once at start-up, from the field definitions COLLECTOR_FIELDS and
 * KAFKA_SECURITY_FIELDS (contracts/config-fields.ts; their table is docs/collector.md "All
 * settings"). Every value is validated; all problems are reported together; the result is
 * deeply frozen. Credential files are read here (`*_FILE` variables) and held as
 * {@link Secret}s, never logged. Sizes accept suffixes KiB, MiB, GiB (and kB, MB, GB).
 *
 * @throws CollectorConfigError (WW_ERR_COLLECTOR_CONFIG) listing every invalid setting: name, value, why.
 * @example
 * const config = loadCollectorConfig({ env: process.env, flags: { socket: '/run/ww.sock', partitions: '12' } });
 */
export function loadCollectorConfig(input: CollectorConfigInput): CollectorConfig {
  const flags = input.flags ?? {};
  const reader = new ConfigReader({ env: input.env, flags, readTextFile: input.readTextFile });
  const hostName = readHostName(reader);
  const kafka = readKafka(reader);
  const sizes = readSizes(reader);
  const v = reader.read({
    maxConnectionErrors: F.maxConnectionErrors,
    validationWorker: F.validationWorker,
    maxBatchRecords: F.maxBatchRecords,
    lingerMillis: F.lingerMillis,
    spoolDir: F.spoolDir,
    spoolPolicy: F.spoolPolicy,
    spoolFsyncIntervalMillis: F.spoolFsyncIntervalMillis,
    retryBackoffMillis: F.retryBackoffMillis,
    produceTimeoutMillis: F.produceTimeoutMillis,
    brokerStallMillis: F.brokerStallMillis,
    dlqMaxValueBytes: F.dlqMaxValueBytes,
    shutdownTimeoutMillis: F.shutdownTimeoutMillis,
    metricsPort: F.metricsPort,
    metricsHost: F.metricsHost,
    pipelineIntervalMillis: F.pipelineIntervalMillis,
    instance: F.instance,
  });
  const config: CollectorConfig = {
    sources: readSources(reader, input.env, flags, v),
    hostName,
    labels: readLabels(reader, flags),
    kafka,
    batch: Object.freeze({ maxBatchBytes: sizes.maxBatchBytes, maxBatchRecords: v.maxBatchRecords, lingerMillis: v.lingerMillis }),
    maxQueueBytes: sizes.maxQueueBytes,
    spool: Object.freeze({
      directory: v.spoolDir ?? defaultSpoolDirectory(),
      maxBytes: sizes.spoolMaxBytes,
      segmentBytes: sizes.spoolSegmentBytes,
      policy: v.spoolPolicy,
      fsyncIntervalMillis: v.spoolFsyncIntervalMillis,
    }),
    retryBackoffMillis: v.retryBackoffMillis,
    produceTimeoutMillis: v.produceTimeoutMillis,
    brokerStallMillis: v.brokerStallMillis,
    dlqMaxValueBytes: v.dlqMaxValueBytes,
    shutdownTimeoutMillis: v.shutdownTimeoutMillis,
    metricsPort: v.metricsPort,
    metricsHost: v.metricsHost,
    influx: readInflux(reader),
    pipelineIntervalMillis: v.pipelineIntervalMillis,
    instance: v.instance ?? `${hostName}:${process.pid}`,
  };
  if (reader.problems.length > 0) throw new CollectorConfigError(reader.problems);
  return Object.freeze(config);
}

/**
 * Only the collector's Kafka slice (brokers, topics, producer settings, SASL/TLS) of the
 * environment and flags: what a command that produces frames without running the collector
 * (`demo --kafka`) needs. Other settings are not read, so a bad unrelated one does not stop it.
 *
 * @throws CollectorConfigError listing every invalid Kafka setting.
 * @example const kafka = loadCollectorKafkaConfig({ env: process.env, flags: { brokers: 'kafka-1:9092' } });
 */
export function loadCollectorKafkaConfig(input: CollectorConfigInput): CollectorConfig['kafka'] {
  const reader = new ConfigReader({ env: input.env, flags: input.flags ?? {}, readTextFile: input.readTextFile });
  const kafka = readKafka(reader);
  if (reader.problems.length > 0) throw new CollectorConfigError(reader.problems);
  return kafka;
}

/** Sources: with none asked for, the agent serves the default socket. */
function readSources(
  reader: ConfigReader,
  env: EnvSource,
  flags: CollectorFlags,
  v: { readonly maxConnectionErrors: number; readonly validationWorker: boolean },
): CollectorConfig['sources'] {
  const replayFiles = [...(flags.replay ?? [])];
  const stdin = flags.stdin === true;
  const socketChoice = reader.readField('socket', F.socket);
  return Object.freeze({
    socketPath: socketChoice ?? (stdin || replayFiles.length > 0 ? undefined : defaultSocketPath(env)),
    socketMode: reader.readField('socketMode', F.socketMode),
    stdin,
    replayFiles: Object.freeze(replayFiles),
    maxConnectionErrors: v.maxConnectionErrors,
    validationWorker: v.validationWorker,
  });
}

/**
 * The host name: --host or WARPWATCH_HOST (checked by the field's stream-identity rule), else the
 * machine's, which must pass the same rule (contracts/stream-identity.ts hostProblem).
 */
function readHostName(reader: ConfigReader): string {
  const given = reader.readField('host', F.host);
  if (given !== undefined) return given;
  const machine = hostname();
  const problem = hostProblem(machine);
  if (problem !== undefined) reader.report({ name: `the machine's host name (set --host or ${F.host.env})`, value: machine, why: problem });
  return machine;
}

/** Labels: WARPWATCH_LABELS, then one WARPWATCH_LABEL_<NAME> each (the Kubernetes downward API), then --label, later ones winning per name. */
function readLabels(reader: ConfigReader, flags: CollectorFlags): Readonly<Record<string, string>> {
  const labels: Record<string, string> = {};
  // The label rule is the stream-identity rule of contracts/ (the CLI and every service use it).
  const addLabel = (text: string, origin: string): void => {
    const problem = labelProblem(text);
    if (problem !== undefined) {
      reader.report({ name: origin, value: text, why: `label ${problem}` });
      return;
    }
    const eq = text.indexOf('=');
    labels[text.slice(0, eq).trim()] = text.slice(eq + 1).trim();
  };
  for (const part of (reader.readField('labels', F.labels) ?? '').split(',')) if (part.trim() !== '') addLabel(part.trim(), F.labels.env);
  for (const entry of reader.readField('labelFamily', F.labelFamily)) addLabel(`${entry.name}=${entry.value}`, entry.env);
  for (const part of flags.label ?? []) addLabel(part, '--label');
  return Object.freeze(labels);
}

/** The Kafka slice: brokers, topics, producer settings and the shared SASL/TLS slice. */
function readKafka(reader: ConfigReader): CollectorConfig['kafka'] {
  const v = reader.read({
    brokers: F.brokers,
    clientId: F.clientId,
    framesTopic: F.framesTopic,
    dlqTopic: F.dlqTopic,
    partitions: F.partitions,
    replicationFactor: F.replicationFactor,
    compression: F.compression,
    maxInFlightRequests: F.maxInFlightRequests,
    retries: F.retries,
    connectionTimeoutMillis: F.connectionTimeoutMillis,
    requestTimeoutMillis: F.requestTimeoutMillis,
    maxMessageBytes: F.maxMessageBytes,
  });
  return Object.freeze({ ...v, ...readKafkaSecurity(reader) });
}

/** Memory, batch and spool sizes, with their cross-field bounds. */
function readSizes(reader: ConfigReader): { maxBatchBytes: number; maxQueueBytes: number; spoolMaxBytes: number; spoolSegmentBytes: number } {
  const { maxBatchBytes, maxQueueBytes, spoolMaxBytes } = reader.read({ maxBatchBytes: F.maxBatchBytes, maxQueueBytes: F.maxQueueBytes, spoolMaxBytes: F.spoolMaxBytes });
  const segmentDefault = Math.max(16 * 1024, Math.min(16 * 1024 * 1024, Math.floor(spoolMaxBytes / 8)));
  const spoolSegmentBytes = reader.readField('spoolSegmentBytes', F.spoolSegmentBytes) ?? segmentDefault;
  if (spoolSegmentBytes > spoolMaxBytes) {
    reader.report({ name: F.spoolSegmentBytes.env, value: String(spoolSegmentBytes), why: `must not exceed the spool bound (${spoolMaxBytes})` });
  }
  if (maxBatchBytes > maxQueueBytes) reader.report({ name: F.maxBatchBytes.env, value: String(maxBatchBytes), why: `must not exceed ${F.maxQueueBytes.env} (${maxQueueBytes})` });
  return { maxBatchBytes, maxQueueBytes, spoolMaxBytes, spoolSegmentBytes };
}

/** InfluxDB for the collector's own counters: off unless a URL is configured. */
function readInflux(reader: ConfigReader): CollectorConfig['influx'] {
  const v = reader.read({
    influxUrl: F.influxUrl,
    influxDatabase: F.influxDatabase,
    influxRetentionPolicy: F.influxRetentionPolicy,
    influxOrg: F.influxOrg,
    influxToken: F.influxToken,
    influxMaxBufferPoints: F.influxMaxBufferPoints,
  });
  if (v.influxUrl === undefined) return undefined;
  return Object.freeze({
    url: v.influxUrl,
    database: v.influxDatabase,
    retentionPolicy: v.influxRetentionPolicy,
    org: v.influxOrg,
    token: v.influxToken,
    tokenFile: reader.secretFile(F.influxToken),
    maxBufferPoints: v.influxMaxBufferPoints,
    requestTimeoutMillis: INFLUX_REQUEST_TIMEOUT_MILLIS,
  });
}

/** Longest wait for one self-metrics write request (not configurable). */
const INFLUX_REQUEST_TIMEOUT_MILLIS = 5_000;

/**
 * A log-safe summary of a configuration (credentials shown as `[redacted]`, file contents
 * omitted), for the start-up line.
 *
 * @example describeCollectorConfig(config) // 'brokers=127.0.0.1:19092 topic=warpwatch.frames ...'
 */
export function describeCollectorConfig(config: CollectorConfig): string {
  const parts = [
    `brokers=${config.kafka.brokers.join(',')}`,
    `topic=${config.kafka.framesTopic}`,
    `dlq=${config.kafka.dlqTopic}`,
    `partitions=${config.kafka.partitions}`,
    `compression=${config.kafka.compression}`,
    `sasl=${config.kafka.sasl ? `${config.kafka.sasl.mechanism}:${config.kafka.sasl.username}:[redacted]` : 'off'}`,
    `tls=${config.kafka.tls ? 'on' : 'off'}`,
    `spool=${config.spool.directory}(max ${config.spool.maxBytes} B, ${config.spool.policy})`,
  ];
  if (config.sources.socketPath !== undefined) parts.push(`socket=${config.sources.socketPath}`);
  if (config.sources.stdin) parts.push('stdin');
  if (config.sources.replayFiles.length > 0) parts.push(`replay=${config.sources.replayFiles.length} file(s)`);
  parts.push(
    config.influx === undefined
      ? 'influx=off'
      : `influx=${withoutCredentials(config.influx.url)} bucket=${config.influx.database}/${config.influx.retentionPolicy} instance=${config.instance} every ${config.pipelineIntervalMillis} ms`,
  );
  return parts.join(' ');
}

/** The URL without user:password (never logged). */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '[invalid url]';
  }
}
