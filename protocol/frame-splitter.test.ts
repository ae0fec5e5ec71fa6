import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeFrame } from './encode-frame.ts';
import { frameArbitrary } from './testing/frame-arbitraries.ts';
import { crc32c } from './crc32c.ts';
import { createFrameSplitter } from './frame-splitter.ts';
import type { FrameSplitItem, FrameSplitterOptions } from './frame-splitter.ts';
import { MAX_FRAME_BYTES } from './limits.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Cuts `bytes` at the given fractions and feeds the pieces one by one. */
function feed(bytes: Uint8Array, cuts: readonly number[], options?: FrameSplitterOptions): FrameSplitItem[] {
  const splitter = createFrameSplitter(options);
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].sort((a, b) => a - b);
  const items: FrameSplitItem[] = [];
  let from = 0;
  for (const to of [...points, bytes.length]) {
    items.push(...splitter.push(bytes.slice(from, to)));
    from = to;
  }
  items.push(...splitter.end());
  expect(splitter.pendingBytes).toBe(0);
  return items;
}

const rawOf = (items: readonly FrameSplitItem[]): Uint8Array[] => items.flatMap((i) => ('raw' in i ? [i.raw] : []));
const codesOf = (items: readonly FrameSplitItem[]): string[] => items.flatMap((i) => ('error' in i ? [i.error.code] : []));
type Rejection = Extract<FrameSplitItem, { error: unknown }>;
const rejectionsOf = (items: readonly FrameSplitItem[]): Rejection[] => items.flatMap((i) => ('error' in i ? [i] : []));
/** 'f' per frame, 'r' per rejection, in stream order. */
const kindsOf = (items: readonly FrameSplitItem[]): string => items.map((i) => ('raw' in i ? 'f' : 'r')).join('');
const ascii = (text: string): Uint8Array => new TextEncoder().encode(text);

/** `length` bytes of 'WWFR' repeated (ASCII 57 57 46 52), built without the code under test. */
function repeatedMagic(length: number): Uint8Array {
  const out = new Uint8Array(length);
  const magic = [0x57, 0x57, 0x46, 0x52];
  for (let i = 0; i < length; i++) out[i] = magic[i % 4]!;
  return out;
}

/** Feeds `prefix` then `bytes` in pieces of `chunkBytes` (views: the splitter must copy what it keeps), then ends. */
function feedInChunks(splitter: ReturnType<typeof createFrameSplitter>, bytes: Uint8Array, chunkBytes: number): { items: FrameSplitItem[]; maxPending: number } {
  const items: FrameSplitItem[] = [];
  let maxPending = 0;
  for (let at = 0; at < bytes.length; at += chunkBytes) {
    const out = splitter.push(bytes.subarray(at, Math.min(bytes.length, at + chunkBytes)));
    for (const item of out) items.push(item);
    if (splitter.pendingBytes > maxPending) maxPending = splitter.pendingBytes;
  }
  items.push(...splitter.end());
  return { items, maxPending };
}

/**
 * Independent oracle: true when a frame with a valid header and a matching CRC-32C starts at
 * `at` and fits in `bytes` (header fields read by hand, per SPEC.md "Header").
 */
function validFrameAt(bytes: Uint8Array, at: number): boolean {
  if (at + 16 > bytes.length) return false;
  if (bytes[at] !== 0x57 || bytes[at + 1] !== 0x57 || bytes[at + 2] !== 0x46 || bytes[at + 3] !== 0x52) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset + at, 16);
  const type = view.getUint16(6, true);
  const length = view.getUint32(8, true);
  if (view.getUint16(4, true) !== 1 || (type !== 1 && type !== 2) || length > 4 * 1024 * 1024) return false;
  if (at + 16 + length > bytes.length) return false;
  return crc32c(bytes.subarray(at + 16, at + 16 + length)) === view.getUint32(12, true);
}

const summary = encodeFrame(SAMPLE_LAUNCH_SUMMARY);
const samples = encodeFrame(SAMPLE_GROUP_SAMPLES);
const fractions = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 });

