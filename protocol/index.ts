// Public API of protocol/: the warpwatch frame format (SPEC.md), its TS codec and helpers. It exports
// what other folders use; the modules' other names (limits, header layout, histogram bins) stay inside protocol/.
export type {
  Frame,
  FrameColumns,
  FrameIdentity,
  FrameKind,
  GroupSample,
  GroupSampleColumns,
  GroupSamplesOffsetsFrame,
  GroupSamplesFrame,
  HistogramColumns,
  LaunchSummaryColumnsFrame,
  LaunchSummaryFrame,
} from './types.ts';
export {
  FRAME_HEADER_BYTES,
  FRAME_MAGIC,
  HISTOGRAM_BIN_COUNT,
  MAX_COUNT,
  MAX_GROUP_SAMPLES,
  MAX_PAYLOAD_BYTES,
} from './limits.ts';
export { FrameError } from './errors.ts';
export { crc32c } from './crc32c.ts';
export { decodeFrameHeader } from './frame-header.ts';
export { encodeFrame } from './encode-frame.ts';
export { createFrameColumns, decodeFrame, decodeFrameColumns, sampleGroupsOf, summarizeFrame, type FrameSummary } from './decode-frame.ts';
export { decodeFrames, scanFrameFile, type DamagedStretch } from './decode-frames.ts';
export { createFrameSplitter } from './frame-splitter.ts';
export { streamIdOf } from './stream-id.ts';
export {
  histogramBinRange,
  histogramOfCounts,
  histogramToCounts,
} from './histogram-bins.ts';
