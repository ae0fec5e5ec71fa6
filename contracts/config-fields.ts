/**
 * The configuration fields of both services, defined once: each field's environment variable
 * (`WARPWATCH_*`), its command-line flag where it has one, its type, default, bounds, unit and a
 * one-line description. Pure data: service/config-toolkit.ts reads them from env and flags, the
 * services' config modules build their configs from them, `npm run config-docs` writes the env
 * tables of docs/collector.md, docs/estimator.md and docs/exporting.md from them, and
 * deploy/deploy.test.ts checks compose and Kubernetes env names and values against them.
 *
 * Defaults that depend on the machine (host name, home directory, process id) are computed by
 * the config module; the field then carries `defaultText`, how the docs show it.
 */

import { LABEL_TAGS } from './series.ts';
import { hostProblem, LABEL_NAME_PATTERN } from './stream-identity.ts';
import { TOPICS } from './topics.ts';

/** Kafka's record-batch codecs the services can produce with (service/kafka-compression.ts; every one of them is consumed). */
export const KAFKA_COMPRESSION_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;

/** What every field has. */
export interface ConfigFieldBase {
  /** The environment variable, `WARPWATCH_*`. An empty value counts as unset. */
  readonly env: string;
  /** The command-line flag that sets the same value (it wins over the variable), e.g. `--partitions`. */
  readonly flag?: string;
  /** One line for the docs table. */
  readonly doc: string;
  /** Unit of a number (ms, bytes, launches, ...), shown in the docs table. */
  readonly unit?: string;
  /** How the docs show a default that is computed at start-up (host name, home directory, ...). */
  readonly defaultText?: string;
}

/** An integer in [min, max]; `offWord`: the value `off` means "none" (undefined). */
export interface IntegerField extends ConfigFieldBase {
  readonly kind: 'integer';
  readonly min: number;
  readonly max: number;
  readonly default?: number;
  readonly offWord?: true;
}

/** A finite number in [min, max]; `offWord`: the value `off` means "none" (undefined). */
export interface NumberField extends ConfigFieldBase {
  readonly kind: 'number';
  readonly min: number;
  readonly max: number;
  readonly default?: number;
  readonly offWord?: true;
}

/** A size in bytes in [min, max]; accepts the suffixes kB, MB, GB (10^3) and KiB, MiB, GiB (2^10). */
export interface ByteSizeField extends ConfigFieldBase {
  readonly kind: 'bytes';
  readonly min: number;
  readonly max: number;
  readonly default?: number;
}

/** File permission bits written in octal (`0660`). */
export interface OctalField extends ConfigFieldBase {
  readonly kind: 'octal';
  readonly default: number;
}

/** true|false (also 1|0, yes|no, on|off). */
export interface BooleanField extends ConfigFieldBase {
  readonly kind: 'boolean';
  readonly default?: boolean;
}

/** One of a fixed set of words (compared in lower case). */
export interface ChoiceField<V extends string = string> extends ConfigFieldBase {
  readonly kind: 'choice';
  readonly values: readonly V[];
  readonly default?: V;
}

/** Free text, optionally matching a pattern (whose meaning `patternText` says) and at most `maxLength` characters. */
export interface TextField extends ConfigFieldBase {
  readonly kind: 'text';
  readonly pattern?: RegExp;
  /** What the pattern requires, a noun phrase (`a Kafka topic name (...)`): the docs and the error message (`must be ...`) say it. */
  readonly patternText?: string;
  readonly maxLength?: number;
  /**
   * A rule of its own, when a pattern cannot say it: what is wrong with the (trimmed) value, or
   * undefined; e.g. a stream-identity rule of contracts/stream-identity.ts (`hostProblem`), so a
   * setting and a command-line argument are checked by the same function.
   */
  readonly check?: (value: string) => string | undefined;
  /** What `check` requires, a noun phrase for the docs (`a host name: ...`). */
  readonly checkText?: string;
  readonly default?: string;
}

/** An http(s) URL, or `off` (undefined). */
export interface UrlField extends ConfigFieldBase {
  readonly kind: 'url';
  readonly default?: string;
  readonly offWord: true;
  /** What is expected, when more specific than "an http(s) URL". */
  readonly expected?: string;
}

/** A comma list of words, each matching `item`; `offWord`: `off` means the empty list. */
export interface ListField extends ConfigFieldBase {
  readonly kind: 'list';
  readonly item: RegExp;
  /** What each entry must be, as the error message and the docs say it. */
  readonly itemText: string;
  readonly minItems?: number;
  readonly default?: readonly string[];
  readonly offWord?: true;
}

/** A comma list of integers in [min, max]; `offWord`: `off` means the empty list. */
export interface IntegerListField extends ConfigFieldBase {
  readonly kind: 'integer-list';
  readonly min: number;
  readonly max: number;
  readonly default?: readonly number[];
  readonly offWord?: true;
}

/** A credential, from the variable itself or from the file named by `fileEnv` (one trailing newline dropped); never printed. */
export interface SecretField extends ConfigFieldBase {
  readonly kind: 'secret';
  readonly fileEnv: string;
  readonly default?: string;
}

/** The variable names a file whose content (a certificate) is the value. */
export interface FileField extends ConfigFieldBase {
  readonly kind: 'file';
}

/** A family of variables `<prefix><NAME>`, one value each (read as a name → value map, names lower-cased). */
export interface FamilyField extends ConfigFieldBase {
  readonly kind: 'family';
  readonly prefix: string;
}

