import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, type CollectionResult, type MetricData, type MetricProducer } from '@opentelemetry/sdk-metrics';
import { emptyResource } from '@opentelemetry/resources';
import { labelAttributeName, RESULT_METRICS, STREAM_ATTRIBUTES } from '../../contracts/index.ts';
import { idleLaneShare } from '../../model/index.ts';
import type { AlertEvent } from '../engine/alert-detector.ts';
import type { StreamIdentity } from '../../contracts/index.ts';
import { streamKeyOf } from '../../contracts/index.ts';
import type { WindowResult } from '../engine/window-result.ts';

/**
 * The estimator's results as OpenTelemetry metrics (beside InfluxDB): per stream the latest
 * window's losses and lane idle share (gauges) and the windows, groups and alerts so far
 * (counters), with the stream identity as attributes. A table of at most `maxMetricStreams`
 * streams is kept; a new stream beyond the cap evicts the least recently updated one
 * (reason `cap`), and a stream without a window for `streamTtlMillis` is evicted at the next
 * collection (reason `idle`); both are counted. The table is read by a {@link MetricProducer}
 * at collection time, so an evicted stream's series disappear from the next scrape or push
 * (the SDK's own asynchronous instruments would keep reporting their last value forever).
 *
 * Names follow the OpenTelemetry rules (dotted, lowercase, `warpwatch.` namespace, units in
 * the unit field) and map one to one onto Prometheus names, the same through the Prometheus
 * endpoint and through an OTLP receiver that adds unit suffixes (Prometheus ≥ 2.47): losses
 * are factors ≥ 1 (unit `{factor}`, no suffix), the idle share is a 0–1 ratio (unit `1`, the
 * name already ends in `ratio`), counters get `_total`. See docs/exporting.md.
 */

/** Why a stream left the export table. */
export type EvictionReason = 'cap' | 'idle';

/** Options of {@link createResultMetrics}. */
export interface ResultMetricsOptions {
  /** Most streams exported at a time (1..); beyond it the least recently updated is evicted. */
  readonly maxMetricStreams: number;
  /** A stream without a closed window for this long (ms, processing time) is evicted. */
  readonly streamTtlMillis: number;
  /**
   * Collector labels exported as attributes when a stream has them (the estimator's
   * WARPWATCH_TAG_LABELS, by default pod, namespace, node): see {@link labelAttributeName}.
   */
  readonly labelAttributes?: readonly string[] | undefined;
  /** Wall clock in ms since the epoch (tests pass their own). */
  readonly nowMillis?: () => number;
}

/** Counts of the export table. */
export interface ResultMetricsStats {
  readonly streams: number;
  readonly evicted: Readonly<Record<EvictionReason, number>>;
}

/** The per-stream result metrics: fed by the engine, read by metric readers through `producer`. */
export interface ResultMetrics {
  /** Takes one closed window (the engine calls it for every window it computed). */
  recordWindow(result: WindowResult): void;
  /** Counts one alert of a stream. */
  recordAlert(alert: AlertEvent): void;
  /** Hand to every metric reader (`metricProducers`): the Prometheus exporter and the OTLP reader. */
  readonly producer: MetricProducer;
  stats(): ResultMetricsStats;
}

interface StreamRow {
  attributes: Attributes;
  readonly startTime: HrTime;
  updatedMillis: number;
  lossPredicted: number | undefined;
  lossCounts: number | undefined;
  lossMeasured: number | undefined;
  lossBlock: number | undefined;
  lossLocality: number | undefined;
  idlePredicted: number | undefined;
  idleMeasured: number | undefined;
  windows: number;
  groups: number;
  readonly alerts: Map<string, number>;
}

/**
 * Stream identity as metric attributes, plus the named collector labels the stream carries
 * (pod → `k8s.pod.name`, …; see {@link labelAttributeName}). Labels describe a stream and do
 * not split it: a stream's series carry its latest labels.
 *
 * @example streamAttributes(identity)['warpwatch.stream']; // 'job/kernel'
 * @example streamAttributes(identity, ['pod'])['k8s.pod.name']; // identity.labels.pod, when set
 */
export function streamAttributes(identity: StreamIdentity, labels: readonly string[] = []): Attributes {
  const attributes: Attributes = {
    [STREAM_ATTRIBUTES.stream]: identity.stream,
    [STREAM_ATTRIBUTES.job]: identity.job,
    [STREAM_ATTRIBUTES.kernel]: identity.kernel,
    [STREAM_ATTRIBUTES.device]: identity.device,
    [STREAM_ATTRIBUTES.deviceUuid]: identity.deviceUuid,
    [STREAM_ATTRIBUTES.host]: identity.host,
    [STREAM_ATTRIBUTES.groupSize]: identity.groupSize,
    [STREAM_ATTRIBUTES.source]: identity.source,
  };
  for (const label of labels) {
    const value = identity.labels[label];
    if (value !== undefined && value !== '') attributes[labelAttributeName(label)] = value;
  }
  return attributes;
}

