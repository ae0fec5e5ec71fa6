import type { SampledGroupsResult } from '../model/index.ts';
import type { AlertEvent } from './engine/alert-detector.ts';
import { histogramEntries, type CountHistogram } from './engine/count-histogram.ts';
import type { CurrentDistributionOptions, StreamState } from './engine/stream-state.ts';
import type { WindowResult } from './engine/window-result.ts';

/**
 * JSON values the estimator publishes on Kafka: the latest distribution and predictions per
 * stream (compacted topic warpwatch.distributions) and alert events (warpwatch.alerts).
 * The schemas are documented in docs/estimator.md; `schema` names the version.
 */

/** Histogram entries as [low, high, weight] triples, ascending. */
export type DistributionEntries = [low: number, high: number, weight: number][];

/** Value of a warpwatch.distributions record (key = stream id `<job>/<kernel>`). */
export interface DistributionRecord {
  readonly schema: 'warpwatch.distribution/v1';
  /** The stream's full key (contracts/stream-identity.ts), also the record's Kafka key; absent in records written before it existed. */
  readonly key?: string;
  readonly stream: string;
  readonly job: string;
  readonly kernel: string;
  readonly device: string;
  /** Device UUID, host and labels of the stream (absent in older records). */
  readonly deviceUuid?: string;
  readonly host?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly groupSize: number;
  readonly source: 'cuda' | 'cpu';
  /** Event time of the window close that produced this record (end of the window, ms). */
  readonly updatedAtMillis: number;
  readonly window: {
    readonly startMillis: number;
    readonly endMillis: number;
    readonly launches: number;
    readonly groups: number;
    readonly units: number;
    readonly entries: DistributionEntries;
  };
  readonly current: {
    readonly mode: CurrentDistributionOptions['mode'];
    readonly halfLifeLaunches: number | null;
    readonly launches: number | null;
    readonly totalWeight: number;
    readonly entries: DistributionEntries;
  };
  readonly cumulative: {
    readonly launches: number;
    readonly groups: number;
    readonly totalWeight: number;
    readonly entries: DistributionEntries;
  };
  readonly predictions: {
    /** Which histogram the predictions below were computed from. */
    readonly basis: 'window' | 'current' | 'cumulative';
    readonly lossPredicted: number | null;
    readonly lossPredictedLow: number | null;
    readonly lossPredictedHigh: number | null;
    /** How the interval's standard error was computed: bootstrap | linearised | none (null when not computable). */
    readonly standardErrorMethod: 'bootstrap' | 'linearised' | 'none' | null;
    readonly lossCounts: number | null;
    readonly lossMeasured: number | null;
    readonly workloadLossPredicted: number | null;
    readonly workloadLossMeasured: number | null;
    readonly lossQuantiles: { readonly '0.5': number; readonly '0.9': number; readonly '0.99': number } | null;
    readonly binningErrorBound: number;
    readonly sweep: readonly { readonly groupSize: number; readonly lossPredicted: number; readonly workloadLossPredicted: number }[];
    readonly fit: { readonly family: string; readonly parameters: Readonly<Record<string, number>>; readonly aic: number; readonly logLikelihood: number } | null;
    /**
     * Locality-aware loss at the stream's n (docs/model.md §11) from the window's sampled groups
     * (each a contiguous run of n units), with its 95 % interval (null with fewer than 2 sampled
     * groups); null without sampled groups; absent in records written before it existed.
     */
    readonly lossLocality?: number | null;
    readonly lossLocalityLow?: number | null;
    readonly lossLocalityHigh?: number | null;
  };
  /**
   * What the window's GroupSamples frames show (model/sampled-groups.ts), null when the
   * window had none. Absent in records written before samples were processed.
   */
  readonly sampled?: {
    readonly groups: number;
    readonly invalidGroups: number;
    /** Mean measured H of the clocked sampled groups; null when none was clocked (counts-only frames, protocol/SPEC.md). */
    readonly lossMeasured: number | null;
    readonly lossCounts: number;
    readonly laneIdleFraction: number | null;
    readonly countIcc: number | null;
    /** Divergence-cost fit in clock ticks (SM cycles on CUDA, ns on the CPU backend); null when not identifiable. */
    readonly divergence: {
      readonly iterationTicks: number;
      readonly deltaTicks: number | null;
      readonly deltaStandardError: number | null;
      readonly spillTicks: number | null;
      readonly overheadTicks: number;
      readonly rSquared: number;
      readonly groups: number;
    } | null;
  } | null;
}

function entriesOf(histogram: CountHistogram): DistributionEntries {
  return histogramEntries(histogram).map((entry) => [entry.low, entry.high, entry.count]);
}

const orNull = (value: number | undefined): number | null => (value === undefined ? null : value);

/**
 * Builds the warpwatch.distributions value after a window close.
 *
 * @example
 * producer.send(state.key, JSON.stringify(distributionRecord(state, window, result, options)));
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

/** Value of a warpwatch.alerts record (key = stream id). */
export interface AlertRecord {
  readonly schema: 'warpwatch.alert/v1';
  readonly kind: AlertEvent['kind'];
  readonly stream: string;
  readonly job: string;
  readonly kernel: string;
  readonly device: string;
  readonly deviceUuid: string;
  readonly host: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly groupSize: number;
  readonly source: 'cuda' | 'cpu';
  readonly timeMillis: number;
  readonly series: AlertEvent['series'];
  readonly oldLevel: number;
  readonly newLevel: number;
  readonly statistic: number;
  readonly evidence: AlertEvent['evidence'];
  readonly message: string;
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
