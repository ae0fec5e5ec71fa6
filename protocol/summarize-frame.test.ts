// summarizeFrame and decodeFrameColumns must accept exactly the frames decodeFrame
// accepts, fail with the same code and message otherwise, and summarise what decodeFrame decodes. Its lane-free GroupSamples path is
// separate code, so it is checked against the full decoder on valid frames, on random byte
// mutations (CRC recomputed so the payload checks are reached), and on the rules a GroupSamples
// payload can break (groupIndex, groupCount, samplingStride, lengths).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.ts';
import { decodeFrame, decodeFrameColumns, summarizeFrame } from './decode-frame.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError } from './errors.ts';
import { frameArbitrary } from './testing/frame-arbitraries.ts';
import { FRAME_HEADER_BYTES } from './limits.ts';
import { SAMPLE_GROUP_SAMPLES, SAMPLE_LAUNCH_SUMMARY } from './sample-frames.ts';
import type { Frame, GroupSamplesOffsetsFrame, LaunchSummaryColumnsFrame } from './types.ts';

type Outcome = { ok: true; summary: unknown } | { ok: false; code: string; message: string };

function outcome(run: () => unknown): Outcome {
  try {
    return { ok: true, summary: run() };
  } catch (error) {
    if (!(error instanceof FrameError)) throw error;
    return { ok: false, code: error.code, message: error.message };
  }
}

/** What summarizeFrame must return for a frame decodeFrame decoded, computed from the decoded frame. */
function expectedSummary(frame: Frame | GroupSamplesOffsetsFrame | LaunchSummaryColumnsFrame): unknown {
  const lanes = frame.type === 'launch-summary' ? frame.groupsCounted * frame.groupSize : ('samples' in frame ? frame.samples.groups : frame.groups.length) * frame.groupSize;
  return { type: frame.type, job: frame.job, kernel: frame.kernel, groupSize: frame.groupSize, source: frame.source, deviceUuid: frame.device.uuid, threadRecords: lanes };
}

function agree(bytes: Uint8Array): Outcome {
  const full = outcome(() => expectedSummary(decodeFrame(bytes)));
  const summarized = outcome(() => summarizeFrame(bytes));
  expect(summarized).toEqual(full);
  // The estimator's decoder (columns) has the same acceptance, codes and messages.
  const columns = outcome(() => expectedSummary(decodeFrameColumns(bytes)));
  expect(columns).toEqual(full);
  return full;
}

function withCrc(bytes: Uint8Array): Uint8Array {
  if (bytes.length >= FRAME_HEADER_BYTES) new DataView(bytes.buffer, bytes.byteOffset).setUint32(12, crc32c(bytes.subarray(FRAME_HEADER_BYTES)), true);
  return bytes;
}

