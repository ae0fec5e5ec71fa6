import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { observationFromFrame } from './frame-observation.ts';
import { streamIdentityOf, type LaunchBin } from './launch-observation.ts';
import { representativeCounts } from './count-histogram.ts';
import {
  closeIdleWindows,
  createStreamState,
  createWindowAccumulation,
  mergeWindowAccumulations,
  recordLaunchInWindow,
  recordObservation,
} from './stream-state.ts';
import { generateLaunches, testEngineOptions } from '../testing/test-support.ts';

const windowOptions = testEngineOptions().window;
const launches = generateLaunches({ streams: 1, launchesPerStream: 30, launchIntervalMillis: 250, startMillis: 1_700_000_000_000, groups: 16, groupSize: 8, seed: 5 }).map(
  (l) => observationFromFrame(l.frame),
);

describe('stream-state', () => {
  describe('recordObservation', () => {
    it('assigns launches to event-time tumbling windows and closes a window when time passes its end', () => {
      const first = launches[0]!;
      const state = createStreamState(streamIdentityOf(first));
      const closedStarts: number[] = [];
      let closedLaunches = 0;
      for (const launch of launches) {
        const outcome = recordObservation(state, launch, windowOptions, 0);
        expect(outcome.status).toBe('recorded');
        for (const w of outcome.closed) {
          closedStarts.push(w.startMillis);
          closedLaunches += w.launches;
          for (const l of launches) {
            const inside = l.eventTimeMillis >= w.startMillis && l.eventTimeMillis < w.endMillis;
            if (inside) expect(w.firstEventMillis).toBeLessThanOrEqual(l.eventTimeMillis);
          }
        }
      }
      // 30 launches 250 ms apart span 7.25 s: windows 0..6 closed by the watermark, the last still open.
      expect(closedStarts).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => 1_700_000_000_000 + i * 1000));
      expect(closedLaunches + [...state.windows.values()].reduce((s, w) => s + w.launches, 0)).toBe(30);
    });

    it('counts a duplicate frame (same launchId and frameSequence) once', () => {
      const state = createStreamState(streamIdentityOf(launches[0]!));
      expect(recordObservation(state, launches[0]!, windowOptions, 0).status).toBe('recorded');
      expect(recordObservation(state, launches[0]!, windowOptions, 0).status).toBe('duplicate');
      expect(recordObservation(state, { ...launches[0]!, frameSequence: 99 }, windowOptions, 0).status).toBe('recorded');
      const window = [...state.windows.values()][0]!;
      expect(window.launches).toBe(2);
    });

    it('forgets the oldest identities beyond the dedupe capacity', () => {
      const state = createStreamState(streamIdentityOf(launches[0]!));
      const small = { ...windowOptions, dedupeCapacity: 2 };
      for (const launch of launches.slice(0, 3)) recordObservation(state, launch, small, 0);
      expect(state.dedupe.size).toBe(2);
      expect(state.dedupe.has(launches[0]!.launchId, launches[0]!.frameSequence)).toBe(false);
      expect(state.dedupe.has(launches[2]!.launchId, launches[2]!.frameSequence)).toBe(true);
    });

    it('drops frames of an already closed window as late', () => {
      const state = createStreamState(streamIdentityOf(launches[0]!));
      for (const launch of launches.slice(0, 10)) recordObservation(state, launch, windowOptions, 0);
      const late = { ...launches[0]!, frameSequence: 12345 };
      expect(recordObservation(state, late, windowOptions, 0).status).toBe('late');
    });

    it('rejects an observation of another stream', () => {
      const state = createStreamState(streamIdentityOf(launches[0]!));
      expect(() => recordObservation(state, { ...launches[0]!, job: 'other' }, windowOptions, 0)).toThrow(RangeError);
    });
  });

  describe('closeIdleWindows', () => {
    it('closes open windows only after the idle time has passed', () => {
      const state = createStreamState(streamIdentityOf(launches[0]!));
      recordObservation(state, launches[0]!, windowOptions, 10_000);
      expect(closeIdleWindows(state, 10_500, 1_000)).toEqual([]);
      expect(closeIdleWindows(state, 11_000, 1_000).length).toBe(1);
      expect(state.windows.size).toBe(0);
    });
  });

  describe('current distribution', () => {
    it('in last-n mode equals the sum of the last N launches', () => {
      const options = { ...windowOptions, current: { mode: 'last-n' as const, launches: 3 } };
      const state = createStreamState(streamIdentityOf(launches[0]!));
      for (const launch of launches.slice(0, 10)) recordObservation(state, launch, options, 0);
      const expected = new Map<number, number>();
      for (const launch of launches.slice(7, 10)) for (const bin of launch.bins as readonly LaunchBin[]) expected.set(bin.low, (expected.get(bin.low) ?? 0) + bin.count);
      expect(representativeCounts(state.current.histogram)).toEqual(new Map([...expected].sort((a, b) => a[0] - b[0])));
    });
    it('in decay mode weighs a launch half after halfLifeLaunches launches', () => {
      const options = { ...windowOptions, current: { mode: 'decay' as const, halfLifeLaunches: 2 } };
      const state = createStreamState(streamIdentityOf(launches[0]!));
      for (const launch of launches.slice(0, 3)) recordObservation(state, launch, options, 0);
      const lanes = (launches[0]!.bins as readonly LaunchBin[]).reduce((s, b) => s + b.count, 0);
      // weights: launch 2 → 1, launch 1 → 2^-1/2, launch 0 → 2^-1
      expect(state.current.histogram.total).toBeCloseTo(lanes * (1 + 2 ** -0.5 + 0.5), 9);
      expect(state.cumulative.total).toBe(3 * lanes);
    });
  });

  describe('mergeWindowAccumulations', () => {
    it('equals recording every launch into one window, in any grouping', () => {
      const start = 1_700_000_000_000;
      const parts = [launches.slice(0, 2), launches.slice(2, 3), launches.slice(3, 4)].map((group) => {
        const w = createWindowAccumulation(start, 1000);
        for (const l of group) recordLaunchInWindow(w, l, windowOptions.histogram);
        return w;
      });
      const all = createWindowAccumulation(start, 1000);
      for (const l of launches.slice(0, 4)) recordLaunchInWindow(all, l, windowOptions.histogram);
      const [a, b, c] = parts as [typeof all, typeof all, typeof all];
      const left = mergeWindowAccumulations(mergeWindowAccumulations(a, b, windowOptions.histogram), c, windowOptions.histogram);
      const right = mergeWindowAccumulations(a, mergeWindowAccumulations(b, c, windowOptions.histogram), windowOptions.histogram);
      for (const merged of [left, right]) {
        expect(representativeCounts(merged.histogram)).toEqual(representativeCounts(all.histogram));
        expect(merged.launches).toBe(all.launches);
        expect(merged.groups).toBe(all.groups);
        expect(merged.sumLossCounts).toBeCloseTo(all.sumLossCounts, 9);
        expect(merged.sumSimtClocks).toBe(all.sumSimtClocks);
      }
      expect(() => mergeWindowAccumulations(a, createWindowAccumulation(start + 1000, 1000), windowOptions.histogram)).toThrow(RangeError);
    });
  });

  describe('duplicates are exact (launchId, frameSequence) pairs', () => {
    /** FNV-1a 32 of a string: the hash the first dedupe used (32 effective bits). */
    const fnv1a32 = (text: string): number => {
      let h = 0x811c9dc5;
      for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
      return h;
    };

    it('tells distinct (launchId, frameSequence) pairs apart, extremes included, and drops the same pair', () => {
      const u64 = fc.oneof(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.constantFrom(0n, 1n, (1n << 32n) - 1n, 1n << 32n, (1n << 53n) - 1n, 1n << 53n, (1n << 64n) - 1n));
      const u32 = fc.oneof(fc.nat({ max: 0xffffffff }), fc.constantFrom(0, 1, 0xffffffff));
      fc.assert(
        fc.property(u64, u32, u64, u32, fc.boolean(), (a, s, other, t, sameLaunch) => {
          const b = sameLaunch ? a : other;
          const state = createStreamState(streamIdentityOf(launches[0]!));
          expect(recordObservation(state, { ...launches[0]!, launchId: a, frameSequence: s }, windowOptions, 0).status).toBe('recorded');
          const second = recordObservation(state, { ...launches[0]!, launchId: b, frameSequence: t }, windowOptions, 0).status;
          expect(second).toBe(a === b && s === t ? 'duplicate' : 'recorded');
        }),
        { numRuns: 2000 },
      );
      // Pairs whose parts swap places (launchId + frameSequence alike) are distinct frames.
      const state = createStreamState(streamIdentityOf(launches[0]!));
      expect(recordObservation(state, { ...launches[0]!, launchId: 0n, frameSequence: 1 }, windowOptions, 0).status).toBe('recorded');
      expect(recordObservation(state, { ...launches[0]!, launchId: 1n, frameSequence: 0 }, windowOptions, 0).status).toBe('recorded');
    });

    it('records every frame whose ids collided under the old 32-bit hash, and still drops real duplicates', () => {
      // Find pairs of distinct ids with equal FNV-1a 32 of "launchId:frameSequence" (birthday search).
      const byHash = new Map<number, bigint>();
      const colliding: [bigint, bigint][] = [];
      for (let i = 0n; colliding.length < 5; i++) {
        const launchId = 1_000_000_007n * i + 12_345n;
        const hash = fnv1a32(`${launchId}:0`);
        const earlier = byHash.get(hash);
        if (earlier !== undefined) colliding.push([earlier, launchId]);
        else byHash.set(hash, launchId);
      }
      const state = createStreamState(streamIdentityOf(launches[0]!));
      const frameOf = (launchId: bigint) => ({ ...launches[0]!, launchId, frameSequence: 0 });
      for (const [a, b] of colliding) {
        expect(fnv1a32(`${a}:0`)).toBe(fnv1a32(`${b}:0`));
        expect(recordObservation(state, frameOf(a), windowOptions, 0).status).toBe('recorded');
        expect(recordObservation(state, frameOf(b), windowOptions, 0).status).toBe('recorded');
        expect(recordObservation(state, frameOf(b), windowOptions, 0).status).toBe('duplicate');
      }
    });
  });
});