/**
 * Lane idle share from a workload loss L = ΣC_SIMT/ΣC_MIMD: 1 − 1/L, the one definition of idle
 * lane time (model/loss/idle-lane-share.ts). Undefined for a missing or invalid L (< 1 or not finite).
 *
 * @example laneIdleShare(1.25); // 0.2
 */
export function laneIdleShare(workloadLoss: number | undefined): number | undefined {
  const share = workloadLoss === undefined ? Number.NaN : idleLaneShare(workloadLoss);
  return Number.isNaN(share) ? undefined : share;
}

/** Milliseconds since the epoch as OTel HrTime [seconds, nanoseconds]. */
function millisToHrTime(millis: number): HrTime {
  const seconds = Math.floor(millis / 1000);
  return [seconds, Math.round((millis - seconds * 1000) * 1e6)];
}

const finite = (value: number | undefined): number | undefined => (value !== undefined && Number.isFinite(value) ? value : undefined);

/** A new row of the export table for a stream first seen at `at` (ms since epoch): no values yet, counters 0. */
function emptyRow(identity: StreamIdentity, at: number, labels: readonly string[]): StreamRow {
  return {
    attributes: streamAttributes(identity, labels),
    startTime: millisToHrTime(at),
    updatedMillis: at,
    lossPredicted: undefined,
    lossCounts: undefined,
    lossMeasured: undefined,
    lossBlock: undefined,
    lossLocality: undefined,
    idlePredicted: undefined,
    idleMeasured: undefined,
    windows: 0,
    groups: 0,
    alerts: new Map(),
  };
}

/**
 * The export table as OTel metric data at `endTime`: per stream the latest window's losses and
 * lane-idle shares (gauges; undefined values left out), windows, groups and alerts by kind
 * (cumulative counters since the row was created); the table size and its evictions by reason.
 */
