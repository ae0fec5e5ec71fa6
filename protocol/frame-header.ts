/**
 * The 16-byte frame header (SPEC.md "Header"): magic, version, type, payload length, CRC-32C.
 */
import { FrameError } from './errors.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, MAX_PAYLOAD_BYTES } from './limits.ts';
import type { FrameKind } from './types.ts';

/** Wire type codes of the frame kinds. */
export const FRAME_TYPE_CODES: Readonly<Record<FrameKind, number>> = Object.freeze({
  'launch-summary': 1,
  'group-samples': 2,
});

/** A checked frame header. */
export interface FrameHeader {
  /** Format version (always 1 once checked). */
  readonly version: number;
  /** Frame kind from the wire type code. */
  readonly kind: FrameKind;
  /** Payload bytes after the header, ≤ 4 MiB. */
  readonly payloadLength: number;
  /** CRC-32C the header declares for the payload. */
  readonly payloadCrc32c: number;
}

/** True when `bytes[offset..offset+4)` is the frame magic. */
export function hasMagicAt(bytes: Uint8Array, offset: number): boolean {
  return (
    offset + 4 <= bytes.length &&
    bytes[offset] === FRAME_MAGIC[0] &&
    bytes[offset + 1] === FRAME_MAGIC[1] &&
    bytes[offset + 2] === FRAME_MAGIC[2] &&
    bytes[offset + 3] === FRAME_MAGIC[3]
  );
}

/**
 * Reads and checks the header that starts at `offset`: enough bytes, magic, version, type,
 * payload length limit (in that order). Does not look at the payload or its CRC.
 *
 * @param bytes - input holding at least the header
 * @param offset - where the frame starts (default 0); reported in errors
 * @param maxPayloadBytes - a lower payload limit than the format's 4 MiB, if wanted
 * @throws FrameError WW_ERR_FRAME_TRUNCATED, _BAD_MAGIC, _UNKNOWN_VERSION, _UNKNOWN_TYPE, _OVER_LIMIT
 * @example const header = decodeFrameHeader(bytes); // { version: 1, kind: 'launch-summary', payloadLength: 151, ... }
 */
export function decodeFrameHeader(bytes: Uint8Array, offset = 0, maxPayloadBytes = MAX_PAYLOAD_BYTES): FrameHeader {
  const available = bytes.length - offset;
  if (available < FRAME_HEADER_BYTES) {
    throw new FrameError('WW_ERR_FRAME_TRUNCATED', `frame header needs ${FRAME_HEADER_BYTES} bytes, got ${Math.max(available, 0)}`, { offset });
  }
  if (!hasMagicAt(bytes, offset)) {
    const got = Array.from(bytes.subarray(offset, offset + 4), (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new FrameError('WW_ERR_FRAME_BAD_MAGIC', `frame must start with magic 'WWFR' (57 57 46 52), got ${got}`, { offset });
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, FRAME_HEADER_BYTES);
  const version = view.getUint16(4, true);
  const type = view.getUint16(6, true);
  const payloadLength = view.getUint32(8, true);
  const payloadCrc32c = view.getUint32(12, true);
  if (version !== FRAME_VERSION) {
    throw new FrameError('WW_ERR_FRAME_UNKNOWN_VERSION', `frame version must be ${FRAME_VERSION}, got ${version}`, { offset });
  }
  const kind: FrameKind | undefined = type === 1 ? 'launch-summary' : type === 2 ? 'group-samples' : undefined;
  if (kind === undefined) {
    throw new FrameError('WW_ERR_FRAME_UNKNOWN_TYPE', `frame type must be 1 (LaunchSummary) or 2 (GroupSamples), got ${type}`, { offset });
  }
  const limit = Math.min(maxPayloadBytes, MAX_PAYLOAD_BYTES);
  if (payloadLength > limit) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `payload length must be at most ${limit} bytes, got ${payloadLength}`, { offset });
  }
  return { version, kind, payloadLength, payloadCrc32c };
}
