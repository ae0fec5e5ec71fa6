/**
 * Errors of the pure model. Every model error is a `RangeError` (the input is outside the
 * domain the mathematics accepts), so callers that only know `RangeError` still treat it as
 * bad input (the CLI exits 2), and it carries a stable `code` for documentation and tests.
 */

/** Every code a model error can carry; docs/errors.md lists each one (a test keeps them in sync). */
export const MODEL_ERROR_CODES = [
  'WW_ERR_MODEL_INVALID_DISTRIBUTION',
  'WW_ERR_MODEL_INVALID_SPEC',
  'WW_ERR_MODEL_GROUP_SIZE',
  'WW_ERR_MODEL_INVALID_ARGUMENT',
  'WW_ERR_MODEL_EXACT_TOO_LARGE',
] as const;

/** A stable model error code, one of {@link MODEL_ERROR_CODES}. */
export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

/**
 * Base error of model/: a RangeError with a stable `code`, `retriable` (always false: the
 * same input fails the same way) and an optional `cause`.
 *
 * @example
 * throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', 'group size must be an integer 1..1024, got 2048');
 */
export class ModelError extends RangeError {
  readonly code: ModelErrorCode;
  readonly retriable = false;

  constructor(code: ModelErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelError';
    this.code = code;
  }
}
