import { afterEach, describe, expect, it, vi } from 'vitest';
import { stopWithinBound } from './stop-signal.ts';

describe('stopWithinBound: a SIGTERM always ends the process', () => {
  afterEach(() => {
    vi.useRealTimers();
    process.exitCode = undefined;
  });

  it('ends the process with 1 and one coded line when the stop is still running at the bound', async () => {
    vi.useFakeTimers();
    const lines: string[] = [];
    const exits: number[] = [];
    void stopWithinBound(() => new Promise<void>(() => {}), { boundMillis: 10_000, log: (line) => lines.push(line), code: 'WW_ERR_ESTIMATOR_SHUTDOWN_TIMEOUT', exit: (code) => exits.push(code) });
    await vi.advanceTimersByTimeAsync(9_999);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([1]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^WW_ERR_ESTIMATOR_SHUTDOWN_TIMEOUT: the stop did not finish within 10000 ms/);
  });

  it('ends a process whose stop finished but whose event loop does not empty, with the exit code set so far, after the drain time', async () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const lines: string[] = [];
    await stopWithinBound(() => Promise.resolve(), { boundMillis: 10_000, log: (line) => lines.push(line), code: 'X', exit: (code) => exits.push(code), drainMillis: 500 });
    await vi.advanceTimersByTimeAsync(499);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([0]);
    expect(lines).toEqual([]);
    // The bound no longer fires once the stop has finished.
    await vi.advanceTimersByTimeAsync(20_000);
    expect(exits).toEqual([0]);
  });

  it('keeps an exit code set by the caller, and passes on what the stop throws', async () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    await expect(stopWithinBound(() => Promise.reject(new Error('spool closed badly')), { boundMillis: 1_000, log: () => {}, code: 'X', exit: (code) => exits.push(code) })).rejects.toThrow('spool closed badly');
    process.exitCode = 2;
    await vi.advanceTimersByTimeAsync(1_000);
    expect(exits).toEqual([2]);
  });

  it('never waits past the bound to drain: a stop that took most of it leaves only the rest', async () => {
    vi.useFakeTimers();
    const exits: number[] = [];
    const done = stopWithinBound(() => new Promise<void>((resolve) => setTimeout(resolve, 9_800)), { boundMillis: 10_000, log: () => {}, code: 'X', exit: (code) => exits.push(code), drainMillis: 1_000 });
    await vi.advanceTimersByTimeAsync(9_800);
    await done;
    await vi.advanceTimersByTimeAsync(199);
    expect(exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(exits).toEqual([0]);
  });
});
