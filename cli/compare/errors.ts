/**
 * Errors of `warpwatch compare` (cli/compare/) beyond malformed input (WW_ERR_USAGE).
 */

/** Every code a compare error can carry; docs/errors.md lists each one (a test keeps them in sync). */
export const COMPARE_ERROR_CODES = ['WW_ERR_COMPARE_NOTHING'] as const;
