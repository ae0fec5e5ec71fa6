import { streamKeyOf } from '../contracts/index.ts';
import { createFrameSplitter, summarizeFrame, type Frame, type FrameError, type FrameSummary } from '../protocol/index.ts';

/** One outcome of validating a byte stream: a valid frame, or rejected bytes with the reason. */
export type ValidatedItem =
  | {
      readonly kind: 'frame';
      /** The frame's bytes exactly as received. */
      readonly raw: Uint8Array;
      /** The stream's key (contracts/stream-identity.ts streamKeyOf, with this collector's host): the Kafka key. */
      readonly key: string;
      /** Lanes the frame describes (for the thread-records counter). */
      readonly threadRecords: number;
    }
  | {
      readonly kind: 'reject';
      /**
       * The rejected bytes, or for a long rejected stretch its first 64 KiB only (the
       * splitter's sample; a copy the caller may keep).
       */
      readonly bytes: Uint8Array;
      /** Exact length of the rejected stretch in bytes (≥ bytes.length). */
      readonly discardedLength: number;
      /** A protocol error code such as WW_ERR_FRAME_CRC_MISMATCH. */
      readonly code: string;
      readonly message: string;
    };

/** Splits and validates one byte stream; see {@link createStreamValidator}. */
export interface StreamValidator {
  /** Adds bytes; returns the frames and rejections they complete, in stream order. */
  push(chunk: Uint8Array): ValidatedItem[];
  /** The stream ended: leftover bytes are a truncated frame. */
  end(): ValidatedItem[];
}

/**
 * Validation of one byte stream with the protocol codec: the protocol splitter cuts the
 * stream into raw frames (header and CRC checked, resynchronising after garbage on the next
 * valid frame: one reject per contiguous rejected stretch, with a capped sample and the exact
 * length), then `summarizeFrame` checks every payload field as `decodeFrame` does (a frame that fails is its own
 * reject, whole). Pure computation, no I/O, so it runs the same on the event loop or in the
 * validation worker. Chunks passed to push() must not be changed afterwards: a frame's `raw`
 * may be a view of one.
 *
 * @param options.host - the collector's host name, part of every frame's stream key
 * @example const validator = createStreamValidator({ host: 'node7' }); for (const item of validator.push(chunk)) ...
 */
export function createStreamValidator(options: { readonly host: string }): StreamValidator {
  // Every caller passes chunks nobody changes afterwards (Node stream Buffers, or the worker's
  // transferred copies), so frames come back as views of them: no copy per frame.
  const splitter = createFrameSplitter({ chunksAreImmutable: true });
  const convert = (items: ReturnType<typeof splitter.push>): ValidatedItem[] => {
    const out: ValidatedItem[] = [];
    for (const item of items) {
      if (!('raw' in item)) {
        out.push({ kind: 'reject', bytes: item.discarded, discardedLength: item.discardedLength, code: item.error.code, message: item.error.message });
        continue;
      }
      let frame: FrameSummary;
      try {
        frame = summarizeFrame(item.raw, { crcVerified: true }); // the splitter checked the CRC
      } catch (error) {
        const e = error as FrameError;
        out.push({ kind: 'reject', bytes: item.raw, discardedLength: item.raw.length, code: typeof e.code === 'string' ? e.code : 'WW_ERR_FRAME_INVALID', message: e.message });
        continue;
      }
      out.push({ kind: 'frame', raw: item.raw, key: streamKeyOf({ ...frame, host: options.host }), threadRecords: frame.threadRecords });
    }
    return out;
  };
  return {
    push: (chunk) => convert(splitter.push(chunk)),
    end: () => convert(splitter.end()),
  };
}

/**
 * Per-lane records a frame describes: every lane of every counted group for a launch
 * summary, every lane of every sampled group for group samples.
 *
 * @example threadRecordsOf(groupSamplesFrameWith3Groups) // 3 × groupSize
 */
export function threadRecordsOf(frame: Frame): number {
  return frame.type === 'launch-summary' ? frame.groupsCounted * frame.groupSize : frame.groups.length * frame.groupSize;
}
