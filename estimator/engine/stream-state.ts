import {
  addCount,
  addHistogram,
  cloneCountHistogram,
  createCountHistogram,
  mergeCountHistograms,
  scaleCountHistogram,
  type CountHistogram,
  type CountHistogramOptions,
} from './count-histogram.ts';
import {
  binColumnsOf,
  flatText,
  isCountsOnly,
  isSamplesObservation,
  streamKeyOfObservation,
  type LaunchBinColumns,
  type LaunchObservation,
  type Observation,
  type SamplesObservation,
} from './launch-observation.ts';
import { streamKeyOf, type StreamIdentity } from '../../contracts/index.ts';
import { DedupeMemory } from './dedupe-memory.ts';
import { cloneSampledGroups, createSampledGroups, mergeSampledGroups, recordSampledBlock, recordSampledGroup, recordSampledGroupColumns, type SampledGroupsAccumulation } from '../../model/index.ts';

/**
 * Per-stream window state: event-time tumbling windows, a "current" distribution
 * (exponentially decayed or the last N launches) and a cumulative one, and a bounded memory
 * of recently seen frames for de-duplication. Plain objects; time is always passed in, so
 * the same input yields the same windows (which makes restarts reproducible).
 */

/** How the "current" distribution forgets. */
export type CurrentDistributionOptions =
  | { readonly mode: 'decay'; /** launches after which an old launch weighs half */ readonly halfLifeLaunches: number }
  | { readonly mode: 'last-n'; /** the current distribution is the sum of the last N launches */ readonly launches: number };

/** Options of the window state (a slice of the estimator config). */
export interface WindowOptions {
  /** Tumbling window length in event time, milliseconds. */
  readonly windowMillis: number;
  /** A window [s, s + W) closes once the stream's event time reaches s + W + allowedLatenessMillis. */
  readonly allowedLatenessMillis: number;
  readonly current: CurrentDistributionOptions;
  /** Frames remembered per stream for de-duplication (launchId, frameSequence). */
  readonly dedupeCapacity: number;
  readonly histogram: CountHistogramOptions;
}

/** The accumulation of one window of one stream. */
export interface WindowAccumulation {
  /** Window start, inclusive (ms since epoch, a multiple of windowMillis). */
  readonly startMillis: number;
  /** Window end, exclusive. */
  readonly endMillis: number;
  readonly histogram: CountHistogram;
  launches: number;
  groups: number;
  /** Lanes observed (Σ of histogram counts). */
  units: number;
  sumLossCounts: number;
  sumLossMeasured: number;
  sumSimtClocks: number;
  sumMimdClocks: number;
  /**
   * Groups of the window's clocked launch summaries (weighted like `groups`): the denominator of
   * loss_measured. Counts-only summaries (protocol/SPEC.md, "Counts-only frames") add to `groups`
   * but not here, and add 0 to the clock sums, so the measured values come from clocked launches only.
   */
  clockedGroups: number;
  /** Earliest and latest launch event time seen in the window. */
  firstEventMillis: number;
  lastEventMillis: number;
  /**
   * The sums above (groups, units, sumLossCounts, sumLossMeasured, sumSimtClocks, sumMimdClocks, clockedGroups)
   * whose next addition was not a finite number (docs/estimator.md, Overflow): such a sum keeps
   * its last finite value and is never used; the quantities derived from it are left out of the
   * window's results. Undefined while every sum is finite (the usual case).
   */
  overflowed: WindowSum[] | undefined;
  /** GroupSamples frames recorded in the window. */
  sampleFrames: number;
  /** What the window's GroupSamples frames contributed (model/related/sampled-groups.ts); undefined until the first one (most windows of a stream without sampling never need it). */
  samples: SampledGroupsAccumulation | undefined;
}

/** The additive numeric fields of a window whose overflow is tracked (see WindowAccumulation.overflowed). */
export type WindowSum = 'groups' | 'units' | 'sumLossCounts' | 'sumLossMeasured' | 'sumSimtClocks' | 'sumMimdClocks' | 'clockedGroups';

