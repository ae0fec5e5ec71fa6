/**
 * Errors of deploy/: the local Kafka/InfluxDB stack. One base class with a
 * stable `code`, a `retriable` flag and the underlying `cause`; every code is listed in
 * {@link DEPLOY_ERROR_CODES} and documented in docs/errors.md (a test keeps both in sync).
 */

/** Every error code deploy/ raises. */
export const DEPLOY_ERROR_CODES = [
  'WW_ERR_STACK_CONFIG',
  'WW_ERR_STACK_TOOL_MISSING',
  'WW_ERR_STACK_INSTALL',
  'WW_ERR_STACK_START',
  'WW_ERR_STACK_NOT_READY',
  'WW_ERR_STACK_STOP',
  'WW_ERR_STACK_LOCKED',
  'WW_ERR_STACK_UNREACHABLE',
] as const;

/** One of {@link DEPLOY_ERROR_CODES}. */
export type DeployErrorCode = (typeof DEPLOY_ERROR_CODES)[number];

/**
 * Base class of every deploy/ error.
 *
 * @example
 * throw new DeployError('WW_ERR_STACK_START', 'kafka exited during start-up (exit code 1); last log lines: ...');
 */
export class DeployError extends Error {
  /** Stable machine-readable code, listed in docs/errors.md. */
  readonly code: DeployErrorCode;
  /** True when the same operation may succeed if tried again later (a port freed, a download retried). */
  readonly retriable: boolean;

  constructor(code: DeployErrorCode, message: string, options: { retriable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DeployError';
    this.code = code;
    this.retriable = options.retriable ?? false;
  }
}
