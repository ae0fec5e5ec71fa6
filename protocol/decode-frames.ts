/**
 * Strict decoding of a buffer of concatenated frames (a frame file).
 */
import { decodeFrame } from './decode-frame.ts';
import { FrameError } from './errors.ts';
import { decodeFrameHeader } from './frame-header.ts';
import { FRAME_HEADER_BYTES } from './limits.ts';
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
