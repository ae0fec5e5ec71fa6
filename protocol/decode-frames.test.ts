import { describe, expect, it } from 'vitest';
import { decodeFrames, decodeFramesWithTruncatedTail, readFrameFile } from './decode-frames.ts';
import { FRAME_HEADER_BYTES } from './limits.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError } from './errors.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';

const summary = encodeFrame(SAMPLE_LAUNCH_SUMMARY);
const samples = encodeFrame(SAMPLE_GROUP_SAMPLES);
const file = new Uint8Array([...summary, ...samples, ...summary]);

describe('decodeFrames', () => {
  it('decodes concatenated frames in order, and nothing from no bytes', () => {
    expect(decodeFrames(file)).toEqual([SAMPLE_LAUNCH_SUMMARY, SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY]);
    expect(readFrameFile(new Uint8Array(0))).toEqual([]);
  });

  it('names the byte offset of the first bad frame', () => {
    const cut = file.subarray(0, file.length - 3);
    let caught: unknown;
    try {
      decodeFrames(cut);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FrameError);
    expect((caught as FrameError).code).toBe('WW_ERR_FRAME_TRUNCATED');
    expect((caught as FrameError).offset).toBe(summary.length + samples.length);
    expect((caught as FrameError).message).toMatch(new RegExp(`^frame at byte offset ${summary.length + samples.length}: `));
  });
});

describe('decodeFramesWithTruncatedTail', () => {
  const whole = [SAMPLE_LAUNCH_SUMMARY, SAMPLE_GROUP_SAMPLES].map((f) => encodeFrame(f));
  const file = Uint8Array.from(whole.flatMap((f) => [...f]));
  const last = encodeFrame(SAMPLE_LAUNCH_SUMMARY);

  it('returns the whole frames and the length of a last frame cut at any byte', () => {
    for (let cut = 1; cut < last.length; cut++) {
      const bytes = Uint8Array.from([...file, ...last.subarray(0, cut)]);
      const { frames, truncatedTailBytes } = decodeFramesWithTruncatedTail(bytes);
      expect(truncatedTailBytes, `cut at ${cut}`).toBe(cut);
      expect(frames).toEqual(decodeFrames(file));
    }
  });

  it('is decodeFrames for whole files, and still throws for damage that is not a cut-off tail', () => {
    expect(decodeFramesWithTruncatedTail(file)).toEqual({ frames: decodeFrames(file), truncatedTailBytes: 0 });
    // Garbage at the end (no magic) and a bad byte in the middle are errors, not a tail.
    expect(() => decodeFramesWithTruncatedTail(Uint8Array.from([...file, 0x00, 0x01]))).toThrow(FrameError);
    const damaged = file.slice();
    damaged[FRAME_HEADER_BYTES + 20] = damaged[FRAME_HEADER_BYTES + 20]! ^ 0xff;
    expect(() => decodeFramesWithTruncatedTail(damaged)).toThrow(/CRC-32C/);
  });
});
