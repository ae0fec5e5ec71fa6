/**
 * Frame decoder (SPEC.md): header checks, CRC, then a bounds-checked payload parse. Every
 * count is checked against the bytes that remain before anything is allocated.
 *
 * Hot path of the collector: the identity is checked here on the raw bytes (most of
 * validateFrame's checks hold by construction for values read from fixed-width wire fields),
 * with exactly validateFrame's order, codes and messages; the body goes through
 * validateFrameBody without the per-lane checks (u32/u64 lanes are always in range).
 */
import { crc32c } from './crc32c.ts';
import { FrameError } from './errors.ts';
import { decodeFrameHeader, type FrameHeader } from './frame-header.ts';
import { binHighOf, binLowOf } from './histogram-bins.ts';
import { FRAME_HEADER_BYTES, FRAME_MAGIC, FRAME_VERSION, HISTOGRAM_BIN_COUNT, MAX_COUNT, MAX_PAYLOAD_BYTES, MAX_GROUP_SAMPLES, MAX_GROUP_SIZE, MAX_HISTOGRAM_ENTRIES } from './limits.ts';
import type { DeviceInfo, Frame, FrameColumns, GroupSample, GroupSampleColumns, GroupSamplesFrame, GroupSamplesOffsetsFrame, HistogramColumns, HistogramEntry, LaunchSummaryColumnsFrame, LaunchSummaryFrame } from './types.ts';
import { checkLossSum, checkUint, identityBytesProblem, validateFrameBody } from './validate-frame.ts';

/** Options of {@link decodeFrame}. */
export interface DecodeFrameOptions {
  /**
   * Skip recomputing the payload CRC-32C. Set it only for bytes whose CRC was already checked
   * and that have not changed since: the `raw` of an item that createFrameSplitter returned
   * (the splitter checks the CRC of every frame it returns). Everything else is still checked.
   * Default false: the CRC is checked.
   */
  readonly crcVerified?: boolean;
}

// ignoreBOM: keep a leading U+FEFF as part of the string, so decode(encode(x)) = x.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Char codes of the two lowercase hex digits of every byte value: high digit at 2b, low at 2b + 1. */
const HEX_CODES_OF_BYTE: Uint8Array = Uint8Array.from(
  Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0')).flatMap((hex) => [hex.charCodeAt(0), hex.charCodeAt(1)]),
);
/** Scratch for the 36 char codes of a uuid's text (8-4-4-4-12, dashes in place); a plain array, which `apply` passes fastest. */
const UUID_CODES: number[] = Array.from({ length: 36 }, () => 0x2d);
/** Where the two hex digits of uuid byte k go in its text. */
const UUID_DIGIT_AT: readonly number[] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];

/**
 * Identity texts decoded before, found again by their bytes (the job, kernel and device name of
 * every frame of a stream are the same few strings, and so is its device uuid): a frame whose
 * bytes match a held entry gets the held string instead of building it again. The match is
 * byte for byte, so the text is exactly what decoding those bytes gives (and was checked as
 * UTF-8 when it was first decoded); errors are never held. Bounded: TEXT_CACHE_SLOTS entries of at
 * most TEXT_CACHE_MAX_BYTES bytes each, one per slot (the slot is a hash of the bytes); a new text
 * replaces the one in its slot. About 40 KB per cache; longer texts are not held.
 */
interface TextCache {
  /** The bytes of slot k at k · TEXT_CACHE_MAX_BYTES. */
  readonly bytes: Uint8Array;
  /** Byte length of slot k's text; −1 while the slot is empty. */
  readonly lengths: Int16Array;
  readonly texts: string[];
}

const TEXT_CACHE_SLOTS = 512;
const TEXT_CACHE_MAX_BYTES = 64;

function createTextCache(): TextCache {
  return {
    bytes: new Uint8Array(TEXT_CACHE_SLOTS * TEXT_CACHE_MAX_BYTES),
    lengths: new Int16Array(TEXT_CACHE_SLOTS).fill(-1),
    texts: Array.from({ length: TEXT_CACHE_SLOTS }, () => ''),
  };
}

/** Job, kernel and device names (stringAt). */
const NAME_TEXTS = createTextCache();
/** Device uuids (uuidTextAt), keyed by their 16 raw bytes. */
const UUID_TEXTS = createTextCache();

/** The slot of payload[from, end) (FNV-1a of the bytes), or −1 when they are too long to hold. */
function textSlotOf(payload: Uint8Array, from: number, end: number): number {
  if (end - from > TEXT_CACHE_MAX_BYTES) return -1;
  let hash = 0x811c9dc5;
  for (let i = from; i < end; i++) hash = Math.imul(hash ^ payload[i]!, 0x01000193);
  return (hash >>> 0) & (TEXT_CACHE_SLOTS - 1);
}

/** The held text of payload[from, end) in `slot`, or undefined when the slot holds other bytes. */
function heldText(cache: TextCache, slot: number, payload: Uint8Array, from: number, end: number): string | undefined {
  const length = end - from;
  if (cache.lengths[slot] !== length) return undefined;
  const bytes = cache.bytes;
  for (let i = 0, at = slot * TEXT_CACHE_MAX_BYTES; i < length; i++, at++) if (bytes[at] !== payload[from + i]) return undefined;
  return cache.texts[slot];
}

