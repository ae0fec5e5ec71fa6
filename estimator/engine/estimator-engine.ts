import { createAttributionReader, streamKeyOf, type AlertRecord, type DistributionRecord } from '../../contracts/index.ts';
import { createFrameColumns, decodeFrameColumns, FrameError, type FrameKind } from '../../protocol/index.ts';
import { alertOptionsOf, createAlertState, evaluateAlerts, evaluateStale, type AlertEvent, type AlertSettings, type AlertState } from './alert-detector.ts';
import { DEDUPE_DELTA_LIMIT, decodeStreamCheckpoint, encodeDedupeBase, encodePartitionMarker, encodeStreamCheckpoint, readPartitionMarker, type DedupeBase } from './checkpoint-codec.ts';
import { createCountHistogram } from './count-histogram.ts';
import { createIdentityPool } from './identity-pool.ts';
import { observationFromColumns, samplesObservationFromOffsets } from './frame-observation.ts';
import { createLaunchBinColumns, createStreamKeyCache, isSamplesObservation, streamIdentityOf, type Observation } from './launch-observation.ts';
import { alertRecord, distributionRecord } from './records.ts';
import { alertPoint, isSweepWindow, sweepCadence, windowPoints, type SeriesPoint } from './series-points.ts';
import {
  closeIdleWindows,
  closeWindowsThrough,
  createStreamState,
  recordStreamObservation,
  type StreamState,
  type WindowAccumulation,
  type WindowOptions,
} from './stream-state.ts';
import { computeWindowResult, createWindowModelCache, type ParametricFitter, type WindowComputeOptions, type WindowResult } from './window-result.ts';

/**
 * The estimator's core, without I/O: takes frames-topic messages per partition, keeps the
 * per-stream state, closes windows, computes results, raises alerts, and hands points and
 * records to the injected outputs. Checkpoints are produced and restored here; the Kafka
 * adapter (kafka.ts) and the service (estimator-service.ts) move them.
 */

/** Where results go (the service wires Influx and Kafka; tests collect them). */
export interface EngineOutputs {
  writePoints(points: readonly SeriesPoint[]): void;
  /** The stream's latest distribution after a window close (key = stream key); the Kafka adapter encodes it. */
  publishDistribution(key: string, record: DistributionRecord): void;
  /** An alert raised (key = stream key); the Kafka adapter encodes it. */
  publishAlert(key: string, record: AlertRecord): void;
  /** Every computed window (the OpenTelemetry result metrics, result-metrics.ts); optional. */
  recordWindow?: ((result: WindowResult) => void) | undefined;
  /** Every alert raised; optional. */
  recordAlert?: ((alert: AlertEvent) => void) | undefined;
  /**
   * A frame or window the engine could not use (docs/estimator.md, Quarantine): the service
   * writes it to the DLQ topic. Optional: without it such frames and windows are only counted.
   */
  quarantine?: ((record: QuarantineRecord) => void) | undefined;
}

/**
 * Something the engine hands to the DLQ instead of using it: a frame rejected at decode
 * (`rejected`, with the protocol's or the identity rules' code), or a frame or window whose
 * handling failed with an unexpected error (`quarantined`: WW_ERR_ESTIMATOR_FRAME_QUARANTINED,
 * WW_ERR_ESTIMATOR_WINDOW_QUARANTINED). Processing goes on after either.
 */