describe('createFrameSplitter', () => {
  it('returns each frame byte-for-byte, whatever the chunking', () => {
    fc.assert(
      fc.property(fc.array(frameArbitrary, { maxLength: 5 }), fractions, (frames, cuts) => {
        const encoded = frames.map(encodeFrame);
        const items = feed(concat(encoded), cuts);
        expect(codesOf(items)).toEqual([]);
        expect(rawOf(items)).toEqual(encoded);
      }),
      { numRuns: 100 },
    );
  });

  it('splits a stream fed one byte at a time', () => {
    const stream = concat([summary, samples, summary]);
    const items = feed(stream, Array.from({ length: stream.length }, (_, i) => i / stream.length));
    expect(rawOf(items)).toEqual([summary, samples, summary]);
  });

  it('resynchronises after garbage and after damaged frames, losing only the damaged bytes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant('summary'), fc.constant('samples'), fc.uint8Array({ minLength: 1, maxLength: 40 }), fc.constant('crc'), fc.constant('length')), {
          maxLength: 8,
        }),
        fractions,
        (parts, cuts) => {
          const expected: Uint8Array[] = [];
          const bytes = parts.map((part) => {
            if (part === 'summary' || part === 'samples') {
              const frame = part === 'summary' ? summary : samples;
              expected.push(frame);
              return frame;
            }
            if (part === 'crc') {
              const bad = summary.slice();
              bad[bad.length - 1]! ^= 1;
              return bad;
            }
            if (part === 'length') {
              // A corrupted length field that claims more bytes than follow (the frames after it must survive).
              const bad = summary.slice();
              new DataView(bad.buffer).setUint32(8, 100_000, true);
              return bad;
            }
            return part.map((b) => (b === 0x57 ? 0 : b)); // garbage without magic bytes
          });
          const items = feed(concat(bytes), cuts);
          expect(rawOf(items)).toEqual(expected);
          const rejected = rejectionsOf(items).reduce((s, i) => s + i.discardedLength, 0);
          expect(rejected + expected.reduce((s, f) => s + f.length, 0)).toBe(concat(bytes).length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('reports each kind of damage with its code, one item per stretch between valid frames', () => {
    const badVersion = summary.slice();
    badVersion[4] = 9;
    const badCrc = summary.slice();
    badCrc[100]! ^= 1;
    const items = feed(concat([Uint8Array.of(1, 2, 3), summary, badVersion, summary, badCrc, samples, summary.subarray(0, 20)]), []);
    expect(codesOf(items)).toEqual(['WW_ERR_FRAME_BAD_MAGIC', 'WW_ERR_FRAME_UNKNOWN_VERSION', 'WW_ERR_FRAME_CRC_MISMATCH', 'WW_ERR_FRAME_TRUNCATED']);
    expect(kindsOf(items)).toEqual('rfrfrfr');
    expect(rejectionsOf(items).map((r) => r.discardedLength)).toEqual([3, summary.length, summary.length, 20]);
    expect(rawOf(items)).toEqual([summary, summary, samples]);
    expect(codesOf(feed(summary.subarray(0, 3), []))).toEqual(['WW_ERR_FRAME_TRUNCATED']);
  });

  it('merges touching rejected regions into one item with the first code and the total length', () => {
    const badVersion = summary.slice();
    badVersion[4] = 9;
    const badCrc = summary.slice();
    badCrc[100]! ^= 1;
    const garbage = ascii('not a frame');
    const stream = concat([summary, badVersion, badCrc, garbage, repeatedMagic(40), samples, garbage, summary.subarray(0, 20)]);
    for (const cuts of [[], Array.from({ length: stream.length }, (_, i) => i / stream.length)]) {
      const items = feed(stream, cuts);
      expect(kindsOf(items)).toBe('frfr');
      const [first, second] = rejectionsOf(items);
      const firstLength = 2 * summary.length + garbage.length + 40;
      expect(first?.error.code).toBe('WW_ERR_FRAME_UNKNOWN_VERSION');
      expect(first?.discardedLength).toBe(firstLength);
      expect(first?.discarded).toEqual(concat([badVersion, badCrc, garbage, repeatedMagic(40)]));
      expect(first?.error.offset).toBe(summary.length);
      expect(first?.error.message).toContain(`skipped ${firstLength} bytes in total`);
      expect(second?.error.code).toBe('WW_ERR_FRAME_BAD_MAGIC');
      expect(second?.discardedLength).toBe(garbage.length + 20);
      expect(second?.error.message).toContain(`skipped ${garbage.length + 20} bytes in total up to the end of the stream`);
      expect(rawOf(items)).toEqual([summary, samples]);
    }
  });

  it('holds a rejected stretch open across pushes and returns it just before the next valid frame, or at end()', () => {
    const splitter = createFrameSplitter();
    expect(splitter.push(ascii('garbage, '))).toEqual([]);
    expect(splitter.push(repeatedMagic(4096))).toEqual([]);
    expect(splitter.push(new Uint8Array(1000))).toEqual([]);
    expect(splitter.discardedBytes).toBe(9 + 4096 + 1000);
    const items = splitter.push(summary);
    expect(kindsOf(items)).toBe('rf');
    expect(rejectionsOf(items)[0]?.discardedLength).toBe(9 + 4096 + 1000);
    expect(rejectionsOf(items)[0]?.error.code).toBe('WW_ERR_FRAME_BAD_MAGIC');
    // Garbage with no magic is consumed whole (nothing pending), and still reported by end().
    expect(splitter.push(new Uint8Array(50))).toEqual([]);
    expect(splitter.pendingBytes).toBe(0);
    const last = splitter.end();
    expect(kindsOf(last)).toBe('r');
    expect(rejectionsOf(last)[0]?.discardedLength).toBe(50);
    expect(rejectionsOf(last)[0]?.error.offset).toBe(9 + 4096 + 1000 + summary.length);
    expect(splitter.end()).toEqual([]);
  });

  it('finds a valid frame right after garbage, whichever byte the chunk boundary falls on', () => {
    // Garbage ends with magics and a partial magic, so a boundary can split a candidate header anywhere.
    const badType = summary.slice(0, 16);
    badType[6] = 7;
    const garbage = concat([repeatedMagic(22), badType, ascii('WWF')]);
    const stream = concat([garbage, samples, garbage, summary, ascii('WW')]);
    for (let cut = 0; cut <= stream.length; cut++) {
      const splitter = createFrameSplitter();
      const items = [...splitter.push(stream.subarray(0, cut)), ...splitter.push(stream.subarray(cut)), ...splitter.end()];
      expect(kindsOf(items)).toBe('rfrfr');
      // Byte comparison by Buffer: toEqual on typed arrays is slow for ~1800 cuts.
      expect(rawOf(items).map((raw) => raw.length)).toEqual([samples.length, summary.length]);
      expect(Buffer.concat(rawOf(items)).equals(Buffer.concat([samples, summary]))).toBe(true);
      expect(rejectionsOf(items).map((r) => r.discardedLength)).toEqual([garbage.length, garbage.length, 2]);
      expect(codesOf(items)).toEqual(['WW_ERR_FRAME_UNKNOWN_VERSION', 'WW_ERR_FRAME_UNKNOWN_VERSION', 'WW_ERR_FRAME_TRUNCATED']);
    }
  });

  it.each([1, 7, 4096, 65536])('turns 8 MiB of repeated WWFR then 3 frames in %i-byte chunks into ONE rejection and the 3 frames', (chunkBytes) => {
    const garbageLength = 8 * 1024 * 1024;
    const frames = [summary, samples, summary];
    const splitter = createFrameSplitter();
    const { items, maxPending } = feedInChunks(splitter, concat([repeatedMagic(garbageLength), ...frames]), chunkBytes);
    expect(kindsOf(items)).toBe('rfff');
    const [rejection] = rejectionsOf(items);
    // 'WWFR' then 'WW' where the version should be: the first problem is the version 0x5757.
    expect(rejection?.error.code).toBe('WW_ERR_FRAME_UNKNOWN_VERSION');
    expect(rejection?.error.offset).toBe(0);
    expect(rejection?.error.message).toContain('skipped 8388608 bytes in total');
    expect(rejection?.discardedLength).toBe(8388608);
    expect(rejection?.discarded.length).toBe(65536);
    expect(Buffer.from(rejection!.discarded).equals(Buffer.from(repeatedMagic(65536)))).toBe(true);
    expect(rawOf(items)).toEqual(frames);
    expect(splitter.discardedBytes).toBe(8388608);
    expect(splitter.frameCount).toBe(3);
    // Never more than a partial header plus the chunk is pending while the garbage streams by.
    expect(maxPending).toBeLessThanOrEqual(Math.max(summary.length, samples.length) + chunkBytes);
  }, 120_000);

  it('turns 20 MiB of zeros in 64 KiB chunks then frames into one rejection (a socket error budget is not spent)', () => {
    const garbageLength = 20 * 1024 * 1024;
    const splitter = createFrameSplitter({ maxSampleBytes: 1000 });
    const { items } = feedInChunks(splitter, concat([summary, new Uint8Array(garbageLength), samples, summary]), 65536);
    expect(kindsOf(items)).toBe('frff');
    const [rejection] = rejectionsOf(items);
    expect(rejection?.error.code).toBe('WW_ERR_FRAME_BAD_MAGIC');
    expect(rejection?.error.offset).toBe(summary.length);
    expect(rejection?.discardedLength).toBe(garbageLength);
    expect(rejection?.discarded).toEqual(new Uint8Array(1000));
    expect(rawOf(items)).toEqual([summary, samples, summary]);
    expect(splitter.discardedBytes).toBe(garbageLength);
  });

  it('keeps the first maxSampleBytes of a stretch as its sample, and checks the option', () => {
    const garbage = Uint8Array.from({ length: 300 }, (_, i) => (i * 7 + 1) % 0x57);
    for (const maxSampleBytes of [0, 1, 100, 299, 300, 301, 100_000]) {
      const [rejection] = rejectionsOf(feed(concat([garbage, summary]), [0.1, 0.5], { maxSampleBytes }));
      expect(rejection?.discardedLength).toBe(300);
      expect(rejection?.discarded).toEqual(garbage.subarray(0, Math.min(300, maxSampleBytes)));
    }
    for (const maxSampleBytes of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createFrameSplitter({ maxSampleBytes })).toThrow(RangeError);
    }
  });

  it('returns frames byte-identical and one rejection per garbage stretch, for garbage of any kind between frames (property)', () => {
    const badVersion = summary.slice();
    badVersion[4] = 2;
    const badCrc = samples.slice();
    badCrc[samples.length - 1]! ^= 0x40;
    const bogusLength = summary.slice();
    new DataView(bogusLength.buffer).setUint32(8, 100_000, true);
    const overLimit = summary.slice();
    new DataView(overLimit.buffer).setUint32(8, 4 * 1024 * 1024 + 1, true);
    const garbage: fc.Arbitrary<Uint8Array> = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 40 }),
      fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => b.map((x) => [0x57, 0x46, 0x52, 0x00, 0x01, 0x02][x % 6]!)), // dense in magic bytes
      fc.integer({ min: 1, max: 300 }).map(repeatedMagic),
      fc.integer({ min: 1, max: summary.length - 1 }).map((n) => summary.slice(0, n)), // a frame cut off
      fc.constantFrom(badVersion, badCrc, bogusLength, overLimit, ascii('W'), ascii('WW'), ascii('WWF'), new Uint8Array(64)),
    );
    const segment = fc.oneof(
      { arbitrary: fc.constantFrom(summary, samples).map((frame) => ({ frame })), weight: 1 },
      { arbitrary: frameArbitrary.map((f) => ({ frame: encodeFrame(f) })), weight: 1 },
      { arbitrary: garbage.map((bytes) => ({ garbage: bytes })), weight: 3 },
    );
    const chunking = fc.oneof(fractions.map((cuts) => ({ cuts })), fc.integer({ min: 1, max: 64 }).map((size) => ({ size })));
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 12 }), chunking, fc.constantFrom(undefined, 0, 1, 5, 64), (segments, chunks, maxSampleBytes) => {
        // Expected values from the segments alone: frames in order, garbage runs merged.
        const frames: Uint8Array[] = [];
        const runs: { start: number; bytes: Uint8Array[] }[] = [];
        const garbageStarts: [number, number][] = [];
        let kinds = '';
        let at = 0;
        let previousWasGarbage = false;
        for (const s of segments) {
          if ('frame' in s) {
            frames.push(s.frame);
            kinds += 'f';
            previousWasGarbage = false;
            at += s.frame.length;
          } else {
            if (!previousWasGarbage) {
              runs.push({ start: at, bytes: [] });
              kinds += 'r';
            }
            runs[runs.length - 1]!.bytes.push(s.garbage);
            garbageStarts.push([at, at + s.garbage.length]);
            previousWasGarbage = true;
            at += s.garbage.length;
          }
        }
        const stream = concat(segments.map((s) => ('frame' in s ? s.frame : s.garbage)));
        // The garbage must not by chance hold a valid frame (a header with a matching CRC).
        fc.pre(garbageStarts.every(([from, to]) => Array.from({ length: to - from }, (_, k) => from + k).every((p) => !validFrameAt(stream, p))));

        const splitter = createFrameSplitter(maxSampleBytes === undefined ? {} : { maxSampleBytes });
        const items: FrameSplitItem[] = [];
        if ('size' in chunks) {
          items.push(...feedInChunks(splitter, stream, chunks.size).items);
        } else {
          const points = [...new Set(chunks.cuts.map((c) => Math.floor(c * stream.length)))].sort((a, b) => a - b);
          let from = 0;
          for (const to of [...points, stream.length]) {
            items.push(...splitter.push(stream.slice(from, to)));
            from = to;
          }
          items.push(...splitter.end());
        }
        const garbageBytes = runs.reduce((n, r) => n + r.bytes.reduce((m, b) => m + b.length, 0), 0);
        expect(rawOf(items)).toEqual(frames);
        expect(kindsOf(items)).toBe(kinds);
        const rejections = rejectionsOf(items);
        expect(rejections).toHaveLength(runs.length);
        rejections.forEach((rejection, i) => {
          const run = concat(runs[i]!.bytes);
          expect(rejection.discardedLength).toBe(run.length);
          expect(rejection.error.offset).toBe(runs[i]!.start);
          expect(rejection.discarded).toEqual(run.subarray(0, Math.min(run.length, maxSampleBytes ?? 65536)));
        });
        expect(rejections.reduce((n, r) => n + r.discardedLength, 0)).toBe(garbageBytes);
        expect(splitter.discardedBytes).toBe(garbageBytes);
        expect(splitter.pendingBytes).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('rejects frames above its own payload limit and stays bounded', () => {
    const splitter = createFrameSplitter({ maxPayloadBytes: 400 });
    const items = splitter.push(concat([samples, summary]));
    expect(codesOf(items)).toEqual(['WW_ERR_FRAME_OVER_LIMIT']);
    expect(rawOf(items)).toEqual([summary]);
    expect(splitter.discardedBytes).toBe(samples.length);
    expect(splitter.frameCount).toBe(1);
    expect(() => createFrameSplitter({ maxPayloadBytes: MAX_FRAME_BYTES })).toThrow(RangeError);
  });

  it('holds at most one frame while waiting, even when fed a long frame in small chunks', () => {
    const splitter = createFrameSplitter();
    let maxPending = 0;
    for (let i = 0; i < samples.length; i += 7) {
      expect(splitter.push(samples.subarray(i, i + 7)).length).toBeLessThanOrEqual(1);
      maxPending = Math.max(maxPending, splitter.pendingBytes);
    }
    expect(maxPending).toBeLessThan(samples.length);
    expect(splitter.pendingBytes).toBe(0);
  });

  it('keeps its pending bytes safe from a caller that reuses its chunk buffer', () => {
    const splitter = createFrameSplitter();
    const buffer = new Uint8Array(summary.length);
    buffer.set(summary.subarray(0, 50));
    expect(splitter.push(buffer.subarray(0, 50))).toEqual([]);
    buffer.fill(0xee);
    buffer.set(summary.subarray(50), 0);
    expect(rawOf(splitter.push(buffer.subarray(0, summary.length - 50)))).toEqual([summary]);
  });
});

