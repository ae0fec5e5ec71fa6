/**
 * Strict decoding of a buffer of concatenated frames (a frame file).
 */
import { crc32c } from './crc32c.ts';
import { decodeFrame } from './decode-frame.ts';
import { FrameError, type ProtocolErrorCode } from './errors.ts';
import { createFrameSplitter } from './frame-splitter.ts';
import { decodeFrameHeader } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC } from './limits.ts';
import type { Frame } from './types.ts';

/**
 * Decodes every frame of a buffer of concatenated frames (what a recorder writes to a file),
 * in order. Strict: the first problem throws, with its byte offset. For a tolerant reader that
 * skips damaged bytes (one error per contiguous damaged stretch, with its exact length), use
 * {@link scanFrameFile} (a whole file) or createFrameSplitter (a stream).
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

/** One contiguous stretch of a frame file that {@link scanFrameFile} skipped as damaged. */
export interface DamagedStretch {
  /** Byte offset in the file where the stretch starts. */
  readonly offset: number;
  /** Exact length of the stretch in bytes. */
  readonly length: number;
  /** The first problem's code (WW_ERR_FRAME_BAD_MAGIC, _CRC_MISMATCH, _TRUNCATED, _INVALID, ...). */
  readonly code: ProtocolErrorCode;
  /** The first problem, in words. */
  readonly message: string;
}

/** What {@link scanFrameFile} found: frames read, damaged stretches skipped, a cut-off tail. Lengths in bytes. */
export interface FrameFileScan {
  /** The frames read, in file order. */
  readonly frames: Frame[];
  /** Byte offset in the file of each frame of `frames`. */
  readonly frameOffsets: number[];
  /** Bytes of the frames read (headers included). */
  readonly frameBytes: number;
  /** Damaged stretches skipped, in file order: one per contiguous damaged stretch. */
  readonly damaged: DamagedStretch[];
  /** Sum of the damaged stretches' lengths. */
  readonly damagedBytes: number;
  /** Bytes at the end that are a frame cut off (a writer stopped mid-frame); 0 when none. Not counted in `damagedBytes`. */
  readonly truncatedTailBytes: number;
}

/**
 * Reads a frame file tolerantly, with the collector's resynchronisation (the frame splitter of
 * frame-splitter.ts, SPEC.md "Streams and resynchronisation"): damaged bytes are skipped up to
 * the next VALID frame (valid header and matching CRC), so a length field corrupted upwards or
 * a fake header never swallows the frames after it. Each contiguous damaged stretch is reported
 * once with its exact length (a frame that passes its CRC but fails decoding joins the stretch
 * it touches). A last frame cut off by the end of the file (a writer killed mid-write) is not
 * damage but `truncatedTailBytes`: the file ends inside a frame whose header is valid (or inside
 * the first 16 bytes of one, starting with the magic) and whose payload CRC does not match the
 * bytes that are there. A whole frame whose length field alone was corrupted upwards at the end
 * of the file has a matching CRC and is reported as damage. Always
 * `frameBytes + damagedBytes + truncatedTailBytes === bytes.length`.
 *
 * @param bytes - the file's contents
 * @returns frames, their offsets, the damaged stretches and the cut-off tail
 * @example const scan = scanFrameFile(readFileSync('run.wwf')); if (scan.damaged.length > 0) process.exitCode = 1;
 */