/** Holds `text` as the text of payload[from, end) in `slot` (replacing what the slot held). */
function holdText(cache: TextCache, slot: number, payload: Uint8Array, from: number, end: number, text: string): void {
  // Copied byte by byte: a subarray to copy from would be one more object per miss.
  const bytes = cache.bytes;
  for (let i = from, at = slot * TEXT_CACHE_MAX_BYTES; i < end; i++, at++) bytes[at] = payload[i]!;
  cache.lengths[slot] = end - from;
  cache.texts[slot] = text;
}

/** Strings shorter than this (bytes) are decoded char by char (see stringAt). */
const SHORT_STRING_BYTES = 13;

const TWO_TO_32 = 4294967296;
const IDENTITY_FIXED_BYTES = 58;

function invalid(message: string): FrameError {
  return new FrameError('WW_ERR_FRAME_INVALID', message);
}

function endsInside(field: string, byteCount: number, remaining: number): FrameError {
  return invalid(`payload ends inside ${field} (needs ${byteCount} bytes, ${remaining} left)`);
}

/**
 * A u64 as a number: exact up to 2^53−1; above, it rounds to nearest like Number(bigint) (one
 * rounding of an exact sum). Counts above the limit are then rejected; clock sums are kept as read.
 */
function countAt(view: DataView, at: number): number {
  return view.getUint32(at + 4, true) * TWO_TO_32 + view.getUint32(at, true);
}

/**
 * The text of the 16-byte uuid at `at`, lowercase 8-4-4-4-12. Made in one piece (a flat string
 * of 36 bytes): built by `+` it was a rope of ~20 string nodes, ~500 bytes, and the estimator
 * keeps one per stream.
 */
function uuidTextAt(bytes: Uint8Array, at: number): string {
  const slot = textSlotOf(bytes, at, at + 16);
  const held = heldText(UUID_TEXTS, slot, bytes, at, at + 16);
  if (held !== undefined) return held;
  const text = uuidTextOf(bytes, at);
  holdText(UUID_TEXTS, slot, bytes, at, at + 16, text);
  return text;
}

/** The uuid text of the 16 bytes at `at`, built (see uuidTextAt). */
function uuidTextOf(bytes: Uint8Array, at: number): string {
  for (let k = 0; k < 16; k++) {
    const code = 2 * bytes[at + k]!;
    const to = UUID_DIGIT_AT[k]!;
    UUID_CODES[to] = HEX_CODES_OF_BYTE[code]!;
    UUID_CODES[to + 1] = HEX_CODES_OF_BYTE[code + 1]!;
  }
  return String.fromCharCode.apply(null, UUID_CODES);
}

/**
 * A length-prefixed UTF-8 string at `at`; its byte length is `payload[at]`. A text decoded
 * before from the same bytes is returned as held (NAME_TEXTS), not built again.
 */
function stringAt(payload: Uint8Array, at: number, field: string): string {
  const remaining = payload.length - at;
  if (remaining < 1) throw endsInside(field, 1, remaining);
  const length = payload[at]!;
  if (remaining - 1 < length) throw endsInside(field, length, remaining - 1);
  const end = at + 1 + length;
  const slot = textSlotOf(payload, at + 1, end);
  if (slot >= 0) {
    const held = heldText(NAME_TEXTS, slot, payload, at + 1, end);
    if (held !== undefined) return held;
    const text = decodeText(payload, at + 1, end, field);
    holdText(NAME_TEXTS, slot, payload, at + 1, end, text);
    return text;
  }
  return decodeText(payload, at + 1, end, field);
}

/** The UTF-8 text of payload[from, end), decoded (see stringAt). */
function decodeText(payload: Uint8Array, from: number, end: number, field: string): string {
  const length = end - from;
  // Short ASCII (the usual case): char by char, faster in V8 than TextDecoder for short strings;
  // V8 copies concatenations shorter than 13 characters into one flat string. Longer names go
  // through the decoder, whose result is flat too: appended char by char they were ropes of
  // string nodes (~30 bytes per character past the 12th), kept for as long as the name is.
  if (length < SHORT_STRING_BYTES) {
    let text = '';
    let i = from;
    for (; i < end && payload[i]! < 0x80; i++) text += String.fromCharCode(payload[i]!);
    if (i === end) return text;
  }
  try {
    return utf8.decode(payload.subarray(from, end));
  } catch (error) {
    throw new FrameError('WW_ERR_FRAME_INVALID', `${field} is not valid UTF-8`, { cause: error });
  }
}

/** Common fields, in the property order of the decoded frame objects. */
interface DecodedIdentity {
  readonly job: string;
  readonly kernel: string;
  readonly launchId: bigint;
  readonly frameSequence: number;
  readonly source: 'cuda' | 'cpu';
  readonly groupSize: number;
  readonly sync: boolean;
  readonly device: DeviceInfo;
  readonly startUnixNanos: bigint;
  readonly endUnixNanos: bigint;
  /** Payload offset of the body (after the three strings). */
  readonly bodyAt: number;
}

/** Whether payload[from, end) holds `byte` (a loop: a subarray to search would be an object per frame). */
function hasByte(payload: Uint8Array, from: number, end: number, byte: number): boolean {
  for (let i = from; i < end; i++) if (payload[i] === byte) return true;
  return false;
}

