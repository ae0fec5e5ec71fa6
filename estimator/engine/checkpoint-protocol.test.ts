// The checkpoint-before-commit protocol at every crash point: each I/O step fails in turn; the
// invariants hold after the failed round and after the next one.
import { describe, expect, it } from 'vitest';
import { checkpointTickMillis, createCheckpointProtocol, createCheckpointTurns, type CheckpointProtocolIo, type CheckpointTopicRecord } from './checkpoint-protocol.ts';

type Step = 'flushInflux' | 'flushResults' | 'writeCheckpoint' | 'commit';

/** A world with durable state (what survives a crash) and a log of the effects in order. */
function world(partitions: number[]) {
  const durable = { influxWritten: 0, resultsSent: 0, checkpoint: new Map<string, string | null>(), committed: new Map<number, string>() };
  const produced = { influx: 0, results: 0 };
  const log: string[] = [];
  const assigned = new Set(partitions);
  // The engine: per partition, a next offset and streams whose state changed since the last snapshot.
  const engine = new Map(partitions.map((p) => [p, { nextOffset: 0, dirty: new Map<string, string>() }]));
  // The step to fail, at its `failCall`-th call from now (1 = the next).
  let failAt: Step | undefined;
  let failCall = 0;
  const step = (name: Step, effect: () => void): Promise<void> => {
    if (failAt === name && --failCall === 0) {
      failAt = undefined;
      log.push(`${name} FAILED`);
      return Promise.reject(new Error(`${name} failed`));
    }
    effect();
    log.push(name);
    return Promise.resolve();
  };
  const io: CheckpointProtocolIo = {
    assigned: () => assigned,
    isRestored: () => true,
    snapshot: (p) => {
      const e = engine.get(p)!;
      const records = [...e.dirty].map(([streamKey, value]) => ({ streamKey, value }) as { streamKey: string | undefined; value: string | null });
      e.dirty.clear();
      records.push({ streamKey: undefined, value: JSON.stringify({ nextOffset: String(e.nextOffset) }) });
      return { records, nextOffset: String(e.nextOffset) };
    },
    keyOf: (p, streamKey) => (streamKey === undefined ? `p${p}` : `p${p}|${streamKey}`),
    flushInflux: () => step('flushInflux', () => (durable.influxWritten = produced.influx)),
    flushResults: () => step('flushResults', () => (durable.resultsSent = produced.results)),
    writeCheckpoint: (p: number, records: readonly CheckpointTopicRecord[]) =>
      step('writeCheckpoint', () => {
        // Each partition's records are written for that partition only (the service places them by it).
        for (const r of records) {
          if (!r.key.startsWith(`p${p}`)) throw new Error(`record ${r.key} written for partition ${p}`);
          durable.checkpoint.set(r.key, r.value);
        }
      }),
    commit: (p, offset) => step('commit', () => durable.committed.set(p, offset)),
  };
  /** Messages handled: offsets advance, a stream's state changes, windows produce points and records. */
  const handle = (p: number, stream: string, count: number): void => {
    const e = engine.get(p)!;
    e.nextOffset += count;
    e.dirty.set(stream, `${stream}@${e.nextOffset}`);
    produced.influx += count;
    produced.results += 1;
  };
  const failNext = (s: Step, call = 1): void => {
    failAt = s;
    failCall = call;
  };
  return { durable, produced, log, assigned, engine, io, handle, failNext };
}

/** The invariant: every committed offset is covered by a written checkpoint marker, and by outputs written before the commit. */
function expectSafe(w: ReturnType<typeof world>, outputsAtSnapshot: { influx: number; results: number }): void {
  for (const [p, offset] of w.durable.committed) {
    const marker = w.durable.checkpoint.get(`p${p}`);
    expect(marker, `partition ${p} committed ${offset} without a checkpoint`).toBeDefined();
    expect(Number(JSON.parse(marker!).nextOffset)).toBeGreaterThanOrEqual(Number(offset));
  }
  if (w.durable.committed.size > 0) {
    expect(w.durable.influxWritten).toBeGreaterThanOrEqual(outputsAtSnapshot.influx);
    expect(w.durable.resultsSent).toBeGreaterThanOrEqual(outputsAtSnapshot.results);
  }
}

