import { readFileSync } from 'node:fs';
import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import { hostProblem, labelProblem, TOPICS } from '../contracts/index.ts';
import { LOCAL_STACK_ADDRESSES } from '../service/index.ts';
import { CollectorConfigError } from './errors.ts';
import { Secret } from './secret.ts';

/** What to do when the disk spool is full: discard the oldest segment or the incoming record. */
export type SpoolPolicy = 'drop-oldest' | 'drop-newest';

/** Kafka message compression the collector can apply (gzip is built into kafkajs). */
export type CompressionName = 'none' | 'gzip';

/** SASL mechanisms supported by kafkajs without plugins. */
export type SaslMechanism = 'scram-sha-256' | 'scram-sha-512' | 'plain';

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
  readonly kafka: {
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
    readonly sasl: { readonly mechanism: SaslMechanism; readonly username: string; readonly password: Secret } | undefined;
    readonly tls:
      | { readonly ca: string | undefined; readonly cert: string | undefined; readonly key: Secret | undefined; readonly rejectUnauthorized: boolean }
      | undefined;
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

/** Defaults, in one place. Sizes in bytes, times in milliseconds. */
export const COLLECTOR_DEFAULTS = Object.freeze({
  /** `$XDG_RUNTIME_DIR/warpwatch/collector.sock` (a per-user 0700 directory), else `/tmp/warpwatch-<uid>/collector.sock`. */
  socketPath: defaultSocketPath(process.env),
  socketMode: 0o660,
  maxConnectionErrors: 16,
  validationWorker: false,
  brokers: LOCAL_STACK_ADDRESSES.kafkaBrokers,
  clientId: 'warpwatch-collector',
  framesTopic: TOPICS.frames,
  dlqTopic: TOPICS.dlq,
  partitions: 6,
  replicationFactor: -1,
  compression: 'none' as CompressionName,
  maxInFlightRequests: 5,
  retries: 5,
  connectionTimeoutMillis: 3_000,
  requestTimeoutMillis: 30_000,
  maxBatchBytes: 1024 * 1024,
  maxBatchRecords: 10_000,
  lingerMillis: 5,
  maxQueueBytes: 64 * 1024 * 1024,
  spoolDirectory: join(homedir(), '.local', 'state', 'warpwatch', 'spool'),
  spoolMaxBytes: 1024 * 1024 * 1024,
  spoolSegmentBytes: 16 * 1024 * 1024,
  spoolPolicy: 'drop-oldest' as SpoolPolicy,
  spoolFsyncIntervalMillis: 1_000,
  retryBackoffMillis: 1_000,
  produceTimeoutMillis: 15_000,
  brokerStallMillis: 2_000,
  /** 8 MiB: every frame SPEC.md allows (≤ 16 B + 4 MiB) plus headers. */
  maxMessageBytes: 8 * 1024 * 1024,
  dlqMaxValueBytes: 64 * 1024,
  shutdownTimeoutMillis: 10_000,
  metricsPort: 9464,
  metricsHost: '127.0.0.1',
  /** No InfluxDB unless a URL is configured (unlike the estimator, whose main output is InfluxDB). */
  influxUrl: undefined as string | undefined,
  influxDatabase: 'warpwatch',
  influxRetentionPolicy: 'autogen',
  influxOrg: '-',
  influxToken: '',
  /** About 2.8 hours of points at the default interval. */
  influxMaxBufferPoints: 1_000,
  influxRequestTimeoutMillis: 5_000,
  pipelineIntervalMillis: 10_000,
});

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1e3, kb: 1e3, kib: 1024, m: 1e6, mb: 1e6, mib: 1024 ** 2, g: 1e9, gb: 1e9, gib: 1024 ** 3 };

/** Reads a text file (credential, certificate); injectable for tests. */
export type ReadTextFile = (path: string) => string;