function readIdentity(payload: Uint8Array, view: DataView): DecodedIdentity {
  const length = payload.length;
  if (length < IDENTITY_FIXED_BYTES) {
    // Name the first field that does not fit, as a field-by-field reader would.
    const fields: readonly [string, number][] = [
      ['launchId', 8],
      ['frameSequence', 4],
      ['source', 1],
      ['groupSize', 1],
      ['flags', 1],
      ['reserved', 1],
      ['startUnixNanos', 8],
      ['endUnixNanos', 8],
      ['clockHz', 8],
      ['device uuid', 16],
      ['computeCapability major', 1],
      ['computeCapability minor', 1],
    ];
    let at = 0;
    for (const [field, size] of fields) {
      if (length - at < size) throw endsInside(field, size, length - at);
      at += size;
      // The byte checks below come first when their byte is there.
      if (field === 'source' && payload[12]! > 1) break;
      if (field === 'flags' && payload[14]! > 1) break;
      if (field === 'reserved' && payload[15] !== 0) break;
    }
  }
  const sourceCode = payload[12]!;
  if (sourceCode > 1) throw invalid(`source must be 0 (cuda) or 1 (cpu), got ${sourceCode}`);
  const flags = payload[14]!;
  if (flags > 1) throw invalid(`flags bits 1..7 must be 0, got ${flags}`);
  const reserved = payload[15]!;
  if (reserved !== 0) throw invalid(`reserved byte must be 0, got ${reserved}`);

  // Strings (each read and UTF-8 checked in turn, as before the identity checks).
  let at = IDENTITY_FIXED_BYTES;
  const jobBytes = at < length ? payload[at]! : 0;
  const job = stringAt(payload, at, 'job');
  at += 1 + jobBytes;
  const kernelBytes = at < length ? payload[at]! : 0;
  const kernel = stringAt(payload, at, 'kernel');
  at += 1 + kernelBytes;
  const name = stringAt(payload, at, 'device name');
  at += 1 + payload[at]!;

  // validateFrameIdentity's checks, in its order, for the values the wire can hold.
  if (jobBytes === 0) throw invalid('job must not be empty');
  if (hasByte(payload, IDENTITY_FIXED_BYTES + 1, IDENTITY_FIXED_BYTES + 1 + jobBytes, 0x2f)) {
    throw invalid(`job must not contain '/', got '${job}'`);
  }
  const jobStart = IDENTITY_FIXED_BYTES + 1;
  const jobCharacters = identityBytesProblem(payload, 'job', jobStart, jobStart + jobBytes);
  if (jobCharacters !== undefined) throw invalid(jobCharacters);
  if (kernelBytes === 0) throw invalid('kernel must not be empty');
  const kernelStart = jobStart + jobBytes + 1;
  const kernelCharacters = identityBytesProblem(payload, 'kernel', kernelStart, kernelStart + kernelBytes);
  if (kernelCharacters !== undefined) throw invalid(kernelCharacters);
  const groupSize = payload[13]!;
  if (groupSize < 1) throw invalid(`groupSize must be 1..${MAX_GROUP_SIZE}, got ${groupSize}`);
  if (groupSize > MAX_GROUP_SIZE) throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `groupSize must be 1..${MAX_GROUP_SIZE}, got ${groupSize}`);
  const nameCharacters = identityBytesProblem(payload, 'device name', kernelStart + kernelBytes + 1, at);
  if (nameCharacters !== undefined) throw invalid(nameCharacters);
  const clockHz = countAt(view, 32);
  if (clockHz === 0) throw invalid('clockHz must be >= 1, got 0');
  if (clockHz > MAX_COUNT) throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `clockHz must be at most ${MAX_COUNT}, got ${clockHz}`);

  return {
    job,
    kernel,
    launchId: view.getBigUint64(0, true),
    frameSequence: view.getUint32(8, true),
    source: sourceCode === 0 ? 'cuda' : 'cpu',
    groupSize,
    sync: flags === 1,
    device: { name, uuid: uuidTextAt(payload, 40), computeCapability: { major: payload[56]!, minor: payload[57]! }, clockHz },
    startUnixNanos: view.getBigUint64(16, true),
    endUnixNanos: view.getBigUint64(24, true),
    bodyAt: at,
  };
}

/** Fixed LaunchSummary body fields before the histogram entries. */
const LAUNCH_SUMMARY_FIELDS: readonly [string, number][] = [
  ['groupCount', 8],
  ['groupsCounted', 8],
  ['sumSimtClocks', 8],
  ['sumMimdClocks', 8],
  ['sumMeasuredLoss', 8],
  ['sumCountsLoss', 8],
  ['sumMaxCounts', 8],
  ['sumCounts', 8],
  ['droppedSamples', 8],
  ['histogramEntries', 4],
];

function throwEndsInsideFixed(fields: readonly [string, number][], remaining: number): never {
  let left = remaining;
  for (const [field, size] of fields) {
    if (left < size) throw endsInside(field, size, left);
    left -= size;
  }
  throw new Error('unreachable: the fixed fields fit');
}