export function scanFrameFile(bytes: Uint8Array): FrameFileScan {
  const splitter = createFrameSplitter({ maxSampleBytes: 0, chunksAreImmutable: true });
  const items = [...splitter.push(bytes), ...splitter.end()];
  const frames: Frame[] = [];
  const frameOffsets: number[] = [];
  const damaged: DamagedStretch[] = [];
  let frameBytes = 0;
  let position = 0;
  const reject = (length: number, code: ProtocolErrorCode, message: string): void => {
    const last = damaged[damaged.length - 1];
    // Adjacent rejections are one stretch (a CRC-valid frame that fails decoding next to garbage).
    if (last !== undefined && last.offset + last.length === position) damaged[damaged.length - 1] = { ...last, length: last.length + length };
    else damaged.push({ offset: position, length, code, message });
    position += length;
  };
  for (const item of items) {
    if ('raw' in item) {
      try {
        frames.push(decodeFrame(item.raw));
        frameOffsets.push(position);
        frameBytes += item.raw.length;
        position += item.raw.length;
      } catch (error) {
        if (!(error instanceof FrameError)) throw error;
        reject(item.raw.length, error.code, error.message);
      }
    } else {
      // The splitter's message ends with the stretch's total ("...; skipped N bytes in total up
      // to ..."), which the stretch boundaries below may change: keep its first problem only.
      reject(item.discardedLength, item.error.code, item.error.message.replace(/ \(at stream byte \d+\); skipped \d+ bytes in total up to .*$/, ''));
    }
  }
  let truncatedTailBytes = 0;
  const last = damaged[damaged.length - 1];
  if (last !== undefined && last.offset + last.length === bytes.length) {
    const tail = cutOffFrameStart(bytes, last.offset);
    if (tail !== undefined) {
      truncatedTailBytes = bytes.length - tail;
      if (tail === last.offset) damaged.pop();
      else damaged[damaged.length - 1] = { ...last, length: tail - last.offset };
    }
  }
  // A damaged stretch that starts as a frame running past the end is not a cut-off file (that is
  // the tail above): more frames or a matching CRC follow, so its length field is damaged.
  for (let i = 0; i < damaged.length; i++) {
    const stretch = damaged[i]!;
    if (stretch.code === 'WW_ERR_FRAME_TRUNCATED') {
      const sizes = stretch.message.replace(/^stream ended inside a frame: (\d+) of (\d+) bytes$/, '$2 bytes declared, $1 left');
      damaged[i] = { ...stretch, message: `a frame header declares more bytes than the file has after it (${sizes}), yet it is not a cut-off last frame: its length field is damaged` };
    }
  }
  const damagedBytes = damaged.reduce((sum, d) => sum + d.length, 0);
  return { frames, frameOffsets, frameBytes, damaged, damagedBytes, truncatedTailBytes };
}

/**
 * Where a frame cut off by the end of `bytes` starts, searching from `from`: the last valid
 * header that declares more bytes than are left and whose CRC does not match the bytes that
 * are there; failing that, the first magic (or magic prefix) with fewer than 16 bytes left.
 * Undefined when the end is not a cut-off frame.
 */
function cutOffFrameStart(bytes: Uint8Array, from: number): number | undefined {
  let header: number | undefined;
  let shortHeader: number | undefined;
  for (let at = from; at < bytes.length; at++) {
    if (bytes[at] !== FRAME_MAGIC[0]) continue;
    const left = bytes.length - at;
    if (left < FRAME_HEADER_BYTES) {
      if (shortHeader === undefined && decodeFrameHeaderPrefix(bytes, at)) shortHeader = at;
      continue;
    }
    let declared;
    try {
      declared = decodeFrameHeader(bytes, at);
    } catch {
      continue;
    }
    if (FRAME_HEADER_BYTES + declared.payloadLength <= left) continue;
    // A whole frame whose length field alone was corrupted upwards: its CRC matches what is there.
    if (crc32c(bytes.subarray(at + FRAME_HEADER_BYTES)) === declared.payloadCrc32c) continue;
    header = at;
  }
  return header ?? shortHeader;
}

/** Whether the bytes from `offset` to the end are a prefix of the frame magic ('WWFR'). */
function decodeFrameHeaderPrefix(bytes: Uint8Array, offset: number): boolean {
  for (let i = offset; i < bytes.length && i < offset + FRAME_MAGIC.length; i++) if (bytes[i] !== FRAME_MAGIC[i - offset]) return false;
  return true;
}
