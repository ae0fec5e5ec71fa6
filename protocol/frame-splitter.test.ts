import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeFrame } from './encode-frame.ts';
import { frameArbitrary } from './frame-arbitraries.ts';
import { createFrameSplitter } from './frame-splitter.ts';
import type { FrameSplitItem } from './frame-splitter.ts';
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
function feed(bytes: Uint8Array, cuts: readonly number[]): FrameSplitItem[] {
  const splitter = createFrameSplitter();
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
          const rejected = items.reduce((s, i) => s + ('error' in i ? i.discarded.length : 0), 0);
          expect(rejected + expected.reduce((s, f) => s + f.length, 0)).toBe(concat(bytes).length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('reports each kind of damage with its code', () => {
    const badVersion = summary.slice();
    badVersion[4] = 9;
    const badCrc = summary.slice();
    badCrc[100]! ^= 1;
    const items = feed(concat([Uint8Array.of(1, 2, 3), summary, badVersion, badCrc, samples, summary.subarray(0, 20)]), []);
    expect(codesOf(items)).toEqual(['WW_ERR_FRAME_BAD_MAGIC', 'WW_ERR_FRAME_UNKNOWN_VERSION', 'WW_ERR_FRAME_CRC_MISMATCH', 'WW_ERR_FRAME_TRUNCATED']);
    expect(rawOf(items)).toEqual([summary, samples]);
    expect(codesOf(feed(summary.subarray(0, 3), []))).toEqual(['WW_ERR_FRAME_TRUNCATED']);
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
