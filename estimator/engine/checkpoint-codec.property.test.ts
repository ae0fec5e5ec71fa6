import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StreamIdentity } from '../../contracts/index.ts';
import type { AlertState } from './alert-detector.ts';
import type { CusumState } from './change-detector.ts';
import { decodeStreamCheckpoint, encodeStreamCheckpoint, type StreamCheckpoint } from './checkpoint-codec.ts';
import type { CountHistogram } from './count-histogram.ts';
import { DedupeMemory } from './dedupe-memory.ts';
import { createWindowAccumulation, WINDOW_SUMS, type StreamState, type WindowAccumulation } from './stream-state.ts';

/** A frame identity: (launchId u64, frameSequence u32). */
type Identity = readonly [bigint, number];

/**
 * The dedupe memory's checkpoint text, written independently of DedupeMemory.toBytes: per
 * identity the launchId as a little-endian u64 and the frameSequence as a little-endian u32,
 * base64.
 */
function referenceDedupeText(identities: readonly Identity[]): string {
  const view = new DataView(new ArrayBuffer(12 * identities.length));
  identities.forEach(([launchId, sequence], i) => {
    view.setBigUint64(12 * i, launchId, true);
    view.setUint32(12 * i + 8, sequence, true);
  });
  return Buffer.from(view.buffer).toString('base64');
}

/**
 * The checkpoint text is the JSON.stringify of the checkpoint object, byte for byte (a restore
 * and the compacted topic see the same records as before the encoder wrote its dedupe memory
 * itself). The reference below is everything through JSON.stringify, the dedupe memory's
 * identities (read back in order) through {@link referenceDedupeText}.
 */
function referenceEncoding(checkpoint: StreamCheckpoint, version: 2 | 3 = 3): string {
  const { state } = checkpoint;
  const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);
  const histogramToJson = (histogram: CountHistogram): unknown => ({ c: [...histogram.counts], h: [...histogram.highs], b: histogram.binned, t: histogram.total });
  const identities = [...state.dedupe.entries()];
  return JSON.stringify({
    v: version,
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
    dedupe: version === 3 ? referenceDedupeText(identities) : identities.map(([launchId, sequence]) => ((launchId << 32n) | BigInt(sequence)).toString()),
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

/** Any double: NaN, ±∞, −0, subnormals, the largest. */
const anyDouble = fc.oneof(fc.double(), fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, Number.MAX_VALUE, Number.MIN_VALUE));
const count = fc.oneof(fc.nat(), fc.double({ min: 0, noNaN: true }), anyDouble);
/** Labels and names with quotes, backslashes, control characters, lone surrogates, other scripts. */
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.constantFrom('', 'a"b', 'back\\slash', 'line\nbreak', '\u0000\u001f', '\ud800', 'ядро/κ', '"dedupe":[]'));

/** Frame identities: launchIds of every size (small counters, 2^53 and 2^64 − 1, random u64), u32 sequences with their edges. */
const launchId = fc.oneof(fc.bigInt({ min: 0n, max: 1000n }), fc.constantFrom(0n, 1n, 2n ** 21n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 64n - 1n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }));
const sequence = fc.oneof(fc.nat({ max: 100 }), fc.constantFrom(0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1), fc.nat({ max: 2 ** 32 - 1 }));
const identity: fc.Arbitrary<Identity> = fc.tuple(launchId, sequence);
const identities = fc.uniqueArray(identity, { maxLength: 60, selector: ([l, s]) => `${l}:${s}` });

/** A dedupe memory holding `list` (distinct), oldest first. */
function memoryOf(list: readonly Identity[]): DedupeMemory {
  const memory = new DedupeMemory();
  for (const [l, s] of list) memory.add(l, s, 1_000_000);
  return memory;
}

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
    dedupe: identities,
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
      dedupe: memoryOf(c.dedupe),
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
        if (!restored.state.dedupe.has(next[0], next[1])) restored.state.dedupe.add(next[0], next[1], 1_000_000);
        expect(encodeStreamCheckpoint(restored)).toBe(referenceEncoding(restored));
      }),
      { numRuns: 500 },
    );
  });

  it('restores the dedupe memory exactly, from its own text and from the decimal text of version 2', () => {
    fc.assert(
      fc.property(checkpoint, (c) => {
        const held = [...c.state.dedupe.entries()];
        for (const text of [encodeStreamCheckpoint(c), referenceEncoding(c, 2)]) {
          const restored = decodeStreamCheckpoint(text, 'k', 0).state.dedupe;
          expect([...restored.entries()]).toEqual(held);
          for (const [l, s] of held) expect(restored.has(l, s)).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('refuses a version 3 dedupe text that is not whole identities in base64, as a corrupt checkpoint', () => {
    const c = fc.sample(checkpoint, { numRuns: 1, seed: 7 })[0]!;
    const good = JSON.parse(encodeStreamCheckpoint(c)) as Record<string, unknown>;
    for (const dedupe of ['AAAA', 'AAAAAAAAAAAAAAA=', 'AAAAAAAAAAAAAAA!', ['1'], 12]) {
      expect(() => decodeStreamCheckpoint(JSON.stringify({ ...good, dedupe }), 'k', 0)).toThrow(/WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT|version 1, 2 or 3/);
    }
  });
});
