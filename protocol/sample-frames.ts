/**
 * The frames behind protocol/vectors/ts-*.bin (written by write-vectors.ts, decoded and
 * re-encoded by the C++ tool `ww_vectors check`), and the invalid-*.bin vectors derived from
 * them. Pure data; change it, then run `npx tsx protocol/write-vectors.ts`.
 */
import { crc32c } from './crc32c.ts';
import { encodeFrame } from './encode-frame.ts';
import { FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES } from './limits.ts';
import { histogramOfCounts } from './histogram-bins.ts';
import type { GroupSamplesFrame, LaunchSummaryFrame } from './types.ts';

const laneCountsOfGroups: number[][] = [
  [3, 7, 7, 1, 0, 12, 5, 5],
  [1024, 1039, 1040, 65535, 65536, 4294967295, 0, 1],
  [9, 9, 9, 9, 9, 9, 9, 9],
];

/** A LaunchSummary from a CUDA device with 8-lane tiles, histogram built from laneCountsOfGroups. */
export const SAMPLE_LAUNCH_SUMMARY: LaunchSummaryFrame = {
  type: 'launch-summary',
  job: 'ts-vector-job',
  kernel: 'divergence<32>',
  launchId: 42n,
  frameSequence: 1,
  source: 'cuda',
  groupSize: 8,
  sync: true,
  device: {
    name: 'NVIDIA H100 80GB HBM3',
    uuid: '5a8c2f3e-0b1d-4e6f-8a9b-c0d1e2f3a4b5',
    computeCapability: { major: 9, minor: 0 },
    clockHz: 1_980_000_000,
  },
  startUnixNanos: 1_718_000_000_000_000_000n,
  endUnixNanos: 1_718_000_000_250_000_000n,
  groupCount: 5,
  groupsCounted: 3,
  sumSimtClocks: 18_446_744_073_709_551_615n,
  sumMimdClocks: 1n,
  sumMeasuredLoss: 0.1 + 0.2,
  sumCountsLoss: Number.MIN_VALUE,
  sumMaxCounts: 4294967295 + 12 + 9,
  sumCounts: Number.MAX_SAFE_INTEGER,
  droppedSamples: 0,
  histogram: histogramOfCounts(laneCountsOfGroups.flat()),
};

/** A GroupSamples frame with 32 lanes and stride selection, from the CPU backend. */
export const SAMPLE_GROUP_SAMPLES: GroupSamplesFrame = {
  type: 'group-samples',
  job: 'ts-vector-job',
  kernel: 'escape-time ✓',
  launchId: 0xfedcba9876543210n,
  frameSequence: 2,
  source: 'cpu',
  groupSize: 32,
  sync: false,
  device: {
    name: 'AMD EPYC 9654 (lockstep, AVX-512)',
    uuid: '00000000-0000-0000-0000-000000000000',
    computeCapability: { major: 0, minor: 0 },
    clockHz: 1_000_000_000,
  },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
  groupCount: 1 << 18,
  selection: 'stride',
  samplingStride: 64,
  groups: [0, 64, 262080].map((groupIndex, g) => ({
    groupIndex,
    startClock: 1_000_000n * BigInt(g + 1),
    endClock: 1_000_000n * BigInt(g + 1) + 5000n,
    laneCounts: Array.from({ length: 32 }, (_, lane) => (lane * 37 + g * 11) % 100),
    laneFinishClocks: Array.from({ length: 32 }, (_, lane) => 1_000_000n * BigInt(g + 1) + BigInt(((lane * 37 + g * 11) % 100) * 50)),
  })),
};

/**
 * Block runs (selection `block`): the 2 groups (warps) of each sampled block of 2, in order —
 * blocks 0 and 5 of a launch of 16 groups at n = 4.
 */
export const SAMPLE_BLOCK_SAMPLES: GroupSamplesFrame = {
  ...SAMPLE_GROUP_SAMPLES,
  frameSequence: 3,
  groupSize: 4,
  groupCount: 16,
  selection: 'block',
  samplingStride: 3,
  groupsPerBlock: 2,
  groups: [0, 1, 10, 11].map((groupIndex, g) => ({
    groupIndex,
    startClock: 100n * BigInt(g + 1),
    endClock: 100n * BigInt(g + 1) + 90n,
    laneCounts: [1 + g, 2, 3 * g, 4],
    laneFinishClocks: [1, 2, 3, 4].map((lane) => 100n * BigInt(g + 1) + BigInt(lane * 10)),
  })),
};

function withCrcFixed(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(12, crc32c(bytes.subarray(FRAME_HEADER_BYTES)), true);
  return bytes;
}

/**
 * The TS-written vector files: name → bytes. `invalid-<CODE>-<what>.bin` must fail decodeFrame
 * with <CODE> in both languages.
 */
