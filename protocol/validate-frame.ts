/**
 * The checks the format requires of a frame's fields (SPEC.md limits). The encoder runs them
 * before writing and the decoder after parsing, so both sides accept exactly the same frames.
 * (The decoder checks the identity itself on the raw bytes, with the same messages, since most
 * of these checks hold by construction there; decode-frame.test.ts checks that both agree.)
 */
import { DEVICE_UUID_PATTERN, jobProblem, STREAM_SOURCES } from '../contracts/index.ts';
import { FrameError } from './errors.ts';
import { HISTOGRAM_BIN_COUNT, MAX_COUNT, MAX_GROUP_SAMPLES, MAX_GROUP_SIZE, MAX_HISTOGRAM_ENTRIES, MAX_STRING_BYTES } from './limits.ts';
import type { Frame, FrameIdentity, GroupSamplesFrame, LaunchSummaryFrame } from './types.ts';

const UUID_PATTERN = DEVICE_UUID_PATTERN;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const encoder = new TextEncoder();

function invalid(message: string): FrameError {
  return new FrameError('WW_ERR_FRAME_INVALID', message);
}

function overLimit(message: string): FrameError {
  return new FrameError('WW_ERR_FRAME_OVER_LIMIT', message);
}

/**
 * The bytes of an ASCII string of at most MAX_STRING_BYTES chars (the usual job, kernel and
 * device names), copied char by char: several times faster in V8 than TextEncoder for short
 * strings. undefined for anything else.
 */
function asciiBytesOf(value: string): Uint8Array | undefined {
  const length = value.length;
  if (length > MAX_STRING_BYTES) return undefined;
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) {
    const code = value.charCodeAt(i);
    if (code >= 0x80) return undefined;
    out[i] = code;
  }
  return out;
}

function wellFormedUtf8Of(value: string, field: string): Uint8Array {
  if (LONE_SURROGATE.test(value)) throw invalid(`${field} must be well-formed Unicode (it has a lone surrogate)`);
  return encoder.encode(value);
}

/**
 * What is wrong with the characters of a frame string (job, kernel, device name), given as its
 * UTF-8 bytes `bytes[start..end)`, or undefined: the identity rule of contracts/stream-identity.ts
 * (`identityCharactersProblem`) on bytes, so the encoder and the decoder give the same message.
 * No control character — C0 (bytes 0x00–0x1F), DEL (0x7F), C1 (U+0080–U+009F: 0xC2 0x80–0x9F) —
 * and no backslash (0x5C) right before `,`, `=`, a space or the end. The offset counts bytes
 * from 1. Shared with decode-frame.ts.
 *
 * @example identityBytesProblem(new TextEncoder().encode('k\nzz'), 'kernel') // 'kernel must not contain control characters (U+000A at byte 2)'
 */
export function identityBytesProblem(bytes: Uint8Array, field: string, start = 0, end = bytes.length): string | undefined {
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    let control = -1;
    if (byte < 0x20 || byte === 0x7f) control = byte;
    else if (byte === 0xc2 && i + 1 < end && bytes[i + 1]! <= 0x9f) control = bytes[i + 1]!; // a continuation byte is >= 0x80
    else if (byte === 0x5c) {
      const next = i + 1 < end ? bytes[i + 1]! : -1;
      if (next === -1 || next === 0x2c || next === 0x3d || next === 0x20) {
        return `${field} must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at byte ${i - start + 1}`;
      }
    }
    if (control >= 0) return `${field} must not contain control characters (U+${control.toString(16).toUpperCase().padStart(4, '0')} at byte ${i - start + 1})`;
  }
  return undefined;
}

function checkIdentityBytes(bytes: Uint8Array, field: string): void {
  const problem = identityBytesProblem(bytes, field);
  if (problem !== undefined) throw invalid(problem);
}

/** UTF-8 bytes of a frame string after checking it; shared with the encoder. */
export function utf8BytesOf(value: unknown, field: string, minBytes: number): Uint8Array {
  if (typeof value !== 'string') throw invalid(`${field} must be a string, got ${typeof value}`);
  const bytes = asciiBytesOf(value) ?? wellFormedUtf8Of(value, field);
  if (bytes.length > MAX_STRING_BYTES) throw overLimit(`${field} must be at most ${MAX_STRING_BYTES} UTF-8 bytes, got ${bytes.length}`);
  if (bytes.length < minBytes) throw invalid(`${field} must not be empty`);
  return bytes;
}

