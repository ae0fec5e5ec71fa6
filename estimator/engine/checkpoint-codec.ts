import type { SampledGroupsAccumulation } from '../../model/index.ts';
import type { AlertState } from './alert-detector.ts';
import type { CusumState } from './change-detector.ts';
import type { CountHistogram } from './count-histogram.ts';
import { EstimatorError } from '../errors.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { canonicalFrameIdentity, type DedupeMemory, type FrameIdentity, type StreamState, type WindowAccumulation } from './stream-state.ts';

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
   * 2: dedupe holds exact identities (launchId · 2^32 + frameSequence) as decimal strings, oldest
   * first, whichever form they have in memory (a number below 2^53, else a BigInt: the text is the
   * same); 1 (older): 53-bit hashes, not restorable as identities.
   */
  v: 1 | 2;
  identity: StreamIdentity;
  appliedOffset: string;
  windows: WindowJson[];
  current: HistogramJson;
  recent: HistogramJson[];
  cumulative: HistogramJson;
  cumulativeLaunches: number;
  cumulativeGroups: number;
  dedupe: (string | number)[];
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
 * dedupeCapacity identities, most of the record and of its encoding time) is written here
 * directly; the members before and after it are JSON.stringify's, joined around it.
 *
 * @example
 * producer.send(checkpointKey, encodeStreamCheckpoint({ state, alerts, appliedOffset: '42' }));
 */
export function encodeStreamCheckpoint(checkpoint: StreamCheckpoint): string {
  const { state } = checkpoint;
  const head: Omit<CheckpointJson, 'dedupe' | 'watermarkMillis' | 'closedThroughMillis' | 'alerts'> = {
    v: 2,
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
  return `${headText.slice(0, -1)},"dedupe":${dedupeJson(state.dedupe)},${tailText.slice(1)}`;
}

/**
 * JSON.stringify(Array.from(dedupe, String)): the identities as decimal strings, oldest first.
 * Decimal digits need no escaping, so the text is written as is.
 */
function dedupeJson(dedupe: DedupeMemory): string {
  let text = '[';
  for (const identity of dedupe) text += text.length === 1 ? `"${identityDecimal(identity)}"` : `,"${identityDecimal(identity)}"`;
  return `${text}]`;
}

/**
 * String(identity), faster for the usual identities of 10 to 16 digits (launchId · 2^32 +
 * frameSequence): as two integers below 2^31 (whose decimal text V8 writes on a fast path
 * instead of the shortest-double algorithm), the low one zero-padded to 9 digits.
 */
function identityDecimal(identity: FrameIdentity): string {
  if (typeof identity !== 'number' || identity < 1e9 || !Number.isSafeInteger(identity)) return String(identity);
  // The floor is exact: identity / 1e9 is at least 1e-9 away from the next integer, while half
  // an ulp of a quotient below 2^53 / 1e9 < 2^24 is at most 2^-30 < 1e-9, so the rounded
  // quotient never reaches it. high · 1e9 and the difference are integers below 2^53: exact.
  const high = Math.floor(identity / 1e9);
  const low = identity - high * 1e9;
  return String(high) + String(1e9 + low).slice(1);
}

/**
 * The dedupe memory of a checkpoint: version 2 stores exact identities; a version 1 checkpoint
 * stored 53-bit hashes, which cannot be compared with exact identities, so such a stream
 * restarts its dedupe memory empty (once, after the upgrade).
 */
function dedupeFromJson(json: CheckpointJson): StreamState['dedupe'] {
  if (json.v === 1) return new Set();
  const order = json.dedupe.map((entry) => {
    if (typeof entry !== 'string' || !/^\d{1,29}$/.test(entry)) throw new Error(`dedupe identity must be a decimal string, got ${JSON.stringify(entry)}`);
    // The in-memory form (stream-state.ts FrameIdentity): a number below 2^53, else a BigInt.
    return canonicalFrameIdentity(BigInt(entry));
  });
  return new Set(order);
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
 * @throws EstimatorError WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT when the text is not a version 1 or 2 checkpoint.
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
  let dedupe: StreamState['dedupe'];
  try {
    json = JSON.parse(text) as CheckpointJson;
    if ((json.v !== 1 && json.v !== 2) || typeof json.appliedOffset !== 'string' || !Array.isArray(json.windows) || !Array.isArray(json.dedupe)) {
      throw new Error('not a version 1 or 2 checkpoint');
    }
    dedupe = dedupeFromJson(json);
  } catch (error) {
    throw new EstimatorError(
      'WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT',
      `checkpoint record '${key}' is not a version 1 or 2 stream checkpoint (${error instanceof Error ? error.message : String(error)}); delete the checkpoint topic record or use a new --group-id`,
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
