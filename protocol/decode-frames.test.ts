import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeFrames, readFrameFile, scanFrameFile } from './decode-frames.ts';
import { frameArbitrary } from './testing/frame-arbitraries.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, MAX_PAYLOAD_BYTES } from './limits.ts';
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

/** Frame files built from whole frames, and the two kinds of damage docs/advise.md names (damaged stretches, a cut-off last frame). */
const eight = Array.from({ length: 8 }, (_, i) => encodeFrame(i % 2 === 0 ? { ...SAMPLE_LAUNCH_SUMMARY, launchId: BigInt(i) } : { ...SAMPLE_GROUP_SAMPLES, launchId: BigInt(i) }));
const eightFile = concat(eight);

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A 16-byte header with the magic, version 1, type 1, a 4 MiB payload length and CRC 0. */
function fakeHeader(): Uint8Array {
  const header = new Uint8Array(FRAME_HEADER_BYTES);
  header.set(FRAME_MAGIC, 0);
  const view = new DataView(header.buffer);
  view.setUint16(4, 1, true);
  view.setUint16(6, 1, true);
  view.setUint32(8, MAX_PAYLOAD_BYTES, true);
  return header;
}

describe('scanFrameFile', () => {
  it('a length field corrupted upwards in frame 2 of 8: the 7 other frames are read, the frame is one stretch of its exact length', () => {
    const bytes = eightFile.slice();
    const second = eight[0]!.length;
    new DataView(bytes.buffer).setUint32(second + 8, MAX_PAYLOAD_BYTES, true);
    const scan = scanFrameFile(bytes);
    expect(scan.frames.map((f) => f.launchId)).toEqual([0n, 2n, 3n, 4n, 5n, 6n, 7n]);
    expect(scan.damaged).toEqual([{ offset: second, length: eight[1]!.length, code: 'WW_ERR_FRAME_TRUNCATED', message: expect.any(String) as string }]);
    expect(scan.damagedBytes).toBe(eight[1]!.length);
    expect(scan.truncatedTailBytes).toBe(0);
    expect(scan.frameBytes + scan.damagedBytes).toBe(bytes.length);
  });

  it('a fake 16-byte header claiming 4 MiB in front of an intact file: every frame is read, the 16 bytes are one stretch', () => {
    const bytes = concat([fakeHeader(), eightFile]);
    const scan = scanFrameFile(bytes);
    expect(scan.frames).toEqual(decodeFrames(eightFile));
    expect(scan.frameOffsets[0]).toBe(16);
    expect(scan.damaged).toEqual([{ offset: 0, length: 16, code: 'WW_ERR_FRAME_TRUNCATED', message: expect.any(String) as string }]);
    expect(scan.truncatedTailBytes).toBe(0);
  });

  it('a last frame cut at any byte is a truncated tail, not damage', () => {
    const last = encodeFrame(SAMPLE_GROUP_SAMPLES);
    for (let cut = 1; cut < last.length; cut++) {
      const scan = scanFrameFile(concat([eightFile, last.subarray(0, cut)]));
      expect(scan.truncatedTailBytes, `cut at ${cut}`).toBe(cut);
      expect(scan.damaged, `cut at ${cut}`).toEqual([]);
      expect(scan.frames).toEqual(decodeFrames(eightFile));
    }
  });

  it('a damaged frame before a cut-off last frame is damage; a whole last frame with a corrupted length is damage, not a tail', () => {
    const cutLast = eight[7]!.subarray(0, 40);
    const withDamagedSeventh = concat([...eight.slice(0, 7), cutLast]);
    const seventhAt = eight.slice(0, 6).reduce((n, f) => n + f.length, 0);
    new DataView(withDamagedSeventh.buffer).setUint32(seventhAt + 8, MAX_PAYLOAD_BYTES, true);
    const scan = scanFrameFile(withDamagedSeventh);
    expect(scan.frames).toHaveLength(6);
    expect(scan.damaged.map((d) => [d.offset, d.length])).toEqual([[seventhAt, eight[6]!.length]]);
    expect(scan.truncatedTailBytes).toBe(40);

    const lastAt = eightFile.length - eight[7]!.length;
    const corruptedLast = eightFile.slice();
    new DataView(corruptedLast.buffer).setUint32(lastAt + 8, eight[7]!.length, true);
    const last = scanFrameFile(corruptedLast);
    expect(last.frames).toHaveLength(7);
    expect(last.damaged.map((d) => [d.offset, d.length])).toEqual([[lastAt, eight[7]!.length]]);
    expect(last.truncatedTailBytes).toBe(0);
  });

  it('garbage at the end and a flipped payload byte are damage with their exact lengths', () => {
    const trailing = scanFrameFile(concat([eightFile, Uint8Array.of(0, 1)]));
    expect(trailing.damaged.map((d) => [d.offset, d.length, d.code])).toEqual([[eightFile.length, 2, 'WW_ERR_FRAME_BAD_MAGIC']]);
    const flipped = eightFile.slice();
    flipped[FRAME_HEADER_BYTES + 20] = flipped[FRAME_HEADER_BYTES + 20]! ^ 0xff;
    const crc = scanFrameFile(flipped);
    expect(crc.damaged.map((d) => [d.offset, d.length, d.code])).toEqual([[0, eight[0]!.length, 'WW_ERR_FRAME_CRC_MISMATCH']]);
    expect(crc.frames).toHaveLength(7);
  });

  it('random damage (bytes inserted, overwritten, deleted): every frame the damage does not touch is read at its offset, and the bytes add up', () => {
    const damage = fc.record({
      kind: fc.constantFrom('insert' as const, 'overwrite' as const, 'delete' as const),
      at: fc.nat(),
      bytes: fc.uint8Array({ minLength: 1, maxLength: 300 }),
    });
    fc.assert(
      fc.property(fc.array(frameArbitrary, { minLength: 1, maxLength: 8 }), fc.array(damage, { minLength: 1, maxLength: 4 }), (frameList, damages) => {
        // Each frame's span in the current bytes, undefined once damage touched it.
        let bytes = concat(frameList.map((f) => encodeFrame(f)));
        let spans: ({ offset: number; length: number } | undefined)[] = [];
        let at = 0;
        for (const f of frameList) {
          const length = encodeFrame(f).length;
          spans.push({ offset: at, length });
          at += length;
        }
        for (const d of damages) {
          const position = d.at % (bytes.length + 1);
          const size = d.kind === 'insert' ? 0 : Math.min(d.bytes.length, bytes.length - position);
          const added = d.kind === 'delete' ? 0 : d.bytes.length;
          const replacement = d.kind === 'delete' ? new Uint8Array(0) : d.bytes;
          bytes = concat([bytes.subarray(0, position), replacement, bytes.subarray(position + size)]);
          spans = spans.map((s) => {
            if (s === undefined) return undefined;
            const end = s.offset + s.length;
            if (end <= position) return s;
            if (s.offset >= position + size) return { offset: s.offset + added - size, length: s.length };
            if (d.kind === 'insert' && s.offset === position) return { offset: s.offset + added, length: s.length };
            return undefined;
          });
        }
        const scan = scanFrameFile(bytes);
        expect(scan.frameBytes + scan.damagedBytes + scan.truncatedTailBytes).toBe(bytes.length);
        expect(scan.damaged.reduce((n, s) => n + s.length, 0)).toBe(scan.damagedBytes);
        frameList.forEach((frame, i) => {
          const span = spans[i];
          if (span === undefined) return;
          const index = scan.frameOffsets.indexOf(span.offset);
          expect(index, `frame ${i} at ${span.offset}`).toBeGreaterThanOrEqual(0);
          expect(scan.frames[index]).toEqual(frame);
        });
      }),
      { numRuns: 300 },
    );
  });
});
