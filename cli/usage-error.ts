/**
 * A problem with what the user typed (flag, spec, file contents). The CLI prints its
 * message on one line and exits with code 2.
 *
 * @example throw new UsageError("--n must be a list of integers 1..1024, got '0'");
 */
export class UsageError extends Error {
  readonly code = 'WW_ERR_USAGE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}
