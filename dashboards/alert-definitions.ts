/**
 * One definition of each warpwatch alert: name, severity, thresholds, windows, `for`, labels,
 * summary and runbook section. Both alert-rule generators read it: the Grafana rules on InfluxQL
 * (alert-rules.ts) and the Prometheus rules on the exported metrics (prometheus-rules.ts);
 * alert-definitions.test.ts checks that the two generated files say the same thing.
 * Runbooks: docs/alerts.md, one section per alert (its anchor is {@link AlertDefinition.runbook}).
 * Pure data.
 */
import { labelAttributeName, LABEL_TAGS, STREAM_ATTRIBUTES } from '../contracts/index.ts';

/** Label placeholders of a summary, rendered per backend (Prometheus label or InfluxDB tag). */
export interface SummaryLabels {
  /** `<job>/<kernel>` of a per-stream alert. */
  readonly stream: string;
  /** The service (collector, estimator) of a pipeline alert. */
  readonly service: string;
  /** The process instance of a pipeline alert. */
  readonly instance: string;
}

/** Whether an alert is about one stream or about one service process. */
export type AlertScope = 'stream' | 'service';

/** One alert, as both generators read it. Durations in seconds. */
export interface AlertDefinition<P extends Readonly<Record<string, number>> = Readonly<Record<string, number>>> {
  /** Prometheus `alertname` (CamelCase, `Warpwatch` prefix). */
  readonly alertname: string;
  /** The Grafana rule built from this definition (uid and title), when InfluxDB has the series it needs. */
  readonly grafana?: { readonly uid: string; readonly title: string };
  readonly scope: AlertScope;
  /** `severity` label: critical pages, warning goes to the team's channel (deploy/alertmanager). */
  readonly severity: 'critical' | 'warning';
  /** `component` label. */
  readonly component: 'imbalance' | 'model' | 'pipeline';
  /** How long the condition must hold before the alert fires (s). */
  readonly forSeconds: number;
  /** Thresholds and windows (windows in s). */
  readonly params: P;
  /** Anchor of the alert's section in docs/alerts.md. */
  readonly runbook: string;
  /** One line in plain words, with label placeholders. */
  summary(labels: SummaryLabels): string;
  /** What is measured and the threshold, in plain words (no placeholders). */
  description(params: P): string;
}

function define<P extends Readonly<Record<string, number>>>(definition: AlertDefinition<P>): AlertDefinition<P> {
  return Object.freeze(definition);
}

const minutes = (seconds: number): string =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;

/**
 * Every warpwatch alert, in rule order.
 *
 * @example ALERT_DEFINITIONS.drift.params.relativeError; // 0.25
 */
