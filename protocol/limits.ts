/**
 * Hard limits and fixed constants of the warpwatch frame format, version 1 (protocol/SPEC.md).
 * Both decoders (TS and kernels/include/warpwatch/frame.hpp) enforce every limit before
 * allocating, so a frame can never make a reader allocate more than these bounds imply.
 */
import { MAX_GROUP_SIZE as IDENTITY_MAX_GROUP_SIZE, MAX_IDENTITY_TEXT_BYTES } from '../contracts/index.ts';

/** The four magic bytes that start every frame: ASCII `WWFR` (0x57 0x57 0x46 0x52). */
export const FRAME_MAGIC: readonly [number, number, number, number] = Object.freeze([0x57, 0x57, 0x46, 0x52] as const);

/** The only frame format version this codec reads and writes. */
export const FRAME_VERSION = 1;

/** Bytes in the fixed frame header: magic(4) version(2) type(2) payloadLength(4) payloadCrc32c(4). */
export const FRAME_HEADER_BYTES = 16;

/** Largest payload a frame may declare, in bytes (4 MiB). Larger declared lengths are WW_ERR_FRAME_OVER_LIMIT. */
export const MAX_PAYLOAD_BYTES = 4 * 1024 * 1024;

/** Largest whole frame (header + payload), in bytes. */
export const MAX_FRAME_BYTES = FRAME_HEADER_BYTES + MAX_PAYLOAD_BYTES;

/** Largest string (job, kernel, device name) in UTF-8 bytes; the wire length prefix is one byte (the stream-identity rule of contracts/). */
export const MAX_STRING_BYTES = MAX_IDENTITY_TEXT_BYTES;

/** Largest group size n (lanes per group): a warp of 32 lanes. Smallest is 1 (the stream-identity rule of contracts/). */
export const MAX_GROUP_SIZE = IDENTITY_MAX_GROUP_SIZE;

/** Number of exact histogram bins: values 0..EXACT_BIN_COUNT-1 each have their own bin. */
export const EXACT_BIN_COUNT = 1024;

/** Sub-bins per power of two above the exact range: 2^6 = 64, so relative bin width ≤ 2^-6. */
export const LOG_SUB_BIN_BITS = 6;

/**
 * Total histogram bins for u32 iteration counts: 1024 exact + 64 per octave for octaves
 * 2^10..2^31 (22 octaves) = 2432. Valid bin indices are 0..HISTOGRAM_BIN_COUNT-1.
 */
export const HISTOGRAM_BIN_COUNT = EXACT_BIN_COUNT + (32 - 10) * (1 << LOG_SUB_BIN_BITS);

/** Most (bin, count) entries one LaunchSummary may carry (= every bin once). */
export const MAX_HISTOGRAM_ENTRIES = HISTOGRAM_BIN_COUNT;

/** Most sampled groups one GroupSamples frame may carry. */
export const MAX_GROUP_SAMPLES = 4096;

/**
 * Largest value of a u64 count field (groupCount, groupsCounted, histogram counts, sums of
 * counts, droppedSamples, clockHz, groupIndex): 2^53 − 1, so it is exact as a JS number.
 */
export const MAX_COUNT = Number.MAX_SAFE_INTEGER;