/** The protocol over `w`, with `effect` run right after the `call`-th flush of the result records (1 = before the snapshot, 2 = after it). */
function withFlushHook(w: ReturnType<typeof world>, call: number, effect: () => void) {
  let flushes = 0;
  return createCheckpointProtocol({
    ...w.io,
    flushResults: async () => {
      await w.io.flushResults();
      flushes += 1;
      if (flushes === call) effect();
    },
  });
}

describe('checkpoint-before-commit protocol', () => {
  it('writes outputs, then checkpoint records, then commits, in that order', async () => {
    const w = world([0, 1]);
    w.handle(0, 'a', 5);
    w.handle(1, 'b', 3);
    const protocol = createCheckpointProtocol(w.io);
    await protocol.run();
    // Outputs waiting before the snapshot, then those that came after it, then the records.
    expect(w.log).toEqual(['flushInflux', 'flushResults', 'flushInflux', 'flushResults', 'writeCheckpoint', 'commit', 'writeCheckpoint', 'commit']);
    expect(Object.fromEntries(w.durable.committed)).toEqual({ 0: '5', 1: '3' });
    expect(w.durable.checkpoint.get('p0|a')).toBe('a@5');
    expectSafe(w, w.produced);
  });

  // A flush fails before the snapshot (call 1) or after it (call 2).
  const failures = [
    ['flushInflux', 1],
    ['flushResults', 1],
    ['flushInflux', 2],
    ['flushResults', 2],
    ['writeCheckpoint', 1],
    ['commit', 1],
  ] as const;
  for (const [failing, call] of failures) {
    it(`a failure of ${failing} (call ${call} of the round) commits nothing it does not cover and loses no checkpoint record: the next round completes`, async () => {
      const w = world([0]);
      const protocol = createCheckpointProtocol(w.io);
      w.handle(0, 'a', 4);
      await protocol.run(); // a first complete round: committed 4
      expect(w.durable.committed.get(0)).toBe('4');
      w.handle(0, 'a', 3);
      w.handle(0, 'b', 2);
      const outputs = { ...w.produced };
      w.failNext(failing, call);
      await expect(protocol.run()).rejects.toThrow(`${failing} failed`);
      // After the crash point: the old commit stands, or a commit that its outputs and checkpoint cover.
      expectSafe(w, failing === 'commit' || failing === 'writeCheckpoint' ? outputs : { influx: 4, results: 1 });
      expect(w.durable.committed.get(0)).toBe('4');
      // A failure before the snapshot leaves the changes with the engine; after it, pending.
      const beforeSnapshot = (failing === 'flushInflux' || failing === 'flushResults') && call === 1;
      expect(protocol.pendingPartitions()).toEqual(beforeSnapshot ? [] : [0]);
      expect(w.engine.get(0)!.dirty.size).toBe(beforeSnapshot ? 2 : 0);
      // The next round writes the records taken in the failed one (the engine will not give them again).
      await protocol.run();
      expect(w.durable.committed.get(0)).toBe('9');
      expect(w.durable.checkpoint.get('p0|a')).toBe('a@7'); // stream a last changed at offset 7
      expect(w.durable.checkpoint.get('p0|b')).toBe('b@9');
      expect(protocol.pendingPartitions()).toEqual([]);
      expectSafe(w, w.produced);
    });
  }

  it('does not write or commit a partition revoked during the round, and forgets it', async () => {
    const w = world([0, 1]);
    // Revoked while the outputs after the snapshot were being flushed.
    const protocol = withFlushHook(w, 2, () => w.assigned.delete(1));
    w.handle(0, 'a', 2);
    w.handle(1, 'b', 2);
    await protocol.run();
    expect([...w.durable.committed.keys()]).toEqual([0]);
    expect(w.durable.checkpoint.has('p1|b')).toBe(false);
    expect(protocol.pendingPartitions()).toEqual([]);
  });

  it('covers the outputs that came while the waiting ones were flushed, before the snapshot', async () => {
    const w = world([0]);
    // A window closed during the first flush: in the snapshot, not yet written.
    const protocol = withFlushHook(w, 1, () => w.handle(0, 'late', 3));
    w.handle(0, 'a', 2);
    await protocol.run();
    expect(w.durable.committed.get(0)).toBe('5');
    expect(w.durable.checkpoint.get('p0|late')).toBe('late@5');
    expectSafe(w, w.produced);
  });

  it('takes and writes only the partitions asked for (and any left pending), skipping one not assigned', async () => {
    const w = world([0, 1, 2]);
    const protocol = createCheckpointProtocol(w.io);
    w.handle(0, 'a', 2);
    w.handle(1, 'b', 4);
    w.handle(2, 'c', 6);
    await protocol.run([1, 7]);
    expect(Object.fromEntries(w.durable.committed)).toEqual({ 1: '4' });
    expect(w.engine.get(0)!.dirty.size).toBe(1);
    // A partition whose write failed is written by the next round, whichever partitions it asks for.
    w.failNext('writeCheckpoint');
    await expect(protocol.run([2])).rejects.toThrow('writeCheckpoint failed');
    await protocol.run([0]);
    expect(Object.fromEntries(w.durable.committed)).toEqual({ 0: '2', 1: '4', 2: '6' });
    expectSafe(w, w.produced);
  });

  it('skips a partition whose offset is committed and whose only record is the marker', async () => {
    const w = world([0]);
    const protocol = createCheckpointProtocol(w.io);
    w.handle(0, 'a', 1);
    await protocol.run();
    const writes = w.log.filter((l) => l === 'writeCheckpoint').length;
    await protocol.run();
    expect(w.log.filter((l) => l === 'writeCheckpoint').length).toBe(writes);
  });
});

