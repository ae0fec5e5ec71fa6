/**
 * Streaming frame splitter: turns a byte stream delivered in arbitrary chunks (unix socket,
 * stdin, a file read in pieces) into the raw bytes of each frame, unchanged, so a collector can
 * forward exactly what the recorder wrote. Damaged input yields an error item and the splitter
 * resynchronises on the next magic (SPEC.md "Streams and resynchronisation").
 */
import { crc32c } from './crc32c.ts';
import { FrameError } from './errors.ts';
import { decodeFrameHeader, hasMagicAt } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, MAX_PAYLOAD_BYTES } from './limits.ts';

/** One result of a splitter: a whole frame's bytes, or a rejected stretch of input. */
export type FrameSplitItem =
  | {
      /** Exactly one frame (header + payload), CRC checked, payload not decoded; a copy the caller may keep. */
      readonly raw: Uint8Array;
    }
  | {
      /** Why the bytes were rejected (BAD_MAGIC, UNKNOWN_VERSION, UNKNOWN_TYPE, OVER_LIMIT, CRC_MISMATCH; TRUNCATED from end()). */
      readonly error: FrameError;
      /** The rejected bytes (a view; copy it to keep it past the next push). */
      readonly discarded: Uint8Array;
    };

/** Options of {@link createFrameSplitter}. */
export interface FrameSplitterOptions {
  /** Reject frames whose declared payload is larger than this, in bytes (≤ and default 4 MiB). */
  readonly maxPayloadBytes?: number;
}

/** A streaming splitter; see {@link createFrameSplitter}. */
export interface FrameSplitter {
  /** Adds a chunk and returns the frames and errors completed by it, in stream order. */
  push(chunk: Uint8Array): FrameSplitItem[];
  /**
   * Ends the stream: a frame cut off by the end is a WW_ERR_FRAME_TRUNCATED error, and whole
   * frames that a damaged length field had kept waiting are still returned. The splitter is then
   * empty and reusable.
   */
  end(): FrameSplitItem[];
  /** Bytes held while waiting for the rest of a frame (≤ one maximal frame + the last chunk). */
  readonly pendingBytes: number;
  /** Total bytes rejected so far. */
  readonly discardedBytes: number;
  /** Total frames returned so far. */
  readonly frameCount: number;
}

/**
 * Index of the next magic at or after `from`; if there is none, the start of a trailing
 * partial magic (1..3 bytes that could begin one), else `bytes.length`.
 */
function nextMagicOrTail(bytes: Uint8Array, from: number): number {
  const first = FRAME_MAGIC[0];
  for (let i = bytes.indexOf(first, from); i !== -1; i = bytes.indexOf(first, i + 1)) {
    if (i + 4 <= bytes.length) {
      if (hasMagicAt(bytes, i)) return i;
    } else if (isMagicPrefix(bytes, i)) {
      return i;
    }
  }
  return bytes.length;
}

/** The error decodeFrameHeader throws for the header at `at`, or undefined when it is good. */
function headerErrorAt(bytes: Uint8Array, at: number, maxPayloadBytes: number): FrameError | undefined {
  try {
    decodeFrameHeader(bytes, at, maxPayloadBytes);
    return undefined;
  } catch (error) {
    return error as FrameError;
  }
}

