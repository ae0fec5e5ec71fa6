import { NIL_UUID, streamKeyOf, type StreamIdentity } from '../../contracts/index.ts';
import type { SampledGroupColumns, SampledGroupInput } from '../../model/index.ts';

/**
 * The stream and frame identity every observation carries (LaunchSummary and GroupSamples
 * frames of one launch share it; frameSequence tells the frames apart).
 */
export interface ObservationIdentity {
  readonly job: string;
  readonly kernel: string;
  /** Device name (e.g. "NVIDIA H100 80GB HBM3" or the CPU model). */
  readonly device: string;
  /** Device UUID from the frame (the nil UUID when unknown); absent = nil. */
  readonly deviceUuid?: string | undefined;
  /** Host of the collector that forwarded the frame (Kafka header ww-host); absent = ''. */
  readonly host?: string | undefined;
  /** Labels of that collector (ww-label-* headers); absent = none. */
  readonly labels?: Readonly<Record<string, string>> | undefined;
  /** n: lanes per group (1..32 for warps/tiles; larger for CPU lockstep groups). */
  readonly groupSize: number;
  readonly source: 'cuda' | 'cpu';
  /** Launch identity; with frameSequence it makes a frame unique within its stream. */
  readonly launchId: bigint;
  readonly frameSequence: number;
  /** Event time of the launch (milliseconds since the Unix epoch), used for windowing. */
  readonly eventTimeMillis: number;
}

/**
 * What the estimator takes from one LaunchSummary frame: the stream it belongs to, its
 * identity for de-duplication, its event time, the per-lane iteration-count histogram and
 * the per-launch sums of measured and count-based loss. Decoupled from the wire format so
 * the window logic is tested without frames (frame-observation.ts maps a decoded frame).
 */
export interface LaunchObservation extends ObservationIdentity {
  /**
   * Lanes per iteration-count bin, [low, high] inclusive (low = high: exact value): one object
   * per bin, or columns (the engine's decoding path, whose columns are reused by the next frame
   * decoded: an observation holding them is used before that and not kept).
   */
  readonly bins: readonly LaunchBin[] | LaunchBinColumns;
  /** Number of groups (warps/tiles) of the launch. */
  readonly groups: number;
  /** Σ over groups of H computed from the group's counts (n·max/Σ). */
  readonly sumLossCounts: number;
  /** Σ over groups of measured H = C_SIMT/C_MIMD from clocks. */
  readonly sumLossMeasured: number;
  /** Σ over groups of C_SIMT = n·(c_end − c0), in clock cycles (or ns on the CPU backend). */
  readonly sumSimtClocks: number;
  /** Σ over groups of C_MIMD = Σ_i (c_i − c0), same unit as sumSimtClocks. */
  readonly sumMimdClocks: number;
}


/** One bin of a launch's histogram: `count` lanes (weighted) had an iteration count in [low, high]. */
export interface LaunchBin {
  readonly low: number;
  readonly high: number;
  readonly count: number;
}

/** A launch's bins in columns: bin k is [low[k], high[k]] with count[k] lanes, for k < entries (the arrays may be longer). */
export interface LaunchBinColumns {
  readonly entries: number;
  readonly low: Float64Array;
  readonly high: Float64Array;
  readonly count: Float64Array;
}

/** Bin columns that can be written (reused scratch). */
export interface WritableLaunchBinColumns extends LaunchBinColumns {
  entries: number;
  low: Float64Array;
  high: Float64Array;
  count: Float64Array;
}

/**
 * Empty bin columns to write into; {@link binColumnsWithRoom} grows them.
 *
 * @example const into = createLaunchBinColumns();
 */
export function createLaunchBinColumns(): WritableLaunchBinColumns {
  return { entries: 0, low: new Float64Array(0), high: new Float64Array(0), count: new Float64Array(0) };
}

/**
 * `columns` with room for `n` bins (each array grown to at least n, doubling), and `entries` set to n.
 *
 * @example binColumnsWithRoom(createLaunchBinColumns(), 3).low.length // 3
 */
export function binColumnsWithRoom(columns: WritableLaunchBinColumns, n: number): WritableLaunchBinColumns {
  if (columns.count.length < n) {
    const size = Math.max(n, 2 * columns.count.length);
    columns.low = new Float64Array(size);
    columns.high = new Float64Array(size);
    columns.count = new Float64Array(size);
  }
  columns.entries = n;
  return columns;
}

