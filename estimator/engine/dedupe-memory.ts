/**
 * The de-duplication memory of one stream (docs/estimator.md, Streams and windows: duplicates):
 * the exact identities (launchId, frameSequence) of the stream's last `capacity` recorded frames,
 * oldest first, with a lookup.
 *
 * A recorder's launchIds are 64-bit hashes (kernels/include/warpwatch/recorder-core.hpp) or a
 * random base plus a counter (python/warpwatch/recorder.py), so an identity is a 96-bit value
 * that a JavaScript number cannot hold. A Set of them as BigInts costs ~53 KB per stream at the
 * default capacity of 1,024 (a BigInt object per identity and the Set's table), ~530 MB for
 * 10,000 streams, and its checkpoint text (decimal) ~32 KB. Here an identity is three 32-bit
 * words in a ring (12 bytes) and the lookup an open-addressing table of ring slots (2 bytes per
 * table cell up to 65,535 slots, 4 above; at most half full): ~16 KB per stream at 1,024, outside
 * V8's heap, no object per identity, and the checkpoint writes the ring's bytes (16 characters of
 * base64 per identity). The ring grows with the stream (a stream of a few frames holds a few
 * slots), up to the capacity.
 *
 * Exactly a FIFO set: {@link has} is true for precisely the identities added and not yet
 * evicted; {@link add} of an identity that is not held evicts the oldest ones while the memory
 * holds `capacity` or more, then appends it.
 */

/** 2^32, for splitting a launchId into its 32-bit halves. */
const TWO_32 = 4294967296;
const MAX_SAFE_LAUNCH_ID = BigInt(Number.MAX_SAFE_INTEGER);
const TWO_64 = 1n << 64n;
/** Slots of a new memory's ring. */
const INITIAL_SLOTS = 4;

/** The halves of the launchId last split by {@link splitLaunchId} (no array per frame). */
let launchLow = 0;
let launchHigh = 0;

/** Splits a u64 launchId into launchLow and launchHigh (unsigned 32-bit halves). */
function splitLaunchId(launchId: bigint): void {
  if (launchId >= 0n && launchId <= MAX_SAFE_LAUNCH_ID) {
    // Below 2^53 the number is exact, and so are its halves: no BigInt is allocated.
    const value = Number(launchId);
    launchLow = value >>> 0;
    launchHigh = (value - launchLow) / TWO_32;
    return;
  }
  if (launchId < 0n || launchId >= TWO_64) throw new RangeError(`launchId must be a u64, got ${launchId}`);
  launchLow = Number(launchId & 0xffffffffn);
  launchHigh = Number(launchId >> 32n);
}

/** A 32-bit hash of an identity's three words (multiply-xorshift mixing). */
function hashOf(low: number, high: number, sequence: number): number {
  let h = Math.imul(low ^ 0x2545f491, 0x9e3779b1) ^ Math.imul(high, 0x85ebca77) ^ Math.imul(sequence, 0xc2b2ae3d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x27d4eb2f);
  return (h ^ (h >>> 13)) >>> 0;
}

/** The smallest power of two ≥ 2 · slots: the lookup table's size for a ring of `slots`. */
function tableSizeFor(slots: number): number {
  let size = 8;
  while (size < 2 * slots) size *= 2;
  return size;
}

