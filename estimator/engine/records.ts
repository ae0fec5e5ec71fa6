import type { SampledGroupsResult } from '../../model/index.ts';
import type { AlertRecord, DistributionEntries, DistributionRecord } from '../../contracts/index.ts';
import type { AlertEvent } from './alert-detector.ts';
import { histogramEntries, type CountHistogram } from './count-histogram.ts';
import type { CurrentDistributionOptions, StreamState } from './stream-state.ts';
import type { WindowResult } from './window-result.ts';

/**
 * The engine's builders of the records it publishes on Kafka (contracts/wire-records.ts: the
 * record types and their codec): the latest distribution of a stream after a window close, and
 * an alert event.
 */

function entriesOf(histogram: CountHistogram): DistributionEntries {
  return histogramEntries(histogram).map((entry) => [entry.low, entry.high, entry.count]);
}

const orNull = (value: number | undefined): number | null => (value === undefined ? null : value);

/**
 * Builds the warpwatch.distributions value after a window close.
 *
 * @example
 * outputs.publishDistribution(state.key, distributionRecord(state, window, result, options));
 */
export function distributionRecord(
  state: StreamState,
  windowHistogram: CountHistogram,
  result: WindowResult,
  options: { current: CurrentDistributionOptions; basis: 'window' | 'current' | 'cumulative' },
): DistributionRecord {
  const identity = state.identity;
  return {
    schema: 'warpwatch.distribution/v1',
    key: state.key,
    stream: identity.stream,
    job: identity.job,
    kernel: identity.kernel,
    device: identity.device,
    deviceUuid: identity.deviceUuid,
    host: identity.host,
    labels: identity.labels,
    groupSize: identity.groupSize,
    source: identity.source,
    updatedAtMillis: result.endMillis,
    window: {
      startMillis: result.startMillis,
      endMillis: result.endMillis,
      launches: result.launches,
      groups: result.groups,
      units: result.units,
      entries: entriesOf(windowHistogram),
    },
    current: {
      mode: options.current.mode,
      halfLifeLaunches: options.current.mode === 'decay' ? options.current.halfLifeLaunches : null,
      launches: options.current.mode === 'last-n' ? options.current.launches : null,
      totalWeight: state.current.histogram.total,
      entries: entriesOf(state.current.histogram),
    },
    cumulative: {
      launches: state.cumulativeLaunches,
      groups: state.cumulativeGroups,
      totalWeight: state.cumulative.total,
      entries: entriesOf(state.cumulative),
    },
    predictions: {
      basis: options.basis,
      lossPredicted: orNull(result.lossPredicted),
      lossPredictedLow: orNull(result.lossPredictedLow),
      lossPredictedHigh: orNull(result.lossPredictedHigh),
      standardErrorMethod: result.standardErrorMethod ?? null,
      lossCounts: orNull(result.lossCounts),
      lossMeasured: orNull(result.lossMeasured),
      workloadLossPredicted: orNull(result.workloadLossPredicted),
      workloadLossMeasured: orNull(result.workloadLossMeasured),
      lossQuantiles:
        result.lossQ50 === undefined || result.lossQ90 === undefined || result.lossQ99 === undefined
          ? null
          : { '0.5': result.lossQ50, '0.9': result.lossQ90, '0.99': result.lossQ99 },
      binningErrorBound: result.binningErrorBound,
      sweep: result.sweep,
      fit: result.fit ?? null,
      lossLocality: orNull(result.lossLocality),
      lossLocalityLow: orNull(result.lossLocalityLow),
      lossLocalityHigh: orNull(result.lossLocalityHigh),
    },
    sampled: sampledRecord(result.sampled),
  };
}

function sampledRecord(sampled: SampledGroupsResult | undefined): DistributionRecord['sampled'] {
  if (sampled === undefined) return null;
  const fit = sampled.divergence;
  return {
    groups: sampled.groups,
    invalidGroups: sampled.invalidGroups,
    lossMeasured: orNull(sampled.lossMeasured),
    lossCounts: sampled.lossCounts,
    laneIdleFraction: orNull(sampled.laneIdleFraction),
    countIcc: orNull(sampled.countIcc),
    divergence:
      fit === undefined
        ? null
        : {
            iterationTicks: fit.iterationTicks,
            deltaTicks: orNull(fit.deltaTicks),
            deltaStandardError: orNull(fit.deltaStandardError),
            spillTicks: orNull(fit.spillTicks),
            overheadTicks: fit.overheadTicks,
            rSquared: fit.rSquared,
            groups: fit.groups,
          },
  };
}

/** The warpwatch.alerts value of an alert. */
export function alertRecord(alert: AlertEvent): AlertRecord {
  return {
    schema: 'warpwatch.alert/v1',
    kind: alert.kind,
    stream: alert.identity.stream,
    job: alert.identity.job,
    kernel: alert.identity.kernel,
    device: alert.identity.device,
    deviceUuid: alert.identity.deviceUuid,
    host: alert.identity.host,
    labels: alert.identity.labels,
    groupSize: alert.identity.groupSize,
    source: alert.identity.source,
    timeMillis: alert.timeMillis,
    series: alert.series,
    oldLevel: alert.oldLevel,
    newLevel: alert.newLevel,
    statistic: alert.statistic,
    evidence: alert.evidence,
    message: alert.message,
  };
}