/**
 * Builds the collector configuration from environment variables (`WARPWATCH_*`) and
 * command-line flags, once at start-up. Every value is validated; all problems are
 * reported together; the result is deeply frozen. Credential files are read here
 * (`*_FILE` variables) and held as {@link Secret}s, never logged.
 *
 * Environment: WARPWATCH_SOCKET, WARPWATCH_SOCKET_MODE (octal), WARPWATCH_KAFKA_BROKERS
 * (comma list), WARPWATCH_KAFKA_CLIENT_ID, WARPWATCH_FRAMES_TOPIC, WARPWATCH_DLQ_TOPIC,
 * WARPWATCH_KAFKA_PARTITIONS, WARPWATCH_KAFKA_REPLICATION_FACTOR, WARPWATCH_KAFKA_COMPRESSION,
 * WARPWATCH_KAFKA_MAX_IN_FLIGHT, WARPWATCH_KAFKA_RETRIES, WARPWATCH_KAFKA_SASL_MECHANISM,
 * WARPWATCH_KAFKA_SASL_USERNAME, WARPWATCH_KAFKA_SASL_PASSWORD or WARPWATCH_KAFKA_SASL_PASSWORD_FILE,
 * WARPWATCH_KAFKA_TLS (true|false), WARPWATCH_KAFKA_TLS_CA_FILE, WARPWATCH_KAFKA_TLS_CERT_FILE,
 * WARPWATCH_KAFKA_TLS_KEY_FILE, WARPWATCH_KAFKA_TLS_REJECT_UNAUTHORIZED, WARPWATCH_BATCH_MAX_BYTES,
 * WARPWATCH_BATCH_MAX_RECORDS, WARPWATCH_BATCH_LINGER_MILLIS, WARPWATCH_QUEUE_MAX_BYTES,
 * WARPWATCH_SPOOL_DIR, WARPWATCH_SPOOL_MAX_BYTES, WARPWATCH_SPOOL_SEGMENT_BYTES,
 * WARPWATCH_SPOOL_POLICY, WARPWATCH_SPOOL_FSYNC_INTERVAL_MILLIS, WARPWATCH_RETRY_BACKOFF_MILLIS,
 * WARPWATCH_PRODUCE_TIMEOUT_MILLIS, WARPWATCH_BROKER_STALL_MILLIS, WARPWATCH_KAFKA_MAX_MESSAGE_BYTES,
 * WARPWATCH_DLQ_MAX_VALUE_BYTES, WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS, WARPWATCH_METRICS_PORT
 * (or "off"), WARPWATCH_METRICS_HOST, WARPWATCH_HOST, WARPWATCH_LABELS ("k=v,k2=v2"),
 * WARPWATCH_MAX_CONNECTION_ERRORS, WARPWATCH_VALIDATION_WORKER (true|false), WARPWATCH_LABELS
 * (name=value,...), WARPWATCH_LABEL_<NAME> (one label each). Sizes accept suffixes KiB, MiB, GiB (and kB, MB, GB).
 * Self-metrics to InfluxDB (the estimator's names): WARPWATCH_INFLUX_URL [--influx-url; unset or
 * "off" = none], WARPWATCH_INFLUX_DATABASE [--influx-database], WARPWATCH_INFLUX_RETENTION_POLICY,
 * WARPWATCH_INFLUX_ORG, WARPWATCH_INFLUX_TOKEN or WARPWATCH_INFLUX_TOKEN_FILE,
 * WARPWATCH_COLLECTOR_INFLUX_MAX_BUFFER_POINTS (its own name: the estimator's
 * WARPWATCH_INFLUX_MAX_BUFFER_LINES, shared through one ConfigMap, is not read), WARPWATCH_PIPELINE_INTERVAL_MILLIS [--pipeline-interval-millis],
 * WARPWATCH_INSTANCE [--instance].
 *
 * @throws CollectorConfigError listing every invalid setting.
 * @example
 * const config = loadCollectorConfig({ env: process.env, flags: { socket: '/run/ww.sock', partitions: '12' } });
 */
