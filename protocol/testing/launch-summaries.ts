/**
 * Hand-made frames for tests in any folder: a LaunchSummary (and its GroupSamples) built from the
 * lane counts of its groups, clocked or counts-only (SPEC.md, "Counts-only frames (no clock)"),
 * and a synthetic one-lane LaunchSummary with a chosen measured-loss sum (docs/estimator.md,
 * Overflow). Test-only: not part of index.ts.
 */
import { histogramOfCounts } from '../histogram-bins.ts';
import type { DeviceInfo, FrameIdentity, GroupSamplesFrame, LaunchSummaryFrame } from '../types.ts';

/** The all-zero device UUID of hand-made frames. */
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** A device of hand-made frames: `name`, zero UUID, compute capability 0.0, 1 GHz clock. */
export function syntheticDevice(name: string): DeviceInfo {
  return { name, uuid: ZERO_UUID, computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 };
}

/** Identity fields of the lane-count frames, launch id and frame sequence aside. */
export type LaneFrameIdentity = Omit<FrameIdentity, 'launchId' | 'frameSequence'>;

/** Stream py/k, source cpu, n = 4, sync, device "sim", start 0 ns, end 1 ns (override any field). */
export function laneFrameIdentity(overrides: Partial<LaneFrameIdentity> = {}): LaneFrameIdentity {
  return {
    job: 'py',
    kernel: 'k',
    source: 'cpu',
    groupSize: 4,
    sync: true,
    device: syntheticDevice('sim'),
    startUnixNanos: 0n,
    endUnixNanos: 1n,
    ...overrides,
  };
}

/** Lane counts (n = 4) of a counts-only launch: H_counts 4·5/8 = 2.5 and 1 (Σ 3.5). */
export const COUNTS_ONLY_GROUPS: readonly (readonly number[])[] = [[1, 1, 1, 5], [2, 2, 2, 2]];
/** Lane counts (n = 4) of a clocked launch: H_counts 4·3/6 = 2 and 1 (Σ 3); its clock sums are {@link CLOCKED_SUMS}. */
export const CLOCKED_GROUPS: readonly (readonly number[])[] = [[3, 1, 1, 1], [1, 1, 1, 1]];
/** The clock sums of one launch of {@link CLOCKED_GROUPS}: measured H 1.6 and 1.2 (Σ 2.8), ΣC_SIMT 400, ΣC_MIMD 320. */
export const CLOCKED_SUMS: LaneSummaryClocks = { sumSimtClocks: 400n, sumMimdClocks: 320n, sumMeasuredLoss: 2.8 };

/** The clock-derived sums of a LaunchSummary (all 0 in a counts-only frame). */
export interface LaneSummaryClocks {
  readonly sumSimtClocks: bigint;
  readonly sumMimdClocks: bigint;
  readonly sumMeasuredLoss: number;
}

/** Options of {@link launchSummaryFromLanes}. */
export interface LaneSummaryOptions {
  /** Identity fields (default {@link laneFrameIdentity}()). */
  readonly identity?: LaneFrameIdentity;
  /** The clock sums; absent: a counts-only frame (every clock sum and the measured-loss sum 0). */
  readonly clocks?: LaneSummaryClocks;
  /** Groups of the launch (≥ the counted ones: a sampling weight); default every group counted. */
  readonly groupCount?: number;
}

/**
 * A LaunchSummary (frame sequence 0) whose counted groups have the given lane counts: the
 * counts-based sums (H_counts = n·max/Σ per group), the histogram, and the clock sums of
 * `options.clocks` or 0.
 *
 * @example launchSummaryFromLanes(1n, CLOCKED_GROUPS, { clocks: CLOCKED_SUMS }).sumCountsLoss // 3
 */
export function launchSummaryFromLanes(launchId: bigint, groups: readonly (readonly number[])[], options: LaneSummaryOptions = {}): LaunchSummaryFrame {
  const identity = options.identity ?? laneFrameIdentity();
  const lanes = groups.flat();
  const clocks = options.clocks ?? { sumSimtClocks: 0n, sumMimdClocks: 0n, sumMeasuredLoss: 0 };
  return {
    ...identity,
    type: 'launch-summary',
    launchId,
    frameSequence: 0,
    groupCount: options.groupCount ?? groups.length,
    groupsCounted: groups.length,
    ...clocks,
    sumCountsLoss: groups.reduce((s, g) => s + (identity.groupSize * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0),
    sumMaxCounts: groups.reduce((s, g) => s + Math.max(...g), 0),
    sumCounts: lanes.reduce((a, b) => a + b, 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(lanes),
  };
}

/**
 * GroupSamples (frame sequence 1, hash selection, stride 1) of every group, with the given lane
 * counts. Counts-only (`clocked` false): every clock 0. Clocked: start 1000, a lane finishes at
 * 1000 + 10·count clocks, the group ends with its last lane.
 *
 * @example groupSamplesFromLanes(1n, COUNTS_ONLY_GROUPS, false).groups.length // 2
 */
export function groupSamplesFromLanes(launchId: bigint, groups: readonly (readonly number[])[], clocked: boolean, identity: LaneFrameIdentity = laneFrameIdentity()): GroupSamplesFrame {
  return {
    ...identity,
    type: 'group-samples',
    launchId,
    frameSequence: 1,
    groupCount: groups.length,
    selection: 'hash',
    samplingStride: 1,
    groups: groups.map((laneCounts, g) => ({
      groupIndex: g,
      startClock: clocked ? 1000n : 0n,
      endClock: clocked ? 1000n + 10n * BigInt(Math.max(...laneCounts)) : 0n,
      laneCounts: [...laneCounts],
      laneFinishClocks: laneCounts.map((w) => (clocked ? 1000n + 10n * BigInt(w) : 0n)),
    })),
  };
}

/**
 * A valid LaunchSummary of one group of one lane (count 1, 10 clocks SIMT and MIMD, no sync) in
 * stream `job`/k, frame sequence = launch id = `launch`, started and ended at `endMillis` (Unix ms),
 * with the measured-loss sum `sumMeasuredLoss` (Number.MAX_VALUE: finite and valid, but it
 * overflows any sum it joins).
 *
 * @example syntheticLaunchSummary({ job: 'poison', deviceName: 'synthetic', launch: 0, endMillis: 1_700_000_000_000, sumMeasuredLoss: Number.MAX_VALUE })
 */
export function syntheticLaunchSummary(frame: { job: string; deviceName: string; launch: number; endMillis: number; sumMeasuredLoss: number }): LaunchSummaryFrame {
  return {
    type: 'launch-summary',
    job: frame.job,
    kernel: 'k',
    launchId: BigInt(frame.launch),
    frameSequence: frame.launch,
    source: 'cpu',
    groupSize: 1,
    sync: false,
    device: syntheticDevice(frame.deviceName),
    startUnixNanos: BigInt(frame.endMillis) * 1_000_000n,
    endUnixNanos: BigInt(frame.endMillis) * 1_000_000n,
    groupCount: 1,
    groupsCounted: 1,
    sumSimtClocks: 10n,
    sumMimdClocks: 10n,
    sumMeasuredLoss: frame.sumMeasuredLoss,
    sumCountsLoss: 1,
    sumMaxCounts: 1,
    sumCounts: 1,
    droppedSamples: 0,
    histogram: [{ bin: 1, count: 1 }],
  };
}
