import type { InfluxPoint } from '../../service/index.ts';
import type { AlertEvent } from './alert-detector.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { FIELDS, MEASUREMENTS, PIPELINE_SERVICES, TAGS } from '../../contracts/index.ts';
import type { WindowResult } from './window-result.ts';
import { hashString } from './random-deviates.ts';
import { createSeededRandom } from '../../model/index.ts';

/**
 * A point to write, independent of the InfluxDB client (influx-writer.ts turns it into line
 * protocol with service/influx-line.ts). Numeric fields are written as floats so a field never changes type.
 */
export type SeriesPoint = InfluxPoint;

/** Tag keys a label cannot take as its own name (it becomes `label_<name>`). */
const RESERVED_TAG_KEYS: ReadonlySet<string> = new Set(Object.values(TAGS));

/**
 * The tags every window-ish measurement carries: the stream identity (job, kernel, n, source,
 * device model and UUID, host) and the collector labels named in `labelTags` that the stream
 * has (a label named like a tag above becomes `label_<name>`).
 *
 * @example streamTags(identity, ['pod']) // { stream: 'j/k', ..., host: 'node7', pod: 'trainer-0' }
 */
export function streamTags(identity: StreamIdentity, labelTags: readonly string[] = []): Record<string, string> {
  const tags: Record<string, string> = {
    [TAGS.stream]: identity.stream,
    [TAGS.job]: identity.job,
    [TAGS.kernel]: identity.kernel,
    [TAGS.device]: identity.device,
    [TAGS.deviceUuid]: identity.deviceUuid,
    [TAGS.host]: identity.host,
    [TAGS.n]: String(identity.groupSize),
    [TAGS.source]: identity.source,
  };
  for (const name of labelTags) {
    const value = identity.labels[name];
    if (value === undefined || value === '') continue;
    tags[RESERVED_TAG_KEYS.has(name) ? `label_${name}` : name] = value;
  }
  return tags;
}

/**
 * The tags of a stream's points, frozen and shared between its windows (so that the line
 * encoding remembers their text: service/influx-line.ts), and the sweep points' tags per group
 * size. Kept per identity object in a WeakMap, so an entry lives as long as the stream's
 * identity (the engine holds one per live stream); a call with other label tags replaces it. At
 * most {@link SWEEP_TAGS_LIMIT} group sizes are kept per stream (the sweep has at most 32).
 */
interface StreamTagSet {
  readonly labelTags: readonly string[] | undefined;
  readonly tags: Readonly<Record<string, string>>;
  readonly sweep: Map<number, Readonly<Record<string, string>>>;
  /** A hash of the stream's tags: its phase in the sweep cadence ({@link sweepDue}). */
  readonly phaseHash: number;
}

const SWEEP_TAGS_LIMIT = 64;
const streamTagSets = new WeakMap<StreamIdentity, StreamTagSet>();

/**
 * The sweep phase hash of a stream's tags: FNV-1a of their values, spread by the model's seeded
 * generator (FNV-1a's low bits follow the last characters, so alone it leaves phases empty).
 */
function phaseHashOf(tags: Readonly<Record<string, string>>): number {
  return createSeededRandom(hashString(Object.values(tags).join('\u0000'))).nextUint32();
}

function streamTagSet(identity: StreamIdentity, labelTags: readonly string[] | undefined): StreamTagSet {
  let set = streamTagSets.get(identity);
  if (set === undefined || set.labelTags !== labelTags) {
    const tags = Object.freeze(streamTags(identity, labelTags));
    set = { labelTags, tags, sweep: new Map(), phaseHash: phaseHashOf(tags) };
    streamTagSets.set(identity, set);
  }
  return set;
}

function sweepTags(set: StreamTagSet, groupSize: number): Readonly<Record<string, string>> {
  let tags = set.sweep.get(groupSize);
  if (tags === undefined) {
    tags = Object.freeze({ ...set.tags, [TAGS.groupSize]: String(groupSize) });
    if (set.sweep.size < SWEEP_TAGS_LIMIT) set.sweep.set(groupSize, tags);
  }
  return tags;
}

/**
 * The sweep cadence of {@link windowPoints}: a stream's warpwatch_sweep points are written for one
 * window in each run of `everyWindows` consecutive windows (of `windowMillis`), at a phase fixed
 * per stream by a hash of its tags, so that the streams' sweeps spread evenly over the windows.
 * `everyWindows` 1 = every window. docs/estimator.md, Sizing: InfluxDB.
 */
export interface SweepCadence {
  /** Write the sweep for one window in this many (an integer ≥ 1). */
  readonly everyWindows: number;
  /** The window length (ms): a window's index is its start / windowMillis. */
  readonly windowMillis: number;
}

/**
 * The sweep cadence of a window length and a sweep interval (both ms): one window in
 * ⌈interval / window⌉, so every window when the window is at least as long as the interval
 * (and when the interval is 0).
 *
 * @example sweepCadence(1_000, 10_000) // { everyWindows: 10, windowMillis: 1000 }
 */