/**
 * Checks an unsigned integer field against its maximum: WW_ERR_FRAME_OVER_LIMIT above a count
 * limit (MAX_COUNT), WW_ERR_FRAME_INVALID otherwise. Shared with decode-frame.ts.
 *
 * @throws FrameError
 * @example checkUint(5, 'groupCount', MAX_COUNT) // returns
 */
export function checkUint(value: unknown, field: string, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw invalid(`${field} must be an integer >= 0, got ${String(value)}`);
  }
  if (value > max) {
    throw (max === MAX_COUNT ? overLimit : invalid)(`${field} must be at most ${max}, got ${value}`);
  }
}

function checkU64(value: unknown, field: string): void {
  // asUintN(64, v) === v exactly when 0 <= v <= 2^64-1; faster in V8 than two comparisons.
  if (typeof value !== 'bigint' || BigInt.asUintN(64, value) !== value) {
    throw invalid(`${field} must be a bigint 0..2^64-1, got ${String(value)}`);
  }
}

/**
 * Checks a sum of per-group losses (an f64): finite and ≥ 0, WW_ERR_FRAME_INVALID otherwise.
 * Shared with decode-frame.ts.
 *
 * @throws FrameError
 * @example checkLossSum(3.5, 'sumCountsLoss') // returns
 */
export function checkLossSum(value: unknown, field: string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalid(`${field} must be a finite number >= 0, got ${String(value)}`);
  }
}

/** The UTF-8 bytes of a frame's three strings, as checked (the encoder writes them). */
export interface FrameStringBytes {
  readonly job: Uint8Array;
  readonly kernel: Uint8Array;
  readonly deviceName: Uint8Array;
}

function checkFrameIdentity(frame: FrameIdentity): FrameStringBytes {
  const job = utf8BytesOf(frame.job, 'job', 1);
  if (job.includes(0x2f)) throw invalid(`job ${jobProblem(frame.job) ?? ''}, got '${frame.job}'`);
  checkIdentityBytes(job, 'job');
  const kernel = utf8BytesOf(frame.kernel, 'kernel', 1);
  checkIdentityBytes(kernel, 'kernel');
  checkU64(frame.launchId, 'launchId');
  checkUint(frame.frameSequence, 'frameSequence', 0xffffffff);
  if (!(STREAM_SOURCES as readonly unknown[]).includes(frame.source)) throw invalid(`source must be 'cuda' or 'cpu', got '${String(frame.source)}'`);
  const n = frame.groupSize;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw invalid(`groupSize must be 1..${MAX_GROUP_SIZE}, got ${String(n)}`);
  if (n > MAX_GROUP_SIZE) throw overLimit(`groupSize must be 1..${MAX_GROUP_SIZE}, got ${n}`);
  if (typeof frame.sync !== 'boolean') throw invalid(`sync must be a boolean, got ${String(frame.sync)}`);
  checkU64(frame.startUnixNanos, 'startUnixNanos');
  checkU64(frame.endUnixNanos, 'endUnixNanos');
  const device = frame.device;
  if (typeof device !== 'object' || device === null) throw invalid('device must be an object');
  const deviceName = utf8BytesOf(device.name, 'device name', 0);
  checkIdentityBytes(deviceName, 'device name');
  if (typeof device.uuid !== 'string' || !UUID_PATTERN.test(device.uuid)) {
    throw invalid(`device uuid must be lowercase xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, got '${String(device.uuid)}'`);
  }
  const cc = device.computeCapability;
  if (typeof cc !== 'object' || cc === null) throw invalid('device computeCapability must be { major, minor }');
  checkUint(cc.major, 'computeCapability major', 255);
  checkUint(cc.minor, 'computeCapability minor', 255);
  if (device.clockHz === 0) throw invalid('clockHz must be >= 1, got 0');
  checkUint(device.clockHz, 'clockHz', MAX_COUNT);
  return { job, kernel, deviceName };
}

