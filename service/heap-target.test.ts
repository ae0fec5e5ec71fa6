import { getHeapStatistics } from 'node:v8';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterCollection, fullCollection, HEAP_TARGET_POLICY, INITIAL_HEAP_TARGET_STATE, shouldCollect, startHeapTarget, type HeapTargetPolicy } from './heap-target.ts';

const MB = 1_000_000;
const policy: HeapTargetPolicy = { targetBytes: 100 * MB, ...HEAP_TARGET_POLICY };

describe('heap target policy', () => {
  it('collects from the target on, and after a collection once the heap grew 32 MiB past what it left live', () => {
    expect(shouldCollect(policy, INITIAL_HEAP_TARGET_STATE, 100 * MB - 1, 0)).toBe(false);
    expect(shouldCollect(policy, INITIAL_HEAP_TARGET_STATE, 100 * MB, 0)).toBe(true);
    // 40 MB left live: 40 MB + 32 MiB is below the target (100 MB), the larger bound.
    const small = afterCollection(policy, INITIAL_HEAP_TARGET_STATE, 40 * MB, 0, 20);
    expect(shouldCollect(policy, small, 99 * MB, 5_000)).toBe(false);
    expect(shouldCollect(policy, small, 100 * MB, 5_000)).toBe(true);
    // 80 MB left live: 80 MB + 33,554,432 B = 113,554,432 B.
    const large = afterCollection(policy, INITIAL_HEAP_TARGET_STATE, 80 * MB, 0, 20);
    expect(shouldCollect(policy, large, 113_554_431, 5_000)).toBe(false);
    expect(shouldCollect(policy, large, 113_554_432, 5_000)).toBe(true);
  });

  it('waits 9 × the last collection\'s duration after it (10 % of the time)', () => {
    const short = afterCollection(policy, INITIAL_HEAP_TARGET_STATE, 10 * MB, 1_000, 1_040);
    expect(short).toEqual({ liveBytes: 10 * MB, notBeforeMillis: 1_400, collections: 1, collectionMillis: 40 });
    expect(shouldCollect(policy, short, 500 * MB, 1_399)).toBe(false);
    expect(shouldCollect(policy, short, 500 * MB, 1_400)).toBe(true);
    const long = afterCollection(policy, short, 10 * MB, 3_000, 3_200);
    expect(long.notBeforeMillis).toBeCloseTo(3_200 + 9 * 200, 9);
    expect(long.collections).toBe(2);
    expect(long.collectionMillis).toBe(240);
  });

  it('never spends more than 10 % of the time collecting, whatever the heap and the collections take (simulated clock)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 1_000 }), fc.double({ min: 0, max: 2_000, noNaN: true })), { minLength: 1, maxLength: 50 }), (steps) => {
        // Every check sees a heap over any bound; collection k takes steps[k mod len][1] ms.
        let state = INITIAL_HEAP_TARGET_STATE;
        let now = 0;
        let k = 0;
        const horizon = 600_000;
        while (now < horizon) {
          if (shouldCollect(policy, state, Number.MAX_VALUE, now)) {
            const [live, took] = steps[k % steps.length]!;
            state = afterCollection(policy, state, live * MB, now, now + took);
            now += took;
            k += 1;
          }
          now += 250;
        }
        // The last collection's own spacing may reach past the horizon: count up to where it ends.
        const elapsed = Math.max(now, state.notBeforeMillis);
        expect(state.collectionMillis / elapsed).toBeLessThanOrEqual(HEAP_TARGET_POLICY.maxTimeShare + 1e-12);
      }),
      { seed: 27, numRuns: 200 },
    );
  });
});

describe('fullCollection (this Node)', () => {
  it('returns a function that frees unreachable objects at once', () => {
    const collect = fullCollection();
    expect(collect).toBeTypeOf('function');
    // 24 arrays of 10^6 doubles on V8's heap (8 MB each), reachable while measured, then dropped.
    let held: number[][] | undefined = Array.from({ length: 24 }, () => Array.from({ length: 1_000_000 }, (_, i) => i + 0.5));
    expect(held.length).toBe(24);
    const before = getHeapStatistics().used_heap_size;
    held = undefined;
    collect!();
    const after = getHeapStatistics().used_heap_size;
    expect(before - after).toBeGreaterThan(150 * MB);
  });
});

describe('startHeapTarget', () => {
  it('runs collections on its timer while the heap is over the target, reports them, and stops', async () => {
    const durations: number[] = [];
    // 16 MiB, the least target allowed, with 32 MB held meanwhile: the heap is over it.
    const held = Array.from({ length: 4 }, () => Array.from({ length: 1_000_000 }, (_, i) => i + 0.5));
    const target = startHeapTarget(16 * 1_048_576, (millis, live) => {
      expect(live).toBeGreaterThan(0);
      durations.push(millis);
    });
    expect(target).toBeDefined();
    const deadline = Date.now() + 5_000;
    while (durations.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    target!.stop();
    expect(held.length).toBe(4);
    expect(durations.length).toBeGreaterThanOrEqual(1);
    expect(target!.stats().collections).toBe(durations.length);
    expect(target!.stats().collectionMillis).toBeCloseTo(durations.reduce((a, b) => a + b, 0), 6);
    const stopped = durations.length;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(durations.length).toBe(stopped);
  });
});