/** Every {@link WindowSum}, in the order the fields are declared. */
export const WINDOW_SUMS: readonly WindowSum[] = Object.freeze(['groups', 'units', 'sumLossCounts', 'sumLossMeasured', 'sumSimtClocks', 'sumMimdClocks', 'clockedGroups']);

/**
 * Adds `amount` to the window sum `field`, overflow-safe: when the result (or `amount` itself)
 * is not a finite number, the sum keeps its value and is marked overflowed instead (once). Every
 * frame field is finite and ≥ 0 (protocol/SPEC.md), but a weighted contribution (a double up to
 * Number.MAX_VALUE times a weight up to 2^53 − 1) and a sum over many frames can exceed the
 * largest double. Mutates `window`.
 *
 * @example addToWindowSum(window, 'sumLossMeasured', Number.MAX_VALUE); addToWindowSum(window, 'sumLossMeasured', Number.MAX_VALUE); // window.overflowed = ['sumLossMeasured']
 */
export function addToWindowSum(window: WindowAccumulation, field: WindowSum, amount: number): void {
  window[field] = finiteSum(window, field, window[field], amount);
}

/**
 * `current + amount` when that is finite; otherwise `current`, with `field` marked overflowed in
 * `window` (the rule of addToWindowSum). The per-frame path calls it with the field read and
 * written by name (`window.groups = finiteSum(window, 'groups', window.groups, n)`), which is
 * cheaper there than addToWindowSum's keyed access.
 */
function finiteSum(window: WindowAccumulation, field: WindowSum, current: number, amount: number): number {
  const next = current + amount;
  if (Number.isFinite(next)) return next;
  markOverflowed(window, field);
  return current;
}

function markOverflowed(window: WindowAccumulation, field: WindowSum): void {
  if (window.overflowed === undefined) window.overflowed = [field];
  else if (!window.overflowed.includes(field)) window.overflowed.push(field);
}

/**
 * Whether a window sum overflowed (and must not be used).
 *
 * @example if (!hasOverflowed(window, 'sumLossMeasured')) lossMeasured = window.sumLossMeasured / window.groups;
 */
export function hasOverflowed(window: Pick<WindowAccumulation, 'overflowed'>, field: WindowSum): boolean {
  return window.overflowed !== undefined && window.overflowed.includes(field);
}

/** The "current" distribution. In last-n mode `recent` holds one histogram per launch (oldest first). */
export interface CurrentDistribution {
  readonly histogram: CountHistogram;
  readonly recent: CountHistogram[];
}

/** Everything the estimator keeps per stream. */
export interface StreamState {
  readonly key: string;
  readonly identity: StreamIdentity;
  /** Open windows by start. */
  readonly windows: Map<number, WindowAccumulation>;
  readonly current: CurrentDistribution;
  readonly cumulative: CountHistogram;
  cumulativeLaunches: number;
  cumulativeGroups: number;
  /** The identities of the stream's last recorded frames, for de-duplication (dedupe-memory.ts). */
  readonly dedupe: DedupeMemory;
  /**
   * The stream's event-time watermark (ms; −∞ before the first frame): the largest event time
   * seen, each frame's counted at most up to the moment it was sent (its Kafka record
   * timestamp, when known: see {@link watermarkCandidate}), so one frame dated ahead of the rest
   * of its stream cannot make the stream's later frames late (docs/estimator.md, late data).
   */
  watermarkMillis: number;
  /** Windows ending at or before this are closed: later frames for them are late. */
  closedThroughMillis: number;
  /** Processing time of the last recorded launch (ms), for idle flushing. */
  lastRecordWallMillis: number;
}

/** What happened to one observation. */
export interface RecordOutcome {
  readonly status: 'recorded' | 'duplicate' | 'late';
  /** Windows closed by the watermark advance, oldest first. */
  readonly closed: WindowAccumulation[];
}