function readLaunchSummary(payload: Uint8Array, view: DataView, id: DecodedIdentity): { frame: LaunchSummaryFrame; end: number } {
  const p = id.bodyAt;
  if (payload.length - p < 76) throwEndsInsideFixed(LAUNCH_SUMMARY_FIELDS, payload.length - p);
  const entryCount = view.getUint32(p + 72, true);
  if (entryCount > MAX_HISTOGRAM_ENTRIES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `histogram entries must be at most ${MAX_HISTOGRAM_ENTRIES}, got ${entryCount}`);
  }
  let at = p + 76;
  if (payload.length - at < entryCount * 12) throw endsInside('histogram entries', entryCount * 12, payload.length - at);
  const histogram: HistogramEntry[] = new Array<HistogramEntry>(entryCount);
  for (let i = 0; i < entryCount; i++) {
    histogram[i] = { bin: view.getUint32(at, true), count: countAt(view, at + 4) };
    at += 12;
  }
  const frame: LaunchSummaryFrame = {
    type: 'launch-summary',
    job: id.job,
    kernel: id.kernel,
    launchId: id.launchId,
    frameSequence: id.frameSequence,
    source: id.source,
    groupSize: id.groupSize,
    sync: id.sync,
    device: id.device,
    startUnixNanos: id.startUnixNanos,
    endUnixNanos: id.endUnixNanos,
    groupCount: countAt(view, p),
    groupsCounted: countAt(view, p + 8),
    sumSimtClocks: view.getBigUint64(p + 16, true),
    sumMimdClocks: view.getBigUint64(p + 24, true),
    sumMeasuredLoss: view.getFloat64(p + 32, true),
    sumCountsLoss: view.getFloat64(p + 40, true),
    sumMaxCounts: countAt(view, p + 48),
    sumCounts: countAt(view, p + 56),
    droppedSamples: countAt(view, p + 64),
    histogram,
  };
  return { frame, end: at };
}

const GROUP_SAMPLES_FIELDS: readonly [string, number][] = [
  ['groupCount', 8],
  ['selection', 1],
  ['reserved', 1],
  ['groupsPerBlock', 2],
  ['samplingStride', 4],
  ['sampleCount', 4],
];

/** Selection byte (0..2), the reserved byte after it, and groupsPerBlock (≠ 0 iff block), as far as the payload goes. */
function checkSelectionBytes(payload: Uint8Array, view: DataView, p: number, available: number): void {
  if (available >= 9 && payload[p + 8]! > 2) throw invalid(`selection must be 0 (stride), 1 (hash) or 2 (block), got ${payload[p + 8]!}`);
  if (available >= 10 && payload[p + 9] !== 0) throw invalid('reserved byte after selection must be 0');
  if (available >= 12) {
    const groupsPerBlock = view.getUint16(p + 10, true);
    if ((payload[p + 8] === 2) !== (groupsPerBlock !== 0)) {
      throw invalid(`groupsPerBlock must be 1..65535 with selection block and 0 otherwise, got ${groupsPerBlock}`);
    }
  }
}

function readGroupSamples(payload: Uint8Array, view: DataView, id: DecodedIdentity): { frame: GroupSamplesFrame; end: number } {
  const p = id.bodyAt;
  const available = payload.length - p;
  // Byte checks come before a later field's end-of-payload error, as in a field-by-field read.
  checkSelectionBytes(payload, view, p, available);
  if (available < 20) throwEndsInsideFixed(GROUP_SAMPLES_FIELDS, available);
  const selectionCode = payload[p + 8]!;
  const samplingStride = view.getUint32(p + 12, true);
  const sampleCount = view.getUint32(p + 16, true);
  if (sampleCount > MAX_GROUP_SAMPLES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `sampled groups per frame must be at most ${MAX_GROUP_SAMPLES}, got ${sampleCount}`);
  }
  const n = id.groupSize;
  const sampleBytes = 24 + 12 * n;
  let at = p + 20;
  if (payload.length - at < sampleCount * sampleBytes) throw endsInside('samples', sampleCount * sampleBytes, payload.length - at);
  const groups: GroupSample[] = new Array<GroupSample>(sampleCount);
  for (let g = 0; g < sampleCount; g++) {
    const groupIndex = countAt(view, at);
    const startClock = view.getBigUint64(at + 8, true);
    const endClock = view.getBigUint64(at + 16, true);
    at += 24;
    const laneCounts = new Array<number>(n);
    for (let i = 0; i < n; i++) {
      laneCounts[i] = view.getUint32(at, true);
      at += 4;
    }
    const laneFinishClocks = new Array<bigint>(n);
    for (let i = 0; i < n; i++) {
      laneFinishClocks[i] = view.getBigUint64(at, true);
      at += 8;
    }
    groups[g] = { groupIndex, startClock, endClock, laneCounts, laneFinishClocks };
  }
  const frame: GroupSamplesFrame = {
    type: 'group-samples',
    job: id.job,
    kernel: id.kernel,
    launchId: id.launchId,
    frameSequence: id.frameSequence,
    source: id.source,
    groupSize: id.groupSize,
    sync: id.sync,
    device: id.device,
    startUnixNanos: id.startUnixNanos,
    endUnixNanos: id.endUnixNanos,
    groupCount: countAt(view, p),
    selection: selectionCode === 0 ? 'stride' : selectionCode === 1 ? 'hash' : 'block',
    samplingStride,
    ...(selectionCode === 2 ? { groupsPerBlock: view.getUint16(p + 10, true) } : {}),
    groups,
  };
  return { frame, end: at };
}

