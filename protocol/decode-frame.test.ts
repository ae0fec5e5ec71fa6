import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from './crc32c.ts';
import { decodeFrame } from './decode-frame.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError, PROTOCOL_ERROR_CODES } from './errors.ts';
import { frameArbitrary } from './testing/frame-arbitraries.ts';
import { FRAME_HEADER_BYTES, MAX_PAYLOAD_BYTES } from './limits.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';
import type { Frame } from './types.ts';
import { validateFrame } from './validate-frame.ts';

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

describe('decodeFrame identity texts held by their bytes', () => {
  it('decodes each frame to its own job, kernel, device name and uuid when thousands of distinct ones alternate (slots shared, replaced)', () => {
    // More distinct texts than the decoder holds (512 per cache), short and long, ASCII and not,
    // some differing in one byte only: every decode must give the frame's own text.
    const identities = Array.from({ length: 1500 }, (_, i) => ({
      job: i % 3 === 0 ? `job${i}` : i % 3 === 1 ? `jöb-${i}-${'x'.repeat(i % 70)}` : `j${String.fromCharCode(0x4e00 + (i % 500))}${i}`,
      kernel: i % 2 === 0 ? 'k' : `kernel${i % 7}`,
      name: i % 5 === 0 ? 'NVIDIA H100 80GB HBM3' : `device ${i % 11}`,
      uuid: `${(i * 2654435761 >>> 0).toString(16).padStart(8, '0')}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`,
    }));
    const encoded = identities.map((id) =>
      encodeFrame({ ...SAMPLE_LAUNCH_SUMMARY, job: id.job, kernel: id.kernel, device: { ...SAMPLE_LAUNCH_SUMMARY.device, name: id.name, uuid: id.uuid } }),
    );
    for (let pass = 0; pass < 2; pass++) {
      for (let i = 0; i < encoded.length; i++) {
        const frame = decodeFrame(encoded[(i * 7 + pass) % encoded.length]!);
        const id = identities[(i * 7 + pass) % encoded.length]!;
        expect([frame.job, frame.kernel, frame.device.name, frame.device.uuid]).toEqual([id.job, id.kernel, id.name, id.uuid]);
      }
    }
  });

  it('still rejects a name that is not UTF-8 after the same bytes decoded as a valid name elsewhere', () => {
    const valid = encodeFrame({ ...SAMPLE_LAUNCH_SUMMARY, job: 'ab' });
    expect(decodeFrame(valid).job).toBe('ab');
    // The job's second byte made 0xff: not UTF-8, whatever was held.
    const at = FRAME_HEADER_BYTES + 58 + 2;
    expect(codeOf(edited(valid, (_view, bytes) => (bytes[at] = 0xff)))).toBe('WW_ERR_FRAME_INVALID');
    expect(decodeFrame(valid).job).toBe('ab');
  });
});

describe('decodeFrame with { crcVerified: true }', () => {
  it('skips only the CRC: a payload changed after encoding decodes to the changed value instead of CRC_MISMATCH', () => {
    const changed = edited(summary, (v) => v.setUint32(FRAME_HEADER_BYTES + 8, 77, true), false); // frameSequence; CRC now stale
    expect(codeOf(changed)).toBe('WW_ERR_FRAME_CRC_MISMATCH');
    expect(() => decodeFrame(changed, { crcVerified: false })).toThrow(/CRC-32C/);
    expect(decodeFrame(changed, { crcVerified: true })).toEqual({ ...SAMPLE_LAUNCH_SUMMARY, frameSequence: 77 });
  });

  it('still runs every other check', () => {
    const codeWithOption = (bytes: Uint8Array): string => {
      try {
        decodeFrame(bytes, { crcVerified: true });
      } catch (error) {
        if (error instanceof FrameError) return error.code;
        throw error;
      }
      return 'decoded';
    };
    expect(codeWithOption(summary.subarray(0, summary.length - 1))).toBe('WW_ERR_FRAME_TRUNCATED');
    expect(codeWithOption(edited(summary, (_v, b) => (b[0] = 0x58), false))).toBe('WW_ERR_FRAME_BAD_MAGIC');
    expect(codeWithOption(edited(summary, (v) => v.setUint8(FRAME_HEADER_BYTES + 12, 2), false))).toBe('WW_ERR_FRAME_INVALID');
    expect(codeWithOption(edited(summary, (v) => v.setUint8(FRAME_HEADER_BYTES + 13, 33), false))).toBe('WW_ERR_FRAME_OVER_LIMIT');
    const longer = new Uint8Array(samples.length + 1);
    longer.set(samples);
    expect(codeWithOption(longer)).toBe('WW_ERR_FRAME_INVALID');
  });

  it('decodes every valid frame to what the fully checking decode gives', () => {
    fc.assert(
      fc.property(frameArbitrary, (frame) => {
        const bytes = encodeFrame(frame);
        expect(decodeFrame(bytes, { crcVerified: true })).toEqual(decodeFrame(bytes));
      }),
      { numRuns: 300 },
    );
  });
});

