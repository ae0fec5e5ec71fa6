/**
 * Test helper: a small frame file of 4 launches (LaunchSummary of 1,024 groups of 4 lanes, then
 * GroupSamples of 4 of its groups: 8 frames) and the two kinds of damage the frame-file readers
 * must survive (cli/frame-file.ts): a length field corrupted upwards, and a fake header in front.
 */
import { encodeFrame, FRAME_HEADER_BYTES, FRAME_MAGIC, histogramOfCounts, MAX_PAYLOAD_BYTES, type FrameIdentity, type GroupSample } from '../../protocol/index.ts';

/** Launches in {@link eightFrames}, and groups counted per launch. */
export const LAUNCHES = 4;
export const GROUPS_PER_LAUNCH = 1024;

/**
 * The 8 encoded frames of stream `job/kernel`: per launch its LaunchSummary, then its GroupSamples.
 *
 * @example const frames = eightFrames('job', 'k'); writeFileSync(file, Buffer.concat(frames));
 */
export function eightFrames(job = 'job', kernel = 'k'): Uint8Array[] {
  return Array.from({ length: LAUNCHES }, (_, launch) => {
    const identity: FrameIdentity = {
      job,
      kernel,
      launchId: BigInt(launch),
      frameSequence: 0,
      source: 'cpu',
      groupSize: 4,
      sync: true,
      device: { name: 'test-cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
      startUnixNanos: 1_700_000_000_000_000_000n + BigInt(launch) * 1_000_000n,
      endUnixNanos: 1_700_000_000_000_500_000n + BigInt(launch) * 1_000_000n,
    };
    // Lane counts (lane·7 + group·13 + launch) mod 97 + 1: all groups counted, every 256th sampled.
    const groups = Array.from({ length: GROUPS_PER_LAUNCH }, (_, g) => Array.from({ length: 4 }, (_, lane) => ((lane * 7 + g * 13 + launch) % 97) + 1));
    const loss = groups.reduce((sum, g) => sum + (4 * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0);
    const sampled: GroupSample[] = [0, 256, 512, 768].map((g) => ({
      groupIndex: g,
      startClock: 0n,
      endClock: 100n,
      laneCounts: groups[g]!,
      laneFinishClocks: groups[g]!.map((count) => BigInt(count)),
    }));
    return [
      encodeFrame({
        ...identity,
        type: 'launch-summary',
        groupCount: GROUPS_PER_LAUNCH,
        groupsCounted: GROUPS_PER_LAUNCH,
        sumSimtClocks: 1_000_000n,
        sumMimdClocks: 900_000n,
        sumMeasuredLoss: loss,
        sumCountsLoss: loss,
        sumMaxCounts: groups.reduce((sum, g) => sum + Math.max(...g), 0),
        sumCounts: groups.reduce((sum, g) => sum + g.reduce((a, b) => a + b, 0), 0),
        droppedSamples: 0,
        histogram: histogramOfCounts(groups.flat()),
      }),
      encodeFrame({ ...identity, frameSequence: 1, type: 'group-samples', groupCount: GROUPS_PER_LAUNCH, selection: 'stride', samplingStride: 256, groups: sampled }),
    ];
  }).flat();
}

/**
 * The frames back to back, with the length field of frame `index` (0-based) set to 4 MiB:
 * a valid header whose frame runs past the end of the file.
 *
 * @example withLengthCorrupted(eightFrames(), 1) // frame 2 of 8
 */
export function withLengthCorrupted(frames: readonly Uint8Array[], index: number): Buffer {
  const bytes = Buffer.concat(frames);
  const at = frames.slice(0, index).reduce((n, f) => n + f.length, 0);
  bytes.writeUInt32LE(MAX_PAYLOAD_BYTES, at + 8);
  return bytes;
}

/**
 * A 16-byte fake header (magic, version 1, type 1, payload length 4 MiB, CRC 0) in front of the frames.
 *
 * @example withFakeHeader(eightFrames())
 */
export function withFakeHeader(frames: readonly Uint8Array[]): Buffer {
  const header = Buffer.alloc(FRAME_HEADER_BYTES);
  header.set(FRAME_MAGIC, 0);
  header.writeUInt16LE(1, 4);
  header.writeUInt16LE(1, 6);
  header.writeUInt32LE(MAX_PAYLOAD_BYTES, 8);
  return Buffer.concat([header, ...frames]);
}
