import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SampledGroupInput } from '../../model/index.ts';
import { decodeFrame, decodeFrameColumns, encodeFrame, sampleGroupsOf, type GroupSample, type GroupSampleColumns, type GroupSamplesFrame, type GroupSamplesOffsetsFrame, type LaunchSummaryColumnsFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { groupSamplesArbitrary, launchSummaryArbitrary } from '../../protocol/testing/frame-arbitraries.ts';
import { observationFromColumns, observationFromFrame, sampledGroupInputOf, samplesObservationFromFrame, samplesObservationFromOffsets } from './frame-observation.ts';
import { binColumnsOf, binColumnsWithRoom, createLaunchBinColumns, type LaunchBinColumns, type LaunchObservation } from './launch-observation.ts';

/** The definition: every clock an offset from c0, taken as a BigInt difference. */
function reference(group: GroupSample): { laneFinishTicks: number[]; durationTicks: number } {
  return {
    laneFinishTicks: group.laneFinishClocks.map((clock) => Number(clock - group.startClock)),
    durationTicks: Number(group.endClock - group.startClock),
  };
}

describe('sampledGroupInputOf', () => {
  const safe = BigInt(Number.MAX_SAFE_INTEGER);
  const u64Max = (1n << 64n) - 1n;
  const cases: [string, bigint, bigint, bigint[]][] = [
    ['small clocks', 1_000_000n, 1_005_000n, [1_000_000n, 1_000_050n, 1_004_999n]],
    ['clocks at 2^53 − 1', safe - 10n, safe, [safe - 10n, safe - 1n, safe]],
    ['finish clocks beyond 2^53 (start below)', safe - 3n, safe + 1000n, [safe - 2n, safe + 1n, safe + 999n]],
    ['every clock beyond 2^53', u64Max - 5000n, u64Max, [u64Max - 4999n, u64Max - 1n, u64Max]],
    ['a finish clock before c0 (negative offset, counted invalid later)', 5_000n, 6_000n, [4_000n, 5_500n, 0n]],
    ['a finish clock before a c0 beyond 2^53', safe + 7n, safe + 9n, [safe + 1n, 3n, safe + 8n]],
  ];
  it.each(cases)('gives the offsets of the BigInt differences exactly: %s', (_, startClock, endClock, laneFinishClocks) => {
    const group: GroupSample = { groupIndex: 0, startClock, endClock, laneCounts: laneFinishClocks.map(() => 1), laneFinishClocks };
    const input = sampledGroupInputOf(group);
    const expected = reference(group);
    expect(input.laneFinishTicks.length).toBe(expected.laneFinishTicks.length);
    input.laneFinishTicks.forEach((ticks, i) => expect(Object.is(ticks, expected.laneFinishTicks[i]), `lane ${i}: ${ticks} vs ${expected.laneFinishTicks[i]}`).toBe(true));
    expect(Object.is(input.durationTicks, expected.durationTicks)).toBe(true);
    expect(input.clocked).toBeUndefined();
    expect(input.laneCounts).toBe(group.laneCounts);
  });

  it('marks a group whose clocks are all 0 as counts-only, and only that one', () => {
    const zeros: GroupSample = { groupIndex: 0, startClock: 0n, endClock: 0n, laneCounts: [3, 1], laneFinishClocks: [0n, 0n] };
    expect(sampledGroupInputOf(zeros)).toEqual({ laneCounts: [3, 1], laneFinishTicks: [0, 0], durationTicks: 0, clocked: false });
    expect(sampledGroupInputOf({ ...zeros, laneFinishClocks: [0n, 1n] }).clocked).toBeUndefined();
    expect(sampledGroupInputOf({ ...zeros, endClock: 1n }).clocked).toBeUndefined();
    expect(sampledGroupInputOf({ ...zeros, startClock: 1n, endClock: 1n, laneFinishClocks: [1n, 1n] }).clocked).toBeUndefined();
  });
});

describe('samplesObservationFromOffsets (the engine path) against samplesObservationFromFrame', () => {
  it('gives the same observation for any valid GroupSamples frame (its groups in columns)', () => {
    fc.assert(
      fc.property(groupSamplesArbitrary, (frame) => {
        const bytes = encodeFrame(frame);
        const viaBigInts = samplesObservationFromFrame(decodeFrame(bytes) as GroupSamplesFrame);
        const viaOffsets = samplesObservationFromOffsets(decodeFrameColumns(bytes) as GroupSamplesOffsetsFrame);
        const groups: SampledGroupInput[] = sampleGroupsOf(viaOffsets.groups as GroupSampleColumns).map(({ groupIndex: _, ...rest }) => rest);
        expect({ ...viaOffsets, groups }).toEqual(viaBigInts);
      }),
      { numRuns: 300 },
    );
  });
});

/** Bins in columns as one object per bin. */
function binObjects(bins: LaunchBinColumns): { low: number; high: number; count: number }[] {
  return Array.from({ length: bins.entries }, (_, k) => ({ low: bins.low[k]!, high: bins.high[k]!, count: bins.count[k]! }));
}

/** launchSummaryArbitrary with groupCount raised now and then, so that the summary stands for more groups than it counted (weight ≠ 1). */
const weightedSummaries = launchSummaryArbitrary.chain((frame) =>
  fc.oneof(fc.constant(frame), fc.integer({ min: 1, max: 10_000 }).map((extra): LaunchSummaryFrame => ({ ...frame, groupCount: frame.groupCount + extra })), fc.constant({ ...frame, sumSimtClocks: 2n ** 64n - 1n, sumMimdClocks: 2n ** 53n + 1n })),
);

describe('observationFromColumns (the engine path) against observationFromFrame', () => {
  it('gives the same observation for any valid LaunchSummary frame, bit for bit (its bins in columns)', () => {
    const into = createLaunchBinColumns();
    let weighted = 0;
    fc.assert(
      fc.property(weightedSummaries, (frame) => {
        const bytes = encodeFrame(frame);
        const expected = observationFromFrame(decodeFrame(bytes) as LaunchSummaryFrame);
        const decoded = decodeFrameColumns(bytes) as LaunchSummaryColumnsFrame;
        const observation = observationFromColumns(decoded, into);
        if (frame.groupCount > frame.groupsCounted && frame.groupsCounted > 0) {
          weighted += 1;
          expect(observation.bins).toBe(into);
        } else {
          expect(observation.bins).toBe(decoded.histogram);
        }
        // toEqual compares numbers with Object.is: the same bits (−0 and 0 differ).
        expect({ ...observation, bins: binObjects(observation.bins as LaunchBinColumns) }).toEqual(expected);
      }),
      { numRuns: 400 },
    );
    expect(weighted).toBeGreaterThan(50);
  });

  it('sets the attribution given (the host and labels of the collector) in the same observation', () => {
    const into = createLaunchBinColumns();
    const attribution = { host: 'node7', labels: { pod: 'trainer-0' } };
    fc.assert(
      fc.property(weightedSummaries, (frame) => {
        const bytes = encodeFrame(frame);
        const observation = observationFromColumns(decodeFrameColumns(bytes) as LaunchSummaryColumnsFrame, into, attribution);
        expect({ ...observation, bins: binObjects(observation.bins as LaunchBinColumns) }).toEqual({ ...observationFromFrame(decodeFrame(bytes) as LaunchSummaryFrame), ...attribution });
        expect(observation.labels).toBe(attribution.labels);
      }),
      { numRuns: 100 },
    );
  });
});

describe('binColumnsOf', () => {
  it('returns columns as they are and copies objects into columns (growing its scratch)', () => {
    const columns = { entries: 1, low: new Float64Array([3]), high: new Float64Array([3]), count: new Float64Array([8]) };
    expect(binColumnsOf(columns)).toBe(columns);
    const many = Array.from({ length: 40 }, (_, k) => ({ low: 2 * k, high: 2 * k + 1, count: k + 0.5 }));
    expect(binObjects(binColumnsOf(many))).toEqual(many);
    const few: LaunchObservation['bins'] = [{ low: 1, high: 1, count: 2 }];
    expect(binObjects(binColumnsOf(few))).toEqual(few);
  });

  it('binColumnsWithRoom grows columns to at least n (doubling) and keeps them while they have room', () => {
    const columns = binColumnsWithRoom(createLaunchBinColumns(), 3);
    expect([columns.entries, columns.low.length, columns.high.length, columns.count.length]).toEqual([3, 3, 3, 3]);
    const low = columns.low;
    expect(binColumnsWithRoom(columns, 2).low).toBe(low);
    expect(binColumnsWithRoom(columns, 4).count.length).toBe(6);
    expect(columns.entries).toBe(4);
  });
});