export function sweepCadence(windowMillis: number, sweepIntervalMillis: number): SweepCadence {
  return { everyWindows: Math.max(1, Math.ceil(sweepIntervalMillis / windowMillis)), windowMillis };
}

/**
 * Whether the window of `identity` starting at startMillis is its stream's sweep window
 * ({@link SweepCadence}): the window whose points carry the sweep, and the one whose close
 * computes the sweep, the quantiles and the fit (window-result.ts computeWindowResult).
 * `labelTags` as for {@link windowPoints} (the phase hashes the stream's tags).
 *
 * @example isSweepWindow(identity, 1_700_000_003_000, sweepCadence(1_000, 10_000), ['pod']) // true in one window of ten
 */
export function isSweepWindow(identity: StreamIdentity, startMillis: number, cadence: SweepCadence | undefined, labelTags?: readonly string[]): boolean {
  return sweepDue(streamTagSet(identity, labelTags), startMillis, cadence);
}

/** Whether the window starting at startMillis carries its stream's sweep ({@link SweepCadence}). */
function sweepDue(set: StreamTagSet, startMillis: number, cadence: SweepCadence | undefined): boolean {
  if (cadence === undefined || cadence.everyWindows <= 1) return true;
  const k = cadence.everyWindows;
  const index = Math.floor(startMillis / cadence.windowMillis);
  return (((index - set.phaseHash) % k) + k) % k === 0;
}

/** Sets fields[key] = value when value is a finite number (what {@link definedFields} keeps of a number). */
function putFinite(fields: Record<string, number | string>, key: string, value: number | undefined): void {
  if (value !== undefined && Number.isFinite(value)) fields[key] = value;
}

function definedFields(entries: Record<string, number | string | undefined>): Record<string, number | string> {
  const fields: Record<string, number | string> = {};
  for (const [key, value] of Object.entries(entries)) {
    if (value === undefined) continue;
    if (typeof value === 'number' && !Number.isFinite(value)) continue;
    fields[key] = value;
  }
  return fields;
}

/**
 * The points of one closed window: warpwatch_window (timestamp = window start), one
 * warpwatch_sweep point per what-if group size (for one window in `sweep.everyWindows` of the
 * stream: {@link SweepCadence}; every window without `sweep`), one warpwatch_histogram point per bin (when
 * `includeHistogram`), warpwatch_samples when the window had GroupSamples, and warpwatch_fit
 * when a fit exists.
 *
 * @example
 * writer.write(windowPoints(result, { includeHistogram: true }));
 */
