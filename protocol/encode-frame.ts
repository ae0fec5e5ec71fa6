/**
 * Frame encoder (SPEC.md): validates a frame, then writes header + payload in one allocation.
 */
import { crc32c } from './crc32c.ts';
import { FrameError } from './errors.ts';
import { FRAME_TYPE_CODES } from './frame-header.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, MAX_PAYLOAD_BYTES } from './limits.ts';
import type { Frame } from './types.ts';
import { utf8BytesOf, validateFrame } from './validate-frame.ts';

/** Bytes of the identity block before the three strings (SPEC.md offsets 0..57). */
const IDENTITY_FIXED_BYTES = 58;
const SOURCE_CODES = { cuda: 0, cpu: 1 } as const;
const SELECTION_CODES = { stride: 0, hash: 1 } as const;

function uuidBytesOf(uuid: string): Uint8Array {
  const hex = uuid.replaceAll('-', '');
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
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
  validateFrame(frame);
  const job = utf8BytesOf(frame.job, 'job', 1);
  const kernel = utf8BytesOf(frame.kernel, 'kernel', 1);
  const deviceName = utf8BytesOf(frame.device.name, 'device name', 0);
  const n = frame.groupSize;
  const bodyBytes = frame.type === 'launch-summary' ? 76 + 12 * frame.histogram.length : 20 + frame.groups.length * (24 + 12 * n);
  const payloadLength = IDENTITY_FIXED_BYTES + 3 + job.length + kernel.length + deviceName.length + bodyBytes;
  if (payloadLength > MAX_PAYLOAD_BYTES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `payload must be at most ${MAX_PAYLOAD_BYTES} bytes, got ${payloadLength}`);
  }
  const out = new Uint8Array(FRAME_HEADER_BYTES + payloadLength);
  const view = new DataView(out.buffer);
  let p = FRAME_HEADER_BYTES;
  const u8 = (v: number): void => {
    view.setUint8(p, v);
    p += 1;
  };
  const u32 = (v: number): void => {
    view.setUint32(p, v, true);
    p += 4;
  };
  const u64 = (v: bigint): void => {
    view.setBigUint64(p, v, true);
    p += 8;
  };
  const count = (v: number): void => u64(BigInt(v));
  const f64 = (v: number): void => {
    view.setFloat64(p, v, true);
    p += 8;
  };
  const bytes = (b: Uint8Array): void => {
    out.set(b, p);
    p += b.length;
  };
  const str = (b: Uint8Array): void => {
    u8(b.length);
    bytes(b);
  };

  u64(frame.launchId);
  u32(frame.frameSequence);
  u8(SOURCE_CODES[frame.source]);
  u8(n);
  u8(frame.sync ? 1 : 0);
  u8(0);
  u64(frame.startUnixNanos);
  u64(frame.endUnixNanos);
  count(frame.device.clockHz);
  bytes(uuidBytesOf(frame.device.uuid));
  u8(frame.device.computeCapability.major);
  u8(frame.device.computeCapability.minor);
  str(job);
  str(kernel);
  str(deviceName);
  if (frame.type === 'launch-summary') {
    count(frame.groupCount);
    count(frame.groupsCounted);
    u64(frame.sumSimtClocks);
    u64(frame.sumMimdClocks);
    f64(frame.sumMeasuredLoss);
    f64(frame.sumCountsLoss);
    count(frame.sumMaxCounts);
    count(frame.sumCounts);
    count(frame.droppedSamples);
    u32(frame.histogram.length);
    for (const entry of frame.histogram) {
      u32(entry.bin);
      count(entry.count);
    }
  } else {
    count(frame.groupCount);
    u8(SELECTION_CODES[frame.selection]);
    u8(0);
    u8(0);
    u8(0);
    u32(frame.samplingStride);
    u32(frame.groups.length);
    for (const group of frame.groups) {
      count(group.groupIndex);
      u64(group.startClock);
      u64(group.endClock);
      for (const c of group.laneCounts) u32(c);
      for (const c of group.laneFinishClocks) u64(c);
    }
  }

  out.set(FRAME_MAGIC, 0);
  view.setUint16(4, FRAME_VERSION, true);
  view.setUint16(6, FRAME_TYPE_CODES[frame.type], true);
  view.setUint32(8, payloadLength, true);
  view.setUint32(12, crc32c(out.subarray(FRAME_HEADER_BYTES)), true);
  return out;
}