describe('checkpoint turns: a round spread over the interval', () => {
  /** Runs `ticks` ticks and counts how often each partition was taken, and the most taken at one tick. */
  const run = (turnPerTick: number, held: number[], ticks: number, busyAt: (tick: number) => boolean = () => false) => {
    const turns = createCheckpointTurns(turnPerTick);
    const taken = new Map<number, number[]>();
    let most = 0;
    for (let tick = 0; tick < ticks; tick += 1) {
      const due = turns.next(held, busyAt(tick));
      most = Math.max(most, due.length);
      for (const partition of due) taken.set(partition, [...(taken.get(partition) ?? []), tick]);
    }
    return { taken, most };
  };

  it('takes each of 6 partitions once in any 8 ticks in a row, at most one per tick', () => {
    const { taken, most } = run(1 / 8, [5, 3, 1, 0, 2, 4], 80);
    expect(most).toBe(1);
    for (const partition of [0, 1, 2, 3, 4, 5]) {
      const ticks = taken.get(partition)!;
      expect(ticks.length).toBe(10);
      // Consecutive turns of a partition are exactly 8 ticks apart (one interval).
      for (let i = 1; i < ticks.length; i += 1) expect(ticks[i]! - ticks[i - 1]!).toBe(8);
    }
  });

  it('takes 24 partitions three a tick, and 1 partition every eighth tick', () => {
    const many = run(1 / 8, Array.from({ length: 24 }, (_, p) => p), 16);
    expect(many.most).toBe(3);
    expect([...many.taken.values()].every((ticks) => ticks.length === 2)).toBe(true);
    const one = run(1 / 8, [7], 32);
    expect(one.taken.get(7)).toEqual([7, 15, 23, 31]);
  });

  it('keeps the turns earned while a round runs, at most one per partition', () => {
    // Busy for 20 ticks (2.5 intervals): then every partition at once, once.
    const { taken } = run(1 / 8, [0, 1, 2], 24, (tick) => tick < 20);
    expect([...taken.entries()].map(([p, ticks]) => [p, ticks[0]])).toEqual([
      [0, 20],
      [1, 20],
      [2, 20],
    ]);
  });

  it('goes on after the last partition taken when the partitions held change', () => {
    const turns = createCheckpointTurns(1 / 2);
    expect(turns.next([0, 1, 2, 3], false)).toEqual([0, 1]);
    // Partition 2 revoked, 9 assigned: the round goes on with 3.
    expect(turns.next([0, 1, 3, 9], false)).toEqual([3, 9]);
    expect(turns.next([0, 1, 3, 9], false)).toEqual([0, 1]);
    expect(turns.next([], false)).toEqual([]);
  });

  it('ticks an eighth of the interval, between 50 ms and the interval', () => {
    expect(checkpointTickMillis(2000)).toBe(250);
    expect(checkpointTickMillis(200)).toBe(50);
    expect(checkpointTickMillis(30)).toBe(30);
    expect(checkpointTickMillis(1001)).toBe(125);
  });
});
