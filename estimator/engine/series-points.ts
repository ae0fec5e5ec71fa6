import type { InfluxPoint } from '../../service/index.ts';
import type { AlertEvent } from './alert-detector.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { FIELDS, MEASUREMENTS, PIPELINE_SERVICES, TAGS } from '../../contracts/index.ts';
import type { WindowResult } from './window-result.ts';

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
 * warpwatch_sweep point per what-if group size, one warpwatch_histogram point per bin (when
 * `includeHistogram`), warpwatch_samples when the window had GroupSamples, and warpwatch_fit
 * when a fit exists.
 *
 * @example
 * writer.write(windowPoints(result, { includeHistogram: true }));
 */
export function windowPoints(result: WindowResult, options: { includeHistogram: boolean; labelTags?: readonly string[] | undefined }): SeriesPoint[] {
  const tags = streamTags(result.identity, options.labelTags);
  const time = result.startMillis;
  const overflowed = result.overflowedSums ?? [];
  const f = FIELDS.window;
  const points: SeriesPoint[] = [
    {
      measurement: MEASUREMENTS.window,
      tags,
      timestampMillis: time,
      fields: definedFields({
        [f.lossPredicted]: result.lossPredicted,
        [f.lossPredictedLow]: result.lossPredictedLow,
        [f.lossPredictedHigh]: result.lossPredictedHigh,
        [f.lossCounts]: result.lossCounts,
        [f.lossMeasured]: result.lossMeasured,
        [f.workloadLossPredicted]: result.workloadLossPredicted,
        [f.workloadLossMeasured]: result.workloadLossMeasured,
        [f.etaPredictedCounts]: result.etaPredictedCounts,
        [f.etaCountsMeasured]: result.etaCountsMeasured,
        [f.etaPredictedMeasured]: result.etaPredictedMeasured,
        [f.lossLocality]: result.lossLocality,
        [f.lossLocalityLow]: result.lossLocalityLow,
        [f.lossLocalityHigh]: result.lossLocalityHigh,
        [f.localityBenefit]: result.localityBenefit,
        [f.etaDrift]: result.etaDrift,
        [f.lossBlock]: result.lossBlock,
        [f.lossBlockLow]: result.lossBlockLow,
        [f.lossBlockHigh]: result.lossBlockHigh,
        [f.lossWarpInBlock]: result.lossWarpInBlock,
        [f.lossBlockWarps]: result.lossBlockWarps,
        [f.lossQ50]: result.lossQ50,
        [f.lossQ90]: result.lossQ90,
        [f.lossQ99]: result.lossQ99,
        [f.groups]: overflowed.includes('groups') ? undefined : result.groups,
        [f.units]: overflowed.includes('units') ? undefined : result.units,
        [f.launches]: result.launches,
        [f.binningErrorBound]: result.binningErrorBound,
        [f.overflowedSums]: overflowed.length > 0 ? overflowed.length : undefined,
      }),
    },
  ];
  const localityByGroupSize = new Map((result.sampled?.locality ?? []).map((row) => [row.groupSize, row.loss]));
  for (const row of result.sweep) {
    points.push({
      measurement: MEASUREMENTS.sweep,
      tags: { ...tags, [TAGS.groupSize]: String(row.groupSize) },
      timestampMillis: time,
      fields: definedFields({
        [FIELDS.sweep.lossPredicted]: row.lossPredicted,
        [FIELDS.sweep.workloadLossPredicted]: row.workloadLossPredicted,
        [FIELDS.sweep.lossLocality]: localityByGroupSize.get(row.groupSize),
      }),
    });
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
  readonly consumerLag: number;
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

