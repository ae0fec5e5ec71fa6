/**
 * Streaming frame splitter: turns a byte stream delivered in arbitrary chunks (unix socket,
 * stdin, a file read in pieces) into the raw bytes of each frame, unchanged, so a collector can
 * forward exactly what the recorder wrote. Damaged input is skipped up to the next valid frame
 * and yields one error item per contiguous rejected stretch, carrying a capped sample and the
 * exact length (SPEC.md "Streams and resynchronisation").
 */
import { crc32c } from './crc32c.ts';
import { FrameError, type ProtocolErrorCode } from './errors.ts';
import { decodeFrameHeader } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, MAX_PAYLOAD_BYTES } from './limits.ts';

/** Default of {@link FrameSplitterOptions.maxSampleBytes}: 64 KiB of each rejected stretch are kept. */
export const DEFAULT_MAX_SAMPLE_BYTES = 64 * 1024;

/** One result of a splitter: a whole frame's bytes, or one contiguous rejected stretch of input. */
export type FrameSplitItem =
  | {
      /** Exactly one frame (header + payload), CRC checked, payload not decoded; a copy the caller may keep. */
      readonly raw: Uint8Array;
    }
  | {
      /**
       * Why the stretch was rejected: the code of its first problem (BAD_MAGIC, UNKNOWN_VERSION,
       * UNKNOWN_TYPE, OVER_LIMIT, CRC_MISMATCH; TRUNCATED from end()); the message names that
       * problem and the stretch's total length. `offset` is the stream byte offset where the
       * stretch starts (counted from the first push, or from the last end()).
       */
      readonly error: FrameError;
      /**
       * A sample of the rejected bytes: the first min(discardedLength, maxSampleBytes) bytes of
       * the stretch (a copy the caller may keep).
       */
      readonly discarded: Uint8Array;
      /** Exact length of the rejected stretch in bytes (≥ discarded.length). */
      readonly discardedLength: number;
    };

/** Options of {@link createFrameSplitter}. */
export interface FrameSplitterOptions {
  /** Reject frames whose declared payload is larger than this, in bytes (≤ and default 4 MiB). */
  readonly maxPayloadBytes?: number;
  /**
   * Bytes of each rejected stretch kept as its `discarded` sample (default 64 KiB, 0 keeps
   * none). The splitter never holds more than this of a stretch, however long it is.
   */
  readonly maxSampleBytes?: number;
  /**
   * Chunks passed to push() are never changed afterwards by the caller (true for the Buffers
   * Node's sockets, pipes and file streams emit: each is fresh memory). Then a frame that lies
   * whole inside one chunk is returned as a view of it (`subarray`), not a copy: no allocation
   * and no copy per frame. Default false: every frame is a copy the caller may keep.
   */
  readonly chunksAreImmutable?: boolean;
}

/** A streaming splitter; see {@link createFrameSplitter}. */
export interface FrameSplitter {
  /**
   * Adds a chunk and returns the frames and rejected stretches completed by it, in stream
   * order. A rejected stretch is complete when the next valid frame is found (it is returned
   * just before that frame) or at end().
   */
  push(chunk: Uint8Array): FrameSplitItem[];
  /**
   * Ends the stream: a frame cut off by the end is a WW_ERR_FRAME_TRUNCATED error, whole
   * frames that a damaged length field had kept waiting are still returned, and the open
   * rejected stretch, if any, is returned last. The splitter is then empty and reusable.
   */
  end(): FrameSplitItem[];
  /**
   * Bytes held while waiting for the rest of a frame (≤ one maximal frame + the last chunk);
   * the sample of an open rejected stretch (≤ maxSampleBytes) is not counted.
   */
  readonly pendingBytes: number;
  /** Total bytes rejected so far, exact (including an open stretch not yet returned). */
  readonly discardedBytes: number;
  /** Total frames returned so far. */
  readonly frameCount: number;
}

// Module-level copies of the constants the byte loops use: under a loader (tsx, vite-node) an
// imported binding can be a getter, too slow to call once per byte or per 4-byte region.
const MAGIC0 = FRAME_MAGIC[0];
const MAGIC1 = FRAME_MAGIC[1];
const MAGIC2 = FRAME_MAGIC[2];
const MAGIC3 = FRAME_MAGIC[3];
const HEADER_BYTES = FRAME_HEADER_BYTES;
const VERSION = FRAME_VERSION;

/** True when bytes[at..at+4) is the magic (the caller checked at + 4 ≤ length). */
function magicAt(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === MAGIC0 && bytes[at + 1] === MAGIC1 && bytes[at + 2] === MAGIC2 && bytes[at + 3] === MAGIC3;
}

/**
 * Index of the next magic at or after `from`; if there is none, the start of a trailing
 * partial magic (1..3 bytes that could begin one), else `bytes.length`. Scans a few bytes by
 * hand (garbage dense in magics, such as 'WWFR' repeated, has the next one within 4 bytes),
 * then lets indexOf skip long stretches without a magic byte.
 */
