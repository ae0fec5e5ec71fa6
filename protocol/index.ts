// Public API of protocol/: the warpwatch frame format (SPEC.md), its TS codec and helpers.
export type {
  DeviceInfo,
  Frame,
  FrameIdentity,
  FrameKind,
  FrameSource,
  GroupSample,
  GroupSamplesFrame,
  GroupSelection,
  HistogramEntry,
  LaunchSummaryFrame,
} from './types.ts';
export {
  EXACT_BIN_COUNT,
  FRAME_HEADER_BYTES,
  FRAME_MAGIC,
  FRAME_VERSION,
  HISTOGRAM_BIN_COUNT,
  LOG_SUB_BIN_BITS,
  MAX_COUNT,
  MAX_FRAME_BYTES,
  MAX_GROUP_SAMPLES,
  MAX_GROUP_SIZE,
  MAX_HISTOGRAM_ENTRIES,
  MAX_PAYLOAD_BYTES,
  MAX_STRING_BYTES,
} from './limits.ts';
export { FrameError, PROTOCOL_ERROR_CODES, ProtocolError } from './errors.ts';
export type { ProtocolErrorCode } from './errors.ts';
export { crc32c } from './crc32c.ts';
export { FRAME_TYPE_CODES, decodeFrameHeader } from './frame-header.ts';
export type { FrameHeader } from './frame-header.ts';
export { validateFrame } from './validate-frame.ts';
export { encodeFrame } from './encode-frame.ts';
export { decodeFrame, summarizeFrame, type FrameSummary } from './decode-frame.ts';
export type { DecodeFrameOptions } from './decode-frame.ts';
export { decodeFrames, readFrameFile, scanFrameFile, type DamagedStretch, type FrameFileScan } from './decode-frames.ts';
export { DEFAULT_MAX_SAMPLE_BYTES, createFrameSplitter } from './frame-splitter.ts';
export type { FrameSplitItem, FrameSplitter, FrameSplitterOptions } from './frame-splitter.ts';
export { parseStreamId, streamIdOf } from './stream-id.ts';
export {
  HISTOGRAM_MAX_RELATIVE_ERROR,
  HISTOGRAM_MAX_RELATIVE_WIDTH,
  histogramBinOf,
  histogramBinRange,
  histogramBinRepresentative,
  histogramOfCounts,
  histogramToCounts,
} from './histogram-bins.ts';
