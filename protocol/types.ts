/**
 * The decoded shapes of warpwatch frames (protocol/SPEC.md, version 1). Field names carry
 * units; u64 identifiers and clocks are `bigint`, u64 counts are `number` (the format limits
 * them to 2^53 − 1 so they are exact).
 */

/** Where the measurements came from: a CUDA kernel (clocks in SM cycles) or the CPU lockstep backend (clocks in ns). */
export type FrameSource = 'cuda' | 'cpu';

/** The two frame kinds; the discriminant of {@link Frame}. */
export type FrameKind = 'launch-summary' | 'group-samples';

/**
 * How a GroupSamples frame chose its groups: `stride` = group index mod samplingStride is 0;
 * `hash` = splitmix64(launchId ^ groupIndex) mod samplingStride is 0; `block` = whole blocks of
 * `groupsPerBlock` consecutive groups (the warps of one thread block, units in order), block
 * b = ⌊groupIndex / groupsPerBlock⌋ sampled iff splitmix64(launchId ^ b) mod samplingStride is 0.
 */
export type GroupSelection = 'stride' | 'hash' | 'block';

/** The device that ran the launch. */
export interface DeviceInfo {
  /** Device name, UTF-8, 0..255 bytes (e.g. "NVIDIA H100 80GB HBM3", or the CPU model). */
  readonly name: string;
  /** Device UUID as lowercase canonical text `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (16 bytes on the wire); all zeros when unknown. */
  readonly uuid: string;
  /** CUDA compute capability; `{ major: 0, minor: 0 }` for the CPU backend. Each 0..255. */
  readonly computeCapability: { readonly major: number; readonly minor: number };
  /** Tick rate of every clock value in the frame, in Hz: the SM clock for `cuda`, 1e9 (ns) for `cpu`. 1..2^53−1. */
  readonly clockHz: number;
}

/** Fields every frame carries: which stream and launch it belongs to. Stream id = `${job}/${kernel}`. */
export interface FrameIdentity {
  /** Job name, UTF-8, 1..255 bytes, no '/'. */
  readonly job: string;
  /** Kernel name, UTF-8, 1..255 bytes. */
  readonly kernel: string;
  /** Launch id (u64), unique per launch within a job; a launch's summary and sample frames share it. */
  readonly launchId: bigint;
  /** Writer's frame counter (u32): 0, 1, 2, ... per recorder; a gap means frames were dropped. */
  readonly frameSequence: number;
  /** Measurement source. */
  readonly source: FrameSource;
  /** Lanes per group n, 1..32. */
  readonly groupSize: number;
  /** Whether the probe synchronised the group before taking its end clock (model.md §3). */
  readonly sync: boolean;
  /** The device. */
  readonly device: DeviceInfo;
  /** Launch start, Unix time in ns (u64), host clock. */
  readonly startUnixNanos: bigint;
  /** Launch end, Unix time in ns (u64), host clock. */
  readonly endUnixNanos: bigint;
}

/** One sparse histogram entry: `count` lanes had an iteration count that falls in `bin` (see histogramBinRange). */
export interface HistogramEntry {
  /** Bin index 0..2431. */
  readonly bin: number;
  /** Number of lanes, 1..2^53−1. */
  readonly count: number;
}

/**
 * Always-on per-launch aggregate (frame type 1). Sums run over the `groupsCounted` groups;
 * clock sums are in ticks of `device.clockHz`.
 */
export interface LaunchSummaryFrame extends FrameIdentity {
  readonly type: 'launch-summary';
  /** Groups in the launch (u64 ≤ 2^53−1). */
  readonly groupCount: number;
  /** Groups aggregated into the sums and histogram, ≤ groupCount. */
  readonly groupsCounted: number;
  /** Σ over groups of C_SIMT = n·(c_end − c0), clock ticks (u64). */
  readonly sumSimtClocks: bigint;
  /** Σ over groups of C_MIMD = Σ_i (c_i − c0), clock ticks (u64). */
  readonly sumMimdClocks: bigint;
  /** Σ over groups of measured H = C_SIMT / C_MIMD (f64, finite, ≥ 0; a group with C_MIMD = 0 contributes 1). */
  readonly sumMeasuredLoss: number;
  /** Σ over groups of H from counts = n·max(w)/Σw (f64, finite, ≥ 0; all-zero group contributes 1). */
  readonly sumCountsLoss: number;
  /** Σ over groups of max_i w_i, iterations. */
  readonly sumMaxCounts: number;
  /** Σ over groups of Σ_i w_i, iterations. */
  readonly sumCounts: number;
  /** Groups chosen for sampling that did not fit the sample buffer (overflow count). */
  readonly droppedSamples: number;
  /** Sparse histogram of per-lane iteration counts, bins strictly increasing, counts ≥ 1, Σ counts = groupsCounted·groupSize. */
  readonly histogram: readonly HistogramEntry[];
}

