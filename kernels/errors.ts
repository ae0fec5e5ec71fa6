/**
 * Errors of kernels/ (the TS side: building the C++/CUDA programs and running workloads).
 */

/** Every code a kernels error can carry; docs/errors.md lists each one (a test keeps them in sync). */
export const KERNELS_ERROR_CODES = [
  'WW_ERR_KERNELS_TOOL_MISSING',
  'WW_ERR_KERNELS_BUILD_FAILED',
  'WW_ERR_KERNELS_NO_CUDA',
  'WW_ERR_KERNELS_WORKLOAD_USAGE',
  'WW_ERR_KERNELS_WORKLOAD_FAILED',
  // Thrown by C++ (std::invalid_argument whose message starts with the code): kernels/include/warpwatch/launch-shape.hpp.
  'WW_ERR_KERNELS_LAUNCH_SHAPE',
  // Printed by the C++ recorder (one stderr line each, recorder-core.hpp); never thrown into the job.
  'WW_ERR_KERNELS_RECORDER_DISABLED',
  'WW_ERR_KERNELS_RECORDER_LAUNCH_NOT_RECORDED',
  'WW_ERR_KERNELS_RECORDER_CLOSE_INCOMPLETE',
] as const;

/** A stable kernels error code, one of {@link KERNELS_ERROR_CODES}. */
export type KernelsErrorCode = (typeof KERNELS_ERROR_CODES)[number];

/**
 * Base error of kernels/: a stable `code`, `retriable` (false: building or running again
 * fails the same way until the cause is fixed) and an optional `cause`.
 *
 * @example
 * throw new KernelsError('WW_ERR_KERNELS_TOOL_MISSING', 'cmake was not found on PATH; install cmake >= 3.20');
 */
export class KernelsError extends Error {
  readonly code: KernelsErrorCode;
  readonly retriable = false;

  constructor(code: KernelsErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'KernelsError';
    this.code = code;
  }
}
