// Public exports of dashboards/: what other folders use (the tests of test/ and cli/ that check the
// generated files against real servers): the generated file set, Grafana's macro substitution,
// the alert thresholds and the Prometheus rules and queries. The dashboards and alert rules as code,
// the InfluxQL builder and the validation stay inside dashboards/ (npm run dashboards runs
// dashboards/generate.ts, which imports its modules directly).
export { ALL_VALUE_MARKER, interpolateInfluxQl } from './grafana-macros.ts';
export type { GrafanaQueryContext, TemplateVariableState } from './grafana-macros.ts';
export { INFLUXQL_DATASOURCE_UID } from './datasource.ts';
export type { CatalogedQuery } from './influx-target.ts';
export { PIPELINE_HEALTH_UID } from './pipeline-health.ts';
export { DRIFT_RELATIVE_ERROR_THRESHOLD } from './alert-rules.ts';
export { GENERATED_PATHS, GRAFANA_DASHBOARDS_MOUNT, generateArtifacts } from './generated-artifacts.ts';
export { ALERT_DEFINITIONS } from './alert-definitions.ts';
export { PROMETHEUS_JOBS, buildPrometheusRules } from './prometheus-rules.ts';
export {
  PROMETHEUS_QUERIES,
  PROMETHEUS_STREAM_VARIABLES,
  prometheusVariableQuery,
} from './imbalance-overview-prometheus.ts';
