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

/** What is checkpointed per stream. */
export interface StreamCheckpoint {
  readonly state: StreamState;
  readonly alerts: AlertState;
  /** Offset (decimal string) after the last frames-topic message applied to this stream. */
  readonly appliedOffset: string;
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
   * 3: dedupe is the base64 text of the dedupe memory's bytes (DedupeMemory.toBytes: 12 per
   * identity, launchId u64 then frameSequence u32, little-endian, oldest first); 2 (older): an
   * array of exact identities (launchId · 2^32 + frameSequence) as decimal strings, oldest first;
   * 1 (older still): 53-bit hashes, not restorable as identities.
   */
  v: 1 | 2 | 3;
  identity: StreamIdentity;
  appliedOffset: string;
  windows: WindowJson[];
  current: HistogramJson;
  recent: HistogramJson[];
  cumulative: HistogramJson;
  cumulativeLaunches: number;
  cumulativeGroups: number;
  dedupe: string | (string | number)[];
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
    v: 3,
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
  const bytes = state.dedupe.toBytes();
  const dedupe = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  return `${headText.slice(0, -1)},"dedupe":"${dedupe}",${tailText.slice(1)}`;
}

/** Base64 of whole 12-byte identities: 16 characters each, so never padded. */
const DEDUPE_BASE64 = /^(?:[A-Za-z0-9+/]{16})*$/;

/**
 * The dedupe memory of a checkpoint. Version 3 stores the memory's bytes, version 2 exact
 * identities as decimal text (both restored as they were); a version 1 checkpoint stored 53-bit
 * hashes, which cannot be compared with exact identities, so such a stream restarts its dedupe
 * memory empty (once, after the upgrade).
 */
function dedupeFromJson(json: CheckpointJson): DedupeMemory {
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
 * strings between streams; default: kept as decoded).
 *
 * @throws EstimatorError WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT when the text is not a version 1, 2 or 3 checkpoint.
 * @example
 * const { state, alerts, appliedOffset } = decodeStreamCheckpoint(text, streamKey, Date.now());
 */
export function decodeStreamCheckpoint(
  text: string,
  key: string,
  wallMillis: number,
  shareIdentity: (identity: StreamIdentity) => StreamIdentity = (identity) => identity,
): StreamCheckpoint {
  let json: CheckpointJson;
  let dedupe: DedupeMemory;
  try {
    json = JSON.parse(text) as CheckpointJson;
    if ((json.v !== 1 && json.v !== 2 && json.v !== 3) || typeof json.appliedOffset !== 'string' || !Array.isArray(json.windows)) {
      throw new Error('not a version 1, 2 or 3 checkpoint');
    }
    dedupe = dedupeFromJson(json);
  } catch (error) {
    throw new EstimatorError(
      'WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT',
      `checkpoint record '${key}' is not a version 1, 2 or 3 stream checkpoint (${error instanceof Error ? error.message : String(error)}); delete the checkpoint topic record or use a new --group-id`,
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
  return { state, alerts: { ...json.alerts, staleRaised: json.alerts.staleRaised ?? false }, appliedOffset: json.appliedOffset };
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
