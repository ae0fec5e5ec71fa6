import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { StreamIdentity } from '../../contracts/index.ts';
import type { AlertState } from './alert-detector.ts';
import type { CusumState } from './change-detector.ts';
import { decodeStreamCheckpoint, encodeDedupeBase, encodeStreamCheckpoint, type StreamCheckpoint } from './checkpoint-codec.ts';
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
function referenceEncoding(checkpoint: StreamCheckpoint, version: 2 | 3 | 4 = 4): string {
  const { state } = checkpoint;
  const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);
  const histogramToJson = (histogram: CountHistogram): unknown => ({ c: [...histogram.counts], h: [...histogram.highs], b: histogram.binned, t: histogram.total });
  const identities = [...state.dedupe.entries()];
  const { total, size } = state.dedupe;
  const { epoch, total: base } = checkpoint.dedupeBase;
  // Version 4: the identities from absolute index max(base, total − size) on (the oldest held has total − size).
  const v4 = { epoch, total, size, base, delta: referenceDedupeText(identities.slice(Math.max(0, base - (total - size)))) };
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
    dedupe: version === 4 ? v4 : version === 3 ? referenceDedupeText(identities) : identities.map(([launchId, sequence]) => ((launchId << 32n) | BigInt(sequence)).toString()),
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

/** A dedupe memory holding `list` (distinct), oldest first, after `earlier` identities it no longer holds (its total is their sum). */
function memoryOf(list: readonly Identity[], earlier = 0): DedupeMemory {
  const memory = new DedupeMemory();
  for (const [l, s] of list) memory.add(l, s, 1_000_000);
  return earlier === 0 ? memory : DedupeMemory.fromBytes(memory.toBytes(), list.length + earlier);
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
    earlier: fc.oneof(fc.constant(0), fc.nat({ max: 5_000 })),
    baseAt: fc.double({ min: 0, max: 1, noNaN: true }),
    epoch: text,
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
      dedupe: memoryOf(c.dedupe, c.earlier),
      watermarkMillis: c.watermarkMillis,
      closedThroughMillis: c.closedThroughMillis,
      lastRecordWallMillis: 0,
    };
    // A base record anywhere from none (0) to the memory's total.
    return { state, alerts: c.alerts, appliedOffset: c.appliedOffset, dedupeBase: { epoch: c.epoch, total: Math.floor(c.baseAt * state.dedupe.total) } };
  });

/**
 * The base record the stream wrote when its total was `checkpoint.dedupeBase.total`: the held
 * identities older than that, after `older` ones it held then and no longer does, and (for a
 * base newer than the record, `newer` > 0) identities added after it.
 */
function baseRecordOf(checkpoint: StreamCheckpoint, older: readonly Identity[], newer: readonly Identity[], epoch = checkpoint.dedupeBase.epoch): string {
  const memory = checkpoint.state.dedupe;
  const held = [...memory.entries()];
  const oldest = memory.total - memory.size;
  const base = checkpoint.dedupeBase.total;
  const beforeBase = held.slice(0, Math.max(0, base - oldest));
  // A memory at total `base` held at most `base` identities.
  const list = [...older.slice(0, Math.max(0, base - beforeBase.length)), ...beforeBase, ...newer];
  const atBase = memoryOf(list);
  return encodeDedupeBase(epoch, DedupeMemory.fromBytes(atBase.toBytes(), base + newer.length));
}

