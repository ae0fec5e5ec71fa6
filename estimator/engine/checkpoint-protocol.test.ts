// The checkpoint-before-commit protocol at every crash point: each I/O step fails in turn; the
// invariants hold after the failed round and after the next one.
import { describe, expect, it } from 'vitest';
import { createCheckpointProtocol, type CheckpointProtocolIo, type CheckpointTopicRecord } from './checkpoint-protocol.ts';

type Step = 'flushInflux' | 'flushResults' | 'writeCheckpoint' | 'commit';

/** A world with durable state (what survives a crash) and a log of the effects in order. */
function world(partitions: number[]) {
  const durable = { influxWritten: 0, resultsSent: 0, checkpoint: new Map<string, string | null>(), committed: new Map<number, string>() };
  const produced = { influx: 0, results: 0 };
  const log: string[] = [];
  const assigned = new Set(partitions);
  // The engine: per partition, a next offset and streams whose state changed since the last snapshot.
  const engine = new Map(partitions.map((p) => [p, { nextOffset: 0, dirty: new Map<string, string>() }]));
  let failAt: Step | undefined;
  const step = (name: Step, effect: () => void): Promise<void> => {
    if (failAt === name) {
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
  return { durable, produced, log, assigned, engine, io, handle, failNext: (s: Step) => (failAt = s) };
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

describe('checkpoint-before-commit protocol', () => {
  it('writes outputs, then checkpoint records, then commits, in that order', async () => {
    const w = world([0, 1]);
    w.handle(0, 'a', 5);
    w.handle(1, 'b', 3);
    const protocol = createCheckpointProtocol(w.io);
    await protocol.run();
    expect(w.log).toEqual(['flushInflux', 'flushResults', 'writeCheckpoint', 'commit', 'writeCheckpoint', 'commit']);
    expect(Object.fromEntries(w.durable.committed)).toEqual({ 0: '5', 1: '3' });
    expect(w.durable.checkpoint.get('p0|a')).toBe('a@5');
    expectSafe(w, w.produced);
  });

  for (const failing of ['flushInflux', 'flushResults', 'writeCheckpoint', 'commit'] as const) {
    it(`a failure of ${failing} commits nothing it does not cover and loses no checkpoint record: the next round completes`, async () => {
      const w = world([0]);
      const protocol = createCheckpointProtocol(w.io);
      w.handle(0, 'a', 4);
      await protocol.run(); // a first complete round: committed 4
      expect(w.durable.committed.get(0)).toBe('4');
      w.handle(0, 'a', 3);
      w.handle(0, 'b', 2);
      const outputs = { ...w.produced };
      w.failNext(failing);
      await expect(protocol.run()).rejects.toThrow(`${failing} failed`);
      // After the crash point: the old commit stands, or a commit that its outputs and checkpoint cover.
      expectSafe(w, failing === 'commit' || failing === 'writeCheckpoint' ? outputs : { influx: 4, results: 1 });
      expect(w.durable.committed.get(0)).toBe('4');
      expect(protocol.pendingPartitions()).toEqual([0]);
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
    const protocol = createCheckpointProtocol({
      ...w.io,
      flushResults: async () => {
        await w.io.flushResults();
        w.assigned.delete(1); // revoked while the outputs were being flushed
      },
    });
    w.handle(0, 'a', 2);
    w.handle(1, 'b', 2);
    await protocol.run();
    expect([...w.durable.committed.keys()]).toEqual([0]);
    expect(w.durable.checkpoint.has('p1|b')).toBe(false);
    expect(protocol.pendingPartitions()).toEqual([]);
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
