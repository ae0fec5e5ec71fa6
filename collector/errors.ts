/**
 * Errors of the collector. One base class with a stable `code`, a `retriable`
 * flag and the underlying `cause`; every code is listed in {@link COLLECTOR_ERROR_CODES}
 * and documented in docs/errors.md (a test keeps both in sync).
 */

import { formatConfigProblem, type ConfigProblem } from '../service/index.ts';

/** Every error code the collector raises or records (DLQ headers, logs). */
export const COLLECTOR_ERROR_CODES = [
  'WW_ERR_COLLECTOR_CONFIG',
  'WW_ERR_COLLECTOR_SOCKET_IN_USE',
  'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE',
  'WW_ERR_COLLECTOR_SOURCE_IO',
  'WW_ERR_COLLECTOR_TOO_MANY_ERRORS',
  'WW_ERR_COLLECTOR_SHUTDOWN_TIMEOUT',
  'WW_ERR_COLLECTOR_UNDELIVERED',
  'WW_ERR_COLLECTOR_DELIVERY_STOPPED',
  'WW_ERR_COLLECTOR_INFLUX_WRITE',
  'WW_ERR_COLLECTOR_RECORD_TOO_LARGE',
  'WW_ERR_KAFKA_RECORD_REJECTED',
  'WW_ERR_KAFKA_PRODUCE',
  'WW_ERR_KAFKA_TOPIC',
  'WW_ERR_KAFKA_AUTH',
  'WW_ERR_KAFKA_AUTHORIZATION',
  'WW_ERR_KAFKA_TLS',
  'WW_ERR_SPOOL_IO',
  'WW_ERR_SPOOL_LOCKED',
  'WW_ERR_SPOOL_CORRUPT',
] as const;

/** One of {@link COLLECTOR_ERROR_CODES}. */
export type CollectorErrorCode = (typeof COLLECTOR_ERROR_CODES)[number];

/**
 * Base class of every collector error.
 *
 * @example
 * throw new CollectorError('WW_ERR_SPOOL_IO', 'spool directory /x is not writable: EACCES', { retriable: false });
 */
export class CollectorError extends Error {
  /** Stable machine-readable code, listed in docs/errors.md. */
  readonly code: CollectorErrorCode;
  /** True when the same operation may succeed if tried again later (e.g. broker down). */
  readonly retriable: boolean;

  constructor(code: CollectorErrorCode, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CollectorError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/**
 * The collector configuration (environment + flags) is invalid: one error listing every bad
 * setting. `fields` has each one's name, value and why; `problems` the same as sentences, and
 * the message joins them.
 *
 * @example
 * new CollectorConfigError([{ name: '--partitions', value: '0', why: 'must be an integer 1..10000' }]);
 */
export class CollectorConfigError extends CollectorError {
  /** Every bad setting: the variable or flag, the value given (never a credential) and why it is refused. */
  readonly fields: readonly ConfigProblem[];
  /** One sentence per bad setting: what was checked, what arrived, what is allowed. */
  readonly problems: readonly string[];

  constructor(fields: readonly ConfigProblem[]) {
    const problems = fields.map(formatConfigProblem);
    super('WW_ERR_COLLECTOR_CONFIG', problems.join('; '));
    this.name = 'CollectorConfigError';
    this.fields = Object.freeze(fields.map((field) => Object.freeze({ ...field })));
    this.problems = Object.freeze(problems);
  }
}

/**
 * Producing to Kafka failed after the producer's own retries; the records involved are
 * spooled to disk and replayed later, so this error is always retriable.
 */
export class KafkaProduceError extends CollectorError {
  /** Number of records of the failed batch. */
  readonly recordCount: number;

  constructor(message: string, recordCount: number, cause?: unknown) {
    super('WW_ERR_KAFKA_PRODUCE', message, { retriable: true, cause });
    this.name = 'KafkaProduceError';
    this.recordCount = recordCount;
  }
}

/**
 * A disk spool problem: I/O failure, a directory locked by another collector, or a
 * corrupt record (detected by its CRC-32C; the rest of that segment is discarded and counted).
 */
export class SpoolError extends CollectorError {
  /** The file or directory involved. */
  readonly path: string;

  constructor(
    code: 'WW_ERR_SPOOL_IO' | 'WW_ERR_SPOOL_LOCKED' | 'WW_ERR_SPOOL_CORRUPT',
    message: string,
    path: string,
    options: { retriable?: boolean; cause?: unknown } = {},
  ) {
    super(code, message, options);
    this.name = 'SpoolError';
    this.path = path;
  }
}

/**
 * Whether a kafkajs error (or one it caused) is a refused SASL login: wrong user, password or
 * mechanism. kafkajs raises KafkaJSSASLAuthenticationError for it.
 *
 * @example isKafkaAuthenticationError(error) // true after "SASL SCRAM SHA512 authentication failed"
 */
export function isKafkaAuthenticationError(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ((current as { name?: unknown }).name === 'KafkaJSSASLAuthenticationError') return true;
    current = (current as { originalError?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return false;
}