/** `count` identities that `held` does not hold: launchIds counting down from 2^64 − 1, sequence 7, skipping held ones. */
function foreign(count: number, held: readonly Identity[]): Identity[] {
  const taken = new Set(held.map(([l, s]) => `${l}:${s}`));
  const result: Identity[] = [];
  for (let i = 0n; result.length < count; i += 1n) {
    const candidate: Identity = [2n ** 64n - 1n - i, 7];
    if (!taken.has(`${candidate[0]}:${candidate[1]}`)) result.push(candidate);
  }
  return result;
}

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

  it('restores the dedupe memory exactly, from its own text with its base record and from the texts of versions 3 and 2', () => {
    fc.assert(
      fc.property(checkpoint, fc.nat({ max: 5 }), (c, olderCount) => {
        const held = [...c.state.dedupe.entries()];
        const base = baseRecordOf(c, foreign(olderCount, held), []);
        const v4 = decodeStreamCheckpoint(encodeStreamCheckpoint(c), 'k', 0, undefined, base);
        expect([...v4.state.dedupe.entries()]).toEqual(held);
        expect(v4.state.dedupe.total).toBe(c.state.dedupe.total);
        expect(v4.dedupeBase).toEqual(c.dedupeBase);
        for (const text of [referenceEncoding(c, 3), referenceEncoding(c, 2)]) {
          const restored = decodeStreamCheckpoint(text, 'k', 0).state.dedupe;
          expect([...restored.entries()]).toEqual(held);
          for (const [l, s] of held) expect(restored.has(l, s)).toBe(true);
        }
      }),
      { numRuns: 1_000 },
    );
  });

  it('with a base record missing, of another epoch, older, damaged or newer than its record: never an identity the memory did not hold, and every one it did when the base reaches them', () => {
    fc.assert(
      fc.property(checkpoint, fc.constantFrom('missing', 'epoch', 'older', 'damaged', 'newer', 'exact'), fc.nat({ max: 40 }), (c, kind, extra) => {
        const held = [...c.state.dedupe.entries()];
        const oldest = c.state.dedupe.total - c.state.dedupe.size;
        const base = c.dedupeBase.total;
        // The record's own identities: from max(base, oldest) on.
        const own = held.slice(Math.max(0, base - oldest));
        const needsBase = base > oldest;
        let baseText: string | undefined;
        if (kind === 'epoch') baseText = baseRecordOf(c, [], [], `${c.dedupeBase.epoch}x`);
        else if (kind === 'older') baseText = base === 0 ? undefined : baseRecordOf({ ...c, dedupeBase: { ...c.dedupeBase, total: base - 1 } }, [], []);
        else if (kind === 'damaged') baseText = baseRecordOf(c, [], []).slice(0, -3);
        else if (kind === 'newer') baseText = baseRecordOf(c, [], foreign(extra + 1, held));
        else if (kind === 'exact') baseText = baseRecordOf(c, [], []);
        const restored = decodeStreamCheckpoint(encodeStreamCheckpoint(c), 'k', 0, undefined, baseText);
        const entries = [...restored.state.dedupe.entries()];
        // Always a suffix of what the memory held, at least the record's own identities.
        expect(held.slice(held.length - entries.length)).toEqual(entries);
        expect(entries.length).toBeGreaterThanOrEqual(own.length);
        expect(restored.state.dedupe.total).toBe(c.state.dedupe.total);
        const usable = kind === 'exact' || kind === 'newer';
        if (usable || !needsBase) expect(entries).toEqual(held);
        else {
          expect(entries).toEqual(own);
          // The next round writes what it holds afresh: no base to lean on.
          expect(restored.dedupeBase.total).toBe(0);
        }
      }),
      { numRuns: 1_500 },
    );
  });

  it('refuses a version 3 dedupe text that is not whole identities in base64, as a corrupt checkpoint', () => {
    const c = fc.sample(checkpoint, { numRuns: 1, seed: 7 })[0]!;
    const good = { ...(JSON.parse(encodeStreamCheckpoint(c)) as Record<string, unknown>), v: 3 };
    for (const dedupe of ['AAAA', 'AAAAAAAAAAAAAAA=', 'AAAAAAAAAAAAAAA!', ['1'], 12]) {
      expect(() => decodeStreamCheckpoint(JSON.stringify({ ...good, dedupe }), 'k', 0)).toThrow(/not a version 1, 2, 3 or 4 stream checkpoint/);
    }
  });

  it('refuses a version 4 dedupe member that does not add up (counts, base, delta length), as a corrupt checkpoint', () => {
    const good = { epoch: '5', total: 10, size: 4, base: 8, delta: 'A'.repeat(32) };
    expect(() => decodeStreamCheckpoint(JSON.stringify({ ...(JSON.parse(encodeStreamCheckpoint(fc.sample(checkpoint, { numRuns: 1, seed: 3 })[0]!)) as object), dedupe: good }), 'k', 0)).not.toThrow();
    const record = JSON.parse(encodeStreamCheckpoint(fc.sample(checkpoint, { numRuns: 1, seed: 3 })[0]!)) as Record<string, unknown>;
    for (const dedupe of [
      'AAAA',
      { ...good, size: 11 },
      { ...good, base: 11 },
      { ...good, total: -1 },
      { ...good, total: 2 ** 53 },
      { ...good, epoch: 5 },
      { ...good, delta: 'A'.repeat(16) },
      { ...good, delta: 'A'.repeat(31) + '!' },
      null,
    ]) {
      expect(() => decodeStreamCheckpoint(JSON.stringify({ ...record, dedupe }), 'k', 0)).toThrow(/not a version 1, 2, 3 or 4 stream checkpoint/);
    }
  });
});