/** Any configuration field. */
export type ConfigField =
  | IntegerField
  | NumberField
  | ByteSizeField
  | OctalField
  | BooleanField
  | ChoiceField
  | TextField
  | UrlField
  | ListField
  | IntegerListField
  | SecretField
  | FileField
  | FamilyField;

/** A named set of fields: one slice of a configuration (the keys are the config's property names and flag keys). */
export type ConfigFields = Readonly<Record<string, ConfigField>>;

/**
 * Every environment variable name a set of fields reads: each field's variable, the `*_FILE`
 * variable of a secret, and the prefix of a family (ending in `_`).
 *
 * @example envNamesOf({ token: INFLUX_FIELDS.influxToken }) // ['WARPWATCH_INFLUX_TOKEN', 'WARPWATCH_INFLUX_TOKEN_FILE']
 */
export function envNamesOf(...groups: readonly ConfigFields[]): string[] {
  const names = new Set<string>();
  for (const group of groups) {
    for (const field of Object.values(group)) {
      names.add(field.kind === 'family' ? field.prefix : field.env);
      if (field.kind === 'secret') names.add(field.fileEnv);
    }
  }
  return [...names];
}

const MILLIS = 'ms';
const NAME_128 = /^[A-Za-z0-9._-]{1,128}$/;
/** The label-name rule of the stream identity (contracts/stream-identity.ts). */
const LABEL_NAME = LABEL_NAME_PATTERN;
const TOPIC = { pattern: /^[A-Za-z0-9._-]{1,249}$/, patternText: 'a Kafka topic name ([A-Za-z0-9._-], 1..249 chars)' } as const;
const DAY_MILLIS = 86_400_000;

/** Kafka SASL and TLS: one slice both services (and the CLI's Kafka readers) read the same way. */
export const KAFKA_SECURITY_FIELDS = {
  saslMechanism: { kind: 'choice', env: 'WARPWATCH_KAFKA_SASL_MECHANISM', values: ['scram-sha-256', 'scram-sha-512', 'plain'], doc: 'SASL login mechanism; unset = no login' },
  saslUsername: { kind: 'text', env: 'WARPWATCH_KAFKA_SASL_USERNAME', doc: 'SASL user (required with a mechanism)' },
  saslPassword: { kind: 'secret', env: 'WARPWATCH_KAFKA_SASL_PASSWORD', fileEnv: 'WARPWATCH_KAFKA_SASL_PASSWORD_FILE', doc: 'SASL password, or the file holding it (required with a mechanism)' },
  tls: { kind: 'boolean', env: 'WARPWATCH_KAFKA_TLS', defaultText: 'true when a TLS file is given', doc: 'connect to the brokers over TLS' },
  tlsCaFile: { kind: 'file', env: 'WARPWATCH_KAFKA_TLS_CA_FILE', doc: 'PEM file of the CA that signed the brokers\' certificates' },
  tlsCertFile: { kind: 'file', env: 'WARPWATCH_KAFKA_TLS_CERT_FILE', doc: 'PEM client certificate (mutual TLS)' },
  tlsKey: { kind: 'secret', env: 'WARPWATCH_KAFKA_TLS_KEY', fileEnv: 'WARPWATCH_KAFKA_TLS_KEY_FILE', doc: 'PEM client private key, or the file holding it' },
  tlsRejectUnauthorized: { kind: 'boolean', env: 'WARPWATCH_KAFKA_TLS_REJECT_UNAUTHORIZED', default: true, doc: 'refuse brokers whose certificate does not verify' },
} as const satisfies ConfigFields;

/** Kafka fields both services read (defaults that differ are set per service below). */
const KAFKA_SHARED = {
  brokers: { kind: 'list', env: 'WARPWATCH_KAFKA_BROKERS', flag: '--brokers', item: /^(?:[^\s:]+|\[[0-9a-fA-F:]+\]):\d{1,5}$/, itemText: 'host:port', minItems: 1, default: ['127.0.0.1:19092'], doc: 'Kafka bootstrap brokers' },
  framesTopic: { kind: 'text', env: 'WARPWATCH_FRAMES_TOPIC', ...TOPIC, default: TOPICS.frames, doc: 'topic of the frames' },
  partitions: { kind: 'integer', env: 'WARPWATCH_KAFKA_PARTITIONS', min: 1, max: 10_000, default: 6, doc: 'partitions of a topic the service creates' },
  replicationFactor: { kind: 'integer', env: 'WARPWATCH_KAFKA_REPLICATION_FACTOR', min: -1, max: 32, default: -1, doc: 'replication factor of a topic the service creates (-1 = broker default)' },
  connectionTimeoutMillis: { kind: 'integer', env: 'WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS', min: 100, max: 600_000, default: 3_000, unit: MILLIS, doc: 'Kafka connection timeout' },
} as const satisfies ConfigFields;

/** The InfluxDB connection both services use (the collector for its own counters). */
const INFLUX_SHARED = {
  influxDatabase: { kind: 'text', env: 'WARPWATCH_INFLUX_DATABASE', flag: '--influx-database', pattern: NAME_128, patternText: 'a name matching [A-Za-z0-9._-]{1,128}', default: 'warpwatch', doc: 'InfluxDB 1.8 database; the v2 API bucket is `<database>/<retention policy>`' },
  influxRetentionPolicy: { kind: 'text', env: 'WARPWATCH_INFLUX_RETENTION_POLICY', pattern: NAME_128, patternText: 'a name matching [A-Za-z0-9._-]{1,128}', default: 'autogen', doc: 'retention policy of the bucket' },
  influxOrg: { kind: 'text', env: 'WARPWATCH_INFLUX_ORG', default: '-', doc: 'v2 API org (`-` for InfluxDB 1.8)' },
  influxToken: { kind: 'secret', env: 'WARPWATCH_INFLUX_TOKEN', fileEnv: 'WARPWATCH_INFLUX_TOKEN_FILE', default: '', doc: 'v2 API token (empty for an open 1.8 server, `user:password`, or a 2.x token), or the file holding it' },
} as const satisfies ConfigFields;

