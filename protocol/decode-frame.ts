/**
 * Frame decoder (SPEC.md): header checks, CRC, then a bounds-checked payload parse. Every
 * count is checked against the bytes that remain before anything is allocated.
 */
import { crc32c } from './crc32c.ts';
import { FrameError } from './errors.ts';
import { decodeFrameHeader } from './frame-header.ts';
import { FRAME_HEADER_BYTES, MAX_GROUP_SAMPLES, MAX_HISTOGRAM_ENTRIES } from './limits.ts';
import type { DeviceInfo, Frame, FrameIdentity, GroupSample, HistogramEntry } from './types.ts';
import { validateFrame, validateFrameIdentity } from './validate-frame.ts';

// ignoreBOM: keep a leading U+FEFF as part of the string, so decode(encode(x)) = x.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

class PayloadReader {
  private position = 0;
  private readonly view: DataView;

  constructor(private readonly input: Uint8Array) {
    this.view = new DataView(input.buffer, input.byteOffset, input.byteLength);
  }

  get remaining(): number {
    return this.input.length - this.position;
  }

  need(byteCount: number, field: string): void {
    if (this.remaining < byteCount) {
      throw new FrameError('WW_ERR_FRAME_INVALID', `payload ends inside ${field} (needs ${byteCount} bytes, ${this.remaining} left)`);
    }
  }

  u8(field: string): number {
    this.need(1, field);
    return this.view.getUint8(this.position++);
  }

  u32(field: string): number {
    this.need(4, field);
    const v = this.view.getUint32(this.position, true);
    this.position += 4;
    return v;
  }

  u64(field: string): bigint {
    this.need(8, field);
    const v = this.view.getBigUint64(this.position, true);
    this.position += 8;
    return v;
  }

  /** A u64 count as a number; values above 2^53−1 round and are then rejected by validateFrame. */
  count(field: string): number {
    return Number(this.u64(field));
  }

  f64(field: string): number {
    this.need(8, field);
    const v = this.view.getFloat64(this.position, true);
    this.position += 8;
    return v;
  }

  bytes(byteCount: number, field: string): Uint8Array {
    this.need(byteCount, field);
    const out = this.input.subarray(this.position, this.position + byteCount);
    this.position += byteCount;
    return out;
  }

  str(field: string): string {
    const length = this.u8(field);
    const raw = this.bytes(length, field);
    try {
      return utf8.decode(raw);
    } catch (error) {
      throw new FrameError('WW_ERR_FRAME_INVALID', `${field} is not valid UTF-8`, { cause: error });
    }
  }
}