/**
 * Creates the state of a stream.
 *
 * @param key the stream's key when the caller has it (it must equal streamKeyOf(identity)): kept
 *   as given, one copy shared with the caller; else made from the identity (a flat string).
 * @example
 * const state = createStreamState(streamIdentityOf(observation));
 */
export function createStreamState(identity: StreamIdentity, key?: string): StreamState {
  return {
    key: key ?? flatText(streamKeyOf(identity)),
    identity,
    windows: new Map(),
    current: { histogram: createCountHistogram(), recent: [] },
    cumulative: createCountHistogram(),
    cumulativeLaunches: 0,
    cumulativeGroups: 0,
    dedupe: new DedupeMemory(),
    watermarkMillis: Number.NEGATIVE_INFINITY,
    closedThroughMillis: Number.NEGATIVE_INFINITY,
    lastRecordWallMillis: 0,
  };
}

/**
 * Creates an empty window [startMillis, startMillis + windowMillis).
 */
export function createWindowAccumulation(startMillis: number, windowMillis: number): WindowAccumulation {
  return {
    startMillis,
    endMillis: startMillis + windowMillis,
    histogram: createCountHistogram(),
    launches: 0,
    groups: 0,
    units: 0,
    sumLossCounts: 0,
    sumLossMeasured: 0,
    sumSimtClocks: 0,
    sumMimdClocks: 0,
    clockedGroups: 0,
    firstEventMillis: Number.POSITIVE_INFINITY,
    lastEventMillis: Number.NEGATIVE_INFINITY,
    overflowed: undefined,
    sampleFrames: 0,
    samples: undefined,
  };
}

/** Start of the tumbling window holding `eventTimeMillis`. */
export function windowStartOf(eventTimeMillis: number, windowMillis: number): number {
  return Math.floor(eventTimeMillis / windowMillis) * windowMillis;
}

/**
 * Adds one launch to a window (mutates `window`).
 *
 * @throws RangeError when a bin is malformed (see addCount).
 */
export function recordLaunchInWindow(
  window: WindowAccumulation,
  observation: LaunchObservation,
  options: CountHistogramOptions,
): void {
  // The sums read and written by name (addToWindowSum's keyed access is slow on the per-frame
  // path): the same additions in the same order, the same overflow rule (finiteSum).
  const bins = binColumnsOf(observation.bins);
  for (let i = 0; i < bins.entries; i++) {
    const count = bins.count[i]!;
    addCount(window.histogram, bins.low[i]!, bins.high[i]!, count, options);
    window.units = finiteSum(window, 'units', window.units, count);
  }
  window.launches += 1;
  window.groups = finiteSum(window, 'groups', window.groups, observation.groups);
  window.sumLossCounts = finiteSum(window, 'sumLossCounts', window.sumLossCounts, observation.sumLossCounts);
  window.sumLossMeasured = finiteSum(window, 'sumLossMeasured', window.sumLossMeasured, observation.sumLossMeasured);
  window.sumSimtClocks = finiteSum(window, 'sumSimtClocks', window.sumSimtClocks, observation.sumSimtClocks);
  window.sumMimdClocks = finiteSum(window, 'sumMimdClocks', window.sumMimdClocks, observation.sumMimdClocks);
  if (!isCountsOnly(observation)) window.clockedGroups = finiteSum(window, 'clockedGroups', window.clockedGroups, observation.groups);
  window.firstEventMillis = Math.min(window.firstEventMillis, observation.eventTimeMillis);
  window.lastEventMillis = Math.max(window.lastEventMillis, observation.eventTimeMillis);
}

/**
 * Adds one GroupSamples frame to a window (mutates `window`); invalid groups are counted in
 * `window.samples.invalidGroups`, never thrown.
 *
 * @example recordSamplesInWindow(window, samplesObservationFromFrame(frame));
 */
