import type { SampledGroupsAccumulation } from '../../model/index.ts';
import type { AlertState } from './alert-detector.ts';
import type { CusumState } from './change-detector.ts';
import type { CountHistogram } from './count-histogram.ts';
import { EstimatorError } from '../errors.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { DedupeMemory } from './dedupe-memory.ts';
import type { StreamState, WindowAccumulation } from './stream-state.ts';

/**
 * JSON encoding of a stream's state for the checkpoint topic. Maps become arrays, ±∞
 * becomes null. `appliedOffset` is the Kafka offset after the last message of this stream
 * that the state includes: on restore, messages below it are skipped (exactly-once state).
 */

/**
 * Where a stream's dedupe memory stands against its checkpoint records (docs/estimator.md,
 * Checkpoints of the dedupe memory): its stream record carries the identities added since the
 * last full copy (the base record, key `…#d|<stream key>`), so a round writes ~2 KB of them per
 * stream instead of the whole memory (~16 KB at 1,024).
 */
export interface DedupeBase {
  /**
   * Tells this life of the stream apart from earlier ones under the same key (the offset of the
   * frame that created it, decimal, or `v<version>:<appliedOffset>` for one restored from an
   * older checkpoint): a base record of another epoch is never used.
   */
  readonly epoch: string;
  /** The memory's {@link DedupeMemory.total} when the base record was taken; 0 = none is needed. */
  readonly total: number;
}

/**
 * Identities a stream record carries beyond its base before the next round writes a new base
 * (a full copy): the record's dedupe text stays below ~4 KB, and at the default capacity
 * (1,024) a base is written once per 256 new identities.
 */
export const DEDUPE_DELTA_LIMIT = 256;

/** What is checkpointed per stream. */
export interface StreamCheckpoint {
  readonly state: StreamState;
  readonly alerts: AlertState;
  /** Offset (decimal string) after the last frames-topic message applied to this stream. */
  readonly appliedOffset: string;
  /** The dedupe memory's base record (written by {@link encodeDedupeBase}). */
  readonly dedupeBase: DedupeBase;
}

/** A version-4 stream record's dedupe memory: the identities after its base, and where they stand. */
interface DedupeDeltaJson {
  epoch: string;
  /** The memory's total (identities ever added). */
  total: number;
  /** Identities held: absolute indices total − size … total − 1. */
  size: number;
  /** The base record's total (0: none); the record holds those from max(base, total − size) on. */
  base: number;
  /** Base64 of the identities from max(base, total − size) to total − 1 (12 bytes each, as DedupeMemory.toBytes). */
  delta: string;
}

/** A base record: the whole dedupe memory of a stream at `total`. */
interface DedupeBaseJson {
  v: 4;
  epoch: string;
  total: number;
  size: number;
  /** Base64 of the identities total − size … total − 1. */
  ids: string;
}

interface HistogramJson {
  c: [number, number][];
  h: [number, number][];
  b: boolean;
  t: number;
}

interface WindowJson extends Omit<WindowAccumulation, 'histogram' | 'firstEventMillis' | 'lastEventMillis' | 'overflowed' | 'sampleFrames' | 'samples' | 'clockedGroups'> {
  /** Absent in checkpoints written before counts-only frames were told apart: all their groups counted as clocked. */
  clockedGroups?: number;
  histogram: HistogramJson;
  /** The sums that overflowed (stream-state.ts); absent while none did, and in checkpoints written before overflow was tracked. */
  overflowed?: WindowAccumulation['overflowed'];
  /** Absent in checkpoints written before GroupSamples were processed, and while the window has none. */
  sampleFrames?: number;
  samples?: SampledGroupsAccumulation;
  firstEventMillis: number | null;
  lastEventMillis: number | null;
}

