/**
 * Prometheus alerting and recording rules for warpwatch, generated from the one definition of
 * each alert (alert-definitions.ts) and the metric names of contracts/ (the per-stream results
 * of docs/exporting.md and the services' self-telemetry). Two groups: `warpwatch-streams`
 * (recording rules that fold each stream's series over estimator instances, then the per-stream
 * alerts) and `warpwatch-pipeline` (the services' own health). Shipped as a rules file for a
 * plain Prometheus (deploy/prometheus/rules) and as a PrometheusRule for the Prometheus Operator
 * (deploy/k8s/prometheus-operator); runbooks in docs/alerts.md.
 */
import { ESTIMATOR_REJECTED_OUTCOMES, RESULT_METRIC_PROMETHEUS_NAMES as M, SERVICE_METRICS as S } from '../contracts/index.ts';
import { ALERT_DEFINITIONS, PROMETHEUS_STREAM_LABELS, runbookUrl, tunedDefinition, type AlertDefinition, type AlertId, type AlertOverrides, type SummaryLabels } from './alert-definitions.ts';

/** Scrape job names the service-health alerts select on (`up{job=...}`); compose, k8s PodMonitors and the tests use these. */
export const PROMETHEUS_JOBS = Object.freeze({ estimator: 'warpwatch-estimator', collector: 'warpwatch-collector' });

/** Names of the recording rules (level:metric:operation, the Prometheus naming convention). */
export const RECORDING_RULES = Object.freeze({
  lossMeasured: 'warpwatch_stream:loss_measured:max',
  lossReference: 'warpwatch_stream:loss_reference:max',
  driftRatio: 'warpwatch_stream:loss_drift:ratio',
});

/** One rule of a Prometheus rule group (recording or alerting). */
export interface PrometheusRule {
  record?: string;
  alert?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A Prometheus rules file (`groups: [...]`), the body of a PrometheusRule's spec too. */
export interface PrometheusRuleFile {
  groups: { name: string; interval?: string; rules: PrometheusRule[] }[];
}

/** What {@link buildPrometheusRules} may change; the committed files use the defaults. */
export interface PrometheusRuleOptions {
  /** Per-alert thresholds, windows and `for` (the integration test shortens them). */
  readonly overrides?: AlertOverrides;
  /** Group evaluation interval; absent: the server's `evaluation_interval`. */
  readonly interval?: string;
  /** Scrape job names of the services (default {@link PROMETHEUS_JOBS}). */
  readonly jobs?: { readonly estimator: string; readonly collector: string };
}

/**
 * A duration in seconds in Prometheus' notation.
 *
 * @example promDuration(5400); // '1h30m'
 * @example promDuration(0); // '0s'
 */
export function promDuration(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0) throw new RangeError(`duration must be whole seconds ≥ 0, got ${seconds}`);
  if (seconds === 0) return '0s';
  let rest = seconds;
  let text = '';
  for (const [unit, size] of [['h', 3600], ['m', 60], ['s', 1]] as const) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}

/** Label placeholders of the Prometheus rules (the Grafana rules use the InfluxDB tags). */
export const PROMETHEUS_SUMMARY_LABELS: SummaryLabels = Object.freeze({
  stream: '{{ $labels.warpwatch_stream }}',
  service: '{{ $labels.job }}',
  instance: '{{ $labels.instance }}',
});

const byStream = `by (${PROMETHEUS_STREAM_LABELS.join(', ')})`;
const byInstance = 'by (job, instance)';

function alertRule(definition: AlertDefinition, expr: string): PrometheusRule {
  return {
    alert: definition.alertname,
    expr,
    for: promDuration(definition.forSeconds),
    labels: { severity: definition.severity, component: definition.component },
    annotations: {
      summary: definition.summary(PROMETHEUS_SUMMARY_LABELS),
      description: definition.description(definition.params),
      runbook_url: runbookUrl(definition),
    },
  };
}

type Exprs = { readonly [K in AlertId]: (d: (typeof ALERT_DEFINITIONS)[K], jobs: { estimator: string; collector: string }) => string };

