import { histogramBinRange, sampleGroupsOf, type FrameIdentity, type GroupSample, type GroupSamplesFrame, type GroupSamplesOffsetsFrame, type LaunchSummaryColumnsFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import type { SampledGroupInput } from '../../model/index.ts';
import { binColumnsWithRoom, type LaunchBinColumns, type LaunchObservation, type ObservationIdentity, type SamplesObservation, type WritableLaunchBinColumns } from './launch-observation.ts';

/**
 * Maps a decoded LaunchSummary frame to what the window state records. The event time is
 * the launch end (host clock), in milliseconds; clock sums become numbers (exact below
 * 2^53 ticks, far beyond any window's sum at GHz rates for hours, and only used in ratios).
 * Histogram bins become [low, high] ranges so that device-side binning feeds the
 * binning error bound.
 *
 * @throws RangeError when a histogram bin is out of range (histogramBinRange).
 * @example
 * const observation = observationFromFrame(frame as LaunchSummaryFrame);
 */
export function observationFromFrame(frame: LaunchSummaryFrame): LaunchObservation {
  const weight = summaryWeight(frame);
  const bins = frame.histogram.map((entry) => {
    const range = histogramBinRange(entry.bin);
    return { low: range.low, high: range.high, count: entry.count * weight };
  });
  return launchObservationOf(frame, bins, Number(frame.sumSimtClocks), Number(frame.sumMimdClocks), weight);
}

/**
 * As {@link observationFromFrame}, for a frame decoded by `decodeFrameColumns` (the engine's
 * path): the same observation, its bins in columns. With weight 1 they are the frame's own
 * histogram columns; otherwise the weighted counts are written into `into`. Either way they are
 * reused by the next frame decoded or mapped: the observation is used before that, not kept.
 *
 * @param into - columns for weighted bins (createLaunchBinColumns, launch-observation.ts), reused by every call given them.
 * @param attribution - the host and labels of the collector that forwarded the frame (its Kafka
 *   headers), set on the observation; absent = none.
 * @example
 * const observation = observationFromColumns(decodeFrameColumns(bytes) as LaunchSummaryColumnsFrame, createLaunchBinColumns());
 */
export function observationFromColumns(frame: LaunchSummaryColumnsFrame, into: WritableLaunchBinColumns, attribution?: Pick<ObservationIdentity, 'host' | 'labels'>): LaunchObservation {
  const weight = summaryWeight(frame);
  const histogram = frame.histogram;
  let bins: LaunchBinColumns = histogram;
  if (weight !== 1) {
    const weighted = binColumnsWithRoom(into, histogram.entries);
    for (let k = 0; k < histogram.entries; k++) {
      weighted.low[k] = histogram.low[k]!;
      weighted.high[k] = histogram.high[k]!;
      weighted.count[k] = histogram.count[k]! * weight;
    }
    bins = weighted;
  }
  return launchObservationOf(frame, bins, frame.sumSimtClocks, frame.sumMimdClocks, weight, attribution);
}

/** The observation of a LaunchSummary: its identity, its (weighted) bins, and its sums times the weight. */
function launchObservationOf(
  frame: FrameIdentity & Pick<LaunchSummaryFrame, 'groupsCounted' | 'sumCountsLoss' | 'sumMeasuredLoss'>,
  bins: LaunchObservation['bins'],
  simtClocks: number,
  mimdClocks: number,
  weight: number,
  attribution?: Pick<ObservationIdentity, 'host' | 'labels'>,
): LaunchObservation {
  // A recorder that samples launches (1 in K, or a per-second budget) counts the groups of the
  // launches it left out in groupCount (SPEC.md, docs/kernels.md): the summary stands for
  // groupCount / groupsCounted times its groups. Its histogram and sums are weighted by that,
  // so launches sampled at different rates enter a window in proportion to the work they stand for.
  // One literal with every field, in identityOfFrame's order, the attribution's too (undefined
  // without one, as the interface allows): a spread into a literal makes a dictionary-mode object
  // (~1 KB per frame), and fields assigned afterwards take a second allocation for the properties
  // that do not fit in the object (docs/estimator.md, Performance).
  return {
    job: frame.job,
    kernel: frame.kernel,
    device: frame.device.name,
    deviceUuid: frame.device.uuid,
    groupSize: frame.groupSize,
    source: frame.source,
    launchId: frame.launchId,
    frameSequence: frame.frameSequence,
    eventTimeMillis: eventTimeMillisOf(frame),
    bins,
    groups: frame.groupsCounted * weight,
    sumLossCounts: frame.sumCountsLoss * weight,
    sumLossMeasured: frame.sumMeasuredLoss * weight,
    sumSimtClocks: simtClocks * weight,
    sumMimdClocks: mimdClocks * weight,
    host: attribution?.host,
    labels: attribution?.labels,
  };
}

/**
 * The weight of a LaunchSummary: groupCount / groupsCounted (≥ 1; 1 when every group of the
 * launch was counted, or none was).
 *
 * @example summaryWeight({ groupCount: 3000, groupsCounted: 1000 }) // 3
 */
export function summaryWeight(frame: Pick<LaunchSummaryFrame, 'groupCount' | 'groupsCounted'>): number {
  return frame.groupsCounted > 0 && frame.groupCount > frame.groupsCounted ? frame.groupCount / frame.groupsCounted : 1;
}

/**
 * Maps a decoded GroupSamples frame to a SamplesObservation: same stream, frame identity and
 * event time (launch end) as its launch's summary; each group's clocks become offsets from
 * its start clock c0 (exact as numbers: a group lasts far fewer than 2^53 ticks).
 *
 * @example
 * const samples = samplesObservationFromFrame(frame as GroupSamplesFrame);
 */
export function samplesObservationFromFrame(frame: GroupSamplesFrame): SamplesObservation & { readonly groups: readonly SampledGroupInput[] } {
  const blocks = frame.selection === 'block' && frame.groupsPerBlock !== undefined ? blockRunsOf(frame, frame.groupsPerBlock) : undefined;
  return { kind: 'samples', ...identityOfFrame(frame), groups: frame.groups.map(sampledGroupInputOf), ...(blocks === undefined ? {} : { blocks }) };
}

/**
 * As {@link samplesObservationFromFrame}, for a frame decoded by `decodeFrameColumns`
 * (the engine's path): its sample columns already carry the clock offsets, so they are the
 * groups (the same columns, not a copy: the observation is as short-lived as they are).
 *
 * @example
 * const samples = samplesObservationFromOffsets(decodeFrameColumns(bytes) as GroupSamplesOffsetsFrame);
 */
export function samplesObservationFromOffsets(frame: GroupSamplesOffsetsFrame): SamplesObservation {
  const blocks =
    frame.selection === 'block' && frame.groupsPerBlock !== undefined
      ? blockRunsOf({ groupCount: frame.groupCount, groups: sampleGroupsOf(frame.samples) }, frame.groupsPerBlock)
      : undefined;
  return { kind: 'samples', ...identityOfFrame(frame), groups: frame.samples, ...(blocks === undefined ? {} : { blocks }) };
}

/**
 * The complete blocks of a block-selection frame as runs of unit counts: the samples of block
 * b = ⌊groupIndex / groupsPerBlock⌋, sorted by groupIndex, lane counts concatenated. A block is
 * complete when it holds all min(groupsPerBlock, groupCount − b·groupsPerBlock) of its groups
 * once; incomplete blocks (split across frames, or cut by a full sample buffer) are left out.
 *
 * @example blockRunsOf({ ...frame, groupCount: 4, groups: [g0, g1, g3] }, 2) // [[...g0.laneCounts, ...g1.laneCounts]]
 */
export function blockRunsOf<G extends Pick<GroupSample, 'groupIndex' | 'laneCounts'>>(frame: { readonly groupCount: number; readonly groups: readonly G[] }, groupsPerBlock: number): number[][] {
  const byBlock = new Map<number, G[]>();
  for (const group of frame.groups) {
    const block = Math.floor(group.groupIndex / groupsPerBlock);
    const members = byBlock.get(block);
    if (members === undefined) byBlock.set(block, [group]);
    else members.push(group);
  }
  const runs: number[][] = [];
  for (const [block, members] of [...byBlock].sort((a, b) => a[0] - b[0])) {
    const expected = Math.min(groupsPerBlock, frame.groupCount - block * groupsPerBlock);
    members.sort((a, b) => a.groupIndex - b.groupIndex);
    const distinct = members.every((g, k) => k === 0 || g.groupIndex !== members[k - 1]!.groupIndex);
    if (members.length !== expected || !distinct) continue;
    runs.push(members.flatMap((g) => g.laneCounts));
  }
  return runs;
}

/**
 * One sampled group with its clocks as offsets from its start clock c0 (exact as numbers: a
 * group lasts far fewer than 2^53 ticks).
 *
 * @example recordSampledGroup(samples, sampledGroupInputOf(frame.groups[0]));
 */
export function sampledGroupInputOf(group: GroupSample): SampledGroupInput {
  const start = group.startClock;
  const clocks = group.laneFinishClocks;
  const n = clocks.length;
  const laneFinishTicks = new Array<number>(n);
  // Clocks up to 2^53 − 1 are exact as numbers, and so is the difference of two of them: one
  // Number per clock instead of a BigInt difference per lane (docs/estimator.md, "The engine's
  // hot path"); larger clocks take the BigInt difference. The same values either way.
  // Number(x) rounds monotonically and 2^53 is a double, so Number(x) ≤ 2^53 − 1 exactly when
  // x ≤ 2^53 − 1: one conversion per clock, no BigInt comparison.
  const startTicks = Number(start);
  const startIsSafe = startTicks <= Number.MAX_SAFE_INTEGER;
  let allZero = startTicks === 0;
  for (let i = 0; i < n; i++) {
    const clock = clocks[i]!;
    const clockTicks = Number(clock);
    laneFinishTicks[i] = startIsSafe && clockTicks <= Number.MAX_SAFE_INTEGER ? clockTicks - startTicks : Number(clock - start);
    if (clockTicks !== 0) allZero = false;
  }
  const end = group.endClock;
  const endTicks = Number(end);
  return {
    laneCounts: group.laneCounts,
    laneFinishTicks,
    durationTicks: startIsSafe && endTicks <= Number.MAX_SAFE_INTEGER ? endTicks - startTicks : Number(end - start),
    // The counts-only mark (protocol/SPEC.md): every clock 0, so none was measured.
    ...(allZero && endTicks === 0 ? { clocked: false } : {}),
  };
}

/** Stream and frame identity of a frame; the event time is the launch end (host clock), ms. */
function identityOfFrame(frame: FrameIdentity): ObservationIdentity {
  return {
    job: frame.job,
    kernel: frame.kernel,
    device: frame.device.name,
    deviceUuid: frame.device.uuid,
    groupSize: frame.groupSize,
    source: frame.source,
    launchId: frame.launchId,
    frameSequence: frame.frameSequence,
    eventTimeMillis: eventTimeMillisOf(frame),
  };
}

/** The event time of a frame: its launch end (host clock), whole milliseconds since the Unix epoch. */
function eventTimeMillisOf(frame: FrameIdentity): number {
  return Number(frame.endUnixNanos / 1_000_000n);
}
