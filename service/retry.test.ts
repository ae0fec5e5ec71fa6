import { afterEach, describe, expect, it, vi } from 'vitest';
import { mulberry32 } from '../model/index.ts';
import { backoffDelayMillis, retry, sleepMillis } from './retry.ts';

afterEach(() => {
  vi.useRealTimers();
});

describe('backoffDelayMillis', () => {
  it('doubles from initialMillis up to the cap without jitter', () => {
    const policy = { initialMillis: 100, maxMillis: 1_000 };
    expect([1, 2, 3, 4, 5, 6, 60].map((n) => backoffDelayMillis(n, policy))).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
    expect([1, 2, 3].map((n) => backoffDelayMillis(n, { initialMillis: 10, maxMillis: 1_000, factor: 3 }))).toEqual([10, 30, 90]);
  });

  it('spreads by ±jitter/2 around the un-jittered delay, with that delay as the mean (fixed seed, 20 000 draws)', () => {
    const random = mulberry32(19);
    const draws = Array.from({ length: 20_000 }, () => backoffDelayMillis(2, { initialMillis: 20, maxMillis: 40, jitter: 0.5 }, random));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(30);
    expect(Math.max(...draws)).toBeLessThan(50);
    // Uniform on [30, 50): mean 40, standard error 20/√12/√20000 ≈ 0.041 ms; 0.2 ms is ~5 standard errors.
    const mean = draws.reduce((a, b) => a + b, 0) / draws.length;
    expect(Math.abs(mean - 40)).toBeLessThan(0.2);
    expect(backoffDelayMillis(1, { initialMillis: 100, maxMillis: 100, jitter: 1 }, () => 0)).toBe(50);
  });

  it('rejects failures < 1 and policies out of range', () => {
    expect(() => backoffDelayMillis(0, { initialMillis: 1, maxMillis: 2 })).toThrow(RangeError);
    expect(() => backoffDelayMillis(1, { initialMillis: 5, maxMillis: 2 })).toThrow(RangeError);
    expect(() => backoffDelayMillis(1, { initialMillis: 1, maxMillis: 2, jitter: 2 })).toThrow(RangeError);
  });
});

describe('retry', () => {
  it('retries with the backoff pauses until the operation succeeds (fake timers)', async () => {
    vi.useFakeTimers();
    const calledAt: number[] = [];
    const start = Date.now();
    const result = retry(
      () => {
        calledAt.push(Date.now() - start);
        return calledAt.length < 4 ? Promise.reject(new Error('transient')) : Promise.resolve('done');
      },
      { initialMillis: 100, maxMillis: 250 },
    );
    await vi.runAllTimersAsync();
    await expect(result).resolves.toBe('done');
    expect(calledAt).toEqual([0, 100, 300, 550]); // pauses 100, 200, 250 (capped)
  });

  it('throws a failure shouldRetry refuses at once, and the last failure once maxAttempts or timeoutMillis are used up', async () => {
    vi.useFakeTimers();
    let calls = 0;
    const fatal = retry(() => Promise.reject(new Error(`fatal ${++calls}`)), { initialMillis: 10, maxMillis: 10, shouldRetry: () => false });
    await expect(fatal).rejects.toThrow('fatal 1');

    calls = 0;
    const limited = retry(() => Promise.reject(new Error(`attempt ${++calls}`)), { initialMillis: 10, maxMillis: 10, maxAttempts: 3 });
    const limitedOutcome = limited.catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    expect(String(await limitedOutcome)).toBe('Error: attempt 3');

    calls = 0;
    // Pauses 100, 200, 400: the third would end at 700 > 500, so attempt 3 (at 300) is the last.
    const timed = retry(() => Promise.reject(new Error(`attempt ${++calls}`)), { initialMillis: 100, maxMillis: 1_000, timeoutMillis: 500 });
    const timedOutcome = timed.catch((error: unknown) => error);
    await vi.runAllTimersAsync();
    expect(String(await timedOutcome)).toBe('Error: attempt 3');
  });

  it('stops waiting as soon as the signal aborts, with its reason', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    let calls = 0;
    const outcome = retry(() => Promise.reject(new Error(`attempt ${++calls}`)), { initialMillis: 1_000, maxMillis: 1_000, signal: controller.signal }).catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(500);
    controller.abort(new Error('shutting down'));
    expect(String(await outcome)).toBe('Error: shutting down');
    expect(calls).toBe(1);
    await expect(sleepMillis(10, controller.signal)).rejects.toThrow('shutting down');
  });
});