function nextMagicOrTail(bytes: Uint8Array, from: number): number {
  const length = bytes.length;
  let i = from;
  while (i < length) {
    const stop = Math.min(length, i + 8);
    for (; i < stop; i++) {
      if (bytes[i] !== MAGIC0) continue;
      if (i + 4 <= length ? magicAt(bytes, i) : isMagicPrefix(bytes, i)) return i;
    }
    if (i >= length) break;
    i = bytes.indexOf(MAGIC0, i);
    if (i === -1) break;
  }
  return length;
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

/** `v` as 0x and 8 hex digits. */
function hex8(v: number): string {
  return `0x${v.toString(16).padStart(8, '0')}`;
}

/** Little-endian u32 at `at` (the caller checked the bounds). */
function u32At(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

/** True when the 1..3 bytes from `at` to the end could begin a magic. */
function isMagicPrefix(bytes: Uint8Array, at: number): boolean {
  const available = bytes.length - at;
  return bytes[at] === MAGIC0 && (available < 2 || bytes[at + 1] === MAGIC1) && (available < 3 || bytes[at + 2] === MAGIC2) && (available < 4 || bytes[at + 3] === MAGIC3);
}

/**
 * Creates a splitter for a stream of concatenated frames.
 *
 * Resynchronisation: bytes that do not start with the magic, a header with an unknown version
 * or type, a declared payload over the limit, or a CRC mismatch are rejected, and the search
 * goes on one magic further until the next valid frame (valid header and matching CRC), not
 * merely the next magic. All rejected bytes between two valid frames, however many chunks
 * they span and however many problems they hold, form one stretch and yield ONE error item,
 * returned just before the frame that ends it (or by end()): its code is the first problem's,
 * `discardedLength` the exact length, `discarded` a sample of its first `maxSampleBytes`
 * bytes. A corrupted length field therefore never swallows the frames after it (they are
 * found again by scanning once the bogus length has been read, or at end()).
 * Memory: at most one maximal frame (16 + 4 MiB) plus the last chunk is buffered, plus the
 * sample of the open stretch (≤ maxSampleBytes); a stretch is never buffered whole.
 *
 * @param options - optional lower payload limit (bytes) and sample size (bytes)
 * @returns a splitter; feed it with push(), finish with end()
 * @throws RangeError when maxPayloadBytes is not an integer 0..4 MiB, or maxSampleBytes not a non-negative safe integer
 * @example
 * const splitter = createFrameSplitter();
 * socket.on('data', (chunk) => { for (const item of splitter.push(chunk)) 'raw' in item ? forward(item.raw) : reject(item.error, item.discarded, item.discardedLength); });
 */
export function createFrameSplitter(options: FrameSplitterOptions = {}): FrameSplitter {
  const maxPayloadBytes = options.maxPayloadBytes ?? MAX_PAYLOAD_BYTES;
  if (!Number.isInteger(maxPayloadBytes) || maxPayloadBytes < 0 || maxPayloadBytes > MAX_PAYLOAD_BYTES) {
    throw new RangeError(`maxPayloadBytes must be an integer 0..${MAX_PAYLOAD_BYTES}, got ${maxPayloadBytes}`);
  }
  const maxSampleBytes = options.maxSampleBytes ?? DEFAULT_MAX_SAMPLE_BYTES;
  if (!Number.isSafeInteger(maxSampleBytes) || maxSampleBytes < 0) {
    throw new RangeError(`maxSampleBytes must be a non-negative integer, got ${maxSampleBytes}`);
  }
  const viewsOfChunks = options.chunksAreImmutable === true;
  let chunks: Uint8Array[] = [];
  let pendingBytes = 0;
  let neededBytes = 1; // do no work until at least this many bytes are pending
  let discardedBytes = 0;
  let frameCount = 0;
  let streamOffset = 0; // stream offset of the first pending byte

  // The open rejected stretch: its first problem (code undefined = no open stretch), where it
  // starts, its exact length, and the sample of its first bytes (a buffer reused across
  // stretches, grown on demand up to maxSampleBytes).
  let stretchCode: ProtocolErrorCode | undefined;
  let stretchReason = '';
  let stretchOffset = 0;
  let stretchLength = 0;
  let sample = new Uint8Array(0);
  let sampleLength = 0;

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

  /** Opens a stretch at stream offset `offset` (the caller checked none is open): its first problem names it. */
  function open(code: ProtocolErrorCode, reason: string, offset: number): void {
    stretchCode = code;
    stretchReason = reason;
    stretchOffset = offset;
  }

  /** Adds buffer[from, to) to the open stretch: counted exactly, sampled up to the cap. */
  function extend(buffer: Uint8Array, from: number, to: number): void {
    stretchLength += to - from;
    discardedBytes += to - from;
    const keep = Math.min(to - from, maxSampleBytes - sampleLength);
    if (keep <= 0) return;
    if (sampleLength + keep > sample.length) {
      const grown = new Uint8Array(Math.min(maxSampleBytes, Math.max(sampleLength + keep, 2 * sample.length, 256)));
      grown.set(sample.subarray(0, sampleLength));
      sample = grown;
    }
    sample.set(buffer.subarray(from, from + keep), sampleLength);
    sampleLength += keep;
  }

  /** Returns the open stretch as one error item into `items` and closes it; no-op when none is open. */
  function flush(items: FrameSplitItem[], endedBy: string): void {
    if (stretchCode === undefined) return;
    const message = `${stretchReason} (at stream byte ${stretchOffset}); skipped ${stretchLength} bytes in total up to ${endedBy}`;
    items.push({ error: new FrameError(stretchCode, message, { offset: stretchOffset }), discarded: sample.slice(0, sampleLength), discardedLength: stretchLength });
    stretchCode = undefined;
    stretchReason = '';
    stretchLength = 0;
    sampleLength = 0;
  }

  // With `final`, a frame cut off by the end of the stream is rejected as TRUNCATED and the
  // search goes on after it (its length field may be the damaged part).
  function split(buffer: Uint8Array, final: boolean): FrameSplitItem[] {
    const items: FrameSplitItem[] = [];
    // Each rejected region joins the open stretch; its reason is only formatted when it opens
    // one (no closure or string per region: garbage dense in magics has one every 4 bytes).
    let position = 0;
    neededBytes = 1;
    while (position < buffer.length) {
      const available = buffer.length - position;
      if (available >= 4 ? !magicAt(buffer, position) : !isMagicPrefix(buffer, position)) {
        const next = nextMagicOrTail(buffer, position + 1);
        if (stretchCode === undefined) open('WW_ERR_FRAME_BAD_MAGIC', "bytes do not start with magic 'WWFR'", streamOffset + position);
        extend(buffer, position, next);
        position = next;
        continue;
      }
      // The magic, or its start cut off by the end of the buffer (then available < 4): a header
      // that has not fully arrived waits for more bytes, or at the end of the stream is truncated.
      if (available < HEADER_BYTES) {
        if (final) {
          if (stretchCode === undefined) open('WW_ERR_FRAME_TRUNCATED', `stream ended inside a frame header: ${available} of ${HEADER_BYTES} bytes`, streamOffset + position);
          extend(buffer, position, buffer.length);
          position = buffer.length;
          continue;
        }
        neededBytes = HEADER_BYTES;
        break;
      }
      // Fast path: version 1, type 1 or 2, length within the limit, read straight from the
      // bytes; a bad header goes through decodeFrameHeader for its error only when it opens a
      // stretch (a long run of bad headers costs no exception per header).
      const payloadLength = u32At(buffer, position + 8);
      const typeLow = buffer[position + 6]!;
      const headerIsGood =
        buffer[position + 4] === VERSION &&
        buffer[position + 5] === 0 &&
        (typeLow === 1 || typeLow === 2) &&
        buffer[position + 7] === 0 &&
        payloadLength <= maxPayloadBytes;
      if (!headerIsGood) {
        const next = nextMagicOrTail(buffer, position + 1);
        if (stretchCode === undefined) {
          const error = headerErrorAt(buffer, position, maxPayloadBytes);
          open(error?.code ?? 'WW_ERR_FRAME_BAD_MAGIC', error?.message ?? 'bad frame header', streamOffset + position);
        }
        extend(buffer, position, next);
        position = next;
        continue;
      }
      const total = HEADER_BYTES + payloadLength;
      if (available < total) {
        if (final) {
          const next = nextMagicOrTail(buffer, position + 1);
          if (stretchCode === undefined) open('WW_ERR_FRAME_TRUNCATED', `stream ended inside a frame: ${available} of ${total} bytes`, streamOffset + position);
          extend(buffer, position, next);
          position = next;
          continue;
        }
        neededBytes = total;
        break;
      }
      const declaredCrc = u32At(buffer, position + 12);
      const crc = crc32c(buffer.subarray(position + HEADER_BYTES, position + total));
      if (crc !== declaredCrc) {
        const next = nextMagicOrTail(buffer, position + 1);
        if (stretchCode === undefined) open('WW_ERR_FRAME_CRC_MISMATCH', `payload CRC-32C must match the header's ${hex8(declaredCrc)}, computed ${hex8(crc)}`, streamOffset + position);
        extend(buffer, position, next);
        position = next;
        continue;
      }
      flush(items, 'the next valid frame');
      // A view when the buffer is the caller's immutable chunk or our own concatenation (take()).
      items.push({ raw: viewsOfChunks ? buffer.subarray(position, position + total) : buffer.slice(position, position + total) });
      frameCount += 1;
      position += total;
    }
    streamOffset += position;
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
        if (!viewsOfChunks) chunks[chunks.length - 1] = chunk.slice();
        return [];
      }
      return split(take(), false);
    },
    end(): FrameSplitItem[] {
      const items = pendingBytes === 0 ? [] : split(take(), true);
      flush(items, 'the end of the stream');
      chunks = [];
      pendingBytes = 0;
      neededBytes = 1;
      streamOffset = 0;
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