interface CheckpointJson {
  /**
   * 4: dedupe is a {@link DedupeDeltaJson}, the older identities in the base record;
   * 3: dedupe is the base64 text of the dedupe memory's bytes (DedupeMemory.toBytes: 12 per
   * identity, launchId u64 then frameSequence u32, little-endian, oldest first); 2 (older): an
   * array of exact identities (launchId · 2^32 + frameSequence) as decimal strings, oldest first;
   * 1 (older still): 53-bit hashes, not restorable as identities.
   */
  v: 1 | 2 | 3 | 4;
  identity: StreamIdentity;
  appliedOffset: string;
  windows: WindowJson[];
  current: HistogramJson;
  recent: HistogramJson[];
  cumulative: HistogramJson;
  cumulativeLaunches: number;
  cumulativeGroups: number;
  dedupe: DedupeDeltaJson | string | (string | number)[];
  watermarkMillis: number | null;
  closedThroughMillis: number | null;
  alerts: { lossMeasured: CusumState; lossPredicted: CusumState; drift: CusumState; lossThresholdArmed: boolean; driftThresholdArmed: boolean; staleRaised?: boolean };
}

const finiteOrNull = (value: number): number | null => (Number.isFinite(value) ? value : null);

function histogramToJson(histogram: CountHistogram): HistogramJson {
  return { c: [...histogram.counts], h: [...histogram.highs], b: histogram.binned, t: histogram.total };
}

function histogramFromJson(json: HistogramJson): CountHistogram {
  return { counts: new Map(json.c), highs: new Map(json.h), binned: json.b, total: json.t };
}

/**
 * Encodes a stream checkpoint as JSON text: the text of JSON.stringify on the object of
 * {@link CheckpointJson} (members in its order), byte for byte. The dedupe memory (up to
 * dedupeCapacity identities, most of the record) is written here directly as base64 (which needs
 * no JSON escaping); the members before and after it are JSON.stringify's, joined around it.
 *
 * @example
 * producer.send(checkpointKey, encodeStreamCheckpoint({ state, alerts, appliedOffset: '42' }));
 */
export function encodeStreamCheckpoint(checkpoint: StreamCheckpoint): string {
  const { state } = checkpoint;
  const head: Omit<CheckpointJson, 'dedupe' | 'watermarkMillis' | 'closedThroughMillis' | 'alerts'> = {
    v: 4,
    identity: state.identity,
    appliedOffset: checkpoint.appliedOffset,
    windows: [...state.windows.values()].map((window) => ({
      ...window,
      histogram: histogramToJson(window.histogram),
      firstEventMillis: finiteOrNull(window.firstEventMillis),
      lastEventMillis: finiteOrNull(window.lastEventMillis),
    })),
    current: histogramToJson(state.current.histogram),
    recent: state.current.recent.map(histogramToJson),
    cumulative: histogramToJson(state.cumulative),
    cumulativeLaunches: state.cumulativeLaunches,
    cumulativeGroups: state.cumulativeGroups,
  };
  const tail: Pick<CheckpointJson, 'watermarkMillis' | 'closedThroughMillis' | 'alerts'> = {
    watermarkMillis: finiteOrNull(state.watermarkMillis),
    closedThroughMillis: finiteOrNull(state.closedThroughMillis),
    alerts: {
      lossMeasured: checkpoint.alerts.lossMeasured,
      lossPredicted: checkpoint.alerts.lossPredicted,
      drift: checkpoint.alerts.drift,
      lossThresholdArmed: checkpoint.alerts.lossThresholdArmed,
      driftThresholdArmed: checkpoint.alerts.driftThresholdArmed,
      staleRaised: checkpoint.alerts.staleRaised,
    },
  };
  // JSON.stringify of an object is `{`, its members joined by `,`, `}`; head (v) and tail
  // (watermarkMillis) always have a member, so the joined text is that of the whole object.
  const headText = JSON.stringify(head);
  const tailText = JSON.stringify(tail);
  const memory = state.dedupe;
  const { epoch, total: base } = checkpoint.dedupeBase;
  const delta = base64Of(memory.bytesFrom(Math.max(base, memory.total - memory.size)));
  const dedupe = `{"epoch":${JSON.stringify(epoch)},"total":${memory.total},"size":${memory.size},"base":${base},"delta":"${delta}"}`;
  return `${headText.slice(0, -1)},"dedupe":${dedupe},${tailText.slice(1)}`;
}

