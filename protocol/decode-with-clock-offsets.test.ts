// decodeFrameWithClockOffsets must accept exactly what decodeFrame accepts (summarize-frame.test.ts
// fuzzes both against each other with the same mutations) and give each GroupSamples sample's
// clocks as offsets from its start clock: here against the BigInt difference Number(c − c0),
// computed from the frame that was encoded, for clocks of every size (0, small, around 2^53, any u64).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createGroupSampleColumns, decodeFrame, decodeFrameWithClockOffsets, sampleGroupsOf } from './decode-frame.ts';
import { encodeFrame } from './encode-frame.ts';
import { groupSamplesArbitrary, launchSummaryArbitrary } from './testing/frame-arbitraries.ts';
import { SAMPLE_GROUP_SAMPLES } from './sample-frames.ts';
import type { GroupSamplesFrame } from './types.ts';

const TWO_53 = 2n ** 53n;
/** Clocks where the offsets' two paths meet: zero, small, the 2^53 boundary, anything. */
const clock = fc.oneof(
  fc.constant(0n),
  fc.bigInt({ min: 0n, max: 2n ** 40n }),
  fc.bigInt({ min: TWO_53 - 4n, max: TWO_53 + 4n }),
  fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
);

/** groupSamplesArbitrary with its clocks redrawn from `clock` (a counts-only sample now and then). */
const framesWithClocks = groupSamplesArbitrary.chain((frame) =>
  fc
    .array(fc.record({ start: clock, end: clock, lanes: fc.array(clock, { minLength: frame.groupSize, maxLength: frame.groupSize }), countsOnly: fc.boolean() }), {
      minLength: frame.groups.length,
      maxLength: frame.groups.length,
    })
    .map(
      (clocks): GroupSamplesFrame => ({
        ...frame,
        groups: frame.groups.map((g, k) => {
          const c = clocks[k]!;
          return c.countsOnly
            ? { ...g, startClock: 0n, endClock: 0n, laneFinishClocks: g.laneFinishClocks.map(() => 0n) }
            : { ...g, startClock: c.start, endClock: c.end, laneFinishClocks: c.lanes };
        }),
      }),
    ),
);

describe('decodeFrameWithClockOffsets', () => {
  it('gives every sample its lane counts and Number(c − c0) for each clock, clocked: false exactly for all-zero clocks', () => {
    fc.assert(
      fc.property(framesWithClocks, (frame) => {
        const decoded = decodeFrameWithClockOffsets(encodeFrame(frame));
        const { groups, ...rest } = decodeFrame(encodeFrame(frame)) as GroupSamplesFrame;
        expect(decoded.type).toBe('group-samples');
        if (decoded.type !== 'group-samples') return;
        const { samples, ...decodedRest } = decoded;
        expect(decodedRest).toEqual(rest);
        expect(samples.lanes).toBe(frame.groupSize);
        expect(sampleGroupsOf(samples)).toEqual(
          groups.map((g) => {
            const zero = g.startClock === 0n && g.endClock === 0n && g.laneFinishClocks.every((c) => c === 0n);
            return {
              groupIndex: g.groupIndex,
              laneCounts: g.laneCounts,
              laneFinishTicks: g.laneFinishClocks.map((c) => Number(c - g.startClock)),
              durationTicks: Number(g.endClock - g.startClock),
              ...(zero ? { clocked: false } : {}),
            };
          }),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('reads into the same columns frame after frame (growing them, and leaving stale lanes past the end) exactly what new columns hold', () => {
    const columns = createGroupSampleColumns();
    fc.assert(
      fc.property(framesWithClocks, (frame) => {
        const bytes = encodeFrame(frame);
        const fresh = decodeFrameWithClockOffsets(bytes);
        const reused = decodeFrameWithClockOffsets(bytes, undefined, columns);
        if (fresh.type !== 'group-samples' || reused.type !== 'group-samples') throw new Error('expected group-samples');
        expect(reused.samples).toBe(columns);
        expect(columns.groups).toBe(frame.groups.length);
        expect(sampleGroupsOf(columns)).toEqual(sampleGroupsOf(fresh.samples));
      }),
      { numRuns: 300 },
    );
  });

  it('decodes a LaunchSummary frame exactly as decodeFrame', () => {
    fc.assert(
      fc.property(launchSummaryArbitrary, (frame) => {
        expect(decodeFrameWithClockOffsets(encodeFrame(frame))).toEqual(decodeFrame(encodeFrame(frame)));
      }),
      { numRuns: 200 },
    );
  });

  it('reads the spec sample frame: offsets 0 at c0, exact at a clock of 2^53 + 1 (the BigInt path)', () => {
    const frame: GroupSamplesFrame = {
      ...SAMPLE_GROUP_SAMPLES,
      groups: [{ ...SAMPLE_GROUP_SAMPLES.groups[0]!, startClock: TWO_53 - 1n, endClock: TWO_53 + 9n, laneFinishClocks: SAMPLE_GROUP_SAMPLES.groups[0]!.laneFinishClocks.map((_, i) => TWO_53 - 1n + BigInt(i)) }],
    };
    const decoded = decodeFrameWithClockOffsets(encodeFrame(frame));
    if (decoded.type !== 'group-samples') throw new Error('expected group-samples');
    expect(decoded.samples.durationTicks[0]).toBe(10);
    expect(Array.from(decoded.samples.laneFinishTicks.subarray(0, frame.groupSize))).toEqual(frame.groups[0]!.laneFinishClocks.map((_, i) => i));
  });
});
