/**
 * fast-check generators of valid frames, for property tests here and in other folders
 * (import directly: not part of index.ts, since fast-check is a dev dependency).
 */
import fc from 'fast-check';
import { identityCharactersProblem } from '../../contracts/index.ts';
import { HISTOGRAM_BIN_COUNT, MAX_COUNT, MAX_GROUP_SIZE, MAX_STRING_BYTES } from '../limits.ts';
import type { DeviceInfo, FrameIdentity, GroupSamplesFrame, LaunchSummaryFrame, Frame, GroupSample } from '../types.ts';

const encoder = new TextEncoder();
const U64_MAX = (1n << 64n) - 1n;

function frameString(minBytes: number, forbidSlash: boolean): fc.Arbitrary<string> {
  return fc
    .oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 255 }), fc.string({ unit: 'grapheme-ascii', maxLength: 20 }))
    .filter((s) => {
      const n = encoder.encode(s).length;
      // The identity rule of contracts/stream-identity.ts: no control characters, no backslash before `,` `=` space or the end.
      return n >= minBytes && n <= MAX_STRING_BYTES && !(forbidSlash && s.includes('/')) && identityCharactersProblem(s) === undefined;
    });
}

const u64 = fc.bigInt({ min: 0n, max: U64_MAX });
const count = fc.oneof(fc.nat({ max: 1000 }), fc.maxSafeNat());
const lossSum = fc.oneof(fc.double({ min: 0, max: 1e12, noNaN: true }), fc.constant(0));

const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => {
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
});

const device: fc.Arbitrary<DeviceInfo> = fc.record({
  name: frameString(0, false),
  uuid,
  computeCapability: fc.record({ major: fc.integer({ min: 0, max: 255 }), minor: fc.integer({ min: 0, max: 255 }) }),
  clockHz: fc.integer({ min: 1, max: MAX_COUNT }),
});

/** Identity fields of a valid frame with a given group size. */
export function frameIdentityArbitrary(groupSize: number): fc.Arbitrary<FrameIdentity> {
  return fc.record({
    job: frameString(1, true),
    kernel: frameString(1, false),
    launchId: u64,
    frameSequence: fc.nat({ max: 0xffffffff }),
    source: fc.constantFrom('cuda' as const, 'cpu' as const),
    groupSize: fc.constant(groupSize),
    sync: fc.boolean(),
    device,
    startUnixNanos: u64,
    endUnixNanos: u64,
  });
}

const groupSize = fc.integer({ min: 1, max: MAX_GROUP_SIZE });

/** A valid LaunchSummary: sparse histogram with strictly increasing bins whose counts sum to groupsCounted·n. */
export const launchSummaryArbitrary: fc.Arbitrary<LaunchSummaryFrame> = groupSize.chain((n) =>
  fc
    .record({
      identity: frameIdentityArbitrary(n),
      bins: fc.uniqueArray(fc.nat({ max: HISTOGRAM_BIN_COUNT - 1 }), { maxLength: 40 }),
      counts: fc.array(fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 2 ** 40 })), { minLength: 40, maxLength: 40 }),
      extraGroups: fc.oneof(fc.constant(0), fc.nat({ max: 1000 })),
      sumSimtClocks: u64,
      sumMimdClocks: u64,
      sumMeasuredLoss: lossSum,
      sumCountsLoss: lossSum,
      sumMaxCounts: count,
      sumCounts: count,
      droppedSamples: count,
    })
    .map(({ identity, bins, counts, extraGroups, ...sums }) => {
      const sorted = [...bins].sort((a, b) => a - b);
      const histogram = sorted.map((bin, i) => ({ bin, count: counts[i]! }));
      const total = histogram.reduce((s, e) => s + e.count, 0);
      const pad = (n - (total % n)) % n;
      if (histogram.length > 0) histogram[histogram.length - 1] = { bin: sorted[sorted.length - 1]!, count: histogram[histogram.length - 1]!.count + pad };
      const groupsCounted = (total + (histogram.length > 0 ? pad : 0)) / n;
      return { type: 'launch-summary' as const, ...identity, groupCount: groupsCounted + extraGroups, groupsCounted, ...sums, histogram };
    }),
);

/** A valid GroupSamples frame with up to 6 sampled groups. */
export const groupSamplesArbitrary: fc.Arbitrary<GroupSamplesFrame> = groupSize.chain((n) =>
  fc
    .record({
      identity: frameIdentityArbitrary(n),
      groupCount: fc.oneof(fc.integer({ min: 1, max: 1 << 20 }), fc.integer({ min: 1, max: MAX_COUNT })),
      selection: fc.constantFrom('stride' as const, 'hash' as const, 'block' as const),
      groupsPerBlock: fc.integer({ min: 1, max: 0xffff }),
      samplingStride: fc.integer({ min: 1, max: 0xffffffff }),
      groups: fc.array(
        fc.record({
          indexFraction: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
          startClock: u64,
          endClock: u64,
          laneCounts: fc.array(fc.nat({ max: 0xffffffff }), { minLength: n, maxLength: n }),
          laneFinishClocks: fc.array(u64, { minLength: n, maxLength: n }),
        }),
        { maxLength: 6 },
      ),
    })
    .map(({ identity, groupCount, selection, groupsPerBlock, samplingStride, groups }) => ({
      type: 'group-samples' as const,
      ...identity,
      groupCount,
      selection,
      samplingStride,
      ...(selection === 'block' ? { groupsPerBlock } : {}),
      groups: groups.map(
        ({ indexFraction, ...g }): GroupSample => ({ groupIndex: Math.min(groupCount - 1, Math.floor(indexFraction * groupCount)), ...g }),
      ),
    })),
);

/** Any valid frame. */
export const frameArbitrary: fc.Arbitrary<Frame> = fc.oneof(launchSummaryArbitrary, groupSamplesArbitrary);
