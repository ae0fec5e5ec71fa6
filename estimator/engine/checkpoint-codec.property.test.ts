import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StreamIdentity } from '../../contracts/index.ts';
import type { AlertState } from './alert-detector.ts';
import type { CusumState } from './change-detector.ts';
import { decodeStreamCheckpoint, encodeStreamCheckpoint, type StreamCheckpoint } from './checkpoint-codec.ts';
import type { CountHistogram } from './count-histogram.ts';
import { createWindowAccumulation, WINDOW_SUMS, type FrameIdentity, type StreamState, type WindowAccumulation } from './stream-state.ts';

/**
 * The checkpoint text is the JSON.stringify of the checkpoint object, byte for byte (a restore
 * and the compacted topic see the same records as before the encoder wrote its dedupe memory
 * itself). The reference below is the encoder as it was: everything through JSON.stringify.
 */
function referenceEncoding(checkpoint: StreamCheckpoint): string {
  const { state } = checkpoint;
  const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);
  const histogramToJson = (histogram: CountHistogram): unknown => ({ c: [...histogram.counts], h: [...histogram.highs], b: histogram.binned, t: histogram.total });
  return JSON.stringify({
    v: 2,
    identity: state.identity,
    appliedOffset: checkpoint.appliedOffset,
    windows: [...state.windows.values()].map((window) => ({
      ...window,
      histogram: histogramToJson(window.histogram),
      firstEventMillis: finiteOrNull(window.firstEventMillis),
      lastEventMillis: finiteOrNull(window.lastEventMillis),
    })),
    current: histogramToJson(state.current.histogram),
    recent: state.current.recent.map(histogramToJson),
    cumulative: histogramToJson(state.cumulative),
    cumulativeLaunches: state.cumulativeLaunches,
    cumulativeGroups: state.cumulativeGroups,
    dedupe: Array.from(state.dedupe, String),
    watermarkMillis: finiteOrNull(state.watermarkMillis),
    closedThroughMillis: finiteOrNull(state.closedThroughMillis),
    alerts: {
      lossMeasured: checkpoint.alerts.lossMeasured,
      lossPredicted: checkpoint.alerts.lossPredicted,
      drift: checkpoint.alerts.drift,
      lossThresholdArmed: checkpoint.alerts.lossThresholdArmed,
      driftThresholdArmed: checkpoint.alerts.driftThresholdArmed,
      staleRaised: checkpoint.alerts.staleRaised,
    },
  });
}

const TWO_53 = 2 ** 53;
/** Any double: NaN, ±∞, −0, subnormals, the largest. */
const anyDouble = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, Number.MAX_VALUE, Number.MIN_VALUE));
const count = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true }), anyDouble);
/** Labels and names with quotes, backslashes, control characters, lone surrogates, other scripts. */
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('', 'a"b', 'back\\slash', 'line\nbreak', '\u0000\u001f', '\ud800', 'ядро/κ', '"dedupe":[]'));

/**
 * Frame identities as the dedupe memory holds them (numbers below 2^53, BigInts from there),
 * with the edges of the two-part decimal: multiples of 10^9 and their neighbours, 2^53 − 1,
 * launchId · 2^32 + frameSequence.
 */
const identity: fc.Arbitrary<FrameIdentity> = fc.oneof(
  fc.integer({ min: 0, max: 2 ** 31 }),
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.tuple(fc.integer({ min: 1, max: Math.floor(Number.MAX_SAFE_INTEGER / 1e9) }), fc.integer({ min: -2, max: 2 })).map(([k, d]) => Math.min(Number.MAX_SAFE_INTEGER, k * 1e9 + d)),
  fc.tuple(fc.integer({ min: 0, max: 2 ** 21 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })).map(([launch, sequence]) => launch * 4294967296 + sequence),
  fc.constantFrom(0, 1, 999_999_999, 1e9, 1e9 + 1, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER - 1, TWO_53 - 1e9, TWO_53 - 1e9 - 1),
  fc.bigInt({ min: BigInt(TWO_53), max: (1n << 85n) - 1n }),
);

const histogram: fc.Arbitrary<CountHistogram> = fc
  .record({ counts: fc.array(fc.tuple(fc.nat(), count), { maxLength: 12 }), highs: fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 4 }), binned: fc.boolean(), total: count })
  .map(({ counts, highs, binned, total }) => ({ counts: new Map(counts), highs: new Map(highs), binned, total }));

const window: fc.Arbitrary<WindowAccumulation> = fc
  .record({
    startMillis: fc.integer({ min: 0, max: 2_000_000_000_000 }),
    histogram,
    sums: fc.array(count, { minLength: 9, maxLength: 9 }),
    firstEventMillis: anyDouble,
    lastEventMillis: anyDouble,
    overflowed: fc.option(fc.subarray([...WINDOW_SUMS], { minLength: 1 }), { nil: undefined }),
    sampleFrames: fc.nat(),
    samples: fc.option(fc.record({ groups: fc.nat(), sumLaneCounts: anyDouble, perGroup: fc.array(anyDouble, { maxLength: 3 }) }), { nil: undefined }),
  })
  .map(({ startMillis, histogram: h, sums, firstEventMillis, lastEventMillis, overflowed, sampleFrames, samples }) => {
    const w = createWindowAccumulation(startMillis, 1_000);
    const [launches, groups, units, sumLossCounts, sumLossMeasured, sumSimtClocks, sumMimdClocks, clockedGroups] = sums as number[];
    return {
      ...w,
      histogram: h,
      launches: launches!,
      groups: groups!,
      units: units!,
      sumLossCounts: sumLossCounts!,
      sumLossMeasured: sumLossMeasured!,
      sumSimtClocks: sumSimtClocks!,
      sumMimdClocks: sumMimdClocks!,
      clockedGroups: clockedGroups!,
      firstEventMillis,
      lastEventMillis,
      overflowed,
      sampleFrames,
      samples: samples as unknown as WindowAccumulation['samples'],
    };
  });