/** Little-endian u32 at `at` (the caller checked the bounds). */
function u32At(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function isMagicPrefix(bytes: Uint8Array, at: number): boolean {
  for (let k = 0; at + k < bytes.length; k++) if (bytes[at + k] !== FRAME_MAGIC[k]) return false;
  return true;
}

/**
 * Creates a splitter for a stream of concatenated frames.
 *
 * Resynchronisation: on bytes that do not start with the magic, a header with an unknown
 * version or type, a declared payload over the limit, or a CRC mismatch, the splitter returns
 * one error item and discards the input up to the next occurrence of the magic after the
 * rejected position; a corrupted length field therefore never swallows the frames after it
 * (they are found again by scanning once the bogus length has been read, or at end()).
 * Memory: at most one maximal frame (16 + 4 MiB) plus the last chunk is buffered.
 *
 * @param options - optional lower payload limit
 * @returns a splitter; feed it with push(), finish with end()
 * @throws RangeError when maxPayloadBytes is not an integer 0..4 MiB
 * @example
 * const splitter = createFrameSplitter();
 * socket.on('data', (chunk) => { for (const item of splitter.push(chunk)) 'raw' in item ? forward(item.raw) : reject(item.error); });
 */
export function createFrameSplitter(options: FrameSplitterOptions = {}): FrameSplitter {
  const maxPayloadBytes = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
  if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes < 0 || maxPayloadBytes > MAX_PAYLOAD_BYTES) {
    throw new RangeError(`maxPayloadBytes must be an integer 0..${MAX_PAYLOAD_BYTES}, got ${maxPayloadBytes}`);
  }
  let chunks: Uint8Array[] = [];
  let pendingBytes = 0;
  let neededBytes = 1; // do no work until at least this many bytes are pending
  let discardedBytes = 0;
  let frameCount = 0;

  function take(): Uint8Array {
    if (chunks.length === 1) return chunks[0]!;
    const out = new Uint8Array(pendingBytes);
    let p = 0;
    for (const c of chunks) {
      out.set(c, p);
      p += c.length;
    }
    return out;
  }

  // With `final`, a frame cut off by the end of the stream is rejected as TRUNCATED and the
  // search goes on after it (its length field may be the damaged part).
  function split(buffer: Uint8Array, final: boolean): FrameSplitItem[] {
    const items: FrameSplitItem[] = [];
    const reject = (error: FrameError, from: number, to: number): void => {
      items.push({ error, discarded: buffer.subarray(from, to) });
      discardedBytes += to - from;
    };
    let position = 0;
    neededBytes = 1;
    while (position < buffer.length) {
      const available = buffer.length - position;
      if (!hasMagicAt(buffer, position) && !(available < 4 && isMagicPrefix(buffer, position))) {
        const next = nextMagicOrTail(buffer, position + 1);
        reject(new FrameError('WW_ERR_FRAME_BAD_MAGIC', `skipped ${next - position} bytes that do not start with magic 'WWFR'`), position, next);
        position = next;
        continue;
      }
      // The magic, or its start cut off by the end of the buffer (then available < 4): a header
      // that has not fully arrived waits for more bytes, or at the end of the stream is truncated.
      if (available < FRAME_HEADER_BYTES) {
        if (final) {
          reject(new FrameError('WW_ERR_FRAME_TRUNCATED', `stream ended inside a frame header: ${available} of ${FRAME_HEADER_BYTES} bytes`), position, buffer.length);
          position = buffer.length;
          continue;
        }
        neededBytes = FRAME_HEADER_BYTES;
        break;
      }
      // Fast path: version 1, type 1 or 2, length within the limit, read straight from the
      // bytes; anything else goes through decodeFrameHeader for its error.
      const payloadLength = u32At(buffer, position + 8);
      const typeLow = buffer[position + 6]!;
      const headerIsGood =
        buffer[position + 4] === FRAME_VERSION &&
        buffer[position + 5] === 0 &&
        (typeLow === 1 || typeLow === 2) &&
        buffer[position + 7] === 0 &&
        payloadLength <= maxPayloadBytes;
      const headerError = headerIsGood ? undefined : headerErrorAt(buffer, position, maxPayloadBytes);
      if (headerError !== undefined) {
        const next = nextMagicOrTail(buffer, position + 1);
        reject(headerError, position, next);
        position = next;
        continue;
      }
      const total = FRAME_HEADER_BYTES + payloadLength;
      if (available < total) {
        if (final) {
          const next = nextMagicOrTail(buffer, position + 1);
          reject(new FrameError('WW_ERR_FRAME_TRUNCATED', `stream ended inside a frame: ${available} of ${total} bytes`), position, next);
          position = next;
          continue;
        }
        neededBytes = total;
        break;
      }
      const declaredCrc = u32At(buffer, position + 12);
      const crc = crc32c(buffer.subarray(position + FRAME_HEADER_BYTES, position + total));
      if (crc !== declaredCrc) {
        const next = nextMagicOrTail(buffer, position + 1);
        const hex = (v: number): string => `0x${v.toString(16).padStart(8, '0')}`;
        reject(new FrameError('WW_ERR_FRAME_CRC_MISMATCH', `payload CRC-32C must match the header's ${hex(declaredCrc)}, computed ${hex(crc)}`), position, next);
        position = next;
        continue;
      }
      items.push({ raw: buffer.slice(position, position + total) });
      frameCount += 1;
      position += total;
    }
    // Keep the unfinished tail as a copy: the caller may reuse the chunk it passed in.
    const rest = buffer.slice(position);
    chunks = rest.length > 0 ? [rest] : [];
    pendingBytes = rest.length;
    return items;
  }

  return {
    push(chunk: Uint8Array): FrameSplitItem[] {
      if (chunk.length === 0) return [];
      chunks.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < neededBytes) {
        // Copy a chunk we hold across calls (the caller may reuse its buffer).
        chunks[chunks.length - 1] = chunk.slice();
        return [];
      }
      return split(take(), false);
    },
    end(): FrameSplitItem[] {
      if (pendingBytes === 0) return [];
      const items = split(take(), true);
      chunks = [];
      pendingBytes = 0;
      neededBytes = 1;
      return items;
    },
    get pendingBytes(): number {
      return pendingBytes;
    },
    get discardedBytes(): number {
      return discardedBytes;
    },
    get frameCount(): number {
      return frameCount;
    },
  };
}
