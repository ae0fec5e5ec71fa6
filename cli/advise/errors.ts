/**
 * Errors of `warpwatch advise` (cli/advise/): reading a distribution from a file, a Kafka
 * topic or a workload run. Malformed user input is a UsageError (exit 2); these are the
 * failures that are not the user's typing.
 */

/** Every code an advise error can carry; docs/errors.md lists each one (a test keeps them in sync). */
export const ADVISE_ERROR_CODES = ['WW_ERR_ADVISE_INPUT', 'WW_ERR_ADVISE_STREAM_NOT_FOUND', 'WW_ERR_ADVISE_STREAM_AMBIGUOUS', 'WW_ERR_ADVISE_KAFKA'] as const;

/** A stable advise error code, one of {@link ADVISE_ERROR_CODES}. */
export type AdviseErrorCode = (typeof ADVISE_ERROR_CODES)[number];

/**
 * Base error of advise: a stable `code`, `retriable` and an optional `cause`.
 *
 * @example
 * throw new AdviseError('WW_ERR_ADVISE_STREAM_NOT_FOUND', "no record with key 'job/kernel' on warpwatch.distributions (read 12 records)");
 */
export class AdviseError extends Error {
  readonly code: AdviseErrorCode;
  readonly retriable: boolean;

  constructor(code: AdviseErrorCode, message: string, options?: { cause?: unknown; retriable?: boolean }) {
    super(message, options);
    this.name = 'AdviseError';
    this.code = code;
    this.retriable = options?.retriable ?? false;
  }
}