/**
 * Checks the identity fields every frame carries (job, kernel, ids, source, groupSize, device).
 *
 * @throws FrameError WW_ERR_FRAME_OVER_LIMIT or WW_ERR_FRAME_INVALID
 * @example validateFrameIdentity(frame);
 */
export function validateFrameIdentity(frame: FrameIdentity): void {
  checkFrameIdentity(frame);
}

/** Exact sum of the histogram counts 0..last (already checked integers), for error messages. */
function exactTotalOf(histogram: LaunchSummaryFrame['histogram'], last: number): bigint {
  let total = 0n;
  for (let i = 0; i <= last; i++) total += BigInt(histogram[i]!.count);
  return total;
}

function checkLaunchSummary(frame: LaunchSummaryFrame): void {
  checkUint(frame.groupCount, 'groupCount', MAX_COUNT);
  checkUint(frame.groupsCounted, 'groupsCounted', MAX_COUNT);
  if (frame.groupsCounted > frame.groupCount) {
    throw invalid(`groupsCounted (${frame.groupsCounted}) must be <= groupCount (${frame.groupCount})`);
  }
  checkU64(frame.sumSimtClocks, 'sumSimtClocks');
  checkU64(frame.sumMimdClocks, 'sumMimdClocks');
  checkLossSum(frame.sumMeasuredLoss, 'sumMeasuredLoss');
  checkLossSum(frame.sumCountsLoss, 'sumCountsLoss');
  checkUint(frame.sumMaxCounts, 'sumMaxCounts', MAX_COUNT);
  checkUint(frame.sumCounts, 'sumCounts', MAX_COUNT);
  checkUint(frame.droppedSamples, 'droppedSamples', MAX_COUNT);
  const histogram = frame.histogram;
  if (!Array.isArray(histogram)) throw invalid('histogram must be an array of { bin, count }');
  if (histogram.length > MAX_HISTOGRAM_ENTRIES) {
    throw overLimit(`histogram entries must be at most ${MAX_HISTOGRAM_ENTRIES}, got ${histogram.length}`);
  }
  let previousBin = -1;
  // Each count is <= 2^53-1, so a float sum that passes 2^53-1 is >= 2^53 (rounding is
  // monotonic): the limit check is exact. The error paths recompute the exact total as a bigint.
  let total = 0;
  const entries = histogram as LaunchSummaryFrame['histogram'];
  for (let i = 0; i < entries.length; i++) {
    const entry: unknown = entries[i];
    if (typeof entry !== 'object' || entry === null) throw invalid(`histogram entries must be { bin, count } objects, got ${String(entry)}`);
    const { bin, count } = entry as LaunchSummaryFrame['histogram'][number];
    if (typeof bin !== 'number' || !Number.isInteger(bin) || bin < 0 || bin >= HISTOGRAM_BIN_COUNT) {
      throw invalid(`histogram bin must be < ${HISTOGRAM_BIN_COUNT}, got ${String(bin)}`);
    }
    if (bin <= previousBin) throw invalid(`histogram bins must be strictly increasing, got ${bin} after ${previousBin}`);
    if (count === 0) throw invalid(`histogram counts must be >= 1, got 0 for bin ${bin}`);
    checkUint(count, 'histogram count', MAX_COUNT);
    total += count;
    if (total > MAX_COUNT) throw overLimit(`histogram total must be at most ${MAX_COUNT}, got ${exactTotalOf(entries, i)}`);
    previousBin = bin;
  }
  // total <= 2^53-1 is exact; a product above 2^53-1 rounds to >= 2^53 and so differs from it.
  if (total !== frame.groupsCounted * frame.groupSize) {
    const lanes = BigInt(frame.groupsCounted) * BigInt(frame.groupSize);
    throw invalid(`histogram counts must sum to groupsCounted*groupSize (${lanes}), got ${total}`);
  }
}