export function sampleVectorFiles(): Map<string, Uint8Array> {
  const summary = encodeFrame(SAMPLE_LAUNCH_SUMMARY);
  const samples = encodeFrame(SAMPLE_GROUP_SAMPLES);
  const stream = new Uint8Array(summary.length + samples.length);
  stream.set(summary, 0);
  stream.set(samples, summary.length);
  const edit = (change: (b: Uint8Array, view: DataView) => void, fixCrc = false): Uint8Array => {
    const b = summary.slice();
    change(b, new DataView(b.buffer));
    return fixCrc ? withCrcFixed(b) : b;
  };
  const jobAt = FRAME_HEADER_BYTES + 58;
  const blocks = encodeFrame(SAMPLE_BLOCK_SAMPLES);
  // The GroupSamples body is its last 20 + m·(24 + 12n) bytes; groupsPerBlock is at body + 10.
  const blockBodyAt = blocks.length - (20 + SAMPLE_BLOCK_SAMPLES.groups.length * (24 + 12 * SAMPLE_BLOCK_SAMPLES.groupSize));
  const histogramCountAt = summary.length - 8;
  return new Map<string, Uint8Array>([
    ['ts-launch-summary.bin', summary],
    ['ts-group-samples.bin', samples],
    ['ts-stream.bin', stream],
    ['ts-block-samples.bin', blocks],
    ['invalid-WW_ERR_FRAME_INVALID-block-groups-per-block-0.bin', (() => {
      const b = blocks.slice();
      new DataView(b.buffer).setUint16(blockBodyAt + 10, 0, true);
      return withCrcFixed(b);
    })()],
    ['invalid-WW_ERR_FRAME_TRUNCATED-cut-short.bin', summary.slice(0, summary.length - 1)],
    ['invalid-WW_ERR_FRAME_TRUNCATED-header-only.bin', summary.slice(0, 12)],
    ['invalid-WW_ERR_FRAME_BAD_MAGIC-first-byte.bin', edit((b) => (b[0] = 0x58))],
    ['invalid-WW_ERR_FRAME_UNKNOWN_VERSION-2.bin', edit((_, v) => v.setUint16(4, 2, true))],
    ['invalid-WW_ERR_FRAME_UNKNOWN_TYPE-3.bin', edit((_, v) => v.setUint16(6, 3, true))],
    ['invalid-WW_ERR_FRAME_CRC_MISMATCH-bit-flip.bin', edit((b) => (b[b.length - 1]! ^= 0x80))],
    ['invalid-WW_ERR_FRAME_OVER_LIMIT-payload-length.bin', edit((_, v) => v.setUint32(8, MAX_PAYLOAD_BYTES + 1, true))],
    ['invalid-WW_ERR_FRAME_OVER_LIMIT-group-size-33.bin', edit((b) => (b[FRAME_HEADER_BYTES + 13] = 33), true)],
    ['invalid-WW_ERR_FRAME_OVER_LIMIT-count-2-to-53.bin', edit((_, v) => v.setBigUint64(histogramCountAt, 1n << 53n, true), true)],
    ['invalid-WW_ERR_FRAME_INVALID-histogram-total.bin', edit((_, v) => v.setBigUint64(histogramCountAt, v.getBigUint64(histogramCountAt, true) + 1n, true), true)],
    ['invalid-WW_ERR_FRAME_INVALID-job-utf8.bin', edit((b) => (b[jobAt + 1] = 0xc0), true)],
    ['invalid-WW_ERR_FRAME_INVALID-job-slash.bin', edit((b) => (b[jobAt + 1] = 0x2f), true)],
    // Identity characters (contracts/stream-identity.ts): the kernel 'divergence<32>' with a
    // newline for its 'i', or a backslash for its last byte; the device name with U+0085 (C1).
    ['invalid-WW_ERR_FRAME_INVALID-kernel-newline.bin', edit((b) => (b[jobAt + 1 + SAMPLE_LAUNCH_SUMMARY.job.length + 2] = 0x0a), true)],
    ['invalid-WW_ERR_FRAME_INVALID-kernel-trailing-backslash.bin', edit((b) => (b[jobAt + 1 + SAMPLE_LAUNCH_SUMMARY.job.length + 14] = 0x5c), true)],
    ['invalid-WW_ERR_FRAME_INVALID-device-name-c1.bin', edit((b) => b.set([0xc2, 0x85], jobAt + 3 + SAMPLE_LAUNCH_SUMMARY.job.length + SAMPLE_LAUNCH_SUMMARY.kernel.length + 6), true)],
    ['invalid-WW_ERR_FRAME_INVALID-source-2.bin', edit((b) => (b[FRAME_HEADER_BYTES + 12] = 2), true)],
    ['invalid-WW_ERR_FRAME_INVALID-trailing-byte.bin', (() => {
      const b = new Uint8Array(summary.length + 1);
      b.set(summary);
      return b;
    })()],
  ]);
}