/** The PromQL of each alert from its (tuned) definition. */
const EXPRESSIONS: Exprs = {
  risingImbalance: (d) => {
    const w = promDuration(d.params.windowSeconds);
    return (
      `(avg_over_time(${RECORDING_RULES.lossMeasured}[${w}]) > ${d.params.factor} * avg_over_time(${RECORDING_RULES.lossMeasured}[${promDuration(d.params.baselineSeconds)}] offset ${w}))\n` +
      `and sum ${byStream} (increase(${M.groups}[${w}])) >= ${d.params.minGroups}`
    );
  },
  drift: (d) => {
    const w = promDuration(d.params.windowSeconds);
    return `avg_over_time(${RECORDING_RULES.driftRatio}[${w}]) > ${d.params.relativeError}\nand sum ${byStream} (increase(${M.groups}[${w}])) >= ${d.params.minGroups}`;
  },
  streamStale: (d) =>
    `sum ${byStream} (increase(${M.windows}[${promDuration(d.params.lookbackSeconds)}])) > 0\nunless sum ${byStream} (increase(${M.windows}[${promDuration(d.params.staleSeconds)}])) > 0`,
  pipelineStalled: (d) => {
    const w = promDuration(d.params.windowSeconds);
    const recorded = `${S.estimatorFrames.prometheus}{outcome="recorded"}`;
    return (
      `(sum ${byInstance} (increase(${S.collectorFramesIn.prometheus}[${w}])) > 0 unless sum ${byInstance} (increase(${S.collectorFramesOut.prometheus}[${w}])) > 0)\n` +
      `or (sum ${byInstance} (increase(${S.estimatorFrames.prometheus}[${w}])) > 0 unless sum ${byInstance} (increase(${recorded}[${w}])) > 0)`
    );
  },
  // A target that does not answer, or no target at all (absent keeps the job label of its matcher).
  estimatorDown: (_d, jobs) => `up{job="${jobs.estimator}"} == 0\nor absent(up{job="${jobs.estimator}"})`,
  collectorDown: (_d, jobs) => `up{job="${jobs.collector}"} == 0\nor absent(up{job="${jobs.collector}"})`,
  consumerLagGrowing: (d) =>
    `max ${byInstance} (${S.estimatorConsumerLag.prometheus}) > ${d.params.minLag}\nand max ${byInstance} (deriv(${S.estimatorConsumerLag.prometheus}[${promDuration(d.params.windowSeconds)}])) > 0`,
  framesDropped: (d) => {
    const w = promDuration(d.params.windowSeconds);
    return `sum by (job, instance, reason) (increase(${S.collectorFramesDropped.prometheus}[${w}])) > 0\nor sum by (job, instance, reason) (increase(${S.estimatorRecordsDropped.prometheus}[${w}])) > 0`;
  },
  framesRejected: (d) => {
    const w = promDuration(d.params.windowSeconds);
    const rejected = `sum ${byInstance} (increase(${S.collectorFramesRejected.prometheus}[${w}]))`;
    const valid = `sum ${byInstance} (increase(${S.collectorFramesIn.prometheus}[${w}]))`;
    const refused = `sum ${byInstance} (increase(${S.estimatorFrames.prometheus}{outcome=~"${ESTIMATOR_REJECTED_OUTCOMES.join('|')}"}[${w}]))`;
    const consumed = `sum ${byInstance} (increase(${S.estimatorFrames.prometheus}[${w}]))`;
    // A collector that received only invalid frames has no frames_in series: count it as 0.
    return `${rejected} / (${rejected} + (${valid} or ${rejected} * 0)) > ${d.params.ratio}\nor ${refused} / ${consumed} > ${d.params.ratio}`;
  },
  influxWritesFailing: (d) => {
    const w = promDuration(d.params.windowSeconds);
    return `sum ${byInstance} (increase(${S.estimatorSinkErrors.prometheus}{sink="influx"}[${w}])) > 0\nor sum ${byInstance} (increase(${S.estimatorInfluxDroppedLines.prometheus}[${w}])) > 0`;
  },
  streamCapEvicting: (d) => {
    const w = promDuration(d.params.windowSeconds);
    return (
      `label_replace(sum ${byInstance} (increase(${M.evictedStreams}{reason="cap"}[${w}])) > 0, "cap", "export", "", "")\n` +
      `or label_replace(sum ${byInstance} (increase(${S.estimatorStreamsEvicted.prometheus}[${w}])) > 0, "cap", "engine", "", "")`
    );
  },
};

/** The alerts of each group, in order. */
export const PROMETHEUS_ALERT_GROUPS: Readonly<Record<'warpwatch-streams' | 'warpwatch-pipeline', readonly AlertId[]>> = Object.freeze({
  'warpwatch-streams': ['risingImbalance', 'drift', 'streamStale'],
  'warpwatch-pipeline': ['pipelineStalled', 'estimatorDown', 'collectorDown', 'consumerLagGrowing', 'framesDropped', 'framesRejected', 'influxWritesFailing', 'streamCapEvicting'],
});

/**
 * Builds the rules file.
 *
 * @throws RangeError when an override makes a duration fractional or negative.
 * @example stringify(buildPrometheusRules({ interval: '1s', overrides: { risingImbalance: { windowSeconds: 10 } } }));
 */
export function buildPrometheusRules(options: PrometheusRuleOptions = {}): PrometheusRuleFile {
  const jobs = options.jobs ?? PROMETHEUS_JOBS;
  const alert = <K extends AlertId>(id: K): PrometheusRule => {
    const definition = tunedDefinition(id, options.overrides);
    return alertRule(definition as AlertDefinition, EXPRESSIONS[id](definition, jobs));
  };
  const recording: PrometheusRule[] = [
    { record: RECORDING_RULES.lossMeasured, expr: `max ${byStream} (${M.lossMeasured})` },
    // The locality-aware prediction where the stream has sampled groups, else the independent-lanes one (docs/model.md §11).
    { record: RECORDING_RULES.lossReference, expr: `max ${byStream} (${M.lossLocality})\nor max ${byStream} (${M.lossPredicted})` },
    {
      record: RECORDING_RULES.driftRatio,
      expr: `abs(${RECORDING_RULES.lossMeasured} - ${RECORDING_RULES.lossReference}) / ${RECORDING_RULES.lossReference}`,
    },
  ];
  const interval = options.interval === undefined ? {} : { interval: options.interval };
  return {
    groups: [
      { name: 'warpwatch-streams', ...interval, rules: [...recording, ...PROMETHEUS_ALERT_GROUPS['warpwatch-streams'].map(alert)] },
      { name: 'warpwatch-pipeline', ...interval, rules: PROMETHEUS_ALERT_GROUPS['warpwatch-pipeline'].map(alert) },
    ],
  };
}

/**
 * The rules as a Prometheus Operator `PrometheusRule`. The labels `prometheus: k8s` and
 * `role: alert-rules` match kube-prometheus' default ruleSelector; change them to your
 * Prometheus' `ruleSelector`.
 *
 * @example stringify(prometheusRuleManifest(buildPrometheusRules()));
 */
export function prometheusRuleManifest(rules: PrometheusRuleFile): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: {
      name: 'warpwatch',
      labels: { 'app.kubernetes.io/part-of': 'warpwatch', prometheus: 'k8s', role: 'alert-rules' },
    },
    spec: rules,
  };
}