function resultMetricData(
  list: readonly StreamRow[],
  tableSize: number,
  evicted: Readonly<Record<EvictionReason, number>>,
  evictedStart: HrTime,
  endTime: HrTime,
): MetricData[] {
  const gauge = (name: string, description: string, unit: string, points: { attributes: Attributes; value: number | undefined; startTime: HrTime }[]): MetricData => ({
    descriptor: { name, description, unit, valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.GAUGE,
    dataPoints: points.flatMap((p) => (p.value === undefined ? [] : [{ startTime: p.startTime, endTime, attributes: p.attributes, value: p.value }])),
  });
  const counter = (name: string, description: string, unit: string, points: { attributes: Attributes; value: number; startTime: HrTime }[]): MetricData => ({
    descriptor: { name, description, unit, valueType: ValueType.DOUBLE },
    aggregationTemporality: AggregationTemporality.CUMULATIVE,
    dataPointType: DataPointType.SUM,
    isMonotonic: true,
    dataPoints: points.map((p) => ({ startTime: p.startTime, endTime, attributes: p.attributes, value: p.value })),
  });
  return [
    gauge(RESULT_METRICS.lossPredicted, 'Predicted lockstep loss E[X_W(n)] of the latest window (C_SIMT/C_MIMD, ≥ 1)', '{factor}', list.map((r) => ({ attributes: r.attributes, value: r.lossPredicted, startTime: r.startTime }))),
    gauge(RESULT_METRICS.lossCounts, 'Mean per-group loss from the iteration counts of the latest window (≥ 1)', '{factor}', list.map((r) => ({ attributes: r.attributes, value: r.lossCounts, startTime: r.startTime }))),
    gauge(RESULT_METRICS.lossMeasured, 'Mean per-group measured loss C_SIMT/C_MIMD from clocks of the latest window (≥ 1)', '{factor}', list.map((r) => ({ attributes: r.attributes, value: r.lossMeasured, startTime: r.startTime }))),
    gauge(RESULT_METRICS.lossBlock, 'Block-level loss of the latest window from block runs: lane time a block holds until its slowest warp ends over lane work (≥ 1; docs/model.md §11a)', '{factor}', list.map((r) => ({ attributes: r.attributes, value: r.lossBlock, startTime: r.startTime }))),
    gauge(RESULT_METRICS.lossLocality, 'Locality-aware predicted loss of the latest window with sampled groups: the kernel\'s own layout (sampled groups as contiguous runs, ≥ 1; docs/model.md §11)', '{factor}', list.map((r) => ({ attributes: r.attributes, value: r.lossLocality, startTime: r.startTime }))),
    gauge(
      RESULT_METRICS.laneIdle,
      'Share of lane-time idle in lockstep in the latest window, 1 − 1/workload loss (0..1); basis measured (clocks) or predicted (model)',
      '1',
      list.flatMap((r) => [
        { attributes: { ...r.attributes, [STREAM_ATTRIBUTES.basis]: 'measured' }, value: r.idleMeasured, startTime: r.startTime },
        { attributes: { ...r.attributes, [STREAM_ATTRIBUTES.basis]: 'predicted' }, value: r.idlePredicted, startTime: r.startTime },
      ]),
    ),
    counter(RESULT_METRICS.windows, 'Windows closed and computed for the stream', '{window}', list.map((r) => ({ attributes: r.attributes, value: r.windows, startTime: r.startTime }))),
    counter(RESULT_METRICS.groups, 'Groups (warps/tiles) in the stream’s closed windows', '{group}', list.map((r) => ({ attributes: r.attributes, value: r.groups, startTime: r.startTime }))),
    counter(
      RESULT_METRICS.alerts,
      'Alerts raised for the stream, by kind',
      '{alert}',
      list.flatMap((r) => [...r.alerts].map(([kind, value]) => ({ attributes: { ...r.attributes, [STREAM_ATTRIBUTES.kind]: kind }, value, startTime: r.startTime }))),
    ),
    gauge(RESULT_METRICS.exportedStreams, 'Streams in the export table', '{stream}', [{ attributes: {}, value: tableSize, startTime: evictedStart }]),
    counter(
      RESULT_METRICS.evictedStreams,
      'Streams removed from the export table: cap (table full, least recently updated) or idle (no window for the TTL)',
      '{stream}',
      (['cap', 'idle'] as const).map((reason) => ({ attributes: { [STREAM_ATTRIBUTES.reason]: reason }, value: evicted[reason], startTime: evictedStart })),
    ),
  ];
}

/**
 * Creates the export table and its producer.
 *
 * @throws RangeError when maxMetricStreams < 1 or streamTtlMillis ≤ 0.
 * @example
 * const results = createResultMetrics({ maxMetricStreams: 1000, streamTtlMillis: 3_600_000 });
 * new PrometheusExporter({ preventServerStart: true, metricProducers: [results.producer] });
 */
export function createResultMetrics(options: ResultMetricsOptions): ResultMetrics {
  if (!Number.isInteger(options.maxMetricStreams) || options.maxMetricStreams < 1) throw new RangeError(`maxMetricStreams must be an integer ≥ 1, got ${options.maxMetricStreams}`);
  if (!(options.streamTtlMillis > 0)) throw new RangeError(`streamTtlMillis must be > 0, got ${options.streamTtlMillis}`);
  const now = options.nowMillis ?? Date.now;
  // Insertion order = least recently updated first (an update re-inserts the row).
  const rows = new Map<string, StreamRow>();
  const evicted: Record<EvictionReason, number> = { cap: 0, idle: 0 };
  const evictedStart = millisToHrTime(now());

  const labels = options.labelAttributes ?? [];
  const rowFor = (identity: StreamIdentity): StreamRow => {
    const key = streamKeyOf(identity);
    const existing = rows.get(key);
    const at = now();
    if (existing !== undefined) {
      rows.delete(key);
      existing.updatedMillis = at;
      if (labels.length > 0) existing.attributes = streamAttributes(identity, labels); // the latest labels
      rows.set(key, existing);
      return existing;
    }
    while (rows.size >= options.maxMetricStreams) {
      const oldest = rows.keys().next().value;
      if (oldest === undefined) break;
      rows.delete(oldest);
      evicted.cap += 1;
    }
    const row = emptyRow(identity, at, labels);
    rows.set(key, row);
    return row;
  };

  const evictIdle = (at: number): void => {
    for (const [key, row] of rows) {
      if (at - row.updatedMillis < options.streamTtlMillis) break; // the rest were updated later
      rows.delete(key);
      evicted.idle += 1;
    }
  };

  const collect = (): Promise<CollectionResult> => {
    const at = now();
    evictIdle(at);
    const metrics = resultMetricData([...rows.values()], rows.size, evicted, evictedStart, millisToHrTime(at));
    return Promise.resolve({
      // Readers replace the producer's resource with the SDK's own (service.name, ...).
      resourceMetrics: { resource: emptyResource(), scopeMetrics: [{ scope: { name: 'warpwatch-estimator.results' }, metrics }] },
      errors: [],
    });
  };

  return {
    recordWindow(result) {
      const row = rowFor(result.identity);
      row.lossPredicted = finite(result.lossPredicted);
      row.lossCounts = finite(result.lossCounts);
      row.lossMeasured = finite(result.lossMeasured);
      row.lossBlock = finite(result.lossBlock);
      row.lossLocality = finite(result.lossLocality);
      row.idlePredicted = laneIdleShare(result.workloadLossPredicted);
      row.idleMeasured = laneIdleShare(result.workloadLossMeasured);
      row.windows += 1;
      row.groups += result.groups;
    },
    recordAlert(alert) {
      const row = rowFor(alert.identity);
      row.alerts.set(alert.kind, (row.alerts.get(alert.kind) ?? 0) + 1);
    },
    producer: { collect },
    stats() {
      return { streams: rows.size, evicted: { ...evicted } };
    },
  };
}