/** Scratch of {@link binColumnsOf} for bins given as objects. */
const binScratch = createLaunchBinColumns();

/**
 * An observation's bins as columns: columns as they are, objects copied into a scratch that the
 * next call reuses (read it before calling again). One form for the window code to read.
 *
 * @example const bins = binColumnsOf([{ low: 3, high: 3, count: 32 }]); bins.count[0] // 32
 */
export function binColumnsOf(bins: LaunchObservation['bins']): LaunchBinColumns {
  if (!Array.isArray(bins)) return bins as LaunchBinColumns;
  const objects = bins as readonly LaunchBin[];
  const into = binColumnsWithRoom(binScratch, objects.length);
  for (let k = 0; k < objects.length; k++) {
    const bin = objects[k]!;
    into.low[k] = bin.low;
    into.high[k] = bin.high;
    into.count[k] = bin.count;
  }
  return into;
}

/**
 * What the estimator takes from one GroupSamples frame: the same stream and frame identity
 * as a LaunchObservation, and the sampled groups (model.md §3). `kind` tells the two apart.
 */
export interface SamplesObservation extends ObservationIdentity {
  readonly kind: 'samples';
  /**
   * The sampled groups: one object per group, or columns (the engine's decoding path, whose
   * columns are reused by the next frame decoded: an observation holding them is used before
   * that and not kept).
   */
  readonly groups: readonly SampledGroupInput[] | SampledGroupColumns;
  /**
   * Block runs (frames with selection `block`): the unit counts of each complete sampled block,
   * its groups in groupIndex order (model.md §11a); absent for other selections.
   */
  readonly blocks?: readonly (readonly number[])[];
}

/**
 * Whether a launch summary carries the counts-only mark (protocol/SPEC.md, "Counts-only frames
 * (no clock)"): groups counted, but sumSimtClocks = sumMimdClocks = sumLossMeasured = 0. A clocked
 * summary cannot look like this (each counted group adds at least 1 to sumLossMeasured), so such
 * a launch has no measured loss: it adds nothing to a window's measured values.
 *
 * @example isCountsOnly({ groups: 4, sumLossMeasured: 0, sumSimtClocks: 0, sumMimdClocks: 0 }) // true
 */
export function isCountsOnly(observation: Pick<LaunchObservation, 'groups' | 'sumLossMeasured' | 'sumSimtClocks' | 'sumMimdClocks'>): boolean {
  return observation.groups > 0 && observation.sumLossMeasured === 0 && observation.sumSimtClocks === 0 && observation.sumMimdClocks === 0;
}

/** Either kind of observation. */
export type Observation = LaunchObservation | SamplesObservation;

/** The fields of an observation that name its stream. */
export type ObservationStream = Pick<ObservationIdentity, 'job' | 'kernel' | 'device' | 'deviceUuid' | 'host' | 'labels' | 'groupSize' | 'source'>;

/**
 * Whether an observation is a GroupSamples one.
 *
 * @example if (isSamplesObservation(observation)) recordSampledGroup(...);
 */
export function isSamplesObservation(observation: Observation): observation is SamplesObservation {
  return (observation as { kind?: string }).kind === 'samples';
}

/**
 * The identity of the stream an observation belongs to (contracts/stream-identity.ts).
 *
 * @example
 * streamIdentityOf(observation).stream; // 'matpow/matpow16'
 */
export function streamIdentityOf(observation: ObservationStream): StreamIdentity {
  return {
    // Flat: the identity is kept per live stream (flatText).
    stream: flatText(`${observation.job}/${observation.kernel}`),
    job: observation.job,
    kernel: observation.kernel,
    groupSize: observation.groupSize,
    source: observation.source,
    device: observation.device,
    deviceUuid: observation.deviceUuid ?? NIL_UUID,
    host: observation.host ?? '',
    labels: observation.labels ?? {},
  };
}

/**
 * The key of the stream an observation belongs to: the same text as
 * `streamKeyOf(streamIdentityOf(observation))` (contracts/stream-identity.ts), without building the identity (the per-frame
 * path; docs/estimator.md, Performance).
 *
 * @example streamKeyOfObservation(observation) // 'matpow/matpow16|n=32|cpu|00000000-0000-0000-0000-000000000000|node7'
 */