describe('summarizeFrame', () => {
  it('summarises every valid frame as decodeFrame decodes it', () => {
    fc.assert(
      fc.property(frameArbitrary, (frame) => {
        expect(agree(encodeFrame(frame)).ok).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('fails like decodeFrame (same code and message) on random mutations with a recomputed CRC', () => {
    let rejected = 0;
    fc.assert(
      fc.property(
        frameArbitrary,
        fc.array(fc.record({ at: fc.nat(), value: fc.nat({ max: 255 }), kind: fc.constantFrom('set', 'cut', 'insert') }), { minLength: 1, maxLength: 3 }),
        (frame, edits) => {
          let b = encodeFrame(frame);
          for (const { at, value, kind } of edits) {
            const i = FRAME_HEADER_BYTES + (at % Math.max(1, b.length - FRAME_HEADER_BYTES));
            if (kind === 'set' && i < b.length) b[i] = value;
            else if (kind === 'cut') b = b.slice(0, i);
            else b = Uint8Array.from([...b.subarray(0, i), value, ...b.subarray(i)]);
          }
          const fixed = withCrc(b);
          // Keep the header's payload length consistent with a cut or insert half of the time, so
          // payload parsing (not only the length check) is reached.
          if (fixed.length >= FRAME_HEADER_BYTES && edits.length % 2 === 0) {
            new DataView(fixed.buffer, fixed.byteOffset).setUint32(8, fixed.length - FRAME_HEADER_BYTES, true);
          }
          if (!agree(fixed).ok) rejected++;
        },
      ),
      { numRuns: 3000 },
    );
    expect(rejected).toBeGreaterThan(300);
  });

  describe('GroupSamples rules on the wire, one by one', () => {
    const base = encodeFrame(SAMPLE_GROUP_SAMPLES);
    const payloadView = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset + FRAME_HEADER_BYTES);
    // The GroupSamples body (groupCount u64, selection, 3 reserved, samplingStride u32, sample count
    // u32, then the samples) ends the payload: its start follows from the sizes SPEC.md gives.
    const bodyAt = base.length - FRAME_HEADER_BYTES - (20 + SAMPLE_GROUP_SAMPLES.groups.length * (24 + 12 * SAMPLE_GROUP_SAMPLES.groupSize));
    const edit = (change: (view: DataView) => void): Uint8Array => {
      const copy = base.slice();
      change(payloadView(copy));
      return withCrc(copy);
    };
    it('agrees on the unchanged frame and finds the body where the decoder does', () => {
      expect(agree(base).ok).toBe(true);
      // groupCount (u64) at the body's start: setting it to the frame's own value keeps it valid.
      expect(agree(edit((v) => v.setUint32(bodyAt, SAMPLE_GROUP_SAMPLES.groupCount, true))).ok).toBe(true);
    });
    const rules: [string, (view: DataView) => void, string][] = [
      ['groupIndex ≥ groupCount', (v) => v.setUint32(bodyAt + 20, SAMPLE_GROUP_SAMPLES.groupCount, true), 'WW_ERR_FRAME_INVALID'],
      ['groupCount above the count limit', (v) => v.setUint32(bodyAt + 4, 0xffffffff, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['samplingStride 0', (v) => v.setUint32(bodyAt + 12, 0, true), 'WW_ERR_FRAME_INVALID'],
      ['selection 2', (v) => v.setUint8(bodyAt + 8, 2), 'WW_ERR_FRAME_INVALID'],
      ['reserved byte set', (v) => v.setUint8(bodyAt + 10, 1), 'WW_ERR_FRAME_INVALID'],
      ['one sample more than the bytes hold', (v) => v.setUint32(bodyAt + 16, SAMPLE_GROUP_SAMPLES.groups.length + 1, true), 'WW_ERR_FRAME_INVALID'],
      ['one sample fewer (bytes left over)', (v) => v.setUint32(bodyAt + 16, SAMPLE_GROUP_SAMPLES.groups.length - 1, true), 'WW_ERR_FRAME_INVALID'],
      ['samples above the limit', (v) => v.setUint32(bodyAt + 16, 100_000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
    ];
    for (const [name, change, code] of rules) {
      it(`rejects ${name} with decodeFrame's code and message`, () => {
        const result = agree(edit(change));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.code).toBe(code);
      });
    }
  });
  describe('LaunchSummary rules on the wire, one by one', () => {
    const frame = SAMPLE_LAUNCH_SUMMARY;
    const base = encodeFrame(frame);
    const payloadView = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset + FRAME_HEADER_BYTES);
    // The LaunchSummary body (nine u64/f64 fields, the entry count u32, then 12 bytes per entry)
    // ends the payload: its start follows from the sizes SPEC.md gives.
    const entries = frame.histogram.length;
    const bodyAt = base.length - FRAME_HEADER_BYTES - (76 + 12 * entries);
    const entryAt = (k: number) => bodyAt + 76 + 12 * k;
    const edit = (change: (view: DataView) => void): Uint8Array => {
      const copy = base.slice();
      change(payloadView(copy));
      return withCrc(copy);
    };
    it('agrees on the unchanged frame and finds the body where the decoder does', () => {
      expect(entries).toBeGreaterThanOrEqual(2);
      expect(agree(base).ok).toBe(true);
      // groupCount (u64) at the body's start: setting it to the frame's own value keeps it valid.
      expect(agree(edit((v) => v.setUint32(bodyAt, frame.groupCount, true))).ok).toBe(true);
    });
    const lanes = frame.groupsCounted * frame.groupSize;
    const rules: [string, (view: DataView) => void, string][] = [
      ['groupCount above the count limit', (v) => v.setUint32(bodyAt + 4, 0xffffffff, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['groupsCounted above the count limit', (v) => v.setUint32(bodyAt + 12, 0x00200000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['groupsCounted > groupCount', (v) => v.setUint32(bodyAt + 8, frame.groupCount + 1, true), 'WW_ERR_FRAME_INVALID'],
      ['sumMeasuredLoss NaN', (v) => v.setFloat64(bodyAt + 32, Number.NaN, true), 'WW_ERR_FRAME_INVALID'],
      ['sumCountsLoss negative', (v) => v.setFloat64(bodyAt + 40, -1, true), 'WW_ERR_FRAME_INVALID'],
      ['sumCountsLoss infinite', (v) => v.setFloat64(bodyAt + 40, Number.POSITIVE_INFINITY, true), 'WW_ERR_FRAME_INVALID'],
      ['sumMaxCounts above the count limit', (v) => v.setUint32(bodyAt + 52, 0x00200000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['sumCounts above the count limit', (v) => v.setUint32(bodyAt + 60, 0xffffffff, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['droppedSamples above the count limit', (v) => v.setUint32(bodyAt + 68, 0x00200000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['entries above the limit', (v) => v.setUint32(bodyAt + 72, 100_000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      ['one entry more than the bytes hold', (v) => v.setUint32(bodyAt + 72, entries + 1, true), 'WW_ERR_FRAME_INVALID'],
      ['one entry fewer (bytes left over)', (v) => v.setUint32(bodyAt + 72, entries - 1, true), 'WW_ERR_FRAME_INVALID'],
      ['a bin past the last', (v) => v.setUint32(entryAt(entries - 1), 5000, true), 'WW_ERR_FRAME_INVALID'],
      ['bins not increasing', (v) => v.setUint32(entryAt(1), v.getUint32(entryAt(0), true), true), 'WW_ERR_FRAME_INVALID'],
      ['a count of 0', (v) => v.setUint32(entryAt(0) + 4, 0, true), 'WW_ERR_FRAME_INVALID'],
      ['a count above the count limit', (v) => v.setUint32(entryAt(0) + 8, 0x00200000, true), 'WW_ERR_FRAME_OVER_LIMIT'],
      [
        'counts whose total passes the count limit',
        (v) => {
          v.setUint32(entryAt(0) + 4, 0xffffffff, true);
          v.setUint32(entryAt(0) + 8, 0x001fffff, true);
          v.setUint32(entryAt(1) + 4, 0xffffffff, true);
          v.setUint32(entryAt(1) + 8, 0x001fffff, true);
        },
        'WW_ERR_FRAME_OVER_LIMIT',
      ],
      ['counts that do not sum to groupsCounted·groupSize', (v) => v.setUint32(entryAt(0) + 4, v.getUint32(entryAt(0) + 4, true) + 1, true), 'WW_ERR_FRAME_INVALID'],
      ['groupsCounted that does not match the counts', (v) => v.setUint32(bodyAt + 8, frame.groupsCounted - 1, true), 'WW_ERR_FRAME_INVALID'],
    ];
    it(`keeps the sample frame's lanes (${lanes}) as the counts' total`, () => {
      expect(frame.histogram.reduce((sum, entry) => sum + entry.count, 0)).toBe(lanes);
    });
    for (const [name, change, code] of rules) {
      it(`rejects ${name} with decodeFrame's code and message`, () => {
        const result = agree(edit(change));
        expect(result.ok).toBe(false);
        if (!result.ok) expect(result.code).toBe(code);
      });
    }
  });
});