export function recordSamplesInWindow(window: WindowAccumulation, observation: SamplesObservation): void {
  const samples = (window.samples ??= createSampledGroups());
  const groups = observation.groups;
  if ('lanes' in groups) recordSampledGroupColumns(samples, groups);
  else for (const group of groups) recordSampledGroup(samples, group);
  for (const block of observation.blocks ?? []) recordSampledBlock(samples, block, observation.groupSize);
  window.sampleFrames += 1;
}

/**
 * A new window holding both accumulations (same window of the same stream). Associative and
 * commutative: merging partial windows equals recording all their launches into one.
 *
 * @throws RangeError when the windows differ.
 */
export function mergeWindowAccumulations(
  a: WindowAccumulation,
  b: WindowAccumulation,
  options: CountHistogramOptions,
): WindowAccumulation {
  if (a.startMillis !== b.startMillis || a.endMillis !== b.endMillis) {
    throw new RangeError(
      `can only merge the same window, got [${a.startMillis}, ${a.endMillis}) and [${b.startMillis}, ${b.endMillis})`,
    );
  }
  const merged: WindowAccumulation = {
    startMillis: a.startMillis,
    endMillis: a.endMillis,
    histogram: mergeCountHistograms(a.histogram, b.histogram, options),
    launches: a.launches + b.launches,
    groups: a.groups,
    units: a.units,
    sumLossCounts: a.sumLossCounts,
    sumLossMeasured: a.sumLossMeasured,
    sumSimtClocks: a.sumSimtClocks,
    sumMimdClocks: a.sumMimdClocks,
    clockedGroups: a.clockedGroups,
    firstEventMillis: Math.min(a.firstEventMillis, b.firstEventMillis),
    lastEventMillis: Math.max(a.lastEventMillis, b.lastEventMillis),
    overflowed: a.overflowed === undefined ? undefined : [...a.overflowed],
    sampleFrames: a.sampleFrames + b.sampleFrames,
    samples: a.samples === undefined ? (b.samples === undefined ? undefined : cloneSampledGroups(b.samples)) : b.samples === undefined ? cloneSampledGroups(a.samples) : mergeSampledGroups(a.samples, b.samples),
  };
  for (const field of WINDOW_SUMS) {
    if (hasOverflowed(b, field)) markOverflowed(merged, field);
    else addToWindowSum(merged, field, b[field]);
  }
  return merged;
}

/** A deep, independent copy of a window (what is handed to the model and the sinks). */
export function snapshotWindow(window: WindowAccumulation): WindowAccumulation {
  return { ...window, histogram: cloneCountHistogram(window.histogram), overflowed: window.overflowed === undefined ? undefined : [...window.overflowed], samples: window.samples === undefined ? undefined : cloneSampledGroups(window.samples) };
}

function updateCurrent(current: CurrentDistribution, observation: LaunchObservation, options: WindowOptions): void {
  const bins = binColumnsOf(observation.bins);
  if (options.current.mode === 'decay' && hasAscendingLows(bins, options.histogram.maxExactSupport)) {
    // The launch's own histogram would hold exactly its bins, in this order (distinct lows, too
    // few to re-bin it): adding them straight into the decayed histogram makes the same
    // additions in the same order as adding that histogram, without building it per frame.
    scaleCountHistogram(current.histogram, 2 ** (-1 / options.current.halfLifeLaunches));
    for (let i = 0; i < bins.entries; i++) addCount(current.histogram, bins.low[i]!, bins.high[i]!, bins.count[i]!, options.histogram);
    return;
  }
  const launch = createCountHistogram();
  for (let i = 0; i < bins.entries; i++) addCount(launch, bins.low[i]!, bins.high[i]!, bins.count[i]!, options.histogram);
  if (options.current.mode === 'decay') {
    scaleCountHistogram(current.histogram, 2 ** (-1 / options.current.halfLifeLaunches));
    addHistogram(current.histogram, launch, options.histogram);
    return;
  }
  current.recent.push(launch);
  while (current.recent.length > options.current.launches) current.recent.shift();
  // Rebuild rather than subtract: subtraction of floating weights drifts, rebuilding is O(N·|supp|).
  const rebuilt = createCountHistogram();
  for (const histogram of current.recent) addHistogram(rebuilt, histogram, options.histogram);
  current.histogram.counts.clear();
  current.histogram.highs.clear();
  for (const [low, count] of rebuilt.counts) current.histogram.counts.set(low, count);
  for (const [low, high] of rebuilt.highs) current.histogram.highs.set(low, high);
  current.histogram.binned = rebuilt.binned;
  current.histogram.total = rebuilt.total;
}

