import { describe, expect, it } from 'vitest';
import { createBackpressure, type BackpressureSink } from './backpressure.ts';

/** A sink whose level the test sets; a fake clock advanced by the backpressure's own sleeps. */
function harness(marks: { influx: [number, number]; results?: [number, number] }) {
  const levels = { influx: 0, results: 0 };
  let clock = 0;
  const sleeps: number[] = [];
  /** Called at each sleep, with the sleeps so far: what the sinks do meanwhile. */
  let onSleep: (count: number) => void = () => {};
  const sinks: BackpressureSink[] = [{ name: 'influx', level: () => levels.influx, highWater: marks.influx[0], lowWater: marks.influx[1] }];
  if (marks.results !== undefined) sinks.push({ name: 'kafka-results', level: () => levels.results, highWater: marks.results[0], lowWater: marks.results[1] });
  const lines: string[] = [];
  const backpressure = createBackpressure({
    sinks,
    pollMillis: 20,
    logAfterMillis: 1_000,
    log: (line) => lines.push(line),
    now: () => clock,
    sleep: async (millis) => {
      sleeps.push(millis);
      clock += millis;
      onSleep(sleeps.length);
    },
  });
  let heartbeats = 0;
  let interrupt = false;
  const batch = {
    heartbeat: async () => {
      heartbeats += 1;
    },
    interrupted: () => interrupt,
  };
  return {
    levels,
    backpressure,
    batch,
    lines,
    sleeps,
    heartbeats: () => heartbeats,
    interruptNow: () => (interrupt = true),
    set onSleep(f: (count: number) => void) {
      onSleep = f;
    },
  };
}

describe('createBackpressure', () => {
  it('does not wait while every sink is at or below its high-water mark (the mark itself included)', async () => {
    const h = harness({ influx: [100, 50], results: [10, 5] });
    h.levels.influx = 100;
    h.levels.results = 10;
    expect(h.backpressure.check()).toBe(false);
    expect(await h.backpressure.waitForRoom(h.batch)).toEqual({ outcome: 'room', waitedMillis: 0 });
    expect(h.sleeps).toEqual([]);
    expect(h.backpressure.stats()).toEqual({ waitingFor: undefined, pauses: 0, pausedMillis: 0, highWater: { influx: 100, 'kafka-results': 10 } });
  });

  it('looks at the levels per message only after an output (mustWait), and at every check', () => {
    const h = harness({ influx: [100, 50] });
    h.levels.influx = 101;
    expect(h.backpressure.mustWait()).toBe(false); // no output noted since the last look
    h.backpressure.noteOutput();
    expect(h.backpressure.mustWait()).toBe(true);
    expect(h.backpressure.mustWait()).toBe(false); // looked: cleared until the next output
    expect(h.backpressure.check()).toBe(true);
    h.levels.influx = 99;
    h.backpressure.noteOutput();
    expect(h.backpressure.mustWait()).toBe(false);
  });

  it('pauses above the high-water mark until the level is down to the low-water mark, heartbeating, and counts the pause', async () => {
    const h = harness({ influx: [100, 50] });
    h.levels.influx = 101;
    // The writer drains 10 points per poll: 101 → 91 → … → 51 (still above 50) → 41.
    h.onSleep = () => {
      h.levels.influx -= 10;
    };
    const result = await h.backpressure.waitForRoom(h.batch);
    expect(result).toEqual({ outcome: 'room', waitedMillis: 6 * 20 });
    expect(h.levels.influx).toBe(41);
    expect(h.sleeps).toEqual([20, 20, 20, 20, 20, 20]);
    expect(h.heartbeats()).toBe(6);
    expect(h.backpressure.stats()).toEqual({ waitingFor: undefined, pauses: 1, pausedMillis: 120, highWater: { influx: 100 } });
    expect(h.lines).toEqual([]); // shorter than logAfterMillis
  });

  it('goes on only when every sink is down to its low-water mark, whichever started the pause', async () => {
    const h = harness({ influx: [100, 50], results: [10, 4] });
    h.levels.influx = 200;
    h.levels.results = 8; // below its high-water mark, above its low-water mark
    h.onSleep = (count) => {
      if (count === 1) h.levels.influx = 50; // influx drained
      if (count === 3) h.levels.results = 4; // results drained two polls later
    };
    const waiting = h.backpressure.waitForRoom(h.batch);
    const during = h.backpressure.stats().waitingFor;
    const result = await waiting;
    expect(during).toBe('influx');
    expect(result).toEqual({ outcome: 'room', waitedMillis: 60 });
    expect(h.backpressure.stats().pauses).toBe(1);
  });

  it('ends the wait at once when the batch is interrupted (revoked, stopping), without waiting for the sink', async () => {
    const h = harness({ influx: [100, 50] });
    h.levels.influx = 1_000;
    h.onSleep = (count) => {
      if (count === 2) h.interruptNow();
    };
    expect(await h.backpressure.waitForRoom(h.batch)).toEqual({ outcome: 'interrupted', waitedMillis: 40 });
    expect(h.levels.influx).toBe(1_000);
    expect(h.backpressure.stats()).toMatchObject({ waitingFor: undefined, pauses: 1, pausedMillis: 40 });
  });

  it('logs a long pause once, and once when it ends', async () => {
    const h = harness({ influx: [100, 50] });
    h.levels.influx = 150;
    h.onSleep = (count) => {
      if (count === 100) h.levels.influx = 0; // 2 s of polls
    };
    await h.backpressure.waitForRoom(h.batch);
    expect(h.lines).toEqual([
      'consumption paused for 1 s: 150 influx items buffered, above the high-water mark 100; frames wait in Kafka until it is down to 50 (docs/estimator.md, Backpressure)',
      'consumption goes on after a pause of 2.0 s for influx',
    ]);
  });

  it('passes a failing heartbeat on (a rebalance ends the batch as without backpressure) and still counts the pause', async () => {
    const h = harness({ influx: [100, 50] });
    h.levels.influx = 150;
    const failing = { heartbeat: () => Promise.reject(new Error('The group is rebalancing')), interrupted: () => false };
    await expect(h.backpressure.waitForRoom(failing)).rejects.toThrow('rebalancing');
    expect(h.backpressure.stats()).toMatchObject({ waitingFor: undefined, pauses: 1, pausedMillis: 20 });
  });

  it('refuses marks that cannot work', () => {
    expect(() => createBackpressure({ sinks: [{ name: 'x', level: () => 0, highWater: 10, lowWater: 11 }] })).toThrow(RangeError);
    expect(() => createBackpressure({ sinks: [{ name: 'x', level: () => 0, highWater: 0, lowWater: 0 }] })).toThrow(RangeError);
    expect(() => createBackpressure({ sinks: [{ name: 'x', level: () => 0, highWater: 1.5, lowWater: 0 }] })).toThrow(RangeError);
  });
});