export interface QuarantineRecord {
  readonly kind: 'frame' | 'window';
  readonly reason: 'rejected' | 'quarantined';
  /** A WW_ERR_* code (docs/errors.md). */
  readonly code: string;
  /** One line: what went wrong. */
  readonly message: string;
  readonly partition: number;
  /** The frame's offset; for a window, the offset of its stream's last applied frame (undefined when none is known). */
  readonly offset: string | undefined;
  /** The stream key when known (a frame that did not decode has none). */
  readonly streamKey: string | undefined;
  /** The frame's bytes, or the window's summary as JSON text. */
  readonly value: Uint8Array | string;
  /** The frame's Kafka headers (ww-host, ww-label-*, traceparent), when it came with some. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Observations of the engine's work (the service maps them to OpenTelemetry metrics). */
export interface EngineTelemetry {
  /** One message handled; `type` is the frame type when it decoded (`launch-summary` | `group-samples`). */
  frame(outcome: FrameOutcome, type?: FrameKind): void;
  windowClosed(modelMillis: number, eventLagMillis: number): void;
  modelError(error: unknown, streamKey: string): void;
  alertRaised(kind: string): void;
  /**
   * A checkpoint record that could not be decoded (WW_ERR_ESTIMATOR_CHECKPOINT_CORRUPT): its
   * stream (or, for the partition marker, the partition's skip threshold) starts empty.
   * Optional: tests may leave it out.
   */
  checkpointCorrupt?(key: string, error: unknown): void;
  /** A stream forgotten to stay within maxLiveStreams (its open windows were closed and written first). Optional. */
  streamEvicted?(streamKey: string): void;
  /** A frame or window quarantined or rejected (also handed to EngineOutputs.quarantine), with the error behind it. Optional. */
  quarantined?(record: QuarantineRecord, error: unknown): void;
  /** A window written without the quantities derived from the sums that overflowed (WindowAccumulation.overflowed). Optional. */
  windowOverflowed?(streamKey: string, startMillis: number, sums: readonly string[]): void;
}

/**
 * What happened to one message: `rejected` (not a valid frame: to the DLQ with its code),
 * `future` (a valid frame dated more than maxFutureSkewMillis ahead of the wall clock: not
 * recorded, the watermark untouched; code WW_ERR_ESTIMATOR_FRAME_FROM_FUTURE), `quarantined`
 * (handling it failed with an unexpected error: to the DLQ, WW_ERR_ESTIMATOR_FRAME_QUARANTINED),
 * `duplicate`, `late`, `replayed` (already applied before a restart), or `recorded`.
 */
export type FrameOutcome = 'recorded' | 'duplicate' | 'late' | 'rejected' | 'future' | 'quarantined' | 'replayed';

/** Which histogram loss_predicted is computed from at a window close (WARPWATCH_PREDICTION_BASIS). */
export type PredictionBasis = 'window' | 'current' | 'cumulative';

/**
 * The window settings: the `window` slice of the estimator config (EstimatorConfig['window']),
 * read by the engine as it is: the windows of stream-state.ts plus when idle streams close and
 * are forgotten, the prediction basis and the future-skew bound.
 */
export interface EngineWindowSettings extends WindowOptions {
  /** A stream that recorded nothing for this long (processing time, ms) has its open windows closed. */
  readonly idleCloseMillis: number;
  /** A stream idle this long (processing time, ms) is forgotten (state tombstoned in the checkpoint). */
  readonly streamRetentionMillis: number;
  readonly predictionBasis: PredictionBasis;
  /** Frames dated more than this ahead of the wall clock (ms) are rejected as `future`; they never move a watermark. */
  readonly maxFutureSkewMillis: number;
}

/**
 * The compute settings: the `compute` slice of the estimator config (EstimatorConfig['compute']),
 * read by the engine as it is: window-result.ts's options without the fitter (a function, passed
 * in as EngineOptions.fitter), whether to fit, and whether to write histogram points.
 */
export interface EngineComputeSettings extends Omit<WindowComputeOptions, 'fitter'> {
  /** Fit the parametric families (with EngineOptions.fitter) at each window close. */
  readonly fit: boolean;
  /** Write warpwatch_histogram points (one per bin per window). */
  readonly histogramPoints: boolean;
  /**
   * Write a stream's warpwatch_sweep points for one window in ⌈this / window length⌉ (ms; 0 or
   * at most the window length = every window): series-points.ts sweepCadence.
   */
  readonly sweepIntervalMillis: number;
}

/**
 * Engine options: slices of the estimator config as they are (EstimatorConfig's window, compute,
 * alerts, maxLiveStreams, tagLabels: `{ ...config, fitter, monotonicMillis }` is a valid value)
 * and what is passed in: the fitter and a clock.
 */
export interface EngineOptions {
  readonly window: EngineWindowSettings;
  readonly compute: EngineComputeSettings;
  readonly alerts: AlertSettings;
  /**
   * Live streams held at most (all partitions; WARPWATCH_MAX_STREAMS); a new stream beyond it
   * evicts the stream that recorded least recently (its open windows are closed and written, its
   * state tombstoned, counted by streamEvicted). Default unlimited.
   */
  readonly maxLiveStreams?: number | undefined;
  /** Collector labels written as InfluxDB tags when a stream has them (WARPWATCH_TAG_LABELS; default none). */
  readonly tagLabels?: readonly string[] | undefined;
  /** The parametric fitter used when compute.fit is on (the service passes model/'s); none: no fit. */
  readonly fitter?: ParametricFitter | undefined;
  /** A monotonic clock in milliseconds used only to time the model (telemetry). */
  readonly monotonicMillis: () => number;
}

/**
 * A Kafka offset as the engine keeps it: a number while it is at most 2^53 (every offset a
 * partition reaches in practice: exact, and no BigInt to parse and allocate per message), a
 * BigInt beyond. Comparisons between the two forms are exact in JavaScript; arithmetic goes
 * through {@link offsetAfter}.
 */
type Offset = number | bigint;

/** The largest offset kept as a number (2^53 − 1: its successor, 2^53, is still exact). */
const MAX_NUMBER_OFFSET = Number.MAX_SAFE_INTEGER;

/**
 * The offset a message's offset text names: a number for up to 15 decimal digits (below 2^53),
 * otherwise as BigInt() reads it (and throws for), made a number when below 2^53.
 *
 * @example parseOffset('42') // 42
 * @example parseOffset('18446744073709551615') // 18446744073709551615n
 */
function parseOffset(text: string): Offset {
  const length = text.length;
  if (length > 0 && length <= 15) {
    let value = 0;
    let i = 0;
    for (; i < length; i++) {
      const digit = text.charCodeAt(i) - 48;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
    }
    if (i === length) return value;
  }
  const value = BigInt(text);
  return value <= BigInt(MAX_NUMBER_OFFSET) ? Number(value) : value;
}

/** offset + 1, in the offset's own form (exact: a number offset is at most 2^53 − 1). */
function offsetAfter(offset: Offset): Offset {
  return typeof offset === 'number' ? offset + 1 : offset + 1n;
}

interface StreamEntry {
  /** The frames-topic partition the stream lives in. */
  readonly partition: number;
  readonly state: StreamState;
  readonly alerts: AlertState;
  /** Offset after the last message of this stream applied (−1 before the first; see {@link Offset}). */
  appliedOffset: Offset;
  /** The partition's state that holds this entry (eviction removes it from there). */
  readonly part: PartitionState;
  /** Neighbours in the engine's recency list (createEstimatorEngine): the next less and more recently recorded live streams. */
  older: StreamEntry | undefined;
  newer: StreamEntry | undefined;
  /** Whether the entry is in the recency list (a live stream). */
  linked: boolean;
  /** Its dedupe memory against its checkpoint records (checkpoint-codec.ts DedupeBase). */
  dedupeBase: DedupeBase;
  /** Whether the topic may hold a dedupe base record under its key (then forgetting it tombstones that too). */
  baseKeyUsed: boolean;
}

interface PartitionState {
  readonly streams: Map<string, StreamEntry>;
  /** Streams changed since the last checkpoint. */
  readonly dirty: Set<string>;
  /** Streams forgotten since the last checkpoint (tombstones to write), each with whether a dedupe base record may exist under its key. */
  readonly forgotten: Map<string, boolean>;
  /** Skip threshold for streams without their own checkpoint (the restored partition marker). */
  markerOffset: Offset;
  /** Offset after the last message handled. */
  nextOffset: Offset;
}

/** One record to write to the checkpoint topic: stream key → JSON (null = tombstone). */
export interface CheckpointRecord {
  /** Stream key, or undefined for the partition marker. */
  readonly streamKey: string | undefined;
  /** True for the stream's dedupe base record (its own key, checkpoint-codec.ts encodeDedupeBase); it precedes the stream record that refers to it. */
  readonly dedupeBase?: boolean;
  readonly value: string | null;
}

/** The engine API. */
export interface EstimatorEngine {
  /**
   * Handles one frames-topic message (raw frame bytes) of `partition` at `offset`; its Kafka
   * `headers` give the host and labels of the collector that forwarded it (ww-host,
   * ww-label-*); its record timestamp `recordTimestampMillis` (ms since the epoch: when the
   * collector read the frame) bounds how far the frame moves its stream's watermark, so a
   * frame dated ahead of the rest of its stream does not make the stream's next frames late
   * (stream-state.ts watermarkCandidate). Returns what happened to it; never throws: a bad
   * frame is `rejected`, a frame whose handling fails unexpectedly `quarantined` (both handed
   * to outputs.quarantine).
   */
  handleMessage(
    partition: number,
    offset: string,
    value: Uint8Array,
    wallMillis: number,
    headers?: Readonly<Record<string, string>>,
    recordTimestampMillis?: number,
  ): FrameOutcome;
  /** Handles an already decoded observation, a launch summary's or GroupSamples' (tests, benchmarks, the in-process demo path). */
  handleObservation(partition: number, offset: string, observation: Observation, wallMillis: number): FrameOutcome;
  /**
   * Closes the windows of streams that were idle for idleCloseMillis in partitions that are
   * caught up, and forgets streams idle beyond the retention. `caughtUpAsOf(partition)` is the
   * time (ms, the clock of wallMillis) as of which the partition is known to hold nothing
   * unconsumed (everything produced before it was handled), or undefined when that is not known:
   * a stream is idle when it recorded nothing in the idleCloseMillis before that time, so a frame
   * produced while the estimator was behind never finds its window closed (docs/estimator.md,
   * Late data). Returns the number of windows closed.
   */
  tick(wallMillis: number, caughtUpAsOf: (partition: number) => number | undefined): number;
  /** Closes every open window of every stream (end of input). */
  closeAll(): number;
  /** Records to write so that `partition` can be restored at its current position; clears dirty marks. */
  checkpoint(partition: number): { records: CheckpointRecord[]; nextOffset: string } | undefined;
  /**
   * Restores a partition from checkpoint records (stream key → JSON; the marker holds
   * `{ nextOffset }`; `dedupeBases`: stream key → its dedupe base record, where the topic holds one).
   */
  restorePartition(partition: number, records: ReadonlyMap<string, string>, marker: string | undefined, wallMillis: number, dedupeBases?: ReadonlyMap<string, string>): void;
  /** Forgets a partition (revoked): its state lives on in the checkpoint topic. */
  releasePartition(partition: number): void;
  hasPartition(partition: number): boolean;
  /**
   * The offset after the last message of `partition` handled (or restored from its checkpoint
   * marker): where its consumer stands. The service compares it with the partition's high
   * watermark to know the consumer lag. Undefined when the partition is not held.
   *
   * @example engine.nextOffset(0) // 1042n
   */
  nextOffset(partition: number): bigint | undefined;
  partitions(): number[];
  liveStreams(): number;
}

/**
 * Distinct bases (histograms the model ran on) whose model answers an engine keeps
 * (window-result.ts WindowModelCache), and their histogram entries in all: ~1 KB per basis
 * plus ~12 bytes of key per entry, at most ~7 MB.
 */
const MODEL_CACHE_CAPACITY = 4096;
const MODEL_CACHE_MAX_SUPPORT = 262_144;

/**
 * Creates an engine.
 *
 * @example
 * const engine = createEstimatorEngine(options, outputs, telemetry);
 * engine.handleMessage(0, '17', frameBytes, Date.now());
 */
export function createEstimatorEngine(options: EngineOptions, outputs: EngineOutputs, telemetry: EngineTelemetry): EstimatorEngine {
  const compute: WindowComputeOptions = { ...options.compute, fitter: options.compute.fit ? options.fitter : undefined };
  const sweep = sweepCadence(options.window.windowMillis, options.compute.sweepIntervalMillis);
  const alerts = alertOptionsOf(options.alerts);
  const partitions = new Map<number, PartitionState>();
  // Live streams share their device, host and label strings (identity-pool.ts).
  const identities = createIdentityPool();
  // The key of a frame's stream without building its text per frame (launch-observation.ts).
  const streamKeyOfFrame = createStreamKeyCache();
  // Window closes on a basis modelled before reuse its model (docs/estimator.md, Performance).
  const modelCache = createWindowModelCache(MODEL_CACHE_CAPACITY, MODEL_CACHE_MAX_SUPPORT);
  // Every live stream, least recently recorded first (a stream moves to the end when it records):
  // eviction takes the first in O(1) instead of scanning every stream (docs/estimator.md,
  // Performance). A doubly linked list through the entries themselves: moving a stream to the
  // end per recorded frame is a few pointer writes, no map to hash into and compact.
  let oldest: StreamEntry | undefined;
  let newest: StreamEntry | undefined;
  let linkedCount = 0;
  const unlink = (entry: StreamEntry): void => {
    if (!entry.linked) return;
    if (entry.older === undefined) oldest = entry.newer;
    else entry.older.newer = entry.newer;
    if (entry.newer === undefined) newest = entry.older;
    else entry.newer.older = entry.older;
    entry.older = undefined;
    entry.newer = undefined;
    entry.linked = false;
    linkedCount -= 1;
  };
  const touch = (entry: StreamEntry): void => {
    if (entry === newest) return;
    unlink(entry);
    entry.older = newest;
    entry.newer = undefined;
    if (newest === undefined) oldest = entry;
    else newest.newer = entry;
    newest = entry;
    entry.linked = true;
    linkedCount += 1;
  };
  const newEntry = (part: PartitionState, partition: number, state: StreamState, alerts: AlertState, appliedOffset: Offset, dedupeBase: DedupeBase, baseKeyUsed: boolean): StreamEntry => ({
    partition,
    state,
    alerts,
    appliedOffset,
    part,
    older: undefined,
    newer: undefined,
    linked: false,
    dedupeBase,
    baseKeyUsed,
  });

  const partitionState = (partition: number): PartitionState => {
    let state = partitions.get(partition);
    if (state === undefined) {
      state = { streams: new Map(), dirty: new Set(), forgotten: new Map(), markerOffset: -1, nextOffset: 0 };
      partitions.set(partition, state);
    }
    return state;
  };

  const publishAlerts = (alerts: readonly AlertEvent[]): void => {
    if (alerts.length === 0) return;
    outputs.writePoints(alerts.map((alert) => alertPoint(alert, options.tagLabels)));
    for (const alert of alerts) {
      outputs.publishAlert(streamKeyOf(alert.identity), alertRecord(alert));
      outputs.recordAlert?.(alert);
      telemetry.alertRaised(alert.kind);
    }
  };

  /**
   * Hands a closed window whose handling threw to the DLQ (its summary; nothing of it was
   * written, or only part): the stream's other windows and streams go on.
   */
  const quarantineWindow = (entry: StreamEntry, window: WindowAccumulation, error: unknown): void => {
    const record: QuarantineRecord = {
      kind: 'window',
      reason: 'quarantined',
      code: 'WW_ERR_ESTIMATOR_WINDOW_QUARANTINED',
      message: `window [${window.startMillis}, ${window.endMillis}) of stream ${entry.state.key} could not be closed (${errorText(error)}); not written`,
      partition: entry.partition,
      offset: entry.appliedOffset > 0 ? String(typeof entry.appliedOffset === 'number' ? entry.appliedOffset - 1 : entry.appliedOffset - 1n) : undefined,
      streamKey: entry.state.key,
      value: JSON.stringify({
        schema: 'warpwatch.quarantined-window/v1',
        stream: entry.state.key,
        startMillis: window.startMillis,
        endMillis: window.endMillis,
        launches: window.launches,
        groups: window.groups,
        units: window.units,
        sampleFrames: window.sampleFrames,
        overflowed: window.overflowed ?? [],
      }),
    };
    outputs.quarantine?.(record);
    telemetry.quarantined?.(record, error);
  };

  const emitClosed = (entry: StreamEntry, closed: readonly WindowAccumulation[], wallMillis: number): void => {
    for (const window of closed) {
      // The last line of defence: one window that cannot be closed costs only itself.
      try {
        emitWindow(entry, window, wallMillis);
      } catch (error) {
        quarantineWindow(entry, window, error);
      }
    }
  };

  /** Computes one closed window and hands its points, records and alerts to the outputs. */
  const emitWindow = (entry: StreamEntry, window: WindowAccumulation, wallMillis: number): void => {
    const basis =
      options.window.predictionBasis === 'window'
        ? window.histogram
        : options.window.predictionBasis === 'current'
          ? entry.state.current.histogram
          : entry.state.cumulative;
    const started = options.monotonicMillis();
    let result: WindowResult;
    try {
      // Quantiles, sweep and fit only on the stream's sweep windows (docs/estimator.md, What is computed per window).
      const sweepWindow = isSweepWindow(entry.state.identity, window.startMillis, sweep, options.tagLabels);
      result = computeWindowResult(entry.state.identity, window, basis, compute, modelCache, sweepWindow);
    } catch (error) {
      telemetry.modelError(error, entry.state.key);
      try {
        // The measurements of the window still count: without the failed prediction.
        result = computeWindowResult(entry.state.identity, window, createCountHistogram(), compute);
      } catch (fallbackError) {
        // Nothing can be computed for this window (counted); the other closed windows go on.
        telemetry.modelError(fallbackError, entry.state.key);
        return;
      }
    }
    if (result.overflowedSums !== undefined && result.overflowedSums.length > 0) telemetry.windowOverflowed?.(entry.state.key, window.startMillis, result.overflowedSums);
    telemetry.windowClosed(options.monotonicMillis() - started, wallMillis - window.endMillis);
    outputs.writePoints(windowPoints(result, { includeHistogram: options.compute.histogramPoints, labelTags: options.tagLabels, sweep }));
    outputs.recordWindow?.(result);
    publishAlerts(evaluateAlerts(entry.alerts, result, alerts));
    outputs.publishDistribution(
      entry.state.key,
      distributionRecord(entry.state, window.histogram, result, {
        current: options.window.current,
        basis: options.window.predictionBasis,
      }),
    );
  };

  const liveStreams = (): number => linkedCount;

  /** Drops a partition's state and its streams from the recency order. */
  const forgetPartition = (partition: number): void => {
    const part = partitions.get(partition);
    if (part === undefined) return;
    for (const entry of part.streams.values()) unlink(entry);
    partitions.delete(partition);
  };

  /**
   * Forgets the stream that recorded least recently (ties, e.g. streams restored together, in
   * the order they were recorded or restored), after writing its open windows.
   */
  const evictLeastRecent = (wallMillis: number): void => {
    const entry = oldest;
    if (entry === undefined) return;
    const part = entry.part;
    const key = entry.state.key;
    unlink(entry);
    emitClosed(entry, closeWindowsThrough(entry.state, Number.POSITIVE_INFINITY), wallMillis);
    part.streams.delete(key);
    part.dirty.delete(key);
    part.forgotten.set(key, entry.baseKeyUsed);
    telemetry.streamEvicted?.(key);
  };

  /** Records one observation at `offsetValue` (parsed once per message, see parseOffset). */
  const handleObservation = (partition: number, offsetValue: Offset, observation: Observation, wallMillis: number, sentMillis?: number): FrameOutcome => {
    const part = partitionState(partition);
    const next = offsetAfter(offsetValue);
    if (next > part.nextOffset) part.nextOffset = next;
    // A clock far ahead (a misconfigured host) must not drag the stream's watermark along:
    // every later frame would be late. Rejected before anything is kept.
    if (observation.eventTimeMillis > wallMillis + options.window.maxFutureSkewMillis) return 'future';
    const key = streamKeyOfFrame(observation);
    let entry = part.streams.get(key);
    if (entry === undefined) {
      // A stream without its own checkpoint: everything below the partition marker is already accounted for.
      if (offsetValue < part.markerOffset) return 'replayed';
      if (options.maxLiveStreams !== undefined && liveStreams() >= options.maxLiveStreams) evictLeastRecent(wallMillis);
      // Its epoch is the offset of its first frame: a base record of an earlier life under this key is never used.
      entry = newEntry(part, partition, createStreamState(identities.share(streamIdentityOf(observation)), key), createAlertState(), -1, { epoch: offsetValue.toString(), total: 0 }, part.forgotten.get(key) === true);
      // Keyed by the state's own key string (`key`, also held by streamKeyOfFrame): one copy per stream.
      part.streams.set(entry.state.key, entry);
      part.forgotten.delete(key);
      touch(entry);
    } else if (offsetValue < entry.appliedOffset) {
      return 'replayed';
    }
    entry.appliedOffset = next;
    entry.alerts.staleRaised = false;
    part.dirty.add(entry.state.key);
    // The entry was found by this observation's key: recordStreamObservation does not build it again.
    const outcome = recordStreamObservation(entry.state, observation, options.window, wallMillis, sentMillis);
    if (outcome.status === 'recorded') touch(entry);
    emitClosed(entry, outcome.closed, wallMillis);
    return outcome.status;
  };

  // Frames are read into these columns (a LaunchSummary's histogram, a GroupSamples frame's
  // samples; weighted bins), reused by the next frame: each frame's observation is recorded
  // before handleMessage returns and is not kept (docs/estimator.md, Performance).
  const frameColumns = createFrameColumns();
  const weightedBins = createLaunchBinColumns();
  // The host and labels of the frames' headers: one object per collector, not per frame.
  const attributionOf = createAttributionReader();

  const engine: EstimatorEngine = {
    handleObservation(partition, offset, observation, wallMillis) {
      const outcome = handleObservation(partition, parseOffset(offset), observation, wallMillis);
      telemetry.frame(outcome, isSamplesObservation(observation) ? 'group-samples' : 'launch-summary');
      return outcome;
    },
    handleMessage(partition, offset, value, wallMillis, headers, recordTimestampMillis) {
      let outcome: FrameOutcome;
      let type: FrameKind | undefined;
      let observation: Observation | undefined;
      let offsetValue: Offset | undefined;
      try {
        const frame = decodeFrameColumns(value, undefined, frameColumns);
        type = frame.type;
        const attribution = headers === undefined ? undefined : attributionOf(headers);
        if (frame.type === 'launch-summary') observation = observationFromColumns(frame, weightedBins, attribution);
        else {
          const samples = samplesObservationFromOffsets(frame);
          // Object.assign onto the fresh observation: a spread into a literal copies it into a dictionary-mode object (~1 KB a frame).
          observation = attribution === undefined ? samples : Object.assign(samples, attribution);
        }
        offsetValue = parseOffset(offset);
        outcome = handleObservation(partition, offsetValue, observation, wallMillis, recordTimestampMillis);
      } catch (error) {
        // Decoding and converting the frame can make it a bad frame (`rejected`); any other
        // failure is unexpected (`quarantined`): the last line of defence, so that one frame never
        // stops the partition (docs/estimator.md, Quarantine). Both go to the DLQ.
        const rejected = observation === undefined && (error instanceof FrameError || error instanceof RangeError || wwCodeOf(error) !== undefined);
        outcome = rejected ? 'rejected' : 'quarantined';
        const code = rejected ? (wwCodeOf(error) ?? 'WW_ERR_FRAME_INVALID') : 'WW_ERR_ESTIMATOR_FRAME_QUARANTINED';
        const record: QuarantineRecord = {
          kind: 'frame',
          reason: outcome,
          code,
          message: rejected ? errorText(error) : `handling the frame failed (${errorText(error)}); quarantined, not recorded`,
          partition,
          offset,
          streamKey: observation === undefined ? undefined : streamKeyOf(streamIdentityOf(observation)),
          value,
          headers,
        };
        outputs.quarantine?.(record);
        telemetry.quarantined?.(record, error);
      }
      // handleObservation moved the partition's position already when it ran.
      if (offsetValue === undefined) {
        const part = partitionState(partition);
        const next = BigInt(offset) + 1n;
        if (next > part.nextOffset) part.nextOffset = next;
      }
      telemetry.frame(outcome, type);
      return outcome;
    },
    tick(wallMillis, caughtUpAsOf) {
      let closedCount = 0;
      for (const [partition, part] of partitions) {
        const asOf = caughtUpAsOf(partition);
        if (asOf === undefined) continue;
        for (const [key, entry] of part.streams) {
          const closed = closeIdleWindows(entry.state, Math.min(asOf, wallMillis), options.window.idleCloseMillis);
          if (closed.length > 0) {
            part.dirty.add(key);
            emitClosed(entry, closed, wallMillis);
            closedCount += closed.length;
          }
          const stale = evaluateStale(entry.alerts, entry.state.identity, wallMillis, entry.state.lastRecordWallMillis, alerts);
          if (stale !== undefined) {
            part.dirty.add(key);
            publishAlerts([stale]);
          }
          if (entry.state.windows.size === 0 && wallMillis - entry.state.lastRecordWallMillis >= options.window.streamRetentionMillis) {
            part.streams.delete(key);
            part.dirty.delete(key);
            part.forgotten.set(key, entry.baseKeyUsed);
            unlink(entry);
          }
        }
      }
      return closedCount;
    },
    closeAll() {
      let closedCount = 0;
      for (const part of partitions.values()) {
        for (const [key, entry] of part.streams) {
          const closed = closeWindowsThrough(entry.state, Number.POSITIVE_INFINITY);
          if (closed.length === 0) continue;
          part.dirty.add(key);
          emitClosed(entry, closed, entry.state.lastRecordWallMillis);
          closedCount += closed.length;
        }
      }
      return closedCount;
    },
    checkpoint(partition) {
      const part = partitions.get(partition);
      if (part === undefined) return undefined;
      const records: CheckpointRecord[] = [];
      for (const key of part.dirty) {
        const entry = part.streams.get(key);
        if (entry === undefined) continue;
        const memory = entry.state.dedupe;
        if (memory.total - Math.max(entry.dedupeBase.total, memory.total - memory.size) > DEDUPE_DELTA_LIMIT) {
          // A new full copy, before the record that refers to it (docs/estimator.md, Checkpoints of the dedupe memory).
          records.push({ streamKey: key, dedupeBase: true, value: encodeDedupeBase(entry.dedupeBase.epoch, memory) });
          entry.dedupeBase = { epoch: entry.dedupeBase.epoch, total: memory.total };
          entry.baseKeyUsed = true;
        }
        records.push({
          streamKey: key,
          value: encodeStreamCheckpoint({ state: entry.state, alerts: entry.alerts, appliedOffset: entry.appliedOffset.toString(), dedupeBase: entry.dedupeBase }),
        });
      }
      for (const [key, baseKeyUsed] of part.forgotten) {
        // The stream record first: a base record without one is never read.
        records.push({ streamKey: key, value: null });
        if (baseKeyUsed) records.push({ streamKey: key, dedupeBase: true, value: null });
      }
      const nextOffset = part.nextOffset.toString();
      records.push({ streamKey: undefined, value: encodePartitionMarker(nextOffset) });
      part.dirty.clear();
      part.forgotten.clear();
      return { records, nextOffset };
    },
    restorePartition(partition, records, marker, wallMillis, dedupeBases) {
      forgetPartition(partition);
      const part: PartitionState = { streams: new Map(), dirty: new Set(), forgotten: new Map(), markerOffset: -1, nextOffset: 0 };
      if (marker !== undefined) {
        const read = readPartitionMarker(marker);
        if ('nextOffset' in read) {
          part.markerOffset = parseOffset(read.nextOffset);
          part.nextOffset = part.markerOffset;
        } else {
          telemetry.checkpointCorrupt?.(`partition ${partition} marker`, read.error);
        }
      }
      for (const [key, text] of records) {
        // A record that cannot be decoded costs its stream's state, never the partition: the
        // stream starts empty (frames below the marker stay skipped as replayed) and the
        // record is overwritten at the next checkpoint.
        try {
          const baseText = dedupeBases?.get(key);
          const checkpoint = decodeStreamCheckpoint(text, key, wallMillis, (identity) => identities.share(identity), baseText);
          const entry = newEntry(part, partition, checkpoint.state, checkpoint.alerts, parseOffset(checkpoint.appliedOffset), checkpoint.dedupeBase, baseText !== undefined || checkpoint.dedupeBase.total > 0);
          part.streams.set(key, entry);
          touch(entry);
        } catch (error) {
          telemetry.checkpointCorrupt?.(key, error);
        }
      }
      partitions.set(partition, part);
    },
    releasePartition(partition) {
      forgetPartition(partition);
    },
    hasPartition(partition) {
      return partitions.has(partition);
    },
    nextOffset(partition) {
      const next = partitions.get(partition)?.nextOffset;
      return next === undefined ? undefined : BigInt(next);
    },
    partitions() {
      return [...partitions.keys()];
    },
    liveStreams() {
      return liveStreams();
    },
  };
  return engine;
}

/** The WW_ERR_* code an error carries (FrameError, StreamIdentityError, EstimatorError), if any. */
function wwCodeOf(error: unknown): string | undefined {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'string' && code.startsWith('WW_ERR_') ? code : undefined;
}

/** An error as one line of text. */
function errorText(error: unknown): string {
  return (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).replace(/\s+/g, ' ');
}