/** /metrics and /healthz, and the stop deadline, of both services. */
const SERVICE_SHARED = {
  metricsHost: { kind: 'text', env: 'WARPWATCH_METRICS_HOST', default: '127.0.0.1', doc: 'address `/metrics` and `/healthz` listen on (`0.0.0.0` in containers)' },
  shutdownTimeoutMillis: { kind: 'integer', env: 'WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS', min: 100, max: 3_600_000, default: 10_000, unit: MILLIS, doc: 'SIGTERM: longest clean stop' },
  instance: { kind: 'text', env: 'WARPWATCH_INSTANCE', flag: '--instance', maxLength: 256, doc: 'instance name: tag `instance` of the service\'s `warpwatch_pipeline` points' },
} as const satisfies ConfigFields;

/** The collector's fields (`warpwatch collect`); with {@link KAFKA_SECURITY_FIELDS}. */
export const COLLECTOR_FIELDS = {
  socket: {
    kind: 'text',
    env: 'WARPWATCH_SOCKET',
    flag: '--socket',
    defaultText: '`$XDG_RUNTIME_DIR/warpwatch/collector.sock`, else `/tmp/warpwatch-<uid>/collector.sock`, when no other source',
    doc: 'unix socket to serve frames on',
  },
  socketMode: { kind: 'octal', env: 'WARPWATCH_SOCKET_MODE', flag: '--socket-mode', default: 0o660, doc: 'permission bits of the socket file' },
  labels: { kind: 'text', env: 'WARPWATCH_LABELS', defaultText: 'none', doc: 'labels `name=value,...` sent as `ww-label-<name>` headers (`--label name=value`, repeatable, wins per name)' },
  labelFamily: { kind: 'family', env: 'WARPWATCH_LABEL_<NAME>', prefix: 'WARPWATCH_LABEL_', doc: 'one label each, name lower-cased (what the Kubernetes downward API sets); above WARPWATCH_LABELS, below `--label`' },
  host: {
    kind: 'text',
    env: 'WARPWATCH_HOST',
    flag: '--host',
    check: hostProblem,
    checkText: '1..255 UTF-8 bytes without whitespace, control characters, `|` or a `\\` before `,` `=` or the end',
    defaultText: '`os.hostname()`',
    doc: 'host name in the `ww-host` header',
  },
  brokers: KAFKA_SHARED.brokers,
  clientId: { kind: 'text', env: 'WARPWATCH_KAFKA_CLIENT_ID', default: 'warpwatch-collector', doc: 'Kafka client id' },
  framesTopic: KAFKA_SHARED.framesTopic,
  dlqTopic: { kind: 'text', env: 'WARPWATCH_DLQ_TOPIC', ...TOPIC, default: TOPICS.dlq, doc: 'topic of rejected frames' },
  partitions: { ...KAFKA_SHARED.partitions, flag: '--partitions' },
  replicationFactor: KAFKA_SHARED.replicationFactor,
  compression: {
    kind: 'choice',
    env: 'WARPWATCH_KAFKA_COMPRESSION',
    flag: '--compression',
    values: KAFKA_COMPRESSION_NAMES,
    default: 'none',
    doc: 'codec of the frame batches sent to Kafka (every codec is read back whatever the topic holds; docs/stack.md § Compression)',
  },
  maxInFlightRequests: { kind: 'integer', env: 'WARPWATCH_KAFKA_MAX_IN_FLIGHT', min: 1, max: 5, default: 5, doc: 'in-flight requests per broker connection (idempotence keeps order up to 5)' },
  retries: { kind: 'integer', env: 'WARPWATCH_KAFKA_RETRIES', min: 1, max: 100, default: 5, doc: 'producer retries before a batch is spooled' },
  connectionTimeoutMillis: KAFKA_SHARED.connectionTimeoutMillis,
  requestTimeoutMillis: { kind: 'integer', env: 'WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS', min: 100, max: 600_000, default: 30_000, unit: MILLIS, doc: 'Kafka request timeout' },
  maxMessageBytes: {
    kind: 'bytes',
    env: 'WARPWATCH_KAFKA_MAX_MESSAGE_BYTES',
    min: 64 * 1024,
    max: 1024 ** 3,
    default: 8 * 1024 * 1024,
    unit: 'bytes',
    doc: 'largest record the collector sends; larger ones go to the DLQ (topics are created with `max.message.bytes` 8 MiB, contracts/topics.ts; an existing topic taking less than this, or than the largest frame record, is reported)',
  },
  maxBatchBytes: { kind: 'bytes', env: 'WARPWATCH_BATCH_MAX_BYTES', min: 1024, max: 64 * 1024 * 1024, default: 1024 * 1024, unit: 'bytes', doc: 'a batch is sent at this size ... (at most WARPWATCH_QUEUE_MAX_BYTES)' },
  maxBatchRecords: { kind: 'integer', env: 'WARPWATCH_BATCH_MAX_RECORDS', min: 1, max: 1_000_000, default: 10_000, unit: 'records', doc: '... or this many records ...' },
  lingerMillis: { kind: 'integer', env: 'WARPWATCH_BATCH_LINGER_MILLIS', min: 0, max: 60_000, default: 5, unit: MILLIS, doc: '... or when its first record has waited this long' },
  maxQueueBytes: { kind: 'bytes', env: 'WARPWATCH_QUEUE_MAX_BYTES', min: 64 * 1024, max: 16 * 1024 ** 3, default: 64 * 1024 * 1024, unit: 'bytes', doc: 'memory: spool cache + records the disk refused' },
  spoolDir: { kind: 'text', env: 'WARPWATCH_SPOOL_DIR', flag: '--spool-dir', defaultText: '`~/.local/state/warpwatch/spool`', doc: 'disk spool directory' },
  spoolMaxBytes: { kind: 'bytes', env: 'WARPWATCH_SPOOL_MAX_BYTES', flag: '--spool-max-bytes', min: 64 * 1024, max: 2 ** 50, default: 1024 ** 3, unit: 'bytes', doc: 'spool bound' },
  spoolSegmentBytes: { kind: 'bytes', env: 'WARPWATCH_SPOOL_SEGMENT_BYTES', min: 16 * 1024, max: 1024 ** 3, defaultText: 'min(16 MiB, spool bound / 8), at least 16 KiB', unit: 'bytes', doc: 'spool segment size (at most the spool bound)' },
  spoolPolicy: { kind: 'choice', env: 'WARPWATCH_SPOOL_POLICY', flag: '--spool-policy', values: ['drop-oldest', 'drop-newest'], default: 'drop-oldest', doc: 'what a full spool discards' },
  spoolFsyncIntervalMillis: { kind: 'integer', env: 'WARPWATCH_SPOOL_FSYNC_INTERVAL_MILLIS', min: 0, max: 3_600_000, default: 1_000, unit: MILLIS, doc: 'dirty spool data is fsync\'ed at least this often' },
  retryBackoffMillis: { kind: 'integer', env: 'WARPWATCH_RETRY_BACKOFF_MILLIS', min: 10, max: 600_000, default: 1_000, unit: MILLIS, doc: 'how often a failed broker or disk is tried again' },
  produceTimeoutMillis: { kind: 'integer', env: 'WARPWATCH_PRODUCE_TIMEOUT_MILLIS', min: 100, max: 3_600_000, default: 15_000, unit: MILLIS, doc: 'longest wait for one batch; past it the batch stays at the spool head' },
  brokerStallMillis: { kind: 'integer', env: 'WARPWATCH_BROKER_STALL_MILLIS', min: 100, max: 600_000, default: 2_000, unit: MILLIS, doc: 'a send outstanding this long reports the broker as stalled on `/healthz`' },
  dlqMaxValueBytes: { kind: 'bytes', env: 'WARPWATCH_DLQ_MAX_VALUE_BYTES', min: 1024, max: 64 * 1024 ** 2, default: 64 * 1024, unit: 'bytes', doc: 'bytes of a value kept when the agent moves a record to the DLQ' },
  maxConnectionErrors: { kind: 'integer', env: 'WARPWATCH_MAX_CONNECTION_ERRORS', min: 1, max: 1_000_000, default: 16, doc: 'a connection that sent this many invalid frames is closed' },
  validationWorker: { kind: 'boolean', env: 'WARPWATCH_VALIDATION_WORKER', default: false, doc: 'split and decode frames in a worker thread' },
  shutdownTimeoutMillis: SERVICE_SHARED.shutdownTimeoutMillis,
  metricsPort: { kind: 'integer', env: 'WARPWATCH_METRICS_PORT', flag: '--metrics-port', min: 0, max: 65_535, default: 9464, offWord: true, doc: 'port of `/metrics` and `/healthz`; 0 = any free port' },
  metricsHost: SERVICE_SHARED.metricsHost,
  influxUrl: { kind: 'url', env: 'WARPWATCH_INFLUX_URL', flag: '--influx-url', offWord: true, defaultText: 'none', doc: 'InfluxDB for the collector\'s own counters (`warpwatch_pipeline`, service=collector)' },
  ...INFLUX_SHARED,
  influxMaxBufferPoints: {
    kind: 'integer',
    env: 'WARPWATCH_COLLECTOR_INFLUX_MAX_BUFFER_POINTS',
    min: 1,
    max: 10_000_000,
    default: 1_000,
    unit: 'points',
    doc: 'points kept while InfluxDB is away (the oldest are dropped and counted beyond it)',
  },
  pipelineIntervalMillis: { kind: 'integer', env: 'WARPWATCH_PIPELINE_INTERVAL_MILLIS', flag: '--pipeline-interval-millis', min: 100, max: 3_600_000, default: 10_000, unit: MILLIS, doc: 'how often the counters are written to InfluxDB' },
  instance: { ...SERVICE_SHARED.instance, defaultText: '`<host>:<pid>`' },
} as const satisfies ConfigFields;