export const ALERT_DEFINITIONS = Object.freeze({
  risingImbalance: define({
    alertname: 'WarpwatchRisingImbalance',
    grafana: { uid: 'warpwatch-rising-imbalance', title: 'Rising imbalance' },
    scope: 'stream',
    severity: 'warning',
    component: 'imbalance',
    forSeconds: 300,
    params: { factor: 1.25, windowSeconds: 300, baselineSeconds: 3600, minGroups: 1000 },
    runbook: 'warpwatchrisingimbalance',
    summary: (l) => `Lockstep loss of ${l.stream} rose against its own baseline`,
    description: (p) =>
      `Mean measured loss (C_SIMT/C_MIMD) over the last ${minutes(p.windowSeconds)} is above ${p.factor} times its mean over the ${minutes(p.baselineSeconds)} before, with at least ${p.minGroups} groups in the window.`,
  }),
  drift: define({
    alertname: 'WarpwatchPredictionDrift',
    grafana: { uid: 'warpwatch-drift', title: 'Prediction/measurement drift' },
    scope: 'stream',
    severity: 'warning',
    component: 'model',
    forSeconds: 600,
    params: { relativeError: 0.25, windowSeconds: 1800, minGroups: 1000 },
    runbook: 'warpwatchpredictiondrift',
    summary: (l) => `Predicted and measured loss of ${l.stream} drifted apart`,
    description: (p) =>
      `Mean |prediction − measured| / prediction over ${minutes(p.windowSeconds)} is above ${p.relativeError} (prediction: the locality-aware one where the stream has sampled groups, else the independent-lanes one), with at least ${p.minGroups} groups in the window.`,
  }),
  streamStale: define({
    alertname: 'WarpwatchStreamStale',
    grafana: { uid: 'warpwatch-stream-stale', title: 'No data from a live stream' },
    scope: 'stream',
    severity: 'warning',
    component: 'pipeline',
    forSeconds: 0,
    params: { staleSeconds: 300, lookbackSeconds: 3600 },
    runbook: 'warpwatchstreamstale',
    summary: (l) => `Stream ${l.stream} stopped reporting`,
    description: (p) => `The stream closed windows in the last ${minutes(p.lookbackSeconds)} but none in the last ${minutes(p.staleSeconds)}: the job ended, or frames stopped flowing.`,
  }),
  pipelineStalled: define({
    alertname: 'WarpwatchPipelineStalled',
    grafana: { uid: 'warpwatch-pipeline-stalled', title: 'Pipeline stalled' },
    scope: 'service',
    severity: 'critical',
    component: 'pipeline',
    forSeconds: 300,
    params: { windowSeconds: 300 },
    runbook: 'warpwatchpipelinestalled',
    summary: (l) => `${l.service} ${l.instance} takes frames in but emits none`,
    description: (p) => `Over ${minutes(p.windowSeconds)} the instance counted incoming frames but no outgoing ones.`,
  }),
  estimatorDown: define({
    alertname: 'WarpwatchEstimatorDown',
    scope: 'service',
    severity: 'critical',
    component: 'pipeline',
    forSeconds: 300,
    params: {},
    runbook: 'warpwatchestimatordown',
    summary: (l) => `${l.service} ${l.instance} is down or not scraped`,
    description: () => 'Prometheus cannot scrape the estimator\'s /metrics, or no estimator target exists at all: no windows are computed and nothing reaches InfluxDB or Prometheus.',
  }),
  collectorDown: define({
    alertname: 'WarpwatchCollectorDown',
    scope: 'service',
    severity: 'critical',
    component: 'pipeline',
    forSeconds: 300,
    params: {},
    runbook: 'warpwatchcollectordown',
    summary: (l) => `${l.service} ${l.instance} is down or not scraped`,
    description: () => 'Prometheus cannot scrape the collector\'s /metrics: GPU jobs on that node cannot hand frames over (their probes drop or block).',
  }),
  consumerLagGrowing: define({
    alertname: 'WarpwatchConsumerLagGrowing',
    scope: 'service',
    severity: 'warning',
    component: 'pipeline',
    forSeconds: 600,
    params: { minLag: 10000, windowSeconds: 600 },
    runbook: 'warpwatchconsumerlaggrowing',
    summary: (l) => `${l.service} ${l.instance} falls behind the frames topic`,
    description: (p) => `Consumer lag is above ${p.minLag} messages and still growing over ${minutes(p.windowSeconds)}: results arrive later and later.`,
  }),
  framesDropped: define({
    alertname: 'WarpwatchFramesDropped',
    scope: 'service',
    severity: 'warning',
    component: 'pipeline',
    forSeconds: 0,
    params: { windowSeconds: 600 },
    runbook: 'warpwatchframesdropped',
    summary: (l) => `${l.service} ${l.instance} dropped records`,
    description: (p) => `The instance counted dropped records in the last ${minutes(p.windowSeconds)} (reason label): data is missing from the results.`,
  }),
  framesRejected: define({
    alertname: 'WarpwatchFramesRejected',
    scope: 'service',
    severity: 'warning',
    component: 'pipeline',
    forSeconds: 0,
    params: { ratio: 0.01, windowSeconds: 600 },
    runbook: 'warpwatchframesrejected',
    summary: (l) => `${l.service} ${l.instance} rejects frames as invalid`,
    description: (p) => `More than ${p.ratio * 100} % of the frames of the last ${minutes(p.windowSeconds)} were refused as invalid (collector: sent to the DLQ; estimator: rejected or dated in the future).`,
  }),
  influxWritesFailing: define({
    alertname: 'WarpwatchInfluxWritesFailing',
    scope: 'service',
    severity: 'critical',
    component: 'pipeline',
    forSeconds: 300,
    params: { windowSeconds: 600 },
    runbook: 'warpwatchinfluxwritesfailing',
    summary: (l) => `${l.service} ${l.instance} cannot write to InfluxDB`,
    description: (p) => `Writes to InfluxDB failed or lines were dropped in the last ${minutes(p.windowSeconds)}: windows wait in the bounded buffer and are lost once it is full; the InfluxQL dashboards go blank.`,
  }),
  streamCapEvicting: define({
    alertname: 'WarpwatchStreamCapEvicting',
    scope: 'service',
    severity: 'warning',
    component: 'pipeline',
    forSeconds: 0,
    params: { windowSeconds: 900 },
    runbook: 'warpwatchstreamcapevicting',
    summary: (l) => `${l.service} ${l.instance} evicts streams to stay under its cap`,
    description: (p) => `Streams were evicted by a cap in the last ${minutes(p.windowSeconds)} (cap label: export = WARPWATCH_METRICS_MAX_STREAMS, engine = WARPWATCH_MAX_STREAMS): their series vanish or their state restarts.`,
  }),
});