/**
 * A LaunchSummary's histogram as the estimator reads it ({@link decodeFrameColumns}): in columns,
 * one value per entry, each entry's bin with its inclusive range of iteration counts
 * (histogramBinRange). The arrays may be longer than `entries` needs: a decoder given the same
 * columns for every frame reuses them (createFrameColumns).
 */
export interface HistogramColumns {
  /** Entries held. */
  entries: number;
  /** Bin index (0..2431), strictly increasing. */
  bin: Uint32Array;
  /** Lowest iteration count of the bin. */
  low: Float64Array;
  /** Highest iteration count of the bin (= low below 1024). */
  high: Float64Array;
  /** Lanes in the bin, 1..2^53−1. */
  count: Float64Array;
}

/**
 * A LaunchSummary frame read into columns ({@link decodeFrameColumns}): its histogram in
 * {@link HistogramColumns}, and its two clock sums as numbers (the u64 rounded to the nearest
 * double, exactly as `Number(bigint)` rounds it; exact below 2^53).
 */
export interface LaunchSummaryColumnsFrame extends Omit<LaunchSummaryFrame, 'histogram' | 'sumSimtClocks' | 'sumMimdClocks'> {
  /** Σ over groups of C_SIMT, clock ticks. */
  readonly sumSimtClocks: number;
  /** Σ over groups of C_MIMD, clock ticks. */
  readonly sumMimdClocks: number;
  readonly histogram: HistogramColumns;
}

/** The reused columns {@link decodeFrameColumns} reads frames into (createFrameColumns). */
export interface FrameColumns {
  /** A GroupSamples frame's samples. */
  readonly samples: GroupSampleColumns;
  /** A LaunchSummary frame's histogram. */
  readonly histogram: HistogramColumns;
}

/** One sampled group: per-lane counts and finish clocks. */
export interface GroupSample {
  /** Group index within the launch (< groupCount). */
  readonly groupIndex: number;
  /** Group start clock c0, ticks (u64). */
  readonly startClock: bigint;
  /** Group end clock c_end (after the group synchronisation when sync is on), ticks (u64). */
  readonly endClock: bigint;
  /** Iteration count w_i per lane (u32), exactly groupSize entries. */
  readonly laneCounts: readonly number[];
  /** Finish clock c_i per lane, ticks (u64), exactly groupSize entries. */
  readonly laneFinishClocks: readonly bigint[];
}

/**
 * The sampled groups of a GroupSamples frame as the estimator reads them
 * ({@link decodeFrameColumns}): in columns, one value per group or per lane, with each
 * group's clocks as tick offsets from its start clock c0 (numbers, not u64 BigInts). Group g's
 * lane i is at index g·lanes + i of `laneCounts` and `laneFinishTicks`. An offset is exact when
 * both clocks are below 2^53 (a group lasts far fewer ticks); otherwise it is the Number of the
 * exact BigInt difference. The arrays may be longer than `groups` needs: a decoder given the
 * same columns for every frame reuses them (createFrameColumns).
 */
export interface GroupSampleColumns {
  /** Sampled groups held. */
  groups: number;
  /** Lanes per group (the frame's groupSize). */
  lanes: number;
  /** Group index within the launch (< groupCount), per group. */
  groupIndex: Float64Array;
  /** c_end − c0 per group, ticks. */
  durationTicks: Float64Array;
  /** Per group: 0 for a counts-only sample (every clock 0, SPEC.md "Counts-only frames"), 1 otherwise. */
  clocked: Uint8Array;
  /** Iteration count w_i (u32) of every group's lanes. */
  laneCounts: Float64Array;
  /** c_i − c0 of every group's lanes, ticks. */
  laneFinishTicks: Float64Array;
}

/** A GroupSamples frame whose samples are in columns with clock offsets ({@link GroupSampleColumns}). */
export interface GroupSamplesOffsetsFrame extends Omit<GroupSamplesFrame, 'groups'> {
  readonly samples: GroupSampleColumns;
}

/** A sampled subset of a launch's groups (frame type 2). A launch may emit several. */
export interface GroupSamplesFrame extends FrameIdentity {
  readonly type: 'group-samples';
  /** Groups in the launch (u64 ≤ 2^53−1). */
  readonly groupCount: number;
  /** How groups were chosen. */
  readonly selection: GroupSelection;
  /** About one group (block for `block`) in samplingStride is chosen (sampling rate = 1/samplingStride); 1..2^32−1. */
  readonly samplingStride: number;
  /** Selection `block` only: consecutive groups per sampled block, 1..65535 (absent otherwise). */
  readonly groupsPerBlock?: number;
  /** The sampled groups (0..4096 per frame). */
  readonly groups: readonly GroupSample[];
}

/** Any decoded frame; discriminate on `type`. */
export type Frame = LaunchSummaryFrame | GroupSamplesFrame;