export function streamKeyOfObservation(observation: ObservationStream): string {
  return streamKeyOf({
    job: observation.job,
    kernel: observation.kernel,
    groupSize: observation.groupSize,
    source: observation.source,
    deviceUuid: observation.deviceUuid ?? NIL_UUID,
    host: observation.host ?? '',
  });
}

/** Stream keys a {@link createStreamKeyCache} holds at most by default. */
export const STREAM_KEY_CACHE_LIMIT = 16_384;

/** Keys held per job at most (a job's streams: its kernels × hosts × devices); beyond, the oldest is dropped. */
const STREAM_KEYS_PER_JOB = 16;

/** One held key: the parts it was made of besides the job, and the next key held for the same job. */
interface HeldStreamKey {
  readonly kernel: string;
  readonly host: string;
  readonly deviceUuid: string;
  readonly groupSize: number;
  readonly source: ObservationStream['source'];
  readonly key: string;
  next: HeldStreamKey | undefined;
}

/**
 * A function giving the same text as {@link streamKeyOfObservation}, remembering the keys it
 * gave by their parts: a frame of a stream seen before gets the held key instead of a new text
 * (a template literal is ~10 string nodes, then hashed again by every map it is looked up in;
 * docs/estimator.md, Performance). Held by job (the decoder returns the same job string for the
 * same bytes, so the lookup hashes nothing new), up to STREAM_KEYS_PER_JOB keys per job, newest
 * first, each compared part by part; a job with more streams than that (many hosts or kernels)
 * finds the others built afresh, as without the cache. Returned keys are flat strings (flatText),
 * ~100 bytes held per key. Bounded: at most `limit` keys; when full, it starts afresh. It never
 * changes a key, only which equal copy is returned.
 *
 * @param limit keys held at most (≥ 1).
 * @throws RangeError when limit is not a positive integer.
 * @example
 * const keyOf = createStreamKeyCache();
 * keyOf(observation) === streamKeyOfObservation(observation); // true (equal text)
 */
export function createStreamKeyCache(limit = STREAM_KEY_CACHE_LIMIT): (observation: ObservationStream) => string {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`stream key cache limit must be a positive integer, got ${limit}`);
  let byJob = new Map<string, HeldStreamKey>();
  let size = 0;
  return (observation) => {
    const host = observation.host ?? '';
    const deviceUuid = observation.deviceUuid ?? NIL_UUID;
    const first = byJob.get(observation.job);
    let length = 0;
    for (let held = first; held !== undefined; held = held.next) {
      if (held.kernel === observation.kernel && held.host === host && held.deviceUuid === deviceUuid && held.groupSize === observation.groupSize && held.source === observation.source) {
        return held.key;
      }
      length += 1;
      // Keep the newest STREAM_KEYS_PER_JOB − 1, so that with the one added below there are at most STREAM_KEYS_PER_JOB.
      if (length === STREAM_KEYS_PER_JOB - 1 && held.next !== undefined) {
        size -= chainLength(held.next);
        held.next = undefined;
      }
    }
    const key = flatText(streamKeyOfObservation(observation));
    if (size >= limit) {
      byJob = new Map();
      size = 0;
    }
    const head = byJob.get(observation.job);
    byJob.set(observation.job, { kernel: observation.kernel, host, deviceUuid, groupSize: observation.groupSize, source: observation.source, key, next: head });
    size += 1;
    return key;
  };
}

function chainLength(held: HeldStreamKey | undefined): number {
  let length = 0;
  for (let at = held; at !== undefined; at = at.next) length += 1;
  return length;
}

/**
 * `text` as one flat string: a template literal is a rope in V8 (a tree of string nodes, ~8
 * for a stream key, ~450 bytes, kept as long as the text is); joining two slices of it writes
 * one new sequential string instead (the rope becomes garbage). For texts kept per stream.
 *
 * @example flatText(`${job}/${kernel}`) // the same text, one string
 */
export function flatText(text: string): string {
  return text.length < 2 ? text : [text.slice(0, 1), text.slice(1)].join('');
}