describe('decodeFrame field checks agree with validateFrame', () => {
  // The decoder checks fields on the raw bytes; for each rule, a frame object breaking it and
  // the same frame as bytes (a valid encoding with that field patched) must fail with the same
  // code and message.
  const utf8Length = (s: string): number => new TextEncoder().encode(s).length;
  const bodyAt = (f: Frame): number => FRAME_HEADER_BYTES + 58 + 3 + utf8Length(f.job) + utf8Length(f.kernel) + utf8Length(f.device.name);
  const S = SAMPLE_LAUNCH_SUMMARY;
  const G = SAMPLE_GROUP_SAMPLES;
  const ls = bodyAt(S);
  const gs = bodyAt(G);
  const entry = (i: number): number => ls + 76 + 12 * i;
  const firstGroup = gs + 20;
  /** Offset of the kernel's length byte in a LaunchSummary frame. */
  const kernelAt = FRAME_HEADER_BYTES + 58 + 1 + utf8Length(S.job);

  /** Re-encodes the payload with the job and kernel replaced (to make them empty). */
  function withStrings(job: string, kernel: string): Uint8Array {
    const jobBytes = new TextEncoder().encode(job);
    const kernelBytes = new TextEncoder().encode(kernel);
    const fixed = summary.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + 58);
    const rest = summary.subarray(FRAME_HEADER_BYTES + 58 + 2 + utf8Length(S.job) + utf8Length(S.kernel));
    const out = new Uint8Array(FRAME_HEADER_BYTES + 58 + 2 + jobBytes.length + kernelBytes.length + rest.length);
    out.set(summary.subarray(0, FRAME_HEADER_BYTES));
    let p = FRAME_HEADER_BYTES;
    out.set(fixed, p);
    p += 58;
    out[p++] = jobBytes.length;
    out.set(jobBytes, p);
    p += jobBytes.length;
    out[p++] = kernelBytes.length;
    out.set(kernelBytes, p);
    p += kernelBytes.length;
    out.set(rest, p);
    new DataView(out.buffer).setUint32(8, out.length - FRAME_HEADER_BYTES, true);
    return fixCrc(out);
  }

  const cases: { rule: string; object: unknown; bytes: Uint8Array }[] = [
    { rule: 'job not empty', object: { ...S, job: '' }, bytes: withStrings('', S.kernel) },
    { rule: "job without '/'", object: { ...S, job: `/${S.job.slice(1)}` }, bytes: edited(summary, (_v, b) => (b[FRAME_HEADER_BYTES + 59] = 0x2f)) },
    { rule: 'kernel not empty', object: { ...S, kernel: '' }, bytes: withStrings(S.job, '') },
    // Identity characters (contracts/stream-identity.ts identityCharactersProblem): S.job is
    // 'ts-vector-job', S.kernel 'divergence<32>', S.device.name 'NVIDIA H100 80GB HBM3'.
    { rule: 'kernel without a newline', object: { ...S, kernel: 'd\nvergence<32>' }, bytes: edited(summary, (_v, b) => (b[kernelAt + 2] = 0x0a)) },
    {
      rule: 'job without a C1 control (U+0085)',
      object: { ...S, job: 'ts\u0085ector-job' },
      bytes: edited(summary, (_v, b) => b.set([0xc2, 0x85], FRAME_HEADER_BYTES + 59 + 2)),
    },
    { rule: 'job without a backslash before =', object: { ...S, job: 'ts\\=ector-job' }, bytes: edited(summary, (_v, b) => b.set([0x5c, 0x3d], FRAME_HEADER_BYTES + 59 + 2)) },
    { rule: 'kernel without a trailing backslash', object: { ...S, kernel: 'divergence<32\\' }, bytes: edited(summary, (_v, b) => (b[kernelAt + 14] = 0x5c)) },
    {
      rule: 'device name without DEL',
      object: { ...S, device: { ...S.device, name: 'NVIDIA\u007fH100 80GB HBM3' } },
      bytes: edited(summary, (_v, b) => (b[kernelAt + 1 + 14 + 1 + 6] = 0x7f)),
    },
    { rule: 'groupSize >= 1', object: { ...S, groupSize: 0 }, bytes: edited(summary, (v) => v.setUint8(FRAME_HEADER_BYTES + 13, 0)) },
    { rule: 'groupSize <= 32', object: { ...S, groupSize: 255 }, bytes: edited(summary, (v) => v.setUint8(FRAME_HEADER_BYTES + 13, 255)) },
    { rule: 'clockHz >= 1', object: { ...S, device: { ...S.device, clockHz: 0 } }, bytes: edited(summary, (v) => v.setBigUint64(FRAME_HEADER_BYTES + 32, 0n, true)) },
    {
      rule: 'clockHz <= MAX_COUNT',
      object: { ...S, device: { ...S.device, clockHz: Number((1n << 64n) - 1n) } },
      bytes: edited(summary, (v) => v.setBigUint64(FRAME_HEADER_BYTES + 32, (1n << 64n) - 1n, true)),
    },
    { rule: 'groupCount <= MAX_COUNT', object: { ...S, groupCount: 2 ** 53 }, bytes: edited(summary, (v) => v.setBigUint64(ls, 1n << 53n, true)) },
    { rule: 'groupsCounted <= groupCount', object: { ...S, groupsCounted: 6 }, bytes: edited(summary, (v) => v.setBigUint64(ls + 8, 6n, true)) },
    { rule: 'sumMeasuredLoss finite', object: { ...S, sumMeasuredLoss: Number.NaN }, bytes: edited(summary, (v) => v.setFloat64(ls + 32, Number.NaN, true)) },
    { rule: 'sumCountsLoss >= 0', object: { ...S, sumCountsLoss: -1 }, bytes: edited(summary, (v) => v.setFloat64(ls + 40, -1, true)) },
    { rule: 'sumMaxCounts <= MAX_COUNT', object: { ...S, sumMaxCounts: 2 ** 60 }, bytes: edited(summary, (v) => v.setBigUint64(ls + 48, 1n << 60n, true)) },
    { rule: 'droppedSamples <= MAX_COUNT', object: { ...S, droppedSamples: 2 ** 53 }, bytes: edited(summary, (v) => v.setBigUint64(ls + 64, 1n << 53n, true)) },
    {
      rule: 'histogram bin < 2432',
      object: { ...S, histogram: S.histogram.map((e, i) => (i === 11 ? { ...e, bin: 4000 } : e)) },
      bytes: edited(summary, (v) => v.setUint32(entry(11), 4000, true)),
    },
    {
      rule: 'histogram bins increasing',
      object: { ...S, histogram: S.histogram.map((e, i) => (i === 1 ? { ...e, bin: 0 } : e)) },
      bytes: edited(summary, (v) => v.setUint32(entry(1), 0, true)),
    },
    {
      rule: 'histogram count >= 1',
      object: { ...S, histogram: S.histogram.map((e, i) => (i === 2 ? { ...e, count: 0 } : e)) },
      bytes: edited(summary, (v) => v.setBigUint64(entry(2) + 4, 0n, true)),
    },
    {
      rule: 'histogram total <= MAX_COUNT (exact total in the message)',
      object: { ...S, histogram: S.histogram.map((e, i) => (i < 3 ? { ...e, count: 2 ** 52 + i } : e)) },
      bytes: edited(summary, (v) => [0, 1, 2].forEach((i) => v.setBigUint64(entry(i) + 4, (1n << 52n) + BigInt(i), true))),
    },
    {
      rule: 'histogram total = groupsCounted * groupSize',
      object: { ...S, histogram: S.histogram.map((e, i) => (i === 0 ? { ...e, count: 3 } : e)) },
      bytes: edited(summary, (v) => v.setBigUint64(entry(0) + 4, 3n, true)),
    },
    { rule: 'GroupSamples groupCount <= MAX_COUNT', object: { ...G, groupCount: 2 ** 53 }, bytes: edited(samples, (v) => v.setBigUint64(gs, 1n << 53n, true)) },
    { rule: 'samplingStride >= 1', object: { ...G, samplingStride: 0 }, bytes: edited(samples, (v) => v.setUint32(gs + 12, 0, true)) },
    {
      rule: 'groupIndex < groupCount',
      object: { ...G, groups: G.groups.map((g, i) => (i === 2 ? { ...g, groupIndex: 2 ** 60 } : g)) },
      bytes: edited(samples, (v) => v.setBigUint64(firstGroup + 2 * (24 + 12 * 32), 1n << 60n, true)),
    },
  ];

  it.each(cases)('$rule', ({ object, bytes }) => {
    let expected: FrameError | undefined;
    try {
      validateFrame(object as Frame);
    } catch (error) {
      expected = error as FrameError;
    }
    expect(expected).toBeInstanceOf(FrameError);
    let got: unknown;
    try {
      decodeFrame(bytes);
    } catch (error) {
      got = error;
    }
    expect(got).toBeInstanceOf(FrameError);
    expect({ code: (got as FrameError).code, message: (got as FrameError).message }).toEqual({ code: expected!.code, message: expected!.message });
  });
});