/** Key of one alert in {@link ALERT_DEFINITIONS}. */
export type AlertId = keyof typeof ALERT_DEFINITIONS;

/** Parameters of one alert, with `forSeconds`, as overrides take them. */
export type AlertTuning<K extends AlertId> = Partial<(typeof ALERT_DEFINITIONS)[K]['params'] & { forSeconds: number }>;

/** Per-alert overrides of thresholds, windows and `for` (tests shorten windows with them). */
export type AlertOverrides = { readonly [K in AlertId]?: AlertTuning<K> };

/** The definition of `id` with `overrides` applied. @example tunedDefinition('drift', { drift: { forSeconds: 0 } }).forSeconds; // 0 */
export function tunedDefinition<K extends AlertId>(id: K, overrides: AlertOverrides = {}): (typeof ALERT_DEFINITIONS)[K] {
  const base = ALERT_DEFINITIONS[id];
  const tuning = (overrides[id] ?? {}) as AlertTuning<K> & { forSeconds?: number };
  const { forSeconds, ...params } = tuning;
  return { ...base, forSeconds: forSeconds ?? base.forSeconds, params: { ...base.params, ...params } } as (typeof ALERT_DEFINITIONS)[K];
}

/** Prometheus label of a stream attribute (OpenTelemetry dots become underscores). */
const promLabel = (attribute: string): string => attribute.replaceAll('.', '_');

/**
 * The stream identity labels every per-stream Prometheus alert carries (job, kernel, n, host,
 * pod, device UUID, with the stream name, device model, source and namespace), as the estimator
 * exports them (contracts/result-metric-names.ts, docs/exporting.md).
 */
export const PROMETHEUS_STREAM_LABELS: readonly string[] = Object.freeze([
  promLabel(STREAM_ATTRIBUTES.stream),
  promLabel(STREAM_ATTRIBUTES.job),
  promLabel(STREAM_ATTRIBUTES.kernel),
  promLabel(STREAM_ATTRIBUTES.groupSize),
  promLabel(STREAM_ATTRIBUTES.host),
  promLabel(labelAttributeName(LABEL_TAGS.pod)),
  promLabel(labelAttributeName(LABEL_TAGS.namespace)),
  promLabel(STREAM_ATTRIBUTES.device),
  promLabel(STREAM_ATTRIBUTES.deviceUuid),
  promLabel(STREAM_ATTRIBUTES.source),
]);

/** Repository-relative runbook link of an alert (the `runbook_url` annotation). */
export function runbookUrl(definition: AlertDefinition, base = 'docs/alerts.md'): string {
  return `${base}#${definition.runbook}`;
}