/**
 * Decodes exactly one frame that occupies all of `bytes`.
 *
 * @param bytes - one whole frame (header + payload), nothing more
 * @param options - `{ crcVerified: true }` skips the payload CRC for bytes a createFrameSplitter
 *   item returned as `raw` (already checked there); every other check still runs
 * @returns the decoded frame; fresh objects that do not alias `bytes`
 * @throws FrameError WW_ERR_FRAME_TRUNCATED (fewer bytes than the header declares),
 *   _BAD_MAGIC, _UNKNOWN_VERSION, _UNKNOWN_TYPE, _OVER_LIMIT, _CRC_MISMATCH, or _INVALID
 *   (a bad field, or trailing bytes after the frame). Never throws anything else.
 * @example
 * const frame = decodeFrame(bytes); if (frame.type === 'launch-summary') console.log(frame.groupsCounted);
 * for (const item of splitter.push(chunk)) if ('raw' in item) handle(decodeFrame(item.raw, { crcVerified: true }));
 */
export function decodeFrame(bytes: Uint8Array, options?: DecodeFrameOptions): Frame {
  const { kind, payload, view, identity } = openFrame(bytes, options);
  const { frame, end } = kind === 'launch-summary' ? readLaunchSummary(payload, view, identity) : readGroupSamples(payload, view, identity);
  const remaining = payload.length - end;
  if (remaining !== 0) throw invalid(`${remaining} bytes left over after the last payload field`);
  validateFrameBody(frame, false);
  return frame;
}

/**
 * Decodes exactly one frame as {@link decodeFrame} does (the same acceptance, error codes and
 * messages), into columns instead of objects: the estimator's reading (docs/estimator.md, "The
 * engine's hot path"), which allocates no object per histogram entry, sampled group or clock.
 * - A LaunchSummary's histogram is read into `into.histogram` ({@link HistogramColumns}, each
 *   entry with its bin's range), and its clock sums become numbers ({@link LaunchSummaryColumnsFrame}).
 * - A GroupSamples frame's samples are read into `into.samples` ({@link GroupSampleColumns}),
 *   each clock as a tick offset from its group's start clock: below 2^53 read as two 32-bit
 *   halves (exact), at or above it the BigInt difference made a Number.
 *
 * @param bytes - one whole frame (header + payload), nothing more
 * @param options - as for decodeFrame
 * @param into - columns to read into (createFrameColumns), reused by the next decode given
 *   them: the frame's `histogram` or `samples` are valid until that decode. Without it, new columns.
 * @throws FrameError as decodeFrame, for the same bytes
 * @example
 * const frame = decodeFrameColumns(bytes);
 * if (frame.type === 'group-samples') console.log(frame.samples.durationTicks[0]);
 * else console.log(frame.histogram.count[0]);
 */
export function decodeFrameColumns(bytes: Uint8Array, options?: DecodeFrameOptions, into?: FrameColumns): LaunchSummaryColumnsFrame | GroupSamplesOffsetsFrame {
  const { kind, payload, view, identity } = openFrame(bytes, options);
  if (kind === 'launch-summary') return launchSummaryColumns(payload, view, identity, into?.histogram ?? createFrameColumns().histogram);
  // Every check decodeFrame makes of a GroupSamples payload (no rule constrains the lanes).
  const sampleCount = checkGroupSamplesWithoutLanes(payload, view, identity);
  const p = identity.bodyAt;
  const selectionCode = payload[p + 8]!;
  const samples = into?.samples ?? createFrameColumns().samples;
  readSampleColumns(samples, view, p + 20, sampleCount, identity.groupSize);
  return {
    type: 'group-samples',
    job: identity.job,
    kernel: identity.kernel,
    launchId: identity.launchId,
    frameSequence: identity.frameSequence,
    source: identity.source,
    groupSize: identity.groupSize,
    sync: identity.sync,
    device: identity.device,
    startUnixNanos: identity.startUnixNanos,
    endUnixNanos: identity.endUnixNanos,
    groupCount: countAt(view, p),
    selection: selectionCode === 0 ? 'stride' : selectionCode === 1 ? 'hash' : 'block',
    samplingStride: view.getUint32(p + 12, true),
    ...(selectionCode === 2 ? { groupsPerBlock: view.getUint16(p + 10, true) } : {}),
    samples,
  };
}

/**
 * Empty columns for {@link decodeFrameColumns} to read frames into; they grow to the largest
 * frame read and are reused by every decode given them.
 *
 * @example
 * const columns = createFrameColumns();
 * for (const bytes of frames) { const frame = decodeFrameColumns(bytes, undefined, columns); use(frame); }
 */
export function createFrameColumns(): FrameColumns {
  return {
    samples: { groups: 0, lanes: 0, groupIndex: new Float64Array(0), durationTicks: new Float64Array(0), clocked: new Uint8Array(0), laneCounts: new Float64Array(0), laneFinishTicks: new Float64Array(0) },
    histogram: { entries: 0, bin: new Uint32Array(0), low: new Float64Array(0), high: new Float64Array(0), count: new Float64Array(0) },
  };
}

/**
 * A LaunchSummary payload read into `histogram` and checked as decodeFrame does
 * (readLaunchSummary, then no bytes left over, then validateFrameBody's rules that values read
 * from the wire can break, in its order, with its codes and messages).
 */