/** The estimator's fields (`warpwatch estimate`); with {@link KAFKA_SECURITY_FIELDS}. */
export const ESTIMATOR_FIELDS = {
  brokers: KAFKA_SHARED.brokers,
  groupId: { kind: 'text', env: 'WARPWATCH_ESTIMATOR_GROUP_ID', flag: '--group-id', pattern: /^[A-Za-z0-9._-]{1,200}$/, patternText: 'a name matching [A-Za-z0-9._-]{1,200}', default: 'warpwatch-estimator', doc: 'Kafka consumer group' },
  clientId: { kind: 'text', env: 'WARPWATCH_KAFKA_CLIENT_ID', default: 'warpwatch-estimator', doc: 'Kafka client id' },
  framesTopic: KAFKA_SHARED.framesTopic,
  distributionsTopic: { kind: 'text', env: 'WARPWATCH_DISTRIBUTIONS_TOPIC', ...TOPIC, default: TOPICS.distributions, doc: 'compacted topic of the latest distribution per stream' },
  alertsTopic: { kind: 'text', env: 'WARPWATCH_ALERTS_TOPIC', ...TOPIC, default: TOPICS.alerts, doc: 'topic of the alerts' },
  checkpointTopic: { kind: 'text', env: 'WARPWATCH_CHECKPOINT_TOPIC', ...TOPIC, default: TOPICS.estimatorCheckpoints, doc: 'topic of the state checkpoints' },
  checkpointCompression: {
    kind: 'choice',
    env: 'WARPWATCH_CHECKPOINT_COMPRESSION',
    values: KAFKA_COMPRESSION_NAMES,
    default: 'none',
    doc: 'codec of the checkpoint records: gzip sends ~2/3 of the bytes for ~4× the CPU of writing them (docs/estimator.md, The dedupe memory at steady state); snappy, lz4 and zstd also (docs/stack.md § Compression)',
  },
  resultsCompression: {
    kind: 'choice',
    env: 'WARPWATCH_RESULTS_COMPRESSION',
    values: KAFKA_COMPRESSION_NAMES,
    default: 'none',
    doc: 'codec of the distribution, alert and DLQ records the estimator produces (docs/stack.md § Compression)',
  },
  dlqTopic: { kind: 'text', env: 'WARPWATCH_DLQ_TOPIC', ...TOPIC, default: TOPICS.dlq, doc: 'topic of the frames the estimator rejects and of what it quarantines (docs/estimator.md)' },
  partitions: KAFKA_SHARED.partitions,
  replicationFactor: KAFKA_SHARED.replicationFactor,
  fromBeginning: { kind: 'boolean', env: 'WARPWATCH_ESTIMATOR_FROM_BEGINNING', flag: '--latest', default: true, doc: 'a group without committed offsets starts at the earliest frames (false, or `--latest`: the latest)' },
  sessionTimeoutMillis: {
    kind: 'integer',
    env: 'WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS',
    min: 6_000,
    max: 300_000,
    default: 6_000,
    unit: MILLIS,
    doc: 'the broker reassigns a dead instance\'s partitions after this (6000 is its default minimum `group.min.session.timeout.ms`)',
  },
  heartbeatIntervalMillis: { kind: 'integer', env: 'WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS', min: 100, max: 60_000, default: 1_000, unit: MILLIS, doc: 'consumer heartbeat, at most a third of the session timeout' },
  connectionTimeoutMillis: KAFKA_SHARED.connectionTimeoutMillis,
  influxUrl: { kind: 'url', env: 'WARPWATCH_INFLUX_URL', flag: '--influx-url', offWord: true, default: 'http://127.0.0.1:18086', doc: 'InfluxDB the results go to' },
  ...INFLUX_SHARED,
  influxRetention: {
    kind: 'text',
    env: 'WARPWATCH_INFLUX_RETENTION',
    pattern: /^(INF|\d+[hdw])$/,
    patternText: 'an InfluxQL duration like 30d, 720h or 4w, or INF',
    default: '30d',
    doc: 'retention of a database the estimator creates',
  },
  influxBatchSize: { kind: 'integer', env: 'WARPWATCH_INFLUX_BATCH_SIZE', min: 1, max: 1_000_000, default: 5_000, unit: 'points', doc: 'points per write request' },
  influxFlushIntervalMillis: { kind: 'integer', env: 'WARPWATCH_INFLUX_FLUSH_INTERVAL_MILLIS', min: 0, max: 600_000, default: 0, unit: MILLIS, doc: 'longest wait of a point before its write starts (0 = when the event loop is free)' },
  influxMaxInFlight: { kind: 'integer', env: 'WARPWATCH_INFLUX_MAX_IN_FLIGHT', min: 1, max: 64, default: 3, unit: 'requests', doc: 'write requests in flight at a time' },
  influxMaxBufferLines: { kind: 'integer', env: 'WARPWATCH_INFLUX_MAX_BUFFER_LINES', min: 1, max: 100_000_000, default: 200_000, unit: 'points', doc: 'points buffered while InfluxDB is away; overflow is dropped and counted' },
  influxMaxRetryDelayMillis: { kind: 'integer', env: 'WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS', min: 500, max: 3_600_000, default: 30_000, unit: MILLIS, doc: 'cap of the write retry backoff (which starts at 500 ms)' },
  influxHighWaterLines: {
    kind: 'integer',
    env: 'WARPWATCH_INFLUX_HIGH_WATER_LINES',
    min: 1,
    max: 100_000_000,
    defaultText: '2 × (`WARPWATCH_INFLUX_MAX_IN_FLIGHT` + 1) × `WARPWATCH_INFLUX_BATCH_SIZE` (40000), at most half of `WARPWATCH_INFLUX_MAX_BUFFER_LINES`',
    unit: 'points',
    doc: 'consumption pauses while more points than this wait for InfluxDB, and goes on at half of it (backpressure); below `WARPWATCH_INFLUX_MAX_BUFFER_LINES`',
  },
  resultsHighWaterRecords: {
    kind: 'integer',
    env: 'WARPWATCH_RESULTS_HIGH_WATER_RECORDS',
    min: 1,
    max: 50_000,
    default: 10_000,
    unit: 'records',
    doc: 'consumption pauses while more result records than this wait for Kafka (of at most 100,000), and goes on at half of it (backpressure)',
  },
  windowMillis: { kind: 'integer', env: 'WARPWATCH_WINDOW_MILLIS', flag: '--window-millis', min: 10, max: DAY_MILLIS, default: 10_000, unit: MILLIS, doc: 'event-time tumbling window length' },
  allowedLatenessMillis: { kind: 'integer', env: 'WARPWATCH_ALLOWED_LATENESS_MILLIS', min: 0, max: DAY_MILLIS, default: 0, unit: MILLIS, doc: 'how late a frame may arrive after its window closed' },
  idleCloseMillis: { kind: 'integer', env: 'WARPWATCH_IDLE_CLOSE_MILLIS', min: 10, max: DAY_MILLIS, defaultText: 'the window length', unit: MILLIS, doc: 'a stream silent this long (processing time) has its open windows closed' },
  streamRetentionMillis: { kind: 'integer', env: 'WARPWATCH_STREAM_RETENTION_MILLIS', min: 1_000, max: 30 * DAY_MILLIS, default: 3_600_000, unit: MILLIS, doc: 'a stream idle this long is forgotten (tombstoned in the checkpoint)' },
  current: { kind: 'choice', env: 'WARPWATCH_CURRENT', flag: '--current', values: ['decay', 'last-n'], default: 'decay', doc: 'how the "current" distribution forgets' },
  halfLifeLaunches: { kind: 'number', env: 'WARPWATCH_HALF_LIFE_LAUNCHES', flag: '--half-life-launches', min: 0.01, max: 1e9, default: 32, unit: 'launches', doc: 'decay half-life (`--current decay`)' },
  lastLaunches: { kind: 'integer', env: 'WARPWATCH_LAST_LAUNCHES', flag: '--last-launches', min: 1, max: 100_000, default: 64, unit: 'launches', doc: 'launches kept (`--current last-n`)' },
  predictionBasis: { kind: 'choice', env: 'WARPWATCH_PREDICTION_BASIS', flag: '--prediction-basis', values: ['window', 'current', 'cumulative'], default: 'window', doc: 'histogram `loss_predicted` is computed from' },
  standardError: { kind: 'choice', env: 'WARPWATCH_STANDARD_ERROR', values: ['auto', 'bootstrap', 'linearised'], default: 'auto', doc: 'standard error of `loss_predicted` (auto = linearised: the delta method in one quadrature; bootstrap: simulated)' },
  dedupeCapacity: { kind: 'integer', env: 'WARPWATCH_DEDUPE_CAPACITY', min: 1, max: 1_000_000, default: 1_024, unit: 'launches', doc: 'recent launches remembered per stream to drop duplicates' },
  maxFutureSkewMillis: { kind: 'integer', env: 'WARPWATCH_MAX_FUTURE_SKEW_MILLIS', min: 0, max: 7 * DAY_MILLIS, default: 300_000, unit: MILLIS, doc: 'a frame this far ahead of the wall clock is rejected (outcome `future`)' },
  maxExactSupport: { kind: 'integer', env: 'WARPWATCH_MAX_EXACT_SUPPORT', min: 16, max: 1_000_000, default: 4_096, unit: 'values', doc: 'distinct counts kept exactly before binning' },
  subBinsPerOctave: { kind: 'choice', env: 'WARPWATCH_SUB_BINS_PER_OCTAVE', values: ['16', '32', '64', '128', '256', '512', '1024'], default: '128', doc: 'bins per octave once binned' },
  bootstrapReplicates: { kind: 'integer', env: 'WARPWATCH_BOOTSTRAP_REPLICATES', flag: '--bootstrap-replicates', min: 0, max: 10_000, default: 32, doc: 'Poisson-bootstrap replicates of the `loss_predicted` interval (0 = off)' },
  confidenceLevel: { kind: 'number', env: 'WARPWATCH_CONFIDENCE_LEVEL', min: 0.5, max: 0.9999, default: 0.95, doc: 'confidence level of the interval' },
  sweepGroupSizes: { kind: 'integer-list', env: 'WARPWATCH_SWEEP_GROUP_SIZES', min: 1, max: 32, default: [1, 2, 4, 8, 16, 32], offWord: true, doc: 'group sizes of the granularity sweep, each one `warpwatch_sweep` point a sweep window (`WARPWATCH_SWEEP_INTERVAL_MILLIS`; docs/estimator.md, Sizing: InfluxDB)' },
  sweepIntervalMillis: { kind: 'integer', env: 'WARPWATCH_SWEEP_INTERVAL_MILLIS', min: 0, max: DAY_MILLIS, default: 10_000, unit: MILLIS, doc: 'a stream\'s sweep window (its `warpwatch_sweep` points, quantiles and fit) is one window in ⌈this / window⌉, at a phase fixed per stream (0, or windows at least this long: every window; docs/estimator.md, What is computed per window)' },
  quantiles: { kind: 'boolean', env: 'WARPWATCH_QUANTILES', default: true, doc: 'compute loss quantiles (on sweep windows, `WARPWATCH_SWEEP_INTERVAL_MILLIS`)' },
  quantileExactWorkLimit: { kind: 'integer', env: 'WARPWATCH_QUANTILE_EXACT_WORK_LIMIT', min: 0, max: 1e12, default: 2_000_000, doc: 'exact quantiles up to this estimated work, else Monte Carlo' },
  quantileSamples: { kind: 'integer', env: 'WARPWATCH_QUANTILE_SAMPLES', min: 100, max: 10_000_000, default: 10_000, unit: 'groups', doc: 'Monte Carlo groups of the quantiles' },
  fit: { kind: 'boolean', env: 'WARPWATCH_FIT', default: true, doc: 'fit parametric families to each sweep window (`WARPWATCH_SWEEP_INTERVAL_MILLIS`)' },
  histogramPoints: { kind: 'boolean', env: 'WARPWATCH_HISTOGRAM_POINTS', default: true, doc: 'write `warpwatch_histogram` points (one per bin per window)' },
  alertWarmupWindows: { kind: 'integer', env: 'WARPWATCH_ALERT_WARMUP_WINDOWS', min: 2, max: 10_000, default: 16, unit: 'windows', doc: 'windows that form the reference before alerts' },
  alertReferenceSigmas: { kind: 'number', env: 'WARPWATCH_ALERT_REFERENCE_SIGMAS', min: 0, max: 100, default: 0.5, unit: 'σ', doc: 'slack of the change detector' },
  alertThresholdSigmas: { kind: 'number', env: 'WARPWATCH_ALERT_THRESHOLD_SIGMAS', min: 0.1, max: 1000, default: 8, unit: 'σ', doc: 'threshold of the change detector' },
  alertMinRelativeSigma: { kind: 'number', env: 'WARPWATCH_ALERT_MIN_RELATIVE_SIGMA', min: 0, max: 10, default: 0.01, doc: 'relative σ floor of the change detector' },
  alertDriftMinSigma: { kind: 'number', env: 'WARPWATCH_ALERT_DRIFT_MIN_SIGMA', min: 0, max: 10, default: 0.01, doc: 'absolute σ floor of the drift detector\'s log ratio' },
  alertLossThreshold: { kind: 'number', env: 'WARPWATCH_ALERT_LOSS_THRESHOLD', min: 1, max: 1e6, offWord: true, defaultText: 'off', doc: 'alert when `loss_measured` exceeds this' },
  alertDriftThreshold: { kind: 'number', env: 'WARPWATCH_ALERT_DRIFT_THRESHOLD', min: 0, max: 1e6, offWord: true, defaultText: 'off', doc: 'alert when prediction and measurement drift apart by this' },
  alertStaleMillis: { kind: 'number', env: 'WARPWATCH_ALERT_STALE_MILLIS', min: 1_000, max: 30 * DAY_MILLIS, offWord: true, defaultText: 'off', unit: MILLIS, doc: 'a stream silent this long raises a `stale` alert' },
  checkpointIntervalMillis: { kind: 'integer', env: 'WARPWATCH_CHECKPOINT_INTERVAL_MILLIS', min: 10, max: 3_600_000, default: 2_000, unit: MILLIS, doc: 'how often the state of each partition is checkpointed and its offset committed (a round is spread over this interval)' },
  heapTargetMebibytes: {
    kind: 'integer',
    env: 'WARPWATCH_HEAP_TARGET_MIB',
    min: 16,
    max: 1_048_576,
    default: 96,
    offWord: true,
    unit: 'MiB',
    doc: 'V8 heap in use from which the estimator runs full garbage collections itself (at most 10 % of the time; docs/estimator.md, The heap target); `off` leaves it to V8',
  },
  maxLiveStreams: { kind: 'integer', env: 'WARPWATCH_MAX_STREAMS', min: 1, max: 10_000_000, default: 10_000, unit: 'streams', doc: 'live streams per instance; beyond, the least recently recorded is evicted' },
  tagLabels: {
    kind: 'list',
    env: 'WARPWATCH_TAG_LABELS',
    item: LABEL_NAME,
    itemText: 'label names matching [A-Za-z_][A-Za-z0-9_.-]{0,63}',
    offWord: true,
    default: [LABEL_TAGS.pod, LABEL_TAGS.namespace, LABEL_TAGS.node],
    doc: 'collector labels written as InfluxDB tags',
  },
  metricsPort: { kind: 'integer', env: 'WARPWATCH_METRICS_PORT', flag: '--metrics-port', min: 0, max: 65_535, default: 9465, offWord: true, doc: 'port of `/metrics` and `/healthz`; `0` any free port' },
  metricsHost: SERVICE_SHARED.metricsHost,
  otlpEndpoint: {
    kind: 'url',
    env: 'WARPWATCH_OTLP_ENDPOINT',
    offWord: true,
    defaultText: 'off',
    expected: 'the http(s) URL of an OTLP/HTTP metrics endpoint (e.g. http://collector:4318/v1/metrics)',
    doc: 'full URL of the OTLP/HTTP metrics endpoint the metrics are pushed to',
  },
  otlpIntervalMillis: { kind: 'integer', env: 'WARPWATCH_OTLP_INTERVAL_MILLIS', min: 100, max: 3_600_000, default: 10_000, unit: MILLIS, doc: 'OTLP push period (request timeout: min(10 s, period))' },
  maxMetricStreams: { kind: 'integer', env: 'WARPWATCH_METRICS_MAX_STREAMS', min: 1, max: 1_000_000, default: 1_000, unit: 'streams', doc: 'cap on streams exported as metrics' },
  metricsStreamTtlMillis: { kind: 'integer', env: 'WARPWATCH_METRICS_STREAM_TTL_MILLIS', min: 1_000, max: 30 * DAY_MILLIS, default: 3_600_000, unit: MILLIS, doc: 'idle time after which a stream leaves the metrics export table' },
  shutdownTimeoutMillis: SERVICE_SHARED.shutdownTimeoutMillis,
  instance: { ...SERVICE_SHARED.instance, defaultText: '`<hostname>-<pid>`', doc: 'instance name: tag `instance` of `warpwatch_pipeline`, OTel `service.instance.id`, Kafka client id suffix' },
} as const satisfies ConfigFields;