describe('createFrameSplitter({ chunksAreImmutable: true })', () => {
  const frames = [SAMPLE_LAUNCH_SUMMARY, SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY].map((f) => encodeFrame(f));
  const stream = Uint8Array.from(frames.flatMap((f) => [...f, ...[0x57, 0x57, 0x46, 0x52, 1, 2, 3]]));
  const run = (options: FrameSplitterOptions, cuts: readonly number[]): FrameSplitItem[] => {
    const splitter = createFrameSplitter(options);
    const items: FrameSplitItem[] = [];
    let at = 0;
    for (const cut of [...cuts, stream.length]) {
      items.push(...splitter.push(stream.slice(at, Math.max(at, cut))));
      at = Math.max(at, cut);
    }
    items.push(...splitter.end());
    return items;
  };
  const plain = (items: FrameSplitItem[]) => items.map((item) => ('raw' in item ? { raw: [...item.raw] } : { code: item.error.code, length: item.discardedLength, sample: [...item.discarded] }));

  it('returns the same frames and rejections as copying, for any chunking', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: stream.length - 1 }), { maxLength: 12 }), (cuts) => {
        cuts.sort((a, b) => a - b);
        expect(plain(run({ chunksAreImmutable: true }, cuts))).toEqual(plain(run({}, cuts)));
      }),
      { numRuns: 300 },
    );
  });

  it('returns a frame inside one chunk as a view of that chunk, and copies by default', () => {
    const chunk = encodeFrame(SAMPLE_GROUP_SAMPLES);
    const [view] = createFrameSplitter({ chunksAreImmutable: true }).push(chunk);
    const [copy] = createFrameSplitter().push(chunk);
    expect(view !== undefined && 'raw' in view && view.raw.buffer).toBe(chunk.buffer);
    expect(copy !== undefined && 'raw' in copy && copy.raw.buffer).not.toBe(chunk.buffer);
  });
});