function launchSummaryColumns(payload: Uint8Array, view: DataView, identity: DecodedIdentity, histogram: HistogramColumns): LaunchSummaryColumnsFrame {
  const p = identity.bodyAt;
  if (payload.length - p < 76) throwEndsInsideFixed(LAUNCH_SUMMARY_FIELDS, payload.length - p);
  const entryCount = view.getUint32(p + 72, true);
  if (entryCount > MAX_HISTOGRAM_ENTRIES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `histogram entries must be at most ${MAX_HISTOGRAM_ENTRIES}, got ${entryCount}`);
  }
  const at = p + 76;
  if (payload.length - at < entryCount * 12) throw endsInside('histogram entries', entryCount * 12, payload.length - at);
  const remaining = payload.length - at - entryCount * 12;
  if (remaining !== 0) throw invalid(`${remaining} bytes left over after the last payload field`);
  const groupCount = countAt(view, p);
  const groupsCounted = countAt(view, p + 8);
  checkUint(groupCount, 'groupCount', MAX_COUNT);
  checkUint(groupsCounted, 'groupsCounted', MAX_COUNT);
  if (groupsCounted > groupCount) throw invalid(`groupsCounted (${groupsCounted}) must be <= groupCount (${groupCount})`);
  const sumMeasuredLoss = view.getFloat64(p + 32, true);
  const sumCountsLoss = view.getFloat64(p + 40, true);
  checkLossSum(sumMeasuredLoss, 'sumMeasuredLoss');
  checkLossSum(sumCountsLoss, 'sumCountsLoss');
  const sumMaxCounts = countAt(view, p + 48);
  const sumCounts = countAt(view, p + 56);
  const droppedSamples = countAt(view, p + 64);
  checkUint(sumMaxCounts, 'sumMaxCounts', MAX_COUNT);
  checkUint(sumCounts, 'sumCounts', MAX_COUNT);
  checkUint(droppedSamples, 'droppedSamples', MAX_COUNT);
  readHistogramColumns(histogram, view, at, entryCount, groupsCounted, identity.groupSize);
  return {
    type: 'launch-summary',
    job: identity.job,
    kernel: identity.kernel,
    launchId: identity.launchId,
    frameSequence: identity.frameSequence,
    source: identity.source,
    groupSize: identity.groupSize,
    sync: identity.sync,
    device: identity.device,
    startUnixNanos: identity.startUnixNanos,
    endUnixNanos: identity.endUnixNanos,
    groupCount,
    groupsCounted,
    sumSimtClocks: countAt(view, p + 16),
    sumMimdClocks: countAt(view, p + 24),
    sumMeasuredLoss,
    sumCountsLoss,
    sumMaxCounts,
    sumCounts,
    droppedSamples,
    histogram,
  };
}

/**
 * The `count` histogram entries (12 bytes each, from `at`) into `columns`, checked entry by entry
 * as validateFrameBody checks them (bins in range and strictly increasing, counts 1..2^53−1, the
 * running total within MAX_COUNT), then the total against groupsCounted · groupSize.
 */
function readHistogramColumns(columns: HistogramColumns, view: DataView, at: number, count: number, groupsCounted: number, groupSize: number): void {
  if (columns.bin.length < count) {
    const size = Math.max(count, 16, 2 * columns.bin.length);
    columns.bin = new Uint32Array(size);
    columns.low = new Float64Array(size);
    columns.high = new Float64Array(size);
    columns.count = new Float64Array(size);
  }
  columns.entries = count;
  const { bin: bins, low, high, count: counts } = columns;
  let previousBin = -1;
  // As validateFrameBody: each count is ≤ 2^53−1, so a float sum that passes 2^53−1 is ≥ 2^53.
  let total = 0;
  for (let i = 0; i < count; i++, at += 12) {
    const bin = view.getUint32(at, true);
    const entryCount = countAt(view, at + 4);
    if (bin >= HISTOGRAM_BIN_COUNT) throw invalid(`histogram bin must be < ${HISTOGRAM_BIN_COUNT}, got ${bin}`);
    if (bin <= previousBin) throw invalid(`histogram bins must be strictly increasing, got ${bin} after ${previousBin}`);
    if (entryCount === 0) throw invalid(`histogram counts must be >= 1, got 0 for bin ${bin}`);
    checkUint(entryCount, 'histogram count', MAX_COUNT);
    total += entryCount;
    if (total > MAX_COUNT) throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `histogram total must be at most ${MAX_COUNT}, got ${exactColumnTotal(counts, i, entryCount)}`);
    bins[i] = bin;
    low[i] = binLowOf(bin);
    high[i] = binHighOf(bin);
    counts[i] = entryCount;
    previousBin = bin;
  }
  // total ≤ 2^53−1 is exact; a product above 2^53−1 rounds to ≥ 2^53 and so differs from it.
  if (total !== groupsCounted * groupSize) throw invalid(`histogram counts must sum to groupsCounted*groupSize (${BigInt(groupsCounted) * BigInt(groupSize)}), got ${total}`);
}

/** The exact total of counts[0, last) and `lastCount`, for the over-limit message. */
function exactColumnTotal(counts: Float64Array, last: number, lastCount: number): bigint {
  let total = BigInt(lastCount);
  for (let i = 0; i < last; i++) total += BigInt(counts[i]!);
  return total;
}
/**
 * The sampled groups held in `columns`, one object each (copies of their lanes): for readers
 * that take them one at a time, such as the block runs of a block-selection frame.
 *
 * @example sampleGroupsOf(frame.samples)[0]?.laneCounts // [4, 4, 3, 2]
 */
