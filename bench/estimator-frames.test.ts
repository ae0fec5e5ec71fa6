// frameAt patches a copy of the template's encoding; the reference is the protocol's encoder
// run on the whole frame.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../protocol/index.ts';
import { frameAt, templates } from './estimator-frames.ts';

describe('frameAt', () => {
  const streams = templates(4, 11);

  it('gives the bytes the encoder gives for the whole frame, for any launch, launchId and end time', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
        fc.integer({ min: 1, max: 18_000_000_000_000 }),
        (s, launch, launchId, endMillis) => {
          const template = streams[s]!;
          const expected = encodeFrame({ ...template, launchId, frameSequence: launch, startUnixNanos: BigInt(endMillis - 1) * 1_000_000n, endUnixNanos: BigInt(endMillis) * 1_000_000n });
          expect(Buffer.compare(frameAt(template, launch, endMillis, launchId), Buffer.from(expected))).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('leaves the template encoding it keeps unchanged (each frame is a copy)', () => {
    const first = frameAt(streams[0]!, 7, 1_700_000_000_000);
    frameAt(streams[0]!, 8, 1_700_000_000_100, 99n);
    expect(Buffer.compare(frameAt(streams[0]!, 7, 1_700_000_000_000), first)).toBe(0);
  });

  it('refuses what the encoder refuses: a frame sequence beyond 32 bits', () => {
    expect(() => frameAt(streams[0]!, 2 ** 32, 1_700_000_000_000, 1n)).toThrow();
  });
});