function uuidTextOf(raw: Uint8Array): string {
  const hex = Array.from(raw, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function readIdentity(r: PayloadReader): FrameIdentity {
  const launchId = r.u64('launchId');
  const frameSequence = r.u32('frameSequence');
  const sourceCode = r.u8('source');
  if (sourceCode > 1) throw new FrameError('WW_ERR_FRAME_INVALID', `source must be 0 (cuda) or 1 (cpu), got ${sourceCode}`);
  const groupSize = r.u8('groupSize');
  const flags = r.u8('flags');
  if (flags > 1) throw new FrameError('WW_ERR_FRAME_INVALID', `flags bits 1..7 must be 0, got ${flags}`);
  const reserved = r.u8('reserved');
  if (reserved !== 0) throw new FrameError('WW_ERR_FRAME_INVALID', `reserved byte must be 0, got ${reserved}`);
  const startUnixNanos = r.u64('startUnixNanos');
  const endUnixNanos = r.u64('endUnixNanos');
  const clockHz = r.count('clockHz');
  const uuid = uuidTextOf(r.bytes(16, 'device uuid'));
  const major = r.u8('computeCapability major');
  const minor = r.u8('computeCapability minor');
  const job = r.str('job');
  const kernel = r.str('kernel');
  const name = r.str('device name');
  const device: DeviceInfo = { name, uuid, computeCapability: { major, minor }, clockHz };
  const identity: FrameIdentity = {
    job,
    kernel,
    launchId,
    frameSequence,
    source: sourceCode === 0 ? 'cuda' : 'cpu',
    groupSize,
    sync: flags === 1,
    device,
    startUnixNanos,
    endUnixNanos,
  };
  validateFrameIdentity(identity);
  return identity;
}

function readLaunchSummary(r: PayloadReader, identity: FrameIdentity): Frame {
  const groupCount = r.count('groupCount');
  const groupsCounted = r.count('groupsCounted');
  const sumSimtClocks = r.u64('sumSimtClocks');
  const sumMimdClocks = r.u64('sumMimdClocks');
  const sumMeasuredLoss = r.f64('sumMeasuredLoss');
  const sumCountsLoss = r.f64('sumCountsLoss');
  const sumMaxCounts = r.count('sumMaxCounts');
  const sumCounts = r.count('sumCounts');
  const droppedSamples = r.count('droppedSamples');
  const entryCount = r.u32('histogramEntries');
  if (entryCount > MAX_HISTOGRAM_ENTRIES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `histogram entries must be at most ${MAX_HISTOGRAM_ENTRIES}, got ${entryCount}`);
  }
  r.need(entryCount * 12, 'histogram entries');
  const histogram: HistogramEntry[] = new Array<HistogramEntry>(entryCount);
  for (let i = 0; i < entryCount; i++) {
    const bin = r.u32('histogram bin');
    histogram[i] = { bin, count: r.count('histogram count') };
  }
  return {
    type: 'launch-summary',
    ...identity,
    groupCount,
    groupsCounted,
    sumSimtClocks,
    sumMimdClocks,
    sumMeasuredLoss,
    sumCountsLoss,
    sumMaxCounts,
    sumCounts,
    droppedSamples,
    histogram,
  };
}

function readGroupSamples(r: PayloadReader, identity: FrameIdentity): Frame {
  const groupCount = r.count('groupCount');
  const selectionCode = r.u8('selection');
  if (selectionCode > 1) throw new FrameError('WW_ERR_FRAME_INVALID', `selection must be 0 (stride) or 1 (hash), got ${selectionCode}`);
  for (let i = 0; i < 3; i++) {
    if (r.u8('reserved') !== 0) throw new FrameError('WW_ERR_FRAME_INVALID', 'reserved bytes after selection must be 0');
  }
  const samplingStride = r.u32('samplingStride');
  const sampleCount = r.u32('sampleCount');
  if (sampleCount > MAX_GROUP_SAMPLES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `sampled groups per frame must be at most ${MAX_GROUP_SAMPLES}, got ${sampleCount}`);
  }
  const n = identity.groupSize;
  r.need(sampleCount * (24 + 12 * n), 'samples');
  const groups: GroupSample[] = new Array<GroupSample>(sampleCount);
  for (let g = 0; g < sampleCount; g++) {
    const groupIndex = r.count('groupIndex');
    const startClock = r.u64('startClock');
    const endClock = r.u64('endClock');
    const laneCounts = new Array<number>(n);
    for (let i = 0; i < n; i++) laneCounts[i] = r.u32('laneCounts');
    const laneFinishClocks = new Array<bigint>(n);
    for (let i = 0; i < n; i++) laneFinishClocks[i] = r.u64('laneFinishClocks');
    groups[g] = { groupIndex, startClock, endClock, laneCounts, laneFinishClocks };
  }
  return {
    type: 'group-samples',
    ...identity,
    groupCount,
    selection: selectionCode === 0 ? 'stride' : 'hash',
    samplingStride,
    groups,
  };
}

/**
 * Decodes exactly one frame that occupies all of `bytes`.
 *
 * @param bytes - one whole frame (header + payload), nothing more
 * @returns the decoded frame; fresh objects that do not alias `bytes`
 * @throws FrameError WW_ERR_FRAME_TRUNCATED (fewer bytes than the header declares),
 *   _BAD_MAGIC, _UNKNOWN_VERSION, _UNKNOWN_TYPE, _OVER_LIMIT, _CRC_MISMATCH, or _INVALID
 *   (a bad field, or trailing bytes after the frame). Never throws anything else.
 * @example const frame = decodeFrame(bytes); if (frame.type === 'launch-summary') console.log(frame.groupsCounted);
 */
export function decodeFrame(bytes: Uint8Array): Frame {
  const header = decodeFrameHeader(bytes, 0);
  const total = FRAME_HEADER_BYTES + header.payloadLength;
  if (bytes.length < total) {
    throw new FrameError('WW_ERR_FRAME_TRUNCATED', `frame declares ${total} bytes, got ${bytes.length}`);
  }
  if (bytes.length > total) {
    throw new FrameError('WW_ERR_FRAME_INVALID', `expected exactly one frame of ${total} bytes, got ${bytes.length} (trailing bytes)`);
  }
  const payload = bytes.subarray(FRAME_HEADER_BYTES, total);
  const crc = crc32c(payload);
  if (crc !== header.payloadCrc32c) {
    throw new FrameError(
      'WW_ERR_FRAME_CRC_MISMATCH',
      `payload CRC-32C must match the header's 0x${header.payloadCrc32c.toString(16).padStart(8, '0')}, computed 0x${crc.toString(16).padStart(8, '0')}`,
    );
  }
  const r = new PayloadReader(payload);
  const identity = readIdentity(r);
  const frame = header.kind === 'launch-summary' ? readLaunchSummary(r, identity) : readGroupSamples(r, identity);
  if (r.remaining !== 0) throw new FrameError('WW_ERR_FRAME_INVALID', `${r.remaining} bytes left over after the last payload field`);
  validateFrame(frame);
  return frame;
}