export function sampleGroupsOf(columns: GroupSampleColumns): { groupIndex: number; laneCounts: number[]; laneFinishTicks: number[]; durationTicks: number; clocked?: false }[] {
  return Array.from({ length: columns.groups }, (_, g) => {
    const lanes = (values: Float64Array): number[] => Array.from(values.subarray(g * columns.lanes, (g + 1) * columns.lanes));
    return {
      groupIndex: columns.groupIndex[g]!,
      laneCounts: lanes(columns.laneCounts),
      laneFinishTicks: lanes(columns.laneFinishTicks),
      durationTicks: columns.durationTicks[g]!,
      ...(columns.clocked[g] === 0 ? { clocked: false as const } : {}),
    };
  });
}

/** A LaunchSummary payload read and checked as decodeFrame does: no bytes left over, every rule met. */
function wholeLaunchSummary(payload: Uint8Array, view: DataView, identity: DecodedIdentity): LaunchSummaryFrame {
  const { frame, end } = readLaunchSummary(payload, view, identity);
  const remaining = payload.length - end;
  if (remaining !== 0) throw invalid(`${remaining} bytes left over after the last payload field`);
  validateFrameBody(frame, false);
  return frame;
}

/** High halves below this make a u64 below 2^53 (exact as a number). */
const SAFE_HIGH_LIMIT = 0x200000;

/**
 * The `count` samples (24 + 12·n bytes each, from `at`) into `columns`, each with its clocks as
 * offsets from its start clock; grows the columns when they are too short.
 */
function readSampleColumns(columns: GroupSampleColumns, view: DataView, at: number, count: number, n: number): void {
  if (columns.groupIndex.length < count) {
    const groups = Math.max(count, 2 * columns.groupIndex.length);
    columns.groupIndex = new Float64Array(groups);
    columns.durationTicks = new Float64Array(groups);
    columns.clocked = new Uint8Array(groups);
  }
  if (columns.laneCounts.length < count * n) {
    const lanes = Math.max(count * n, 2 * columns.laneCounts.length);
    columns.laneCounts = new Float64Array(lanes);
    columns.laneFinishTicks = new Float64Array(lanes);
  }
  columns.groups = count;
  columns.lanes = n;
  const { groupIndex, durationTicks, clocked, laneCounts, laneFinishTicks } = columns;
  for (let g = 0, base = 0; g < count; g++, base += n, at += 24 + 12 * n) {
    groupIndex[g] = countAt(view, at);
    const startHigh = view.getUint32(at + 12, true);
    const startLow = view.getUint32(at + 8, true);
    const endHigh = view.getUint32(at + 20, true);
    const endLow = view.getUint32(at + 16, true);
    const startSafe = startHigh < SAFE_HIGH_LIMIT;
    const startTicks = startHigh * TWO_TO_32 + startLow;
    let allZero = startHigh === 0 && startLow === 0 && endHigh === 0 && endLow === 0;
    durationTicks[g] = startSafe && endHigh < SAFE_HIGH_LIMIT ? endHigh * TWO_TO_32 + endLow - startTicks : Number(view.getBigUint64(at + 16, true) - view.getBigUint64(at + 8, true));
    let lane = at + 24;
    for (let i = base; i < base + n; i++, lane += 4) laneCounts[i] = view.getUint32(lane, true);
    for (let i = base; i < base + n; i++, lane += 8) {
      const low = view.getUint32(lane, true);
      const high = view.getUint32(lane + 4, true);
      if (low !== 0 || high !== 0) allZero = false;
      laneFinishTicks[i] = startSafe && high < SAFE_HIGH_LIMIT ? high * TWO_TO_32 + low - startTicks : Number(view.getBigUint64(lane, true) - view.getBigUint64(at + 8, true));
    }
    clocked[g] = allZero ? 0 : 1;
  }
}

/**
 * The header of a frame whose header passes every check of decodeFrameHeader (the usual case),
 * read from the bytes without a DataView; undefined for any other bytes, which decodeFrameHeader
 * then rejects with its code and message.
 */
function wellFormedHeaderOf(bytes: Uint8Array): Pick<FrameHeader, 'kind' | 'payloadLength' | 'payloadCrc32c'> | undefined {
  if (bytes.length < FRAME_HEADER_BYTES) return undefined;
  if (bytes[0] !== FRAME_MAGIC[0] || bytes[1] !== FRAME_MAGIC[1] || bytes[2] !== FRAME_MAGIC[2] || bytes[3] !== FRAME_MAGIC[3]) return undefined;
  if (bytes[4]! + 256 * bytes[5]! !== FRAME_VERSION || bytes[7] !== 0) return undefined;
  const type = bytes[6];
  if (type !== 1 && type !== 2) return undefined;
  const payloadLength = (bytes[8]! | (bytes[9]! << 8) | (bytes[10]! << 16) | (bytes[11]! << 24)) >>> 0;
  if (payloadLength > MAX_PAYLOAD_BYTES) return undefined;
  const payloadCrc32c = (bytes[12]! | (bytes[13]! << 8) | (bytes[14]! << 16) | (bytes[15]! << 24)) >>> 0;
  return { kind: type === 1 ? 'launch-summary' : 'group-samples', payloadLength, payloadCrc32c };
}

