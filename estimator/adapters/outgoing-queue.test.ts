import { describe, expect, it } from 'vitest';
import type { OutgoingRecord } from './kafka.ts';
import { createOutgoingQueue } from './outgoing-queue.ts';

const record = (key: string): OutgoingRecord => ({ key, value: `v${key}` });

describe('createOutgoingQueue', () => {
  it('sends records grouped by topic in queue order, one send at a time', async () => {
    const sent: Array<[string, string[]]> = [];
    let release: (() => void) | undefined;
    const outgoing = createOutgoingQueue({
      maxRecords: 10,
      produce: async (topic, records) => {
        if (release === undefined && topic === 'a') await new Promise<void>((resolve) => (release = resolve));
        sent.push([topic, records.map((r) => r.key)]);
      },
      onDropped: () => {},
    });
    outgoing.queue('a', record('1'));
    outgoing.queue('b', record('2'));
    outgoing.queue('a', record('3'));
    const first = outgoing.send();
    outgoing.queue('b', record('4'));
    const second = outgoing.send(); // waits for the first
    expect(outgoing.size).toBe(1);
    release?.();
    await Promise.all([first, second]);
    expect(sent).toEqual([
      ['a', ['1', '3']],
      ['b', ['2']],
      ['b', ['4']],
    ]);
    expect(outgoing.size).toBe(0);
  });

  it('drops the oldest beyond maxRecords, and on a failed send puts the records back in front, bounded and counted', async () => {
    const drops: Array<[number, number]> = [];
    let fail = true;
    const sent: string[] = [];
    const outgoing = createOutgoingQueue({
      maxRecords: 3,
      produce: (_topic, records) => {
        if (fail) return Promise.reject(new Error('broker down'));
        sent.push(...records.map((r) => r.key));
        return Promise.resolve();
      },
      onDropped: (count, total) => drops.push([count, total]),
    });
    for (const key of ['1', '2', '3', '4']) outgoing.queue('t', record(key));
    expect(drops).toEqual([[1, 1]]); // '1' went
    const sending = outgoing.send();
    outgoing.queue('t', record('5')); // arrives while the send is in flight
    await expect(sending).rejects.toThrow('broker down');
    // Back in front: 2, 3, 4, then 5; the bound of 3 drops '2'.
    expect(drops).toEqual([
      [1, 1],
      [1, 2],
    ]);
    expect(outgoing).toMatchObject({ size: 3, dropped: 2 });
    fail = false;
    await outgoing.send();
    expect(sent).toEqual(['3', '4', '5']);
  });

  it('counts the records of a send in progress as held (what backpressure looks at), not as queued', async () => {
    let release: (() => void) | undefined;
    const outgoing = createOutgoingQueue({
      maxRecords: 10,
      produce: () => new Promise<void>((resolve) => (release = resolve)),
      onDropped: () => {},
    });
    for (const key of ['1', '2', '3']) outgoing.queue('t', record(key));
    expect(outgoing).toMatchObject({ size: 3, held: 3 });
    const sending = outgoing.send();
    outgoing.queue('t', record('4'));
    expect(outgoing).toMatchObject({ size: 1, held: 4 });
    release?.();
    await sending;
    expect(outgoing).toMatchObject({ size: 1, held: 1 });
  });
});
