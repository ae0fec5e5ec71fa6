/**
 * Names of the estimator's results as OpenTelemetry metrics and their Prometheus spellings:
 * the metric names, the Prometheus names PromQL queries use, and the stream identity's
 * attribute names. Written by estimator/adapters/result-metrics.ts, queried by dashboards/ (the
 * Prometheus overview) and documented in docs/exporting.md. Pure data.
 */

/** OTel metric names of the per-stream results (see {@link RESULT_METRIC_PROMETHEUS_NAMES}). */
export const RESULT_METRICS = Object.freeze({
  lossPredicted: 'warpwatch.loss.predicted',
  lossCounts: 'warpwatch.loss.counts',
  lossMeasured: 'warpwatch.loss.measured',
  lossBlock: 'warpwatch.loss.block',
  lossLocality: 'warpwatch.loss.locality',
  laneIdle: 'warpwatch.lane.idle.ratio',
  windows: 'warpwatch.windows',
  groups: 'warpwatch.groups',
  alerts: 'warpwatch.alerts',
  exportedStreams: 'warpwatch.export.streams',
  evictedStreams: 'warpwatch.export.streams.evicted',
});

/** The Prometheus names of {@link RESULT_METRICS} (what PromQL queries use). */
export const RESULT_METRIC_PROMETHEUS_NAMES = Object.freeze({
  lossPredicted: 'warpwatch_loss_predicted',
  lossCounts: 'warpwatch_loss_counts',
  lossMeasured: 'warpwatch_loss_measured',
  lossBlock: 'warpwatch_loss_block',
  lossLocality: 'warpwatch_loss_locality',
  laneIdle: 'warpwatch_lane_idle_ratio',
  windows: 'warpwatch_windows_total',
  groups: 'warpwatch_groups_total',
  alerts: 'warpwatch_alerts_total',
  exportedStreams: 'warpwatch_export_streams',
  evictedStreams: 'warpwatch_export_streams_evicted_total',
});

/** OTel attribute names of the stream identity (Prometheus: dots become underscores). */
export const STREAM_ATTRIBUTES = Object.freeze({
  stream: 'warpwatch.stream',
  job: 'warpwatch.job',
  kernel: 'warpwatch.kernel',
  device: 'warpwatch.device',
  deviceUuid: 'warpwatch.device_uuid',
  host: 'warpwatch.host',
  groupSize: 'warpwatch.group_size',
  source: 'warpwatch.source',
  /** `predicted` or `measured` on warpwatch.lane.idle.ratio. */
  basis: 'warpwatch.basis',
  /** Alert kind on warpwatch.alerts. */
  kind: 'warpwatch.alert.kind',
  /** `cap` or `idle` on warpwatch.export.streams.evicted. */
  reason: 'reason',
});

/**
 * OTel attribute names of the collector labels a stream carries (`ww-label-<name>` headers):
 * pod, namespace and node take the OpenTelemetry Kubernetes semantic-convention names
 * (Prometheus: `k8s_pod_name`, `k8s_namespace_name`, `k8s_node_name`); any other label name
 * becomes `warpwatch.label.<name>` (Prometheus `warpwatch_label_<name>`).
 */
export const LABEL_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({
  pod: 'k8s.pod.name',
  namespace: 'k8s.namespace.name',
  node: 'k8s.node.name',
});

/**
 * The OTel attribute name of a collector label.
 *
 * @param label a label name as the collector sends it (`[a-z0-9_]`, see contracts/stream-identity.ts).
 * @returns the semantic-convention name for pod/namespace/node, else `warpwatch.label.<label>`.
 * @example labelAttributeName('pod'); // 'k8s.pod.name'
 * @example labelAttributeName('team'); // 'warpwatch.label.team'
 */
export function labelAttributeName(label: string): string {
  return LABEL_ATTRIBUTES[label] ?? `warpwatch.label.${label}`;
}