/** The header, CRC and identity checks every decode starts with. */
function openFrame(bytes: Uint8Array, options: DecodeFrameOptions | undefined): { kind: Frame['type']; payload: Uint8Array; view: DataView; identity: DecodedIdentity } {
  const header = wellFormedHeaderOf(bytes) ?? decodeFrameHeader(bytes, 0);
  const total = FRAME_HEADER_BYTES + header.payloadLength;
  if (bytes.length < total) {
    throw new FrameError('WW_ERR_FRAME_TRUNCATED', `frame declares ${total} bytes, got ${bytes.length}`);
  }
  if (bytes.length > total) {
    throw new FrameError('WW_ERR_FRAME_INVALID', `expected exactly one frame of ${total} bytes, got ${bytes.length} (trailing bytes)`);
  }
  const payload = bytes.subarray(FRAME_HEADER_BYTES, total);
  if (options?.crcVerified !== true) {
    const crc = crc32c(payload);
    if (crc !== header.payloadCrc32c) {
      throw new FrameError(
        'WW_ERR_FRAME_CRC_MISMATCH',
        `payload CRC-32C must match the header's 0x${header.payloadCrc32c.toString(16).padStart(8, '0')}, computed 0x${crc.toString(16).padStart(8, '0')}`,
      );
    }
  }
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  return { kind: header.kind, payload, view, identity: readIdentity(payload, view) };
}

/** What the collector needs of a valid frame: its type, stream identity and size in lanes. */
export interface FrameSummary {
  readonly type: Frame['type'];
  readonly job: string;
  readonly kernel: string;
  readonly groupSize: number;
  readonly source: Frame['source'];
  /** The device's UUID (text form). */
  readonly deviceUuid: string;
  /** Lanes the frame describes: groupsCounted × groupSize (launch summary), samples × groupSize (group samples). */
  readonly threadRecords: number;
}

/**
 * Checks one whole frame exactly as {@link decodeFrame} does (same acceptance, same error code
 * and message) and returns only its summary. Cheaper for GroupSamples frames: their per-lane
 * counts and clocks, which no rule constrains (any u32/u64 is valid), are skipped, not read
 * into arrays. The collector's validation path: it forwards the frame's bytes, not a decoded
 * frame.
 *
 * @param bytes - one whole frame (header + payload), nothing more
 * @param options - as for decodeFrame
 * @throws FrameError with decodeFrame's code and message for the same bytes
 * @example summarizeFrame(item.raw, { crcVerified: true }).threadRecords // 128 for 4 sampled groups of 32
 */
export function summarizeFrame(bytes: Uint8Array, options?: DecodeFrameOptions): FrameSummary {
  const { kind, payload, view, identity } = openFrame(bytes, options);
  if (kind === 'launch-summary') {
    const frame = wholeLaunchSummary(payload, view, identity);
    return { type: kind, job: identity.job, kernel: identity.kernel, groupSize: identity.groupSize, source: identity.source, deviceUuid: identity.device.uuid, threadRecords: frame.groupsCounted * frame.groupSize };
  }
  const sampleCount = checkGroupSamplesWithoutLanes(payload, view, identity);
  return { type: kind, job: identity.job, kernel: identity.kernel, groupSize: identity.groupSize, source: identity.source, deviceUuid: identity.device.uuid, threadRecords: sampleCount * identity.groupSize };
}

/**
 * readGroupSamples + validateFrameBody for a GroupSamples payload without reading the lanes:
 * the same checks in the same order with the same messages. Returns the number of samples.
 */
function checkGroupSamplesWithoutLanes(payload: Uint8Array, view: DataView, id: DecodedIdentity): number {
  const p = id.bodyAt;
  const available = payload.length - p;
  checkSelectionBytes(payload, view, p, available);
  if (available < 20) throwEndsInsideFixed(GROUP_SAMPLES_FIELDS, available);
  const samplingStride = view.getUint32(p + 12, true);
  const sampleCount = view.getUint32(p + 16, true);
  if (sampleCount > MAX_GROUP_SAMPLES) {
    throw new FrameError('WW_ERR_FRAME_OVER_LIMIT', `sampled groups per frame must be at most ${MAX_GROUP_SAMPLES}, got ${sampleCount}`);
  }
  const sampleBytes = 24 + 12 * id.groupSize;
  const at = p + 20;
  if (payload.length - at < sampleCount * sampleBytes) throw endsInside('samples', sampleCount * sampleBytes, payload.length - at);
  const end = at + sampleCount * sampleBytes;
  const remaining = payload.length - end;
  if (remaining !== 0) throw invalid(`${remaining} bytes left over after the last payload field`);
  // validateFrameBody's group-samples rules that values read from the wire can break.
  const groupCount = countAt(view, p);
  checkUint(groupCount, 'groupCount', MAX_COUNT);
  if (samplingStride === 0) throw invalid('samplingStride must be >= 1, got 0');
  for (let g = 0, sample = at; g < sampleCount; g++, sample += sampleBytes) {
    const index = countAt(view, sample);
    if (!Number.isInteger(index) || index >= groupCount) throw invalid(`groupIndex must be an integer < groupCount (${groupCount}), got ${String(index)}`);
  }
  return sampleCount;
}