function base64Of(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/**
 * The text of a stream's dedupe base record (key `<group>|<frames topic>|<partition>#d|<stream
 * key>`): the whole memory at its present total, `{"v":4,"epoch":…,"total":…,"size":…,"ids":"<base64>"}`.
 * The stream records written after it carry only the identities added since (see {@link DedupeBase}).
 *
 * @example records.push({ streamKey, dedupeBase: true, value: encodeDedupeBase('1042', state.dedupe) });
 */
export function encodeDedupeBase(epoch: string, memory: DedupeMemory): string {
  return `{"v":4,"epoch":${JSON.stringify(epoch)},"total":${memory.total},"size":${memory.size},"ids":"${base64Of(memory.toBytes())}"}`;
}

/** Whether `value` is an integer from 0 to 2^53 − 1. */
function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * The identities a base record gives a version-4 stream record: those with absolute indices
 * `from` … `to` − 1, or undefined when the text is not a base record of `epoch` that holds all
 * of them (then the stream keeps only the identities of its own record).
 */
function baseIdentities(baseText: string | undefined, epoch: string, from: number, to: number): Uint8Array | undefined {
  if (baseText === undefined) return undefined;
  let json: DedupeBaseJson;
  try {
    json = JSON.parse(baseText) as DedupeBaseJson;
  } catch {
    return undefined;
  }
  if (json === null || typeof json !== 'object' || json.v !== 4 || json.epoch !== epoch || !isCount(json.total) || !isCount(json.size) || json.size > json.total) return undefined;
  if (typeof json.ids !== 'string' || !DEDUPE_BASE64.test(json.ids) || json.ids.length !== 16 * json.size) return undefined;
  // The base must reach `to` (it may hold more: a newer base whose stream record did not land).
  const first = json.total - json.size;
  if (json.total < to) return undefined;
  const start = Math.max(from, first);
  if (start >= to) return new Uint8Array(0);
  return Buffer.from(json.ids, 'base64').subarray(12 * (start - first), 12 * (to - first));
}

/**
 * The dedupe memory of a version-4 record: its own identities (from max(base, total − size)),
 * preceded by the older ones from the base record when it holds them contiguously. The result
 * never holds an identity the memory did not hold at the record's total. Returns the memory and
 * the base the stream goes on from (0 when the base record could not serve: the next round then
 * writes what the stream holds afresh).
 */
function dedupeFromV4(dedupe: unknown, baseText: string | undefined): { memory: DedupeMemory; base: number } {
  const d = dedupe as DedupeDeltaJson;
  if (d === null || typeof d !== 'object' || typeof d.epoch !== 'string' || !isCount(d.total) || !isCount(d.size) || !isCount(d.base)) throw new Error('dedupe must be {epoch, total, size, base, delta}');
  if (d.size > d.total || d.base > d.total) throw new Error('dedupe size and base must not exceed its total');
  const deltaFrom = Math.max(d.base, d.total - d.size);
  if (typeof d.delta !== 'string' || !DEDUPE_BASE64.test(d.delta) || d.delta.length !== 16 * (d.total - deltaFrom)) throw new Error('dedupe delta must be base64 of the identities after its base');
  const delta = Buffer.from(d.delta, 'base64');
  if (deltaFrom === d.total - d.size) return { memory: DedupeMemory.fromBytes(delta, d.total), base: d.base };
  const older = baseIdentities(baseText, d.epoch, d.total - d.size, deltaFrom);
  if (older === undefined) return { memory: DedupeMemory.fromBytes(delta, d.total), base: 0 };
  return { memory: DedupeMemory.fromBytes(Buffer.concat([older, delta]), d.total), base: d.base };
}

/** Base64 of whole 12-byte identities: 16 characters each, so never padded. */
const DEDUPE_BASE64 = /^(?:[A-Za-z0-9+/]{16})*$/;

/**
 * The dedupe memory of a checkpoint. Version 3 stores the memory's bytes, version 2 exact
 * identities as decimal text (both restored as they were); a version 1 checkpoint stored 53-bit
 * hashes, which cannot be compared with exact identities, so such a stream restarts its dedupe
 * memory empty (once, after the upgrade).
 */
function dedupeFromLegacyJson(json: CheckpointJson): DedupeMemory {
  if (json.v === 1) return new DedupeMemory();
  if (json.v === 3) {
    if (typeof json.dedupe !== 'string' || !DEDUPE_BASE64.test(json.dedupe)) throw new Error('dedupe must be base64 of 12-byte identities');
    return DedupeMemory.fromBytes(Buffer.from(json.dedupe, 'base64'));
  }
  if (!Array.isArray(json.dedupe)) throw new Error('dedupe must be an array');
  return DedupeMemory.fromIdentities(
    json.dedupe.map((entry) => {
      if (typeof entry !== 'string' || !/^\d{1,29}$/.test(entry)) throw new Error(`dedupe identity must be a decimal string, got ${JSON.stringify(entry)}`);
      return BigInt(entry);
    }),
  );
}

/**
 * The clock sums under their one name (sumSimtClocks, sumMimdClocks, as in the frame format):
 * checkpoints written before the names were unified call them sumSimtCycles/sumMimdCycles in
 * a window and sumSimtTicks/sumMimdTicks in its sampled groups.
 */
function withClockSumNames<T extends object>(json: T, legacySimt: string, legacyMimd: string): T {
  const record = json as Record<string, unknown>;
  if (!(legacySimt in record) && !(legacyMimd in record)) return json;
  const { [legacySimt]: simt, [legacyMimd]: mimd, ...rest } = record;
  return { ...rest, sumSimtClocks: record.sumSimtClocks ?? simt, sumMimdClocks: record.sumMimdClocks ?? mimd } as T;
}

/** The overflowed sums of a stored window; an older one without clockedGroups takes over the state of `groups` for it. */
function overflowedOf(window: WindowJson): WindowAccumulation['overflowed'] {
  if (window.overflowed === undefined) return undefined;
  const overflowed = [...window.overflowed];
  if (window.clockedGroups === undefined && overflowed.includes('groups')) overflowed.push('clockedGroups');
  return overflowed;
}

/**
 * Decodes a stream checkpoint. `wallMillis` becomes the stream's last-record time, so a
 * restored stream is not idle-closed before its backlog is re-read. `shareIdentity` maps the
 * stored identity to the one the state keeps (the engine's identity pool shares repeated
 * strings between streams; default: kept as decoded). `dedupeBaseText` is the stream's dedupe
 * base record ({@link encodeDedupeBase}), if the topic holds one: a version-4 record takes its
 * older identities from it. A base record that is missing, damaged, of another epoch or not
 * reaching the record's identities leaves the memory with the record's own identities only
 * (never an identity the memory did not hold).
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT when the text is not a version 1, 2, 3 or 4 checkpoint.
 * @example
 * const { state, alerts, appliedOffset } = decodeStreamCheckpoint(text, streamKey, Date.now(), undefined, baseText);
 */
export function decodeStreamCheckpoint(
  text: string,
  key: string,
  wallMillis: number,
  shareIdentity: (identity: StreamIdentity) => StreamIdentity = (identity) => identity,
  dedupeBaseText?: string,
): StreamCheckpoint {
  let json: CheckpointJson;
  let dedupe: DedupeMemory;
  let dedupeBase: DedupeBase;
  try {
    json = JSON.parse(text) as CheckpointJson;
    if ((json.v !== 1 && json.v !== 2 && json.v !== 3 && json.v !== 4) || typeof json.appliedOffset !== 'string' || !Array.isArray(json.windows)) {
      throw new Error('not a version 1, 2, 3 or 4 checkpoint');
    }
    if (json.v === 4) {
      const restored = dedupeFromV4(json.dedupe, dedupeBaseText);
      dedupe = restored.memory;
      dedupeBase = { epoch: (json.dedupe as DedupeDeltaJson).epoch, total: restored.base };
    } else {
      dedupe = dedupeFromLegacyJson(json);
      // No base record belongs to it: the next round writes the memory afresh (a base when it is large).
      dedupeBase = { epoch: `v${json.v}:${json.appliedOffset}`, total: 0 };
    }
  } catch (error) {
    throw new EstimatorError(
      'WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT',
      `checkpoint record '${key}' is not a version 1, 2, 3 or 4 stream checkpoint (${error instanceof Error ? error.message : String(error)}); delete the checkpoint topic record or use a new --group-id`,
      { cause: error },
    );
  }
  const windows = new Map<number, WindowAccumulation>();
  for (const stored of json.windows) {
    const window = withClockSumNames(stored, 'sumSimtCycles', 'sumMimdCycles');
    windows.set(window.startMillis, {
      ...window,
      histogram: histogramFromJson(window.histogram),
      firstEventMillis: window.firstEventMillis ?? Number.POSITIVE_INFINITY,
      lastEventMillis: window.lastEventMillis ?? Number.NEGATIVE_INFINITY,
      clockedGroups: window.clockedGroups ?? window.groups,
      overflowed: overflowedOf(window),
      sampleFrames: window.sampleFrames ?? 0,
      samples: window.samples === undefined ? undefined : withClockSumNames(window.samples, 'sumSimtTicks', 'sumMimdTicks'),
    });
  }
  const state: StreamState = {
    key,
    identity: shareIdentity(json.identity),
    windows,
    current: { histogram: histogramFromJson(json.current), recent: json.recent.map(histogramFromJson) },
    cumulative: histogramFromJson(json.cumulative),
    cumulativeLaunches: json.cumulativeLaunches,
    cumulativeGroups: json.cumulativeGroups,
    dedupe,
    watermarkMillis: json.watermarkMillis ?? Number.NEGATIVE_INFINITY,
    closedThroughMillis: json.closedThroughMillis ?? Number.NEGATIVE_INFINITY,
    lastRecordWallMillis: wallMillis,
  };
  return { state, alerts: { ...json.alerts, staleRaised: json.alerts.staleRaised ?? false }, appliedOffset: json.appliedOffset, dedupeBase };
}

/**
 * The text of a partition's checkpoint marker: `{"v":1,"nextOffset":"…"}`, the partition's next
 * frame offset as decimal text (the offset of the first frame its checkpoint does not cover).
 *
 * @example encodePartitionMarker('42') // '{"v":1,"nextOffset":"42"}'
 */
export function encodePartitionMarker(nextOffset: string): string {
  return JSON.stringify({ v: 1, nextOffset });
}

/**
 * Reads a partition marker's text: its `nextOffset` as decimal text, or why it cannot be read
 * (not JSON, or no decimal `nextOffset`): the engine reports the latter as a corrupt marker.
 *
 * @example readPartitionMarker('{"v":1,"nextOffset":"42"}') // { nextOffset: '42' }
 * @example readPartitionMarker('{"v":1') // { error: SyntaxError … }
 */
export function readPartitionMarker(marker: string): { readonly nextOffset: string } | { readonly error: unknown } {
  let parsed: { nextOffset?: unknown };
  try {
    parsed = JSON.parse(marker) as { nextOffset?: unknown };
  } catch (error) {
    return { error };
  }
  if (parsed !== null && typeof parsed === 'object' && typeof parsed.nextOffset === 'string' && /^\d+$/.test(parsed.nextOffset)) return { nextOffset: parsed.nextOffset };
  return { error: new Error(`no decimal nextOffset in ${marker.slice(0, 100)}`) };
}