const cusum: fc.Arbitrary<CusumState> = fc
  .array(anyDouble, { minLength: 11, maxLength: 11 })
  .map(([warmupCount, warmupMean, warmupSquares, baselineMean, baselineSigma, upperSum, lowerSum, upperRunLength, upperRunSum, lowerRunLength, lowerRunSum]) => ({
    warmupCount: warmupCount!,
    warmupMean: warmupMean!,
    warmupSquares: warmupSquares!,
    baselineMean: baselineMean!,
    baselineSigma: baselineSigma!,
    upperSum: upperSum!,
    lowerSum: lowerSum!,
    upperRunLength: upperRunLength!,
    upperRunSum: upperRunSum!,
    lowerRunLength: lowerRunLength!,
    lowerRunSum: lowerRunSum!,
  }));

const alerts: fc.Arbitrary<AlertState> = fc
  .record({ lossMeasured: cusum, lossPredicted: cusum, drift: cusum, lossThresholdArmed: fc.boolean(), driftThresholdArmed: fc.boolean(), staleRaised: fc.option(fc.boolean(), { nil: undefined }) })
  .map((a) => a as AlertState);

const streamIdentity: fc.Arbitrary<StreamIdentity> = fc.record({
  stream: text,
  job: text,
  kernel: text,
  groupSize: fc.integer({ min: 1, max: 1024 }),
  source: fc.constantFrom('cuda' as const, 'cpu' as const),
  device: text,
  deviceUuid: text,
  host: text,
  labels: fc.dictionary(text, text, { maxKeys: 4 }),
});

const checkpoint: fc.Arbitrary<StreamCheckpoint> = fc
  .record({
    identity: streamIdentity,
    windows: fc.array(window, { maxLength: 3 }),
    current: histogram,
    recent: fc.array(histogram, { maxLength: 3 }),
    cumulative: histogram,
    cumulativeLaunches: count,
    cumulativeGroups: count,
    dedupe: fc.array(identity, { maxLength: 60 }),
    watermarkMillis: anyDouble,
    closedThroughMillis: anyDouble,
    alerts,
    appliedOffset: fc.bigInt({ min: 0n, max: (1n << 63n) - 1n }).map(String),
  })
  .map((c) => {
    const state: StreamState = {
      key: 'k',
      identity: c.identity,
      windows: new Map(c.windows.map((w) => [w.startMillis, w])),
      current: { histogram: c.current, recent: c.recent },
      cumulative: c.cumulative,
      cumulativeLaunches: c.cumulativeLaunches,
      cumulativeGroups: c.cumulativeGroups,
      dedupe: new Set(c.dedupe),
      watermarkMillis: c.watermarkMillis,
      closedThroughMillis: c.closedThroughMillis,
      lastRecordWallMillis: 0,
    };
    return { state, alerts: c.alerts, appliedOffset: c.appliedOffset };
  });

describe('checkpoint encoding (property)', () => {
  it('is the JSON.stringify text of the checkpoint object, byte for byte, for any stream state', () => {
    fc.assert(
      fc.property(checkpoint, (c) => {
        expect(encodeStreamCheckpoint(c)).toBe(referenceEncoding(c));
      }),
      { numRuns: 2_000 },
    );
  });

  it('also for a state decoded from a checkpoint (its windows have the members in another order) and changed after', () => {
    fc.assert(
      fc.property(checkpoint, identity, (c, next) => {
        const restored = decodeStreamCheckpoint(encodeStreamCheckpoint(c), 'k', 0);
        for (const w of restored.state.windows.values()) w.overflowed = ['units'];
        restored.state.dedupe.add(next);
        expect(encodeStreamCheckpoint(restored)).toBe(referenceEncoding(restored));
      }),
      { numRuns: 500 },
    );
  });

  it('writes every dedupe identity as its decimal text, at the edges of the two-part form', () => {
    const edges: FrameIdentity[] = [0, 1, 999_999_999, 1e9, 1e9 + 1, 2 * 1e9 - 1, Number.MAX_SAFE_INTEGER, TWO_53 - 1e9 - 1, 2n ** 53n, 2n ** 64n + 7n];
    for (let k = 1; k <= Math.floor(Number.MAX_SAFE_INTEGER / 1e9); k += 997) edges.push(k * 1e9 - 1, k * 1e9, k * 1e9 + 1);
    const c = fc.sample(checkpoint, { numRuns: 1, seed: 7 })[0]!;
    const state = { ...c.state, dedupe: new Set(edges) };
    const json = JSON.parse(encodeStreamCheckpoint({ ...c, state })) as { dedupe: string[] };
    // Against BigInt's decimal text (exact for every integer): independent of String(number).
    expect(json.dedupe).toEqual([...state.dedupe].map((e) => BigInt(e).toString()));
    expect(json.dedupe.length).toBeGreaterThan(20_000);
  });
});