/**
 * Whether the bins' lows strictly ascend (so they are distinct; a decoded frame's bins do) and
 * number at most `maxExactSupport`: a histogram built from them holds each bin as its own entry.
 */
function hasAscendingLows(bins: LaunchBinColumns, maxExactSupport: number): boolean {
  if (bins.entries > maxExactSupport) return false;
  for (let i = 1; i < bins.entries; i++) if (!(bins.low[i]! > bins.low[i - 1]!)) return false;
  return true;
}

/**
 * What one frame may move its stream's watermark to: its event time, but no later than the
 * moment it was sent when that is known (`sentMillis`, the Kafka record timestamp the collector
 * sets when it reads the frame). A launch cannot have ended after its frame was read on the
 * same host, so a frame dated beyond that is an outlier (a clock step, a bad timestamp): it is
 * still placed in its own window, but it moves the watermark only as far as its send time, like
 * any frame sent then. A missing, non-finite or non-positive `sentMillis` (no timestamp) leaves
 * the event time alone.
 *
 * @example watermarkCandidate(1_700_000_240_000, 1_700_000_000_050) // 1_700_000_000_050
 * @example watermarkCandidate(1_700_000_000_000, undefined) // 1_700_000_000_000
 */
export function watermarkCandidate(eventTimeMillis: number, sentMillis: number | undefined): number {
  if (sentMillis === undefined || !Number.isFinite(sentMillis) || sentMillis <= 0) return eventTimeMillis;
  return Math.min(eventTimeMillis, sentMillis);
}

/**
 * Records one frame's observation: drops it if this frame was already seen (same launchId and
 * frameSequence) or its window is already closed (late), else adds it to its window (a
 * launch summary also to the current and the cumulative distribution; GroupSamples only to
 * the window's sampled groups), advances the stream's watermark and returns the windows the
 * watermark closed. Mutates `state`.
 *
 * @param wallMillis processing time now (ms), remembered for idle flushing only.
 * @param sentMillis when the frame was sent (Kafka record timestamp, ms), if known: bounds how
 *   far this frame moves the watermark ({@link watermarkCandidate}).
 * @throws RangeError when the observation belongs to another stream or is malformed.
 * @example
 * const { status, closed } = recordObservation(state, observation, options, Date.now());
 */
export function recordObservation(
  state: StreamState,
  observation: Observation,
  options: WindowOptions,
  wallMillis: number,
  sentMillis?: number,
): RecordOutcome {
  const key = streamKeyOfObservation(observation);
  if (key !== state.key) throw new RangeError(`observation of stream '${key}' recorded into state of '${state.key}'`);
  return recordStreamObservation(state, observation, options, wallMillis, sentMillis);
}

/**
 * {@link recordObservation} for a caller that found `state` by the observation's own stream key
 * (the engine: its streams are keyed by streamKeyOfObservation), so the stream is not checked
 * again: building the key text is a per-frame cost (docs/estimator.md, Performance).
 *
 * @throws RangeError when the observation is malformed.
 * @example
 * const { status, closed } = recordStreamObservation(streams.get(streamKeyOfObservation(observation))!, observation, options, Date.now());
 */