/** The lookup table of a ring of `slots`: cells of 16 bits while slot + 1 fits, else 32. */
function tableFor(slots: number): Uint16Array | Uint32Array {
  return slots < 65_536 ? new Uint16Array(tableSizeFor(slots)) : new Uint32Array(tableSizeFor(slots));
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Bounded FIFO memory of exact frame identities (see the module's description). */
export class DedupeMemory {
  /** The ring: per slot the launchId's low and high 32 bits, then the frameSequence. */
  #words: Uint32Array;
  #slots: number;
  /** The slot of the oldest identity. */
  #head = 0;
  #size = 0;
  /** Identities ever appended (restored ones included): the absolute index the next one gets; the oldest held has #total − #size. */
  #total = 0;
  /** Open addressing with linear probing: ring slot + 1 per cell, 0 = empty; size a power of two. */
  #table: Uint16Array | Uint32Array;

  /**
   * An empty memory.
   *
   * @example const memory = new DedupeMemory();
   */
  constructor(slots = INITIAL_SLOTS) {
    this.#slots = Math.max(1, Math.floor(slots));
    this.#words = new Uint32Array(3 * this.#slots);
    this.#table = tableFor(this.#slots);
  }

  /** How many identities the memory holds. */
  get size(): number {
    return this.#size;
  }

  /**
   * How many identities were ever added (a restored memory goes on from its checkpoint's count):
   * the held ones have the absolute indices total − size … total − 1, oldest first. The
   * checkpoint writes the identities added since its last full copy by these indices
   * (docs/estimator.md, Checkpoints of the dedupe memory).
   */
  get total(): number {
    return this.#total;
  }

  /**
   * Whether the frame (launchId, frameSequence) is held: recorded and not yet evicted.
   *
   * @param launchId the frame's launchId, a u64.
   * @param frameSequence the frame's frameSequence, a u32 (taken modulo 2^32).
   * @throws RangeError when launchId is not a u64.
   * @example if (memory.has(frame.launchId, frame.frameSequence)) return 'duplicate';
   */
  has(launchId: bigint, frameSequence: number): boolean {
    splitLaunchId(launchId);
    return this.#find(launchLow, launchHigh, frameSequence >>> 0) >= 0;
  }

  /**
   * Remembers the frame (launchId, frameSequence), which must not be held ({@link has} false):
   * while the memory holds `capacity` or more identities, the oldest is forgotten first.
   *
   * @param capacity the most identities kept (≥ 1; the stream's dedupe capacity).
   * @throws RangeError when launchId is not a u64 or capacity is not a positive integer.
   * @example if (!memory.has(id, seq)) memory.add(id, seq, 1024);
   */
  add(launchId: bigint, frameSequence: number, capacity: number): void {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`dedupe capacity must be a positive integer, got ${capacity}`);
    splitLaunchId(launchId);
    while (this.#size >= capacity) this.#evictOldest();
    this.#append(launchLow, launchHigh, frameSequence >>> 0, capacity);
  }

  /**
   * The identities held, oldest first, as (launchId, frameSequence) pairs (for tests and tools;
   * allocates).
   *
   * @example [...memory.entries()] // [[7n, 1], [8n, 2]]
   */
  *entries(): IterableIterator<[bigint, number]> {
    for (let i = 0, slot = this.#head; i < this.#size; i += 1, slot = slot + 1 === this.#slots ? 0 : slot + 1) {
      const w = 3 * slot;
      yield [(BigInt(this.#words[w + 1]!) << 32n) | BigInt(this.#words[w]!), this.#words[w + 2]!];
    }
  }

  /**
   * The identities held, oldest first, as bytes: 12 per identity, the launchId as a
   * little-endian u64 and the frameSequence as a little-endian u32 (the checkpoint's form,
   * docs/estimator.md, checkpoints).
   *
   * @example Buffer.from(memory.toBytes()).toString('base64')
   */
  toBytes(): Uint8Array {
    return this.bytesFrom(this.#total - this.#size);
  }

  /**
   * The held identities whose absolute index (see {@link total}) is `from` or later, oldest
   * first, in the form of {@link toBytes}; all held ones when `from` is at or below the oldest's.
   *
   * @param from an absolute index (≤ total).
   * @throws RangeError when `from` is past {@link total} or not an integer.
   * @example memory.bytesFrom(memory.total - 10) // the 10 newest identities, 120 bytes
   */
  bytesFrom(from: number): Uint8Array {
    if (!Number.isInteger(from) || from > this.#total) throw new RangeError(`dedupe index must be an integer at most ${this.#total}, got ${from}`);
    const skip = Math.max(0, from - (this.#total - this.#size));
    const count = this.#size - skip;
    let start = this.#head + skip;
    if (start >= this.#slots) start -= this.#slots;
    const ordered = new Uint32Array(3 * count);
    const fromStart = Math.min(count, this.#slots - start);
    ordered.set(this.#words.subarray(3 * start, 3 * (start + fromStart)), 0);
    if (fromStart < count) ordered.set(this.#words.subarray(0, 3 * (count - fromStart)), 3 * fromStart);
    const bytes = new Uint8Array(ordered.buffer);
    if (!LITTLE_ENDIAN) for (let i = 0; i < bytes.length; i += 4) bytes.set([bytes[i + 3]!, bytes[i + 2]!, bytes[i + 1]!, bytes[i]!], i);
    return bytes;
  }

  /**
   * A memory holding the identities of `bytes` (the form of {@link toBytes}), oldest first; an
   * identity repeated in them is held once, at its first place. `total` is the count of
   * identities ever added that the newest of them completes ({@link total}; default: as many as
   * `bytes` holds).
   *
   * @throws RangeError when the length is not a multiple of 12, or `total` is below the identities held.
   * @example DedupeMemory.fromBytes(Buffer.from(text, 'base64'), 5120)
   */
  static fromBytes(bytes: Uint8Array, total?: number): DedupeMemory {
    if (bytes.length % 12 !== 0) throw new RangeError(`dedupe memory bytes must be a multiple of 12, got ${bytes.length}`);
    const count = bytes.length / 12;
    if (total !== undefined && (!Number.isSafeInteger(total) || total < count)) throw new RangeError(`dedupe total must be an integer of at least ${count}, got ${total}`);
    const memory = new DedupeMemory(Math.max(INITIAL_SLOTS, count));
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < count; i += 1) {
      const low = view.getUint32(12 * i, true);
      const high = view.getUint32(12 * i + 4, true);
      const sequence = view.getUint32(12 * i + 8, true);
      if (memory.#find(low, high, sequence) < 0) memory.#append(low, high, sequence, count);
    }
    if (total !== undefined) memory.#total = total;
    return memory;
  }

  /**
   * A memory holding `identities` (launchId · 2^32 + frameSequence, as a version-2 checkpoint
   * stored them), oldest first; a repeated identity is held once, at its first place.
   *
   * @throws RangeError when an identity is not below 2^96.
   * @example DedupeMemory.fromIdentities([30064771073n])
   */
  static fromIdentities(identities: readonly bigint[]): DedupeMemory {
    const memory = new DedupeMemory(Math.max(INITIAL_SLOTS, identities.length));
    for (const identity of identities) {
      if (identity < 0n || identity >= 1n << 96n) throw new RangeError(`frame identity must be below 2^96, got ${identity}`);
      splitLaunchId(identity >> 32n);
      const low = launchLow;
      const high = launchHigh;
      const sequence = Number(identity & 0xffffffffn);
      if (memory.#find(low, high, sequence) < 0) memory.#append(low, high, sequence, identities.length);
    }
    return memory;
  }

  /** The ring slot holding the identity, or −1. */
  #find(low: number, high: number, sequence: number): number {
    const mask = this.#table.length - 1;
    const words = this.#words;
    for (let cell = hashOf(low, high, sequence) & mask; ; cell = (cell + 1) & mask) {
      const entry = this.#table[cell]!;
      if (entry === 0) return -1;
      const w = 3 * (entry - 1);
      if (words[w] === low && words[w + 1] === high && words[w + 2] === sequence) return entry - 1;
    }
  }

  /** Appends an identity that is not held, growing the ring (up to `capacity` slots) when full. */
  #append(low: number, high: number, sequence: number, capacity: number): void {
    if (this.#size === this.#slots) this.#grow(Math.max(this.#size + 1, Math.min(2 * this.#slots, capacity)));
    let slot = this.#head + this.#size;
    if (slot >= this.#slots) slot -= this.#slots;
    const w = 3 * slot;
    this.#words[w] = low;
    this.#words[w + 1] = high;
    this.#words[w + 2] = sequence;
    const mask = this.#table.length - 1;
    let cell = hashOf(low, high, sequence) & mask;
    while (this.#table[cell] !== 0) cell = (cell + 1) & mask;
    this.#table[cell] = slot + 1;
    this.#size += 1;
    this.#total += 1;
  }

  /** Forgets the oldest identity: its table cell is emptied by backward-shift deletion. */
  #evictOldest(): void {
    const slot = this.#head;
    const words = this.#words;
    const table = this.#table;
    const mask = table.length - 1;
    let hole = hashOf(words[3 * slot]!, words[3 * slot + 1]!, words[3 * slot + 2]!) & mask;
    while (table[hole] !== slot + 1) hole = (hole + 1) & mask;
    // Entries after the hole in its probe run move back into it unless their home cell lies
    // cyclically in (hole, cell]: then the probe from their home would not pass the hole.
    for (let cell = (hole + 1) & mask; table[cell] !== 0; cell = (cell + 1) & mask) {
      const entry = table[cell]!;
      const w = 3 * (entry - 1);
      const home = hashOf(words[w]!, words[w + 1]!, words[w + 2]!) & mask;
      const stays = hole <= cell ? home > hole && home <= cell : home > hole || home <= cell;
      if (!stays) {
        table[hole] = entry;
        hole = cell;
      }
    }
    table[hole] = 0;
    this.#head = this.#head + 1 === this.#slots ? 0 : this.#head + 1;
    this.#size -= 1;
  }

  /** Moves the identities, oldest first, into a ring of `slots` and rebuilds the table. */
  #grow(slots: number): void {
    const old = this.#words;
    const oldSlots = this.#slots;
    const count = this.#size;
    this.#words = new Uint32Array(3 * slots);
    this.#table = tableFor(slots);
    this.#slots = slots;
    const head = this.#head;
    const total = this.#total;
    this.#head = 0;
    this.#size = 0;
    for (let i = 0, slot = head; i < count; i += 1, slot = slot + 1 === oldSlots ? 0 : slot + 1) {
      this.#append(old[3 * slot]!, old[3 * slot + 1]!, old[3 * slot + 2]!, slots);
    }
    this.#total = total;
  }
}
