import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeFrame } from './decode-frame.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError } from './errors.ts';
import { frameArbitrary } from './testing/frame-arbitraries.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';
import type { Frame } from './types.ts';

function codeOfEncoding(frame: unknown): string {
  try {
    encodeFrame(frame as Frame);
  } catch (error) {
    if (error instanceof FrameError) return error.code;
    throw error;
  }
  return 'accepted';
}

describe('encodeFrame', () => {
  it('round-trips every valid frame: decode(encode(x)) deep-equals x', () => {
    fc.assert(
      fc.property(frameArbitrary, (frame) => {
        expect(decodeFrame(encodeFrame(frame))).toEqual(frame); // toEqual: fc.record objects have a null prototype
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic: encode(decode(bytes)) gives the same bytes', () => {
    fc.assert(
      fc.property(frameArbitrary, (frame) => {
        const bytes = encodeFrame(frame);
        expect(encodeFrame(decodeFrame(bytes))).toEqual(bytes);
      }),
      { numRuns: 100 },
    );
  });

  it('writes the sizes SPEC.md gives: 16 + 58 + strings + body', () => {
    const s = SAMPLE_LAUNCH_SUMMARY;
    const strings = 3 + new TextEncoder().encode(s.job + s.kernel + s.device.name).length;
    expect(encodeFrame(s).length).toBe(16 + 58 + strings + 76 + 12 * s.histogram.length);
    const g = SAMPLE_GROUP_SAMPLES;
    const gStrings = 3 + new TextEncoder().encode(g.job + g.kernel + g.device.name).length;
    expect(encodeFrame(g).length).toBe(16 + 58 + gStrings + 20 + g.groups.length * (24 + 12 * 32));
  });

  it('rejects values over a hard limit with WW_ERR_FRAME_OVER_LIMIT', () => {
    expect(codeOfEncoding({ ...SAMPLE_LAUNCH_SUMMARY, job: 'x'.repeat(256) })).toBe('WW_ERR_FRAME_OVER_LIMIT');
    expect(codeOfEncoding({ ...SAMPLE_LAUNCH_SUMMARY, kernel: 'é'.repeat(128) })).toBe('WW_ERR_FRAME_OVER_LIMIT');
    expect(codeOfEncoding({ ...SAMPLE_LAUNCH_SUMMARY, groupSize: 33 })).toBe('WW_ERR_FRAME_OVER_LIMIT');
    expect(codeOfEncoding({ ...SAMPLE_LAUNCH_SUMMARY, sumCounts: 2 ** 53 })).toBe('WW_ERR_FRAME_OVER_LIMIT');
    const g = SAMPLE_GROUP_SAMPLES.groups[0]!;
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, groups: Array.from({ length: 4097 }, () => g) })).toBe('WW_ERR_FRAME_OVER_LIMIT');
  });

  it('rejects fields out of range or inconsistent with WW_ERR_FRAME_INVALID, naming the field', () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ job: '' }, /job must not be empty/],
      [{ job: 'a/b' }, /job must not contain '\/'/],
      [{ kernel: 'bad \uD800 surrogate' }, /kernel must be well-formed/],
      [{ launchId: -1n }, /launchId/],
      [{ launchId: 1n << 64n }, /launchId/],
      [{ launchId: 5 }, /launchId/],
      [{ frameSequence: 2 ** 32 }, /frameSequence/],
      [{ groupSize: 0 }, /groupSize must be 1\.\.32, got 0/],
      [{ source: 'gpu' }, /source/],
      [{ sync: 1 }, /sync/],
      [{ device: { ...SAMPLE_LAUNCH_SUMMARY.device, uuid: 'NOT-A-UUID' } }, /uuid/],
      [{ device: { ...SAMPLE_LAUNCH_SUMMARY.device, clockHz: 0 } }, /clockHz/],
      [{ device: { ...SAMPLE_LAUNCH_SUMMARY.device, computeCapability: { major: 256, minor: 0 } } }, /computeCapability major/],
      [{ groupsCounted: 6 }, /groupsCounted \(6\) must be <= groupCount \(5\)/],
      [{ sumMeasuredLoss: Number.NaN }, /sumMeasuredLoss/],
      [{ sumCountsLoss: -1 }, /sumCountsLoss/],
      [{ histogram: [{ bin: 2, count: 12 }, { bin: 1, count: 12 }] }, /strictly increasing/],
      [{ histogram: [{ bin: 2432, count: 24 }] }, /bin must be < 2432/],
      [{ histogram: [{ bin: 1, count: 0 }, { bin: 2, count: 24 }] }, /counts must be >= 1/],
      [{ histogram: [{ bin: 1, count: 23 }] }, /sum to groupsCounted\*groupSize \(24\), got 23/],
      [{ histogram: [null] }, /histogram entries must be \{ bin, count \} objects, got null/],
      [{ type: 'other' }, /frame type/],
    ];
    for (const [change, message] of cases) {
      const frame = { ...SAMPLE_LAUNCH_SUMMARY, ...change };
      expect(() => encodeFrame(frame as Frame), JSON.stringify(change, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))).toThrow(message);
      expect(codeOfEncoding(frame)).toBe('WW_ERR_FRAME_INVALID');
    }
    const g = SAMPLE_GROUP_SAMPLES.groups[0]!;
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, groups: [{ ...g, groupIndex: 1 << 18 }] })).toBe('WW_ERR_FRAME_INVALID');
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, groups: [{ ...g, laneCounts: g.laneCounts.slice(1) }] })).toBe('WW_ERR_FRAME_INVALID');
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, samplingStride: 0 })).toBe('WW_ERR_FRAME_INVALID');
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, selection: 'random' })).toBe('WW_ERR_FRAME_INVALID');
    expect(() => encodeFrame({ ...SAMPLE_GROUP_SAMPLES, groups: [g, undefined as never] })).toThrow(/groups must be sample objects, got undefined/);
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, groups: [{ ...g, laneFinishClocks: [...g.laneFinishClocks.slice(1), 1n << 64n] }] })).toBe('WW_ERR_FRAME_INVALID');
    expect(codeOfEncoding({ ...SAMPLE_GROUP_SAMPLES, groups: [{ ...g, laneFinishClocks: [...g.laneFinishClocks.slice(1), -1n] }] })).toBe('WW_ERR_FRAME_INVALID');
  });

  it('sums histogram counts exactly near 2^53 (OVER_LIMIT message gives the exact total)', () => {
    const histogram = [
      { bin: 1, count: 2 ** 52 },
      { bin: 2, count: 2 ** 52 + 1 },
    ];
    expect(() => encodeFrame({ ...SAMPLE_LAUNCH_SUMMARY, histogram })).toThrow(/histogram total must be at most 9007199254740991, got 9007199254740993/);
    expect(codeOfEncoding({ ...SAMPLE_LAUNCH_SUMMARY, histogram })).toBe('WW_ERR_FRAME_OVER_LIMIT');
  });
});
