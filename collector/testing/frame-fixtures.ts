/**
 * Valid frames for collector tests and benchmarks (not part of index.ts): small, fully
 * deterministic GroupSamples and LaunchSummary frames whose content depends on their
 * sequence number, so a test can check every byte that arrives in Kafka.
 */
import { encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';

/** What distinguishes one fixture frame from another. */
export interface FixtureFrameSpec {
  readonly job: string;
  readonly kernel: string;
  /** frameSequence; also seeds the lane counts. */
  readonly sequence: number;
  /** Lanes per group (default 32). */
  readonly groupSize?: number;
  /** Sampled groups in a GroupSamples frame (default 4). */
  readonly groups?: number;
}

/**
 * A GroupSamples frame: `groups` sampled groups of `groupSize` lanes, lane counts
 * `(lane·7 + group·13 + sequence) mod 97`.
 *
 * @example encodeFrame(fixtureGroupSamples({ job: 'j', kernel: 'k', sequence: 0 }))
 */
export function fixtureGroupSamples(spec: FixtureFrameSpec): GroupSamplesFrame {
  const groupSize = spec.groupSize ?? 32;
  const groups = spec.groups ?? 4;
  return {
    type: 'group-samples',
    job: spec.job,
    kernel: spec.kernel,
    launchId: BigInt(spec.sequence),
    frameSequence: spec.sequence,
    source: 'cpu',
    groupSize,
    sync: false,
    device: { name: 'fixture-cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1_000_000_000 },
    startUnixNanos: 1_700_000_000_000_000_000n,
    endUnixNanos: 1_700_000_000_001_000_000n,
    groupCount: groups * 8,
    selection: 'stride',
    samplingStride: 8,
    groups: Array.from({ length: groups }, (_, g) => {
      const laneCounts = Array.from({ length: groupSize }, (_, lane) => (lane * 7 + g * 13 + spec.sequence) % 97);
      return {
        groupIndex: g * 8,
        startClock: 1000n * BigInt(g),
        endClock: 1000n * BigInt(g) + 500n,
        laneCounts,
        laneFinishClocks: laneCounts.map((count) => 1000n * BigInt(g) + BigInt(count * 5)),
      };
    }),
  };
}

/**
 * A LaunchSummary frame over `groups` groups of `groupSize` lanes with the same lane counts
 * as {@link fixtureGroupSamples}.
 *
 * @example encodeFrame(fixtureLaunchSummary({ job: 'j', kernel: 'k', sequence: 1 }))
 */
export function fixtureLaunchSummary(spec: FixtureFrameSpec): LaunchSummaryFrame {
  const samples = fixtureGroupSamples(spec);
  const all = samples.groups.flatMap((g) => g.laneCounts);
  let sumMax = 0;
  let sum = 0;
  let sumCountsLoss = 0;
  for (const g of samples.groups) {
    const max = Math.max(...g.laneCounts);
    const total = g.laneCounts.reduce((a, b) => a + b, 0);
    sumMax += max;
    sum += total;
    sumCountsLoss += total === 0 ? 1 : (samples.groupSize * max) / total;
  }
  return {
    type: 'launch-summary',
    job: samples.job,
    kernel: samples.kernel,
    launchId: samples.launchId,
    frameSequence: samples.frameSequence,
    source: samples.source,
    groupSize: samples.groupSize,
    sync: samples.sync,
    device: samples.device,
    startUnixNanos: samples.startUnixNanos,
    endUnixNanos: samples.endUnixNanos,
    groupCount: samples.groups.length,
    groupsCounted: samples.groups.length,
    sumSimtClocks: 1000n,
    sumMimdClocks: 900n,
    sumMeasuredLoss: sumCountsLoss,
    sumCountsLoss,
    sumMaxCounts: sumMax,
    sumCounts: sum,
    droppedSamples: 0,
    histogram: histogramOfCounts(all),
  };
}

/**
 * Encoded fixture frame: GroupSamples for even sequence numbers, LaunchSummary for odd ones.
 *
 * @example const bytes = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 3 });
 */
export function fixtureFrameBytes(spec: FixtureFrameSpec): Uint8Array {
  return encodeFrame(spec.sequence % 2 === 0 ? fixtureGroupSamples(spec) : fixtureLaunchSummary(spec));
}
