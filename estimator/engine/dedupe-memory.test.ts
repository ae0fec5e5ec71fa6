import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DedupeMemory } from './dedupe-memory.ts';

type Identity = readonly [bigint, number];
const keyOf = ([launchId, sequence]: Identity): string => `${launchId}:${sequence}`;

/**
 * The reference: the FIFO set the memory must equal, as the estimator first kept it (a Set in
 * insertion order of "launchId:sequence" texts; an add evicts the oldest while `capacity` or more
 * are held).
 */
class ReferenceMemory {
  readonly order = new Set<string>();
  has(identity: Identity): boolean {
    return this.order.has(keyOf(identity));
  }
  add(identity: Identity, capacity: number): void {
    for (const oldest of this.order) {
      if (this.order.size < capacity) break;
      this.order.delete(oldest);
    }
    this.order.add(keyOf(identity));
  }
}

/** Identities drawn from a small pool (so repeats and re-adds after eviction happen), of every size. */
const launchId = fc.oneof(
  fc.bigInt({ min: 0n, max: 40n }),
  fc.constantFrom(0n, (1n << 32n) - 1n, 1n << 32n, (1n << 53n) - 1n, 1n << 53n, (1n << 64n) - 1n),
  fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
);
const sequence = fc.oneof(fc.nat({ max: 8 }), fc.constantFrom(0, 0xffffffff));
const identity: fc.Arbitrary<Identity> = fc.tuple(launchId, sequence);

describe('DedupeMemory', () => {
  it('is exactly the FIFO set of the last `capacity` identities added, through growth and eviction', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.array(fc.oneof(identity, fc.constant<Identity>([7n, 1])), { maxLength: 400 }), (capacity, stream) => {
        const memory = new DedupeMemory();
        const reference = new ReferenceMemory();
        const probes = new Map<string, Identity>();
        for (const id of stream) {
          probes.set(keyOf(id), id);
          expect(memory.has(id[0], id[1])).toBe(reference.has(id));
          if (!reference.has(id)) {
            memory.add(id[0], id[1], capacity);
            reference.add(id, capacity);
          }
          expect(memory.size).toBe(reference.order.size);
        }
        expect([...memory.entries()].map(keyOf)).toEqual([...reference.order]);
        for (const id of probes.values()) expect(memory.has(id[0], id[1])).toBe(reference.has(id));
      }),
      { numRuns: 1_500 },
    );
  });

  it('holds a long stream of recorder-like identities (random launchIds, rising sequence) at the default capacity', () => {
    let state = 0x9e3779b97f4a7c15n;
    const next = (): bigint => (state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn);
    const memory = new DedupeMemory();
    const reference = new ReferenceMemory();
    const seen: Identity[] = [];
    for (let i = 0; i < 5_000; i += 1) {
      const id: Identity = [next(), i];
      seen.push(id);
      memory.add(id[0], id[1], 1_024);
      reference.add(id, 1_024);
    }
    expect(memory.size).toBe(1_024);
    for (const id of seen) expect(memory.has(id[0], id[1])).toBe(reference.has(id));
    expect(memory.toBytes().length).toBe(12 * 1_024);
  });

  it('holds more than 65,535 identities (its lookup table then has 32-bit cells), and evicts them in order', () => {
    const capacity = 70_000;
    const memory = new DedupeMemory();
    for (let i = 0; i < capacity + 10; i += 1) memory.add(BigInt(i) * 0x9e3779b97f4an, i, capacity);
    expect(memory.size).toBe(capacity);
    for (let i = 0; i < capacity + 10; i += 1) expect(memory.has(BigInt(i) * 0x9e3779b97f4an, i)).toBe(i >= 10);
    const first = memory.entries().next().value;
    expect(first).toEqual([10n * 0x9e3779b97f4an, 10]);
  });

  it('writes its identities, oldest first, as little-endian launchId u64 and frameSequence u32, and reads them back', () => {
    fc.assert(
      fc.property(fc.uniqueArray(identity, { maxLength: 50, selector: keyOf }), fc.integer({ min: 1, max: 60 }), (list, capacity) => {
        const memory = new DedupeMemory();
        for (const [l, s] of list) memory.add(l, s, capacity);
        const kept = list.slice(Math.max(0, list.length - capacity));
        const bytes = memory.toBytes();
        const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        expect(bytes.length).toBe(12 * kept.length);
        kept.forEach(([l, s], i) => {
          expect(view.getBigUint64(12 * i, true)).toBe(l);
          expect(view.getUint32(12 * i + 8, true)).toBe(s);
        });
        const back = DedupeMemory.fromBytes(bytes);
        expect([...back.entries()]).toEqual(kept);
        const fromIdentities = DedupeMemory.fromIdentities(kept.map(([l, s]) => (l << 32n) | BigInt(s)));
        expect([...fromIdentities.entries()]).toEqual(kept);
      }),
      { numRuns: 500 },
    );
  });

  it('restores more identities than the capacity as they were, and trims them at the next add', () => {
    const list: Identity[] = Array.from({ length: 10 }, (_, i) => [BigInt(i), i]);
    const memory = DedupeMemory.fromIdentities(list.map(([l, s]) => (l << 32n) | BigInt(s)));
    expect(memory.size).toBe(10);
    memory.add(99n, 0, 4);
    expect([...memory.entries()]).toEqual([...list.slice(7), [99n, 0]]);
  });

  it('keeps the first place of an identity repeated in restored bytes', () => {
    const bytes = new Uint8Array(36);
    const view = new DataView(bytes.buffer);
    [[5n, 1], [6n, 2], [5n, 1]].forEach(([l, s], i) => {
      view.setBigUint64(12 * i, l as bigint, true);
      view.setUint32(12 * i + 8, s as number, true);
    });
    expect([...DedupeMemory.fromBytes(bytes).entries()]).toEqual([
      [5n, 1],
      [6n, 2],
    ]);
  });

  it('refuses what is not an identity: a launchId outside u64, bytes that are not whole identities, a capacity below 1', () => {
    const memory = new DedupeMemory();
    expect(() => memory.has(-1n, 0)).toThrow(RangeError);
    expect(() => memory.add(1n << 64n, 0, 4)).toThrow(RangeError);
    expect(() => memory.add(1n, 0, 0)).toThrow(RangeError);
    expect(() => DedupeMemory.fromBytes(new Uint8Array(13))).toThrow(RangeError);
    expect(() => DedupeMemory.fromIdentities([1n << 96n])).toThrow(RangeError);
    expect(memory.size).toBe(0);
  });
});
