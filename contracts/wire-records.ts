import type { AlertKind } from './series.ts';

/**
 * The JSON values the estimator publishes on Kafka, as every reader sees them: the latest
 * distribution and predictions per stream (compacted topic warpwatch.distributions) and alert
 * events (warpwatch.alerts). The schemas are documented in docs/estimator.md; `schema` names the
 * version. The estimator's engine builds these records (estimator/engine/records.ts), its Kafka
 * adapter encodes them with {@link encodeWireRecord}; readers decode with
 * {@link decodeDistributionRecord}. Pure types and functions, no I/O.
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
    readonly mode: 'decay' | 'last-n';
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
   * What the window's GroupSamples frames show (model/related/sampled-groups.ts), null when the
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

/** Value of a warpwatch.alerts record (key = stream id). */
export interface AlertRecord {
  readonly schema: 'warpwatch.alert/v1';
  readonly kind: AlertKind;
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
  readonly series: AlertSeries;
  readonly oldLevel: number;
  readonly newLevel: number;
  readonly statistic: number;
  readonly evidence: AlertEvidence;
  readonly message: string;
}

/** The series an alert watches (docs/estimator.md, Alerts). */
export type AlertSeries = 'loss_measured' | 'loss_predicted' | 'measured_over_predicted' | 'frames';

/** Why an alert was raised: the detector and the evidence it saw. */
export interface AlertEvidence {
  readonly detector: 'cusum' | 'threshold';
  /** Windows since the estimated change point (CUSUM) or 1 (threshold). */
  readonly windowsSinceChange: number;
  /** Start of the estimated change (ms since epoch). */
  readonly changeStartMillis: number;
  readonly baselineSigma: number | undefined;
  readonly threshold: number;
  readonly windowMillis: number;
}

/**
 * The Kafka record value of a distribution or alert record: its JSON text (UTF-8 when sent).
 *
 * @example encodeWireRecord(record) // '{"schema":"warpwatch.distribution/v1",...}'
 */
export function encodeWireRecord(record: DistributionRecord | AlertRecord): string {
  return JSON.stringify(record);
}

/**
 * The distribution record in a warpwatch.distributions value, or undefined when the value is
 * absent (a tombstone), not JSON, or of another schema than `warpwatch.distribution/v1`. Never
 * throws; the fields are not checked one by one (the estimator writes them).
 *
 * @example decodeDistributionRecord('{"schema":"warpwatch.distribution/v1",...}')?.stream // 'train/matmul'
 */
export function decodeDistributionRecord(text: string | null): DistributionRecord | undefined {
  if (text === null) return undefined;
  try {
    const parsed = JSON.parse(text) as DistributionRecord | null;
    return parsed !== null && typeof parsed === 'object' && parsed.schema === 'warpwatch.distribution/v1' ? parsed : undefined;
  } catch {
    return undefined;
  }
}
