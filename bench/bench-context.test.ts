import { describe, expect, it } from 'vitest';
import { createBenchContext } from './bench-context.ts';

/** A fake clock: each measured call advances time by the next scripted duration. */
function scriptedClock(durations: number[]): { now: () => number; work: () => void } {
  let time = 0;
  return {
    now: () => time,
    work: () => {
      time += durations.shift() ?? 1;
    },
  };
}

describe('createBenchContext', () => {
  it('records the median, min and max of the timed runs after the warm-ups', async () => {
    const clock = scriptedClock([100, 100, 5, 1, 3, 2, 4]); // two warm-ups, then 5 timed runs
    const ctx = createBenchContext({ quick: false, log: () => undefined, now: clock.now, cpuNow: clock.now });
    const result = await ctx.measure('case', clock.work, { runs: 5, warmupRuns: 2 });
    expect(result).toMatchObject({ name: 'case', runs: 5, medianMillis: 3, minMillis: 1, maxMillis: 5 });
  });

  it('reports the ratio to a baseline measured in the same run and checks targets', async () => {
    const clock = scriptedClock([0, 2, 2, 2, 0, 3000, 3000, 3000]);
    const ctx = createBenchContext({ quick: false, log: () => undefined, now: clock.now, cpuNow: clock.now });
    await ctx.measure('fast', clock.work, { runs: 3, warmupRuns: 1 });
    const slow = await ctx.measure('slow', clock.work, { runs: 3, warmupRuns: 1, baseline: 'fast' });
    expect(slow.ratioToBaseline).toBe(1500);
    expect(ctx.targetMaxMillis('fast', 5, 'fast is fast').pass).toBe(true);
    expect(ctx.targetMaxMillis('slow', 1000, 'slow is slow').pass).toBe(false);
    expect(ctx.targetMinSpeedup('fast', 'slow', 1000, 'speedup').measured).toBe(1500);
    expect(ctx.targets.map((t) => t.pass)).toEqual([true, false, true]);
    expect(() => ctx.targetMaxMillis('missing', 1, 'x')).toThrow(/bench case 'missing' was not measured; measured: fast, slow/);
  });

  it('stops at the time budget once minRuns are done, and --quick caps runs at 3', async () => {
    const clock = scriptedClock([0, 0, 600, 600, 600, 600, 600]);
    const ctx = createBenchContext({ quick: false, log: () => undefined, now: clock.now, cpuNow: clock.now });
    const result = await ctx.measure('budget', clock.work, { runs: 10, minRuns: 2, maxTotalMillis: 1000 });
    expect(result.runs).toBe(2);
    const quick = createBenchContext({ quick: true, log: () => undefined, now: scriptedClock([]).now, cpuNow: () => 0 });
    expect((await quick.measure('q', () => undefined, { runs: 25 })).runs).toBe(3);
  });
});
