import { formatConfigProblem, type ConfigProblem } from '../service/index.ts';

/**
 * Errors of the estimator. One base class with a stable `code`, a `retriable`
 * flag and the underlying `cause`; every code is listed in {@link ESTIMATOR_ERROR_CODES}
 * and documented in docs/errors.md (a test keeps both in sync).
 */

/** Every error code the estimator raises or records. */
export const ESTIMATOR_ERROR_CODES = [
  'WW_ERR_ESTIMATOR_CONFIG',
  'WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT',
  'WW_ERR_ESTIMATOR_CHECKPOINT_MISSING',
  'WW_ERR_ESTIMATOR_CHECKPOINT_READ',
  'WW_ERR_ESTIMATOR_FENCED',
  'WW_ERR_ESTIMATOR_PARTITIONS_CHANGED',
  'WW_ERR_ESTIMATOR_SHUTDOWN_TIMEOUT',
  'WW_ERR_ESTIMATOR_FRAME_FROM_FUTURE',
  'WW_ERR_ESTIMATOR_FRAME_QUARANTINED',
  'WW_ERR_ESTIMATOR_INFLUX_DATABASE',
  'WW_ERR_ESTIMATOR_INFLUX_WRITE',
  'WW_ERR_ESTIMATOR_KAFKA',
  'WW_ERR_KAFKA_TLS',
  'WW_ERR_KAFKA_AUTHORIZATION',
  'WW_ERR_ESTIMATOR_METRICS_PORT',
  'WW_ERR_ESTIMATOR_OTLP_EXPORT',
  'WW_ERR_ESTIMATOR_WINDOW_OVERFLOW',
  'WW_ERR_ESTIMATOR_WINDOW_QUARANTINED',
] as const;

/** One of {@link ESTIMATOR_ERROR_CODES}. */
export type EstimatorErrorCode = (typeof ESTIMATOR_ERROR_CODES)[number];

/**
 * Base class of every estimator error.
 *
 * @example
 * throw new EstimatorError('WW_ERR_ESTIMATOR_KAFKA', 'cannot reach brokers 127.0.0.1:19092', { retriable: true });
 */
export class EstimatorError extends Error {
  /** Stable machine-readable code, listed in docs/errors.md. */
  readonly code: EstimatorErrorCode;
  /** True when the same operation may succeed if tried again later (e.g. a server is down). */
  readonly retriable: boolean;

  constructor(code: EstimatorErrorCode, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EstimatorError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}

/**
 * Invalid estimator configuration: one error listing every bad setting (flags and environment
 * are validated together, once, at start-up). `fields` has each one's name, value and why;
 * `problems` the same as sentences.
 *
 * @example
 * try { loadEstimatorConfig(...) } catch (e) { if (e instanceof EstimatorConfigError) console.error(e.problems) }
 */
export class EstimatorConfigError extends EstimatorError {
  /** Every bad setting: the variable or flag, the value given (never a credential) and why it is refused. */
  readonly fields: readonly ConfigProblem[];
  /** One sentence per bad setting, e.g. `--window-millis must be an integer 10..86400000, got "0"`. */
  readonly problems: readonly string[];

  constructor(fields: readonly ConfigProblem[]) {
    const problems = fields.map(formatConfigProblem);
    super('WW_ERR_ESTIMATOR_CONFIG', `invalid estimator configuration: ${problems.join('; ')}`);
    this.name = 'EstimatorConfigError';
    this.fields = Object.freeze(fields.map((field) => Object.freeze({ ...field })));
    this.problems = Object.freeze(problems);
  }
}
