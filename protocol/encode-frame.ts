/**
 * Frame encoder (SPEC.md): validates a frame, then writes header + payload in one allocation
 * (fixed offsets, no per-field closures, counts written as two u32 so no bigint is made).
 */
import { crc32c } from './crc32c.ts';
import { FrameError } from './errors.ts';
import { FRAME_TYPE_CODES } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, MAX_GROUP_SIZE, MAX_PAYLOAD_BYTES } from './limits.ts';
import type { Frame } from './types.ts';
import { checkFrame } from './validate-frame.ts';

/** Bytes of the identity block before the three strings (SPEC.md offsets 0..57). */
const IDENTITY_FIXED_BYTES = 58;
const SOURCE_CODES = { cuda: 0, cpu: 1 } as const;
const SELECTION_CODES = { stride: 0, hash: 1, block: 2 } as const;
const TWO_TO_32 = 4294967296;

/**
 * Scratch for a group's lane clocks: storing bigints into a BigUint64Array and copying its
 * bytes is several times faster in V8 than DataView.setBigUint64 per value. Typed arrays use
 * the host's byte order, so this path is taken only on little-endian hosts (the wire order).
 */
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const LANE_CLOCKS = new BigUint64Array(MAX_GROUP_SIZE);
/** LANE_CLOCK_BYTES[n]: the first 8·n bytes of LANE_CLOCKS. */
const LANE_CLOCK_BYTES: readonly Uint8Array[] = Array.from({ length: MAX_GROUP_SIZE + 1 }, (_, n) => new Uint8Array(LANE_CLOCKS.buffer, 0, 8 * n));

/** Value of one lowercase hex digit by char code ('0'..'9', 'a'..'f'); the uuid was checked. */
function hexDigit(code: number): number {
  return code <= 0x39 ? code - 0x30 : code - 0x57;
}

/** Writes the 16 bytes of a checked lowercase 8-4-4-4-12 uuid at `at`. */
function writeUuid(out: Uint8Array, at: number, uuid: string): void {
  let k = 0;
  for (let i = 0; i < 36; i++) {
    const code = uuid.charCodeAt(i);
    if (code === 0x2d) continue; // '-'
    const high = hexDigit(code);
    out[at + k] = (high << 4) | hexDigit(uuid.charCodeAt(++i));
    k++;
  }
}

/** Writes a count (integer 0..2^53−1, checked) as a u64 without making a bigint. */
function writeCount(view: DataView, at: number, value: number): void {
  view.setUint32(at, value >>> 0, true);
  view.setUint32(at + 4, Math.floor(value / TWO_TO_32), true);
}

/**
 * Encodes one frame into its wire bytes (header + payload).
 *
 * @param frame - a LaunchSummary or GroupSamples frame
 * @returns a new Uint8Array holding exactly one frame
 * @throws FrameError WW_ERR_FRAME_OVER_LIMIT (a string, list or count above its limit) or
 *   WW_ERR_FRAME_INVALID (a field out of range or of the wrong type; histogram not consistent)
 * @example const bytes = encodeFrame(summary); decodeFrame(bytes) // deep-equals summary
 */
export function encodeFrame(frame: Frame): Uint8Array {
  const { job, kernel, deviceName } = checkFrame(frame);
  const n = frame.groupSize;
  const bodyBytes = frame.type === 'launch-summary' ? 76 + 12 * frame.histogram.length : 20 + frame.groups.length * (24 + 12 * n);
  const payloadLength = IDENTITY_FIXED_BYTES + 3 + job.length + kernel.length + deviceName.length + bodyBytes;
  if (payloadLength > MAX_PAYLOAD_BYTES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `payload must be at most ${MAX_PAYLOAD_BYTES} bytes, got ${payloadLength}`);
  }
  const out = new Uint8Array(FRAME_HEADER_BYTES + payloadLength);
  const view = new DataView(out.buffer);

  // Identity block (SPEC.md offsets relative to the payload start).
  const h = FRAME_HEADER_BYTES;
  view.setBigUint64(h, frame.launchId, true);
  view.setUint32(h + 8, frame.frameSequence, true);
  out[h + 12] = SOURCE_CODES[frame.source];
  out[h + 13] = n;
  out[h + 14] = frame.sync ? 1 : 0;
  // out[h + 15] (reserved) stays 0
  view.setBigUint64(h + 16, frame.startUnixNanos, true);
  view.setBigUint64(h + 24, frame.endUnixNanos, true);
  writeCount(view, h + 32, frame.device.clockHz);
  writeUuid(out, h + 40, frame.device.uuid);
  out[h + 56] = frame.device.computeCapability.major;
  out[h + 57] = frame.device.computeCapability.minor;
  let p = h + IDENTITY_FIXED_BYTES;
  for (const text of [job, kernel, deviceName]) {
    out[p] = text.length;
    out.set(text, p + 1);
    p += 1 + text.length;
  }

  if (frame.type === 'launch-summary') {
    writeCount(view, p, frame.groupCount);
    writeCount(view, p + 8, frame.groupsCounted);
    view.setBigUint64(p + 16, frame.sumSimtClocks, true);
    view.setBigUint64(p + 24, frame.sumMimdClocks, true);
    view.setFloat64(p + 32, frame.sumMeasuredLoss, true);
    view.setFloat64(p + 40, frame.sumCountsLoss, true);
    writeCount(view, p + 48, frame.sumMaxCounts);
    writeCount(view, p + 56, frame.sumCounts);
    writeCount(view, p + 64, frame.droppedSamples);
    view.setUint32(p + 72, frame.histogram.length, true);
    p += 76;
    for (const entry of frame.histogram) {
      view.setUint32(p, entry.bin, true);
      writeCount(view, p + 4, entry.count);
      p += 12;
    }
  } else {
    writeCount(view, p, frame.groupCount);
    out[p + 8] = SELECTION_CODES[frame.selection];
    // p + 9 (reserved) stays 0; p + 10: u16 groupsPerBlock (0 unless selection block)
    view.setUint16(p + 10, frame.selection === 'block' ? (frame.groupsPerBlock ?? 0) : 0, true);
    view.setUint32(p + 12, frame.samplingStride, true);
    view.setUint32(p + 16, frame.groups.length, true);
    p += 20;
    for (const group of frame.groups) {
      writeCount(view, p, group.groupIndex);
      view.setBigUint64(p + 8, group.startClock, true);
      view.setBigUint64(p + 16, group.endClock, true);
      p += 24;
      const { laneCounts, laneFinishClocks } = group;
      for (let i = 0; i < n; i++) {
        view.setUint32(p, laneCounts[i]!, true);
        p += 4;
      }
      if (LITTLE_ENDIAN_HOST) {
        for (let i = 0; i < n; i++) LANE_CLOCKS[i] = laneFinishClocks[i]!;
        out.set(LANE_CLOCK_BYTES[n]!, p);
        p += 8 * n;
      } else {
        for (let i = 0; i < n; i++) {
          view.setBigUint64(p, laneFinishClocks[i]!, true);
          p += 8;
        }
      }
    }
  }

  out.set(FRAME_MAGIC, 0);
  view.setUint16(4, FRAME_VERSION, true);
  view.setUint16(6, FRAME_TYPE_CODES[frame.type], true);
  view.setUint32(8, payloadLength, true);
  view.setUint32(12, crc32c(out.subarray(FRAME_HEADER_BYTES)), true);
  return out;
}