export function windowPoints(
  result: WindowResult,
  options: { includeHistogram: boolean; labelTags?: readonly string[] | undefined; sweep?: SweepCadence | undefined },
): SeriesPoint[] {
  const tagSet = streamTagSet(result.identity, options.labelTags);
  const tags = tagSet.tags;
  const time = result.startMillis;
  const overflowed = result.overflowedSums ?? [];
  const f = FIELDS.window;
  // Field by field in the order of the fields table (contracts/), finite numbers only.
  const windowFields: Record<string, number | string> = {};
  putFinite(windowFields, f.lossPredicted, result.lossPredicted);
  putFinite(windowFields, f.lossPredictedLow, result.lossPredictedLow);
  putFinite(windowFields, f.lossPredictedHigh, result.lossPredictedHigh);
  putFinite(windowFields, f.lossCounts, result.lossCounts);
  putFinite(windowFields, f.lossMeasured, result.lossMeasured);
  putFinite(windowFields, f.workloadLossPredicted, result.workloadLossPredicted);
  putFinite(windowFields, f.workloadLossMeasured, result.workloadLossMeasured);
  putFinite(windowFields, f.etaPredictedCounts, result.etaPredictedCounts);
  putFinite(windowFields, f.etaCountsMeasured, result.etaCountsMeasured);
  putFinite(windowFields, f.etaPredictedMeasured, result.etaPredictedMeasured);
  putFinite(windowFields, f.lossLocality, result.lossLocality);
  putFinite(windowFields, f.lossLocalityLow, result.lossLocalityLow);
  putFinite(windowFields, f.lossLocalityHigh, result.lossLocalityHigh);
  putFinite(windowFields, f.localityBenefit, result.localityBenefit);
  putFinite(windowFields, f.etaDrift, result.etaDrift);
  putFinite(windowFields, f.lossBlock, result.lossBlock);
  putFinite(windowFields, f.lossBlockLow, result.lossBlockLow);
  putFinite(windowFields, f.lossBlockHigh, result.lossBlockHigh);
  putFinite(windowFields, f.lossWarpInBlock, result.lossWarpInBlock);
  putFinite(windowFields, f.lossBlockWarps, result.lossBlockWarps);
  putFinite(windowFields, f.lossQ50, result.lossQ50);
  putFinite(windowFields, f.lossQ90, result.lossQ90);
  putFinite(windowFields, f.lossQ99, result.lossQ99);
  putFinite(windowFields, f.groups, overflowed.includes('groups') ? undefined : result.groups);
  putFinite(windowFields, f.units, overflowed.includes('units') ? undefined : result.units);
  putFinite(windowFields, f.launches, result.launches);
  putFinite(windowFields, f.binningErrorBound, result.binningErrorBound);
  putFinite(windowFields, f.overflowedSums, overflowed.length > 0 ? overflowed.length : undefined);
  const points: SeriesPoint[] = [{ measurement: MEASUREMENTS.window, tags, timestampMillis: time, fields: windowFields }];
  const locality = result.sampled?.locality;
  const localityByGroupSize = locality === undefined ? undefined : new Map(locality.map((row) => [row.groupSize, row.loss]));
  const sweepRows = sweepDue(tagSet, time, options.sweep) ? result.sweep : [];
  for (const row of sweepRows) {
    const fields: Record<string, number | string> = {};
    putFinite(fields, FIELDS.sweep.lossPredicted, row.lossPredicted);
    putFinite(fields, FIELDS.sweep.workloadLossPredicted, row.workloadLossPredicted);
    putFinite(fields, FIELDS.sweep.lossLocality, localityByGroupSize?.get(row.groupSize));
    points.push({ measurement: MEASUREMENTS.sweep, tags: sweepTags(tagSet, row.groupSize), timestampMillis: time, fields });
  }
  if (options.includeHistogram) {
    for (const bin of result.histogram) {
      points.push({
        measurement: MEASUREMENTS.histogram,
        tags: { ...tags, [TAGS.binLow]: String(bin.low) },
        timestampMillis: time,
        fields: { [FIELDS.histogram.count]: bin.count, [FIELDS.histogram.probability]: bin.probability },
      });
    }
  }
  if (result.sampled !== undefined) {
    const sampled = result.sampled;
    const g = FIELDS.samples;
    points.push({
      measurement: MEASUREMENTS.samples,
      tags,
      timestampMillis: time,
      fields: definedFields({
        [g.groups]: sampled.groups,
        [g.invalidGroups]: sampled.invalidGroups,
        [g.lossMeasured]: sampled.lossMeasured,
        [g.lossCounts]: sampled.lossCounts,
        [g.laneIdleFraction]: sampled.laneIdleFraction,
        [g.countIcc]: sampled.countIcc,
        [g.iterationTicks]: sampled.divergence?.iterationTicks,
        [g.deltaTicks]: sampled.divergence?.deltaTicks,
        [g.deltaStandardError]: sampled.divergence?.deltaStandardError,
        [g.spillTicks]: sampled.divergence?.spillTicks,
        [g.overheadTicks]: sampled.divergence?.overheadTicks,
        [g.rSquared]: sampled.divergence?.rSquared,
      }),
    });
  }
  if (result.fit !== undefined) {
    points.push({
      measurement: MEASUREMENTS.fit,
      tags,
      timestampMillis: time,
      fields: definedFields({
        [FIELDS.fit.family]: result.fit.family,
        [FIELDS.fit.parameters]: JSON.stringify(result.fit.parameters),
        [FIELDS.fit.aic]: result.fit.aic,
        [FIELDS.fit.logLikelihood]: result.fit.logLikelihood,
      }),
    });
  }
  return points.filter((point) => Object.keys(point.fields).length > 0);
}

/** The warpwatch_alert point of an alert (timestamp = alert time). */
export function alertPoint(alert: AlertEvent, labelTags: readonly string[] = []): SeriesPoint {
  return {
    measurement: MEASUREMENTS.alert,
    tags: { ...streamTags(alert.identity, labelTags), [TAGS.kind]: alert.kind, [TAGS.series]: alert.series },
    timestampMillis: alert.timeMillis,
    fields: definedFields({
      [FIELDS.alert.oldLevel]: alert.oldLevel,
      [FIELDS.alert.newLevel]: alert.newLevel,
      [FIELDS.alert.statistic]: alert.statistic,
      [FIELDS.alert.message]: alert.message,
    }),
  };
}

/** Counters of the estimator process reported as warpwatch_pipeline. */
export interface PipelineCounters {
  readonly framesIn: number;
  readonly framesOut: number;
  readonly framesRejected: number;
  readonly framesDropped: number;
  /** Messages behind the frames topic's end; undefined while unknown (the broker does not answer), then the field is left out. */
  readonly consumerLag: number | undefined;
  readonly windowLatencyMillis: number | undefined;
  readonly influxWriteErrors: number;
}

/** The warpwatch_pipeline point of this estimator instance. */
export function pipelinePoint(instance: string, counters: PipelineCounters, timestampMillis: number): SeriesPoint {
  const f = FIELDS.pipeline;
  return {
    measurement: MEASUREMENTS.pipeline,
    tags: { [TAGS.service]: PIPELINE_SERVICES.estimator, [TAGS.instance]: instance },
    timestampMillis,
    fields: definedFields({
      [f.framesIn]: counters.framesIn,
      [f.framesOut]: counters.framesOut,
      [f.framesRejected]: counters.framesRejected,
      [f.framesDropped]: counters.framesDropped,
      [f.consumerLag]: counters.consumerLag,
      [f.windowLatencyMillis]: counters.windowLatencyMillis,
      [f.influxWriteErrors]: counters.influxWriteErrors,
    }),
  };
}

