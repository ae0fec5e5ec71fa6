/**
 * Errors of `warpwatch demo` (cli/demo/): running the CPU workloads, moving their frames and
 * collecting the estimator's results.
 */

/** Every code a demo error can carry; docs/errors.md lists each one (a test keeps them in sync). */
export const DEMO_ERROR_CODES = [
  'WW_ERR_DEMO_WORKLOAD',
  'WW_ERR_DEMO_TRANSPORT',
  'WW_ERR_DEMO_NO_RESULT',
  'WW_ERR_DEMO_OUTPUT',
] as const;

/** A stable demo error code, one of {@link DEMO_ERROR_CODES}. */
export type DemoErrorCode = (typeof DEMO_ERROR_CODES)[number];

/**
 * Base error of the demo: a stable `code`, `retriable` (true only for transport problems a
 * later attempt may not meet, such as a broker that is starting) and an optional `cause`.
 *
 * @example
 * throw new DemoError('WW_ERR_DEMO_NO_RESULT', 'no window result arrived for demo-1/matpow-pois-30 n=8 within 30000 ms');
 */
export class DemoError extends Error {
  readonly code: DemoErrorCode;
  readonly retriable: boolean;

  constructor(code: DemoErrorCode, message: string, options?: { cause?: unknown; retriable?: boolean }) {
    super(message, options);
    this.name = 'DemoError';
    this.code = code;
    this.retriable = options?.retriable ?? false;
  }
}
