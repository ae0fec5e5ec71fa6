/**
 * Strict decoding of a buffer of concatenated frames (a frame file).
 */
import { decodeFrame } from './decode-frame.ts';
import { FrameError } from './errors.ts';
import { decodeFrameHeader } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC } from './limits.ts';
import type { Frame } from './types.ts';

/**
 * Decodes every frame of a buffer of concatenated frames (what a recorder writes to a file),
 * in order. Strict: the first problem throws, with its byte offset. For a tolerant reader that
 * skips damaged bytes (one error per contiguous damaged stretch, with its exact length and a
 * capped sample), use createFrameSplitter.
 *
 * @param bytes - zero or more whole frames back to back
 * @returns the frames in file order
 * @throws FrameError with `offset` set to where the bad frame starts (any code of decodeFrame;
 *   WW_ERR_FRAME_TRUNCATED when the last frame is cut off)
 * @example const frames = decodeFrames(await readFile('run.wwf'));
 */
export function decodeFrames(bytes: Uint8Array): Frame[] {
  const frames: Frame[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    try {
      const header = decodeFrameHeader(bytes, offset);
      const total = FRAME_HEADER_BYTES + header.payloadLength;
      if (bytes.length - offset < total) {
        throw new FrameError('WW_ERR_FRAME_TRUNCATED', `frame declares ${total} bytes, ${bytes.length - offset} left`);
      }
      frames.push(decodeFrame(bytes.subarray(offset, offset + total)));
      offset += total;
    } catch (error) {
      if (error instanceof FrameError) {
        throw new FrameError(error.code, `frame at byte offset ${offset}: ${error.message}`, { offset, cause: error.cause });
      }
      throw error;
    }
  }
  return frames;
}

/**
 * Same as {@link decodeFrames}; the name reads better at call sites that hold a file's bytes.
 *
 * @throws FrameError as decodeFrames
 * @example const frames = readFrameFile(readFileSync(path));
 */
export function readFrameFile(bytes: Uint8Array): Frame[] {
  return decodeFrames(bytes);
}

/** What {@link decodeFramesWithTruncatedTail} found. */
export interface FramesWithTail {
  readonly frames: Frame[];
  /** Bytes at the end that are the start of a frame cut off (a killed writer's last write); 0 when none. */
  readonly truncatedTailBytes: number;
}

/**
 * Like {@link decodeFrames}, but a last frame cut off by the end of the buffer (what a job
 * killed in the middle of a write leaves) is not an error: the frames before it are returned
 * with the length of the cut-off tail. The tail must look like a frame start (the magic, or a
 * valid header declaring more bytes than are left); anything else still throws.
 *
 * @throws FrameError as decodeFrames, except WW_ERR_FRAME_TRUNCATED for the last frame
 * @example const { frames, truncatedTailBytes } = decodeFramesWithTruncatedTail(bytes);
 */
export function decodeFramesWithTruncatedTail(bytes: Uint8Array): FramesWithTail {
  let offset = 0;
  // Find where the whole frames end: walk the headers (decodeFrames checks everything after).
  while (offset < bytes.length) {
    const left = bytes.length - offset;
    if (left < FRAME_HEADER_BYTES) {
      // A header cut off: it must at least begin like one (the magic, or the part of it that is there).
      const header = decodeFrameHeaderPrefix(bytes, offset);
      if (!header) break;
      return { frames: decodeFrames(bytes.subarray(0, offset)), truncatedTailBytes: left };
    }
    let total: number;
    try {
      total = FRAME_HEADER_BYTES + decodeFrameHeader(bytes, offset).payloadLength;
    } catch {
      break; // a bad header: decodeFrames reports it with its offset
    }
    if (left < total) return { frames: decodeFrames(bytes.subarray(0, offset)), truncatedTailBytes: left };
    offset += total;
  }
  return { frames: decodeFrames(bytes), truncatedTailBytes: 0 };
}

/** Whether the bytes from `offset` to the end are a prefix of the frame magic ('WWFR'). */
function decodeFrameHeaderPrefix(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length && i < offset + FRAME_MAGIC.length; i++) if (bytes[i] !== FRAME_MAGIC[i - offset]) return false;
  return true;
}