function checkGroupSamples(frame: GroupSamplesFrame, checkLanes: boolean): void {
  checkUint(frame.groupCount, 'groupCount', MAX_COUNT);
  if (frame.selection !== 'stride' && frame.selection !== 'hash' && frame.selection !== 'block') {
    throw invalid(`selection must be 'stride', 'hash' or 'block', got '${String(frame.selection)}'`);
  }
  if (frame.selection === 'block') checkUint(frame.groupsPerBlock, 'groupsPerBlock', 0xffff);
  if (frame.selection === 'block' && frame.groupsPerBlock === 0) throw invalid('groupsPerBlock must be 1..65535 with selection block, got 0');
  if (frame.selection !== 'block' && frame.groupsPerBlock !== undefined) throw invalid(`groupsPerBlock is for selection block only, got ${String(frame.groupsPerBlock)} with '${frame.selection}'`);
  if (frame.samplingStride === 0) throw invalid('samplingStride must be >= 1, got 0');
  checkUint(frame.samplingStride, 'samplingStride', 0xffffffff);
  const groups = frame.groups;
  if (!Array.isArray(groups)) throw invalid('groups must be an array');
  if (groups.length > MAX_GROUP_SAMPLES) throw overLimit(`sampled groups per frame must be at most ${MAX_GROUP_SAMPLES}, got ${groups.length}`);
  const n = frame.groupSize;
  for (const group of groups as GroupSamplesFrame['groups']) {
    if (typeof group !== 'object' || (group as unknown) === null) throw invalid(`groups must be sample objects, got ${String(group)}`);
    const index = group.groupIndex;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= frame.groupCount) {
      throw invalid(`groupIndex must be an integer < groupCount (${frame.groupCount}), got ${String(index)}`);
    }
    checkU64(group.startClock, 'startClock');
    checkU64(group.endClock, 'endClock');
    if (!Array.isArray(group.laneCounts) || group.laneCounts.length !== n || !Array.isArray(group.laneFinishClocks) || group.laneFinishClocks.length !== n) {
      throw invalid(`each sample needs groupSize (${n}) laneCounts and laneFinishClocks (group ${index})`);
    }
    if (!checkLanes) continue;
    for (const count of group.laneCounts) checkUint(count, 'laneCounts', 0xffffffff);
    for (const clock of group.laneFinishClocks) checkU64(clock, 'laneFinishClocks');
  }
}

/**
 * Checks that a frame satisfies every rule of SPEC.md (field types, ranges, limits, histogram
 * invariants). Returns nothing; throws on the first problem.
 *
 * @throws FrameError WW_ERR_FRAME_OVER_LIMIT (a length or count above its limit) or WW_ERR_FRAME_INVALID
 * @example validateFrame(frame); // throws FrameError('WW_ERR_FRAME_OVER_LIMIT') for groupSize 48
 */
export function validateFrame(frame: Frame): void {
  checkFrame(frame);
}

/**
 * validateFrame that also returns the UTF-8 bytes of the strings it checked, so the encoder
 * does not encode them a second time. Internal (not in index.ts).
 *
 * @throws FrameError as validateFrame
 * @example const { job, kernel, deviceName } = checkFrame(frame);
 */
export function checkFrame(frame: Frame): FrameStringBytes {
  if (typeof frame !== 'object' || frame === null) throw invalid('frame must be an object');
  if (frame.type !== 'launch-summary' && frame.type !== 'group-samples') {
    throw invalid(`frame type must be 'launch-summary' or 'group-samples', got '${String((frame as { type: unknown }).type)}'`);
  }
  const strings = checkFrameIdentity(frame);
  validateFrameBody(frame, true);
  return strings;
}

/**
 * The checks of validateFrame after the identity: the LaunchSummary or GroupSamples fields.
 * The decoder passes `checkLanes` false: the lane counts and clocks it read from u32/u64 wire
 * fields are in range by construction. Internal (not in index.ts).
 *
 * @throws FrameError WW_ERR_FRAME_OVER_LIMIT or WW_ERR_FRAME_INVALID
 * @example validateFrameBody(decoded, false);
 */
export function validateFrameBody(frame: Frame, checkLanes: boolean): void {
  if (frame.type === 'launch-summary') checkLaunchSummary(frame);
  else checkGroupSamples(frame, checkLanes);
}
