import { describe, expect, it } from 'vitest';
import { decodeFrames, readFrameFile } from './decode-frames.ts';
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