export function recordStreamObservation(
  state: StreamState,
  observation: Observation,
  options: WindowOptions,
  wallMillis: number,
  sentMillis?: number,
): RecordOutcome {
  if (!Number.isFinite(observation.eventTimeMillis)) {
    throw new RangeError(`launch event time must be a finite number of milliseconds, got ${observation.eventTimeMillis}`);
  }
  if (state.dedupe.has(observation.launchId, observation.frameSequence)) return { status: 'duplicate', closed: [] };
  const startMillis = windowStartOf(observation.eventTimeMillis, options.windowMillis);
  if (startMillis + options.windowMillis <= state.closedThroughMillis) return { status: 'late', closed: [] };

  let window = state.windows.get(startMillis);
  if (window === undefined) {
    window = createWindowAccumulation(startMillis, options.windowMillis);
    state.windows.set(startMillis, window);
  }
  if (isSamplesObservation(observation)) {
    recordSamplesInWindow(window, observation);
  } else {
    recordLaunchInWindow(window, observation, options.histogram);
    updateCurrent(state.current, observation, options);
    const bins = binColumnsOf(observation.bins);
    for (let i = 0; i < bins.entries; i++) addCount(state.cumulative, bins.low[i]!, bins.high[i]!, bins.count[i]!, options.histogram);
    state.cumulativeLaunches += 1;
    state.cumulativeGroups += observation.groups;
  }
  state.dedupe.add(observation.launchId, observation.frameSequence, options.dedupeCapacity);
  state.lastRecordWallMillis = wallMillis;
  state.watermarkMillis = Math.max(state.watermarkMillis, watermarkCandidate(observation.eventTimeMillis, sentMillis));
  return { status: 'recorded', closed: closeWindowsThrough(state, state.watermarkMillis - options.allowedLatenessMillis) };
}

/**
 * Closes (removes and returns, oldest first) every open window whose end is ≤ `throughMillis`.
 */
export function closeWindowsThrough(state: StreamState, throughMillis: number): WindowAccumulation[] {
  const closed: WindowAccumulation[] = [];
  for (const window of state.windows.values()) if (window.endMillis <= throughMillis) closed.push(window);
  // Most frames close nothing, and one window needs no order: no comparator call then.
  if (closed.length > 1) closed.sort((a, b) => a.startMillis - b.startMillis);
  for (const window of closed) {
    state.windows.delete(window.startMillis);
    state.closedThroughMillis = Math.max(state.closedThroughMillis, window.endMillis);
  }
  return closed;
}

/**
 * Closes the open windows of a stream that has recorded nothing for `idleMillis` of processing
 * time (end of input, a paused job). Returns them oldest first. A window that lies wholly ahead
 * of the stream's watermark (it holds only frames dated ahead of when they were sent, see
 * {@link watermarkCandidate}) is held open until the stream reaches it or processing time
 * passes its end (`wallMillis` ≥ its end): closing it earlier would make every frame of the
 * windows before it late when the stream resumes.
 *
 * @example closeIdleWindows(state, Date.now(), 10_000) // the windows closed, oldest first
 */
export function closeIdleWindows(state: StreamState, wallMillis: number, idleMillis: number): WindowAccumulation[] {
  if (state.windows.size === 0 || wallMillis - state.lastRecordWallMillis < idleMillis) return [];
  let heldAhead = false;
  for (const window of state.windows.values()) {
    if (window.startMillis > state.watermarkMillis && window.endMillis > wallMillis) heldAhead = true;
  }
  if (!heldAhead) return closeWindowsThrough(state, Number.POSITIVE_INFINITY);
  // Close what the stream reached (and what processing time has passed), keep the windows ahead.
  const closed: WindowAccumulation[] = [];
  for (const window of state.windows.values()) {
    if (window.startMillis <= state.watermarkMillis || window.endMillis <= wallMillis) closed.push(window);
  }
  closed.sort((a, b) => a.startMillis - b.startMillis);
  for (const window of closed) {
    state.windows.delete(window.startMillis);
    state.closedThroughMillis = Math.max(state.closedThroughMillis, window.endMillis);
  }
  return closed;
}