/**
 * The local stack's fields (`npm run stack`, the integration tests: deploy/local/stack-config.ts).
 * Brokers, InfluxDB URL and database are the services' variables: the same values select the
 * servers the stack runs (a 127.0.0.1/localhost one) or only checks (any other).
 */
export const LOCAL_STACK_FIELDS = {
  cacheDir: { kind: 'text', env: 'WARPWATCH_CACHE_DIR', defaultText: '`<repo>/.cache/warpwatch`', doc: 'everything downloaded, built and written (gitignored)' },
  kafkaBrokers: {
    kind: 'list',
    env: 'WARPWATCH_KAFKA_BROKERS',
    item: /^(\[[^\]]+\]|[^:]+):(\d+)$/,
    itemText: 'host:port',
    default: ['127.0.0.1:19092'],
    doc: 'one `127.0.0.1`/`localhost` broker: run here on that port; anything else: external cluster, only checked',
  },
  kafkaControllerPort: { kind: 'integer', env: 'WARPWATCH_KAFKA_CONTROLLER_PORT', min: 1, max: 65_535, defaultText: '19093 (or broker port + 1)', doc: 'KRaft controller listener' },
  kafkaSaslPort: {
    kind: 'integer',
    env: 'WARPWATCH_KAFKA_SASL_PORT',
    min: 1,
    max: 65_535,
    defaultText: '19094 (or broker port + 2)',
    doc: 'SASL_PLAINTEXT listener (SCRAM-SHA-256 and -512) of the same node; users `warpwatch`, `warpwatch-collector` and `warpwatch-estimator`, passwords generated per node in `<cache>/kafka/node-<port>/sasl-credentials.json`',
  },
  kafkaTlsPort: {
    kind: 'integer',
    env: 'WARPWATCH_STACK_KAFKA_TLS_PORT',
    min: 1,
    max: 65_531,
    defaultText: 'off',
    doc: 'first of five TLS listeners of the same node (docs/security.md): SSL, SSL with client certificates required, SASL_SSL (SCRAM), and two that present a wrong-host and an expired certificate; CA and certificates generated with openssl in `<cache>/kafka/node-<port>/tls`',
  },
  kafkaRelayPort: {
    kind: 'integer',
    env: 'WARPWATCH_STACK_KAFKA_RELAY_PORT',
    min: 1,
    max: 65_534,
    defaultText: 'off',
    doc: 'a PLAINTEXT listener `RELAY` of the same node on this port, advertised as the port after it, where a TCP relay forwards to it: the clients that bootstrap at the relay reach the node only through it (fault tests that cut one client off, docs/stack.md)',
  },
  kafkaVersion: {
    kind: 'text',
    env: 'WARPWATCH_STACK_KAFKA_VERSION',
    pattern: /^(3\.9|4\.\d{1,2})\.\d{1,2}$/,
    patternText: 'a Kafka version 3.9.x or 4.x.y',
    default: '4.4.0',
    doc: 'Kafka version of the node the stack runs (jars from Maven Central); tested: 4.4.0 (the suite) and 3.9.2 (its compatibility subset, docs/stack.md § Kafka versions)',
  },
  kafkaAuthorizer: {
    kind: 'boolean',
    env: 'WARPWATCH_STACK_KAFKA_AUTHORIZER',
    default: false,
    doc: 'run the node with the KRaft `StandardAuthorizer`: the SCRAM users `warpwatch-collector` and `warpwatch-estimator` may do only what ACLs grant them; `ANONYMOUS` (the PLAINTEXT and controller listeners, on 127.0.0.1) and `warpwatch` are super users (docs/security.md § Kafka ACLs)',
  },
  kafkaHeapMb: { kind: 'integer', env: 'WARPWATCH_KAFKA_HEAP_MB', min: 128, max: 65_536, default: 512, unit: 'MiB', doc: 'Kafka JVM `-Xmx`' },
  influxUrl: { kind: 'text', env: 'WARPWATCH_INFLUX_URL', default: 'http://127.0.0.1:18086', doc: '`http://127.0.0.1:<port>`: run here; anything else: external, only checked' },
  influxRpcPort: { kind: 'integer', env: 'WARPWATCH_INFLUX_RPC_PORT', min: 1, max: 65_535, defaultText: '18088 (or HTTP port + 2)', doc: 'influxd backup/restore RPC (bound to 127.0.0.1)' },
  influxAuth: {
    kind: 'boolean',
    env: 'WARPWATCH_STACK_INFLUX_AUTH',
    default: false,
    doc: 'run InfluxDB with `auth-enabled = true`: an admin and a write-only user `warpwatch-writer` are created at set-up, passwords in `<cache>/influxdb/node-<port>/credentials.json` (mode 0600)',
  },
  influxDatabase: { kind: 'text', env: 'WARPWATCH_INFLUX_DATABASE', pattern: /^[A-Za-z0-9_.-]{1,64}$/, patternText: 'a name matching [A-Za-z0-9_.-]{1,64}', default: 'warpwatch', doc: 'database created on start' },
  java: { kind: 'text', env: 'WARPWATCH_JAVA', default: 'java', doc: 'Java command (runs Kafka)' },
  maven: { kind: 'text', env: 'WARPWATCH_MVN', default: 'mvn', doc: 'Maven command (fetches Kafka from Maven Central)' },
  go: { kind: 'text', env: 'WARPWATCH_GO', default: 'go', doc: 'Go command (builds InfluxDB)' },
} as const satisfies ConfigFields;

/** The estimator fields of its OpenTelemetry export (docs/exporting.md's table). */
export const ESTIMATOR_EXPORT_FIELD_KEYS = ['metricsPort', 'metricsHost', 'otlpEndpoint', 'otlpIntervalMillis', 'maxMetricStreams', 'metricsStreamTtlMillis'] as const satisfies readonly (keyof typeof ESTIMATOR_FIELDS)[];
