// decodeFrameColumns must accept exactly what decodeFrame accepts (summarize-frame.test.ts fuzzes
// both against each other with the same mutations) and read the same values: each GroupSamples
// sample's clocks as offsets from its start clock, here against the BigInt difference
// Number(c − c0) computed from the frame that was encoded, for clocks of every size (0, small,
// around 2^53, any u64); each LaunchSummary's histogram with its bins' ranges (histogramBinRange)
// and its clock sums as Number(sum), for sums of every size (the rounding above 2^53 included).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFrameColumns, decodeFrame, decodeFrameColumns, sampleGroupsOf } from './decode-frame.ts';
import { histogramBinRange } from './histogram-bins.ts';
import { encodeFrame } from './encode-frame.ts';
import { groupSamplesArbitrary, launchSummaryArbitrary } from './testing/frame-arbitraries.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';
import type { GroupSamplesFrame, HistogramColumns, LaunchSummaryFrame } from './types.ts';

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

/** launchSummaryArbitrary with its clock sums redrawn from `clock` (sums of every size). */
const summariesWithSums = launchSummaryArbitrary.chain((frame) =>
  fc.tuple(clock, clock).map(([simt, mimd]): LaunchSummaryFrame => ({ ...frame, sumSimtClocks: simt, sumMimdClocks: mimd })),
);

/** The entries held in histogram columns, one object each. */
function entriesOf(columns: HistogramColumns): { bin: number; low: number; high: number; count: number }[] {
  return Array.from({ length: columns.entries }, (_, k) => ({ bin: columns.bin[k]!, low: columns.low[k]!, high: columns.high[k]!, count: columns.count[k]! }));
}

describe('decodeFrameColumns', () => {
  it('gives every sample its lane counts and Number(c − c0) for each clock, clocked: false exactly for all-zero clocks', () => {
    fc.assert(
      fc.property(framesWithClocks, (frame) => {
        const decoded = decodeFrameColumns(encodeFrame(frame));
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
    const columns = createFrameColumns();
    fc.assert(
      fc.property(fc.array(fc.oneof(framesWithClocks, summariesWithSums), { minLength: 1, maxLength: 4 }), (frames) => {
        for (const frame of frames) {
          const bytes = encodeFrame(frame);
          const fresh = decodeFrameColumns(bytes);
          const reused = decodeFrameColumns(bytes, undefined, columns);
          if (fresh.type === 'group-samples' && reused.type === 'group-samples') {
            expect(reused.samples).toBe(columns.samples);
            expect(columns.samples.groups).toBe(frame.type === 'group-samples' ? frame.groups.length : -1);
            expect(sampleGroupsOf(columns.samples)).toEqual(sampleGroupsOf(fresh.samples));
          } else if (fresh.type === 'launch-summary' && reused.type === 'launch-summary') {
            expect(reused.histogram).toBe(columns.histogram);
            expect(entriesOf(reused.histogram)).toEqual(entriesOf(fresh.histogram));
            const { histogram: _reusedHistogram, ...restReused } = reused;
            const { histogram: _freshHistogram, ...restFresh } = fresh;
            expect(restReused).toEqual(restFresh);
          } else throw new Error(`decoded ${fresh.type} and ${reused.type} from the same bytes`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('reads a LaunchSummary as decodeFrame does: the same fields, Number(sum) for the clock sums, each entry with its bin range', () => {
    fc.assert(
      fc.property(summariesWithSums, (frame) => {
        const bytes = encodeFrame(frame);
        const decoded = decodeFrameColumns(bytes);
        const { histogram, sumSimtClocks, sumMimdClocks, ...rest } = decodeFrame(bytes) as LaunchSummaryFrame;
        if (decoded.type !== 'launch-summary') throw new Error('expected launch-summary');
        const { histogram: columns, sumSimtClocks: simt, sumMimdClocks: mimd, ...decodedRest } = decoded;
        expect(decodedRest).toEqual(rest);
        expect(Object.is(simt, Number(sumSimtClocks))).toBe(true);
        expect(Object.is(mimd, Number(sumMimdClocks))).toBe(true);
        expect(entriesOf(columns)).toEqual(histogram.map((entry) => ({ bin: entry.bin, ...histogramBinRange(entry.bin), count: entry.count })));
      }),
      { numRuns: 500 },
    );
  });

  it('rounds clock sums above 2^53 to the nearest double, ties to even, as Number(bigint) does', () => {
    // 2^53 + 1 and 2^54 + 2 lie halfway between two doubles (ties go to the even one); 2^53 + 3
    // rounds up; 2^64 − 1 rounds to 2^64.
    for (const sum of [TWO_53 - 1n, TWO_53, TWO_53 + 1n, TWO_53 + 3n, 2n ** 54n + 2n, 2n ** 54n + 6n, 2n ** 63n + 1025n, 2n ** 64n - 1n]) {
      const frame: LaunchSummaryFrame = { ...SAMPLE_LAUNCH_SUMMARY, sumSimtClocks: sum, sumMimdClocks: sum - 1n };
      const decoded = decodeFrameColumns(encodeFrame(frame));
      if (decoded.type !== 'launch-summary') throw new Error('expected launch-summary');
      expect([decoded.sumSimtClocks, decoded.sumMimdClocks]).toEqual([Number(sum), Number(sum - 1n)]);
    }
  });

  it('reads the spec sample frame: offsets 0 at c0, exact at a clock of 2^53 + 1 (the BigInt path)', () => {
    const frame: GroupSamplesFrame = {
      ...SAMPLE_GROUP_SAMPLES,
      groups: [{ ...SAMPLE_GROUP_SAMPLES.groups[0]!, startClock: TWO_53 - 1n, endClock: TWO_53 + 9n, laneFinishClocks: SAMPLE_GROUP_SAMPLES.groups[0]!.laneFinishClocks.map((_, i) => TWO_53 - 1n + BigInt(i)) }],
    };
    const decoded = decodeFrameColumns(encodeFrame(frame));
    if (decoded.type !== 'group-samples') throw new Error('expected group-samples');
    expect(decoded.samples.durationTicks[0]).toBe(10);
    expect(Array.from(decoded.samples.laneFinishTicks.subarray(0, frame.groupSize))).toEqual(frame.groups[0]!.laneFinishClocks.map((_, i) => i));
  });
});
