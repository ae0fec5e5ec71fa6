/**
 * Errors of the frame codec. Every problem a frame can have is a {@link FrameError} with a
 * stable `code` (listed in docs/errors.md and in {@link PROTOCOL_ERROR_CODES}).
 */

/** Every error code protocol/ raises, for the docs/errors.md consistency test. */
export const PROTOCOL_ERROR_CODES = [
  'WW_ERR_FRAME_TRUNCATED',
  'WW_ERR_FRAME_BAD_MAGIC',
  'WW_ERR_FRAME_UNKNOWN_VERSION',
  'WW_ERR_FRAME_UNKNOWN_TYPE',
  'WW_ERR_FRAME_CRC_MISMATCH',
  'WW_ERR_FRAME_OVER_LIMIT',
  'WW_ERR_FRAME_INVALID',
] as const;

/** One of {@link PROTOCOL_ERROR_CODES}. */
export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

/**
 * Base class of protocol/ errors: a stable `code`, whether retrying can help (`retriable`),
 * and the underlying `cause` if any.
 */
export class ProtocolError extends Error {
  readonly code: ProtocolErrorCode;
  readonly retriable: boolean;

  constructor(code: ProtocolErrorCode, message: string, options?: { cause?: unknown; retriable?: boolean }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProtocolError';
    this.code = code;
    this.retriable = options?.retriable ?? false;
  }
}

/**
 * A frame that cannot be decoded or encoded: truncated, bad magic, unknown version or type,
 * CRC mismatch, a length over its hard limit, or an invalid field. Never retriable (the same
 * bytes fail the same way). `offset` is the byte offset in the input where the frame started,
 * when known.
 *
 * @example
 * try { decodeFrame(bytes); } catch (e) { if (e instanceof FrameError && e.code === 'WW_ERR_FRAME_CRC_MISMATCH') ... }
 */
export class FrameError extends ProtocolError {
  readonly offset: number | undefined;

  constructor(code: ProtocolErrorCode, message: string, options?: { cause?: unknown; offset?: number }) {
    super(code, message, { cause: options?.cause, retriable: false });
    this.name = 'FrameError';
    this.offset = options?.offset;
  }
}