export function loadCollectorConfig(input: {
  env: Readonly<Record<string, string | undefined>>;
  flags?: CollectorFlags;
  readTextFile?: ReadTextFile;
}): CollectorConfig {
  const env = input.env;
  const flags = input.flags ?? {};
  const readTextFile: ReadTextFile = input.readTextFile ?? ((path) => readFileSync(path, 'utf8'));
  const problems: string[] = [];
  const d = COLLECTOR_DEFAULTS;

  /** Picks the flag, else the env var, else undefined; returns the name used, for messages. */
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

  const byteSize = (flag: string | undefined, flagName: string | undefined, envName: string, fallback: number, min: number, max: number): number => {
    const { text, name } = pick(flag, flagName, envName);
    if (text === undefined) return fallback;
    const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
    const unit = match ? BYTE_UNITS[(match[2] ?? '').toLowerCase()] : undefined;
    const value = match && unit !== undefined ? Math.floor(Number(match[1]) * unit) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      problems.push(`${name} must be a size ${min}..${max} bytes (suffixes KiB, MiB, GiB allowed), got "${text}"`);
      return fallback;
    }
    return value;
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

  const boolean = (envName: string, fallback: boolean): boolean => {
    const text = env[envName];
    if (text === undefined || text === '') return fallback;
    const lower = text.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(lower)) return true;
    if (['0', 'false', 'no', 'off'].includes(lower)) return false;
    problems.push(`${envName} must be true or false, got "${text}"`);
    return fallback;
  };

  const secretFrom = (valueEnv: string, fileEnv: string): Secret | undefined => {
    const direct = env[valueEnv];
    const file = env[fileEnv];
    if (direct !== undefined && direct !== '' && file !== undefined && file !== '') {
      problems.push(`set only one of ${valueEnv} and ${fileEnv}, both are set`);
      return undefined;
    }
    if (direct !== undefined && direct !== '') return new Secret(direct);
    if (file !== undefined && file !== '') {
      try {
        return new Secret(readTextFile(file).replace(/\r?\n$/, ''));
      } catch (error) {
        problems.push(`${fileEnv} names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${file}`);
      }
    }
    return undefined;
  };

  const textFile = (envName: string): string | undefined => {
    const file = env[envName];
    if (file === undefined || file === '') return undefined;
    try {
      return readTextFile(file);
    } catch (error) {
      problems.push(`${envName} names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}): ${file}`);
      return undefined;
    }
  };

  // Sources. With no source at all the agent serves the default socket.
  const replayFiles = [...(flags.replay ?? [])];
  const stdin = flags.stdin === true;
  const socketChoice = pick(flags.socket, '--socket', 'WARPWATCH_SOCKET').text;
  const socketPath = socketChoice ?? (stdin || replayFiles.length > 0 ? undefined : d.socketPath);
  const socketModeText = pick(flags.socketMode, '--socket-mode', 'WARPWATCH_SOCKET_MODE');
  let socketMode: number = d.socketMode;
  if (socketModeText.text !== undefined) {
    if (/^0?[0-7]{3}$/.test(socketModeText.text.trim())) socketMode = parseInt(socketModeText.text.trim(), 8);
    else problems.push(`${socketModeText.name} must be octal permission bits like 0660, got "${socketModeText.text}"`);
  }

  // Labels: env first, flags override per key.
  const labels: Record<string, string> = {};
  // The label rule is the stream-identity rule of contracts/ (the CLI and every service use it).
  const addLabel = (text: string, origin: string): void => {
    const problem = labelProblem(text);
    if (problem !== undefined) {
      problems.push(`${origin} label ${problem}, got "${text}"`);
      return;
    }
    const eq = text.indexOf('=');
    labels[text.slice(0, eq).trim()] = text.slice(eq + 1).trim();
  };
  for (const part of (env.WARPWATCH_LABELS ?? '').split(',')) if (part.trim() !== '') addLabel(part.trim(), 'WARPWATCH_LABELS');
  // One variable per label, WARPWATCH_LABEL_<NAME>=value (name lowercased): what Kubernetes'
  // downward API sets (WARPWATCH_LABEL_POD from metadata.name, _NAMESPACE, _NODE from spec.nodeName).
  for (const [variable, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) {
    if (!variable.startsWith('WARPWATCH_LABEL_') || value === undefined) continue;
    const name = variable.slice('WARPWATCH_LABEL_'.length).toLowerCase();
    addLabel(`${name}=${value}`, variable);
  }
  for (const part of flags.label ?? []) addLabel(part, '--label');

  const brokersText = pick(flags.brokers, '--brokers', 'WARPWATCH_KAFKA_BROKERS');
  const brokers = (brokersText.text ?? d.brokers).split(',').map((b) => b.trim()).filter((b) => b !== '');
  for (const broker of brokers) {
    if (!/^[^\s:]+:\d{1,5}$/.test(broker) && !/^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(broker)) {
      problems.push(`${brokersText.name} entries must be host:port, got "${broker}"`);
    }
  }
  if (brokers.length === 0) problems.push(`${brokersText.name} must list at least one host:port`);

  const topicName = (envName: string, fallback: string): string => {
    const text = env[envName];
    if (text === undefined || text === '') return fallback;
    if (!/^[A-Za-z0-9._-]{1,249}$/.test(text)) problems.push(`${envName} must be a Kafka topic name ([A-Za-z0-9._-], 1..249 chars), got "${text}"`);
    return text;
  };

  const saslMechanismText = env.WARPWATCH_KAFKA_SASL_MECHANISM;
  let sasl: CollectorConfig['kafka']['sasl'];
  if (saslMechanismText !== undefined && saslMechanismText !== '') {
    const mechanism = oneOf<SaslMechanism>(undefined, undefined, 'WARPWATCH_KAFKA_SASL_MECHANISM', 'scram-sha-512', ['scram-sha-256', 'scram-sha-512', 'plain']);
    const username = env.WARPWATCH_KAFKA_SASL_USERNAME ?? '';
    const password = secretFrom('WARPWATCH_KAFKA_SASL_PASSWORD', 'WARPWATCH_KAFKA_SASL_PASSWORD_FILE');
    if (username === '') problems.push('WARPWATCH_KAFKA_SASL_USERNAME must be set when WARPWATCH_KAFKA_SASL_MECHANISM is set');
    if (password === undefined) problems.push('WARPWATCH_KAFKA_SASL_PASSWORD or WARPWATCH_KAFKA_SASL_PASSWORD_FILE must be set when WARPWATCH_KAFKA_SASL_MECHANISM is set');
    sasl = password === undefined ? undefined : Object.freeze({ mechanism, username, password });
  }

  const tlsFilesGiven = ['WARPWATCH_KAFKA_TLS_CA_FILE', 'WARPWATCH_KAFKA_TLS_CERT_FILE', 'WARPWATCH_KAFKA_TLS_KEY_FILE'].some((n) => (env[n] ?? '') !== '');
  const tlsEnabled = boolean('WARPWATCH_KAFKA_TLS', tlsFilesGiven);
  const tls = tlsEnabled
    ? Object.freeze({
        ca: textFile('WARPWATCH_KAFKA_TLS_CA_FILE'),
        cert: textFile('WARPWATCH_KAFKA_TLS_CERT_FILE'),
        key: secretFrom('WARPWATCH_KAFKA_TLS_KEY', 'WARPWATCH_KAFKA_TLS_KEY_FILE'),
        rejectUnauthorized: boolean('WARPWATCH_KAFKA_TLS_REJECT_UNAUTHORIZED', true),
      })
    : undefined;

  let metricsPort: number | undefined;
  const metricsText = pick(flags.metricsPort, '--metrics-port', 'WARPWATCH_METRICS_PORT');
  if (metricsText.text !== undefined && metricsText.text.trim().toLowerCase() === 'off') metricsPort = undefined;
  else metricsPort = integer(flags.metricsPort, '--metrics-port', 'WARPWATCH_METRICS_PORT', d.metricsPort, 0, 65_535);

  const maxBatchBytes = byteSize(undefined, undefined, 'WARPWATCH_BATCH_MAX_BYTES', d.maxBatchBytes, 1024, 64 * 1024 * 1024);
  const maxQueueBytes = byteSize(undefined, undefined, 'WARPWATCH_QUEUE_MAX_BYTES', d.maxQueueBytes, 64 * 1024, 16 * 1024 ** 3);
  const spoolMaxBytes = byteSize(flags.spoolMaxBytes, '--spool-max-bytes', 'WARPWATCH_SPOOL_MAX_BYTES', d.spoolMaxBytes, 64 * 1024, 2 ** 50);
  const segmentDefault = Math.max(16 * 1024, Math.min(d.spoolSegmentBytes, Math.floor(spoolMaxBytes / 8)));
  const spoolSegmentBytes = byteSize(undefined, undefined, 'WARPWATCH_SPOOL_SEGMENT_BYTES', segmentDefault, 16 * 1024, 1024 ** 3);
  if (spoolSegmentBytes > spoolMaxBytes) problems.push(`WARPWATCH_SPOOL_SEGMENT_BYTES (${spoolSegmentBytes}) must not exceed the spool bound (${spoolMaxBytes})`);
  if (maxBatchBytes > maxQueueBytes) problems.push(`WARPWATCH_BATCH_MAX_BYTES (${maxBatchBytes}) must not exceed WARPWATCH_QUEUE_MAX_BYTES (${maxQueueBytes})`);

  const hostText = pick(flags.host, '--host', 'WARPWATCH_HOST');
  const hostName = hostText.text ?? hostname();
  const hostNameProblem = hostProblem(hostName);
  if (hostNameProblem !== undefined) problems.push(`${hostText.text === undefined ? 'the machine\'s host name (set --host or WARPWATCH_HOST)' : hostText.name} ${hostNameProblem}, got "${hostName}"`);

  // InfluxDB self-metrics: the same variable names as the estimator's config.
  const influxUrlText = pick(flags.influxUrl, '--influx-url', 'WARPWATCH_INFLUX_URL');
  const influxUrl = influxUrlText.text?.trim() ?? d.influxUrl;
  const influxEnabled = influxUrl !== undefined && influxUrl !== '' && influxUrl.toLowerCase() !== 'off';
  if (influxEnabled) {
    let scheme = '';
    try {
      scheme = new URL(influxUrl).protocol;
    } catch {
      scheme = '';
    }
    if (scheme !== 'http:' && scheme !== 'https:') problems.push(`${influxUrlText.name} must be an http(s) URL or "off", got "${influxUrl}"`);
  }
  const influxDatabaseText = pick(flags.influxDatabase, '--influx-database', 'WARPWATCH_INFLUX_DATABASE');
  const influxDatabase = influxDatabaseText.text ?? d.influxDatabase;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(influxDatabase)) problems.push(`${influxDatabaseText.name} must match [A-Za-z0-9._-]{1,128}, got "${influxDatabase}"`);
  const influxRetentionPolicy = env.WARPWATCH_INFLUX_RETENTION_POLICY || d.influxRetentionPolicy;
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(influxRetentionPolicy)) {
    problems.push(`WARPWATCH_INFLUX_RETENTION_POLICY must match [A-Za-z0-9._-]{1,128}, got "${influxRetentionPolicy}"`);
  }
  const influxToken = secretFrom('WARPWATCH_INFLUX_TOKEN', 'WARPWATCH_INFLUX_TOKEN_FILE') ?? new Secret(d.influxToken);
  const influxMaxBufferPoints = integer(undefined, undefined, 'WARPWATCH_COLLECTOR_INFLUX_MAX_BUFFER_POINTS', d.influxMaxBufferPoints, 1, 10_000_000);
  const pipelineIntervalMillis = integer(
    flags.pipelineIntervalMillis,
    '--pipeline-interval-millis',
    'WARPWATCH_PIPELINE_INTERVAL_MILLIS',
    d.pipelineIntervalMillis,
    100,
    3_600_000,
  );
  const instanceText = pick(flags.instance, '--instance', 'WARPWATCH_INSTANCE');
  const instance = instanceText.text?.trim() || `${hostName}:${process.pid}`;
  if (instance.length > 256) problems.push(`${instanceText.name} must be at most 256 characters, got ${instance.length}`);

  const config: CollectorConfig = {
    sources: Object.freeze({
      socketPath,
      socketMode,
      stdin,
      replayFiles: Object.freeze(replayFiles),
      maxConnectionErrors: integer(undefined, undefined, 'WARPWATCH_MAX_CONNECTION_ERRORS', d.maxConnectionErrors, 1, 1_000_000),
      validationWorker: boolean('WARPWATCH_VALIDATION_WORKER', d.validationWorker),
    }),
    hostName,
    labels: Object.freeze(labels),
    kafka: Object.freeze({
      brokers: Object.freeze(brokers),
      clientId: env.WARPWATCH_KAFKA_CLIENT_ID || d.clientId,
      framesTopic: topicName('WARPWATCH_FRAMES_TOPIC', d.framesTopic),
      dlqTopic: topicName('WARPWATCH_DLQ_TOPIC', d.dlqTopic),
      partitions: integer(flags.partitions, '--partitions', 'WARPWATCH_KAFKA_PARTITIONS', d.partitions, 1, 10_000),
      replicationFactor: integer(undefined, undefined, 'WARPWATCH_KAFKA_REPLICATION_FACTOR', d.replicationFactor, -1, 32),
      compression: oneOf<CompressionName>(flags.compression, '--compression', 'WARPWATCH_KAFKA_COMPRESSION', d.compression, ['none', 'gzip']),
      maxInFlightRequests: integer(undefined, undefined, 'WARPWATCH_KAFKA_MAX_IN_FLIGHT', d.maxInFlightRequests, 1, 5),
      retries: integer(undefined, undefined, 'WARPWATCH_KAFKA_RETRIES', d.retries, 1, 100),
      connectionTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS', d.connectionTimeoutMillis, 100, 600_000),
      requestTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS', d.requestTimeoutMillis, 100, 600_000),
      maxMessageBytes: byteSize(undefined, undefined, 'WARPWATCH_KAFKA_MAX_MESSAGE_BYTES', d.maxMessageBytes, 64 * 1024, 1024 ** 3),
      sasl,
      tls,
    }),
    batch: Object.freeze({
      maxBatchBytes,
      maxBatchRecords: integer(undefined, undefined, 'WARPWATCH_BATCH_MAX_RECORDS', d.maxBatchRecords, 1, 1_000_000),
      lingerMillis: integer(undefined, undefined, 'WARPWATCH_BATCH_LINGER_MILLIS', d.lingerMillis, 0, 60_000),
    }),
    maxQueueBytes,
    spool: Object.freeze({
      directory: pick(flags.spoolDir, '--spool-dir', 'WARPWATCH_SPOOL_DIR').text ?? d.spoolDirectory,
      maxBytes: spoolMaxBytes,
      segmentBytes: spoolSegmentBytes,
      policy: oneOf<SpoolPolicy>(flags.spoolPolicy, '--spool-policy', 'WARPWATCH_SPOOL_POLICY', d.spoolPolicy, ['drop-oldest', 'drop-newest']),
      fsyncIntervalMillis: integer(undefined, undefined, 'WARPWATCH_SPOOL_FSYNC_INTERVAL_MILLIS', d.spoolFsyncIntervalMillis, 0, 3_600_000),
    }),
    retryBackoffMillis: integer(undefined, undefined, 'WARPWATCH_RETRY_BACKOFF_MILLIS', d.retryBackoffMillis, 10, 600_000),
    produceTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_PRODUCE_TIMEOUT_MILLIS', d.produceTimeoutMillis, 100, 3_600_000),
    brokerStallMillis: integer(undefined, undefined, 'WARPWATCH_BROKER_STALL_MILLIS', d.brokerStallMillis, 100, 600_000),
    dlqMaxValueBytes: byteSize(undefined, undefined, 'WARPWATCH_DLQ_MAX_VALUE_BYTES', d.dlqMaxValueBytes, 1024, 64 * 1024 ** 2),
    shutdownTimeoutMillis: integer(undefined, undefined, 'WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS', d.shutdownTimeoutMillis, 100, 3_600_000),
    metricsPort,
    metricsHost: env.WARPWATCH_METRICS_HOST || d.metricsHost,
    influx: influxEnabled
      ? Object.freeze({
          url: influxUrl,
          database: influxDatabase,
          retentionPolicy: influxRetentionPolicy,
          org: env.WARPWATCH_INFLUX_ORG || d.influxOrg,
          token: influxToken,
          maxBufferPoints: influxMaxBufferPoints,
          requestTimeoutMillis: d.influxRequestTimeoutMillis,
        })
      : undefined,
    pipelineIntervalMillis,
    instance,
  };
  if (problems.length > 0) throw new CollectorConfigError(problems);
  return Object.freeze(config);
}

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
