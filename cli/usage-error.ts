/**
 * A problem with what the user typed (flag, spec, file contents, a WARPWATCH_* variable). The
 * CLI prints its message on one line and exits with code 2. Its code is `WW_ERR_USAGE` unless a
 * more specific one is given (a service's config error, e.g. WW_ERR_COLLECTOR_CONFIG), which the
 * line then names.
 *
 * @example throw new UsageError("--n must be a list of integers 1..1024, got '0'");
 */
export class UsageError extends Error {
  readonly code: string;
  constructor(message: string, options?: { cause?: unknown; code?: string }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UsageError';
    this.code = options?.code ?? 'WW_ERR_USAGE';
  }
}
