import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from './crc32c.ts';
import { decodeFrame } from './decode-frame.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError, PROTOCOL_ERROR_CODES } from './errors.ts';
import { frameArbitrary } from './frame-arbitraries.ts';
import { FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES } from './limits.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';

function fixCrc(bytes: Uint8Array): Uint8Array {
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(12, crc32c(bytes.subarray(FRAME_HEADER_BYTES)), true);
  return bytes;
}

function codeOf(bytes: Uint8Array): string {
  try {
    decodeFrame(bytes);
  } catch (error) {
    if (error instanceof FrameError) return error.code;
    throw error;
  }
  return 'decoded';
}

const summary = encodeFrame(SAMPLE_LAUNCH_SUMMARY);
const samples = encodeFrame(SAMPLE_GROUP_SAMPLES);

function edited(source: Uint8Array, change: (view: DataView, bytes: Uint8Array) => void, recomputeCrc = true): Uint8Array {
  const b = source.slice();
  change(new DataView(b.buffer), b);
  return recomputeCrc ? fixCrc(b) : b;
}

describe('decodeFrame', () => {
  it('raises every documented error code for the problem it names', () => {
    const seen = new Set<string>();
    const expectCode = (bytes: Uint8Array, code: string): void => {
      expect(codeOf(bytes)).toBe(code);
      seen.add(code);
    };
    expectCode(summary.subarray(0, 15), 'WW_ERR_FRAME_TRUNCATED');
    expectCode(summary.subarray(0, summary.length - 1), 'WW_ERR_FRAME_TRUNCATED');
    expectCode(edited(summary, (_v, b) => (b[3] = 0x31), false), 'WW_ERR_FRAME_BAD_MAGIC');
    expectCode(edited(summary, (v) => v.setUint16(4, 0, true), false), 'WW_ERR_FRAME_UNKNOWN_VERSION');
    expectCode(edited(summary, (v) => v.setUint16(6, 0, true), false), 'WW_ERR_FRAME_UNKNOWN_TYPE');
    expectCode(edited(summary, (_v, b) => (b[40] = b[40]! ^ 1), false), 'WW_ERR_FRAME_CRC_MISMATCH');
    expectCode(edited(summary, (v) => v.setUint32(8, MAX_PAYLOAD_BYTES + 1, true), false), 'WW_ERR_FRAME_OVER_LIMIT');
    expectCode(edited(samples, (v) => v.setUint32(samples.length - 3 * (24 + 12 * 32) - 4, 4097, true)), 'WW_ERR_FRAME_OVER_LIMIT');
    expectCode(edited(summary, (v) => v.setUint8(FRAME_HEADER_BYTES + 15, 1)), 'WW_ERR_FRAME_INVALID');
    expect([...seen].sort()).toEqual([...PROTOCOL_ERROR_CODES].sort());
  });

  it('never allocates for a count the bytes cannot hold: a sample count of 4096 in a short frame is INVALID', () => {
    const bytes = edited(samples, (v) => v.setUint32(samples.length - 3 * (24 + 12 * 32) - 4, 4096, true));
    expect(() => decodeFrame(bytes)).toThrow(/payload ends inside samples/);
  });

  it('rejects a payload changed at any single byte (CRC), and trailing bytes after the frame', () => {
    for (let i = FRAME_HEADER_BYTES; i < summary.length; i++) {
      expect(codeOf(edited(summary, (_v, b) => (b[i] = b[i]! ^ 0x10), false))).toBe('WW_ERR_FRAME_CRC_MISMATCH');
    }
    const longer = new Uint8Array(summary.length + 1);
    longer.set(summary);
    expect(() => decodeFrame(longer)).toThrow(/trailing bytes/);
  });

  it('throws nothing but FrameError for random mutations and truncations of valid frames', () => {
    const mutation = fc.record({
      frame: frameArbitrary,
      edits: fc.array(fc.record({ at: fc.nat(), value: fc.nat({ max: 255 }), kind: fc.constantFrom('set', 'cut', 'insert') }), { minLength: 1, maxLength: 4 }),
      recomputeCrc: fc.boolean(),
    });
    let decoded = 0;
    fc.assert(
      fc.property(mutation, ({ frame, edits, recomputeCrc }) => {
        let b = encodeFrame(frame);
        for (const { at, value, kind } of edits) {
          const i = at % b.length;
          if (kind === 'set') b[i] = value;
          else if (kind === 'cut') b = b.slice(0, i);
          else b = Uint8Array.from([...b.subarray(0, i), value, ...b.subarray(i)]);
          if (b.length === 0) b = Uint8Array.of(value);
        }
        if (recomputeCrc && b.length >= FRAME_HEADER_BYTES) fixCrc(b);
        try {
          decodeFrame(b);
          decoded++;
        } catch (error) {
          expect(error).toBeInstanceOf(FrameError);
          expect(PROTOCOL_ERROR_CODES).toContain((error as FrameError).code);
        }
      }),
      { numRuns: 1500 },
    );
    expect(decoded).toBeLessThan(1500);
  });

  it('throws nothing but FrameError for arbitrary bytes behind a valid header', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom(1, 2), (payload, type) => {
        const b = new Uint8Array(FRAME_HEADER_BYTES + payload.length);
        b.set([0x57, 0x57, 0x46, 0x52, 1, 0, type, 0]);
        new DataView(b.buffer).setUint32(8, payload.length, true);
        b.set(payload, FRAME_HEADER_BYTES);
        fixCrc(b);
        try {
          decodeFrame(b);
        } catch (error) {
          expect(error).toBeInstanceOf(FrameError);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
