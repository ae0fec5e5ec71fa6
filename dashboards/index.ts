// Public exports of dashboards/: the typed InfluxQL builder, Grafana's macro substitution,
// the dashboards and alert rules as code, their validation and the generated file set.
export { DASHBOARDS_ERROR_CODES, DashboardsError, DashboardSchemaError } from './errors.ts';
export type { DashboardsErrorCode } from './errors.ts';
export {
  MEASUREMENT_TAGS,
  SelectQueryBuilder,
  quoteIdentifier,
  quoteString,
  renderInfluxQl,
  selectFrom,
  showTagValues,
} from './influxql-query.ts';
export type {
  Aggregation,
  FieldName,
  FieldOptions,
  FieldSelection,
  FillMode,
  InfluxQlSelect,
  InfluxQlShowTagValues,
  InfluxQlStatement,
  SeriesKey,
  TagCondition,
  TagName,
  TagOf,
} from './influxql-query.ts';
export {
  ALL_VALUE_MARKER,
  escapeGrafanaRegex,
  formatGrafanaInterval,
  interpolateInfluxQl,
  replaceInfluxMacros,
  replaceTemplateVariables,
} from './grafana-macros.ts';
export type { GrafanaQueryContext, TemplateVariableState } from './grafana-macros.ts';
export {
  EXPRESSION_DATASOURCE_UID,
  INFLUXDB_DATASOURCE_TYPE,
  INFLUXQL_DATASOURCE_UID,
  builtInAnnotation,
  influxQlDatasourceRef,
  DASHBOARD_DATASOURCE_UID,
  DATASOURCE_VARIABLE,
  INFLUXQL_INPUT,
  PROMETHEUS_DATASOURCE_TYPE,
  PROMETHEUS_INPUT,
  dashboardDatasourceRef,
  datasourceVariable,
  withInputs,
} from './datasource.ts';
export { createQueryCatalog, influxQlAnnotationTarget, influxQlTarget } from './influx-target.ts';
export type {
  CatalogedQuery,
  InfluxQlAnnotationOptions,
  InfluxQlTarget,
  InfluxQlTargetOptions,
  InfluxResultFormat,
  QueryCatalog,
  QueryPlacement,
} from './influx-target.ts';
export { allSeriesTooltip, visibleLegend } from './panel-defaults.ts';
export { warpwatchDashboard } from './dashboard-defaults.ts';
export type { DashboardIdentity } from './dashboard-defaults.ts';
export { influxPanel, influxTimeseriesPanel } from './influx-panel.ts';
export type { InfluxPanelBuilder, InfluxPanelSpec, PanelQueryContext } from './influx-panel.ts';
export { ALL_REGEX, multiSelectVariable } from './multi-select-variable.ts';
export type { MultiSelectVariableSpec } from './multi-select-variable.ts';
export { STREAM_VARIABLES, filterByStreamVariables, streamVariableBuilders } from './stream-variables.ts';
export type { StreamSeriesKey, StreamVariable } from './stream-variables.ts';
export { ALERT_ANNOTATION_NAME, IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS, buildImbalanceOverview } from './imbalance-overview.ts';
export { PIPELINE_HEALTH_UID, PIPELINE_PANEL_IDS, buildPipelineHealth } from './pipeline-health.ts';
export {
  ALERT_EVALUATION_INTERVAL,
  ALERT_RULE_FOLDER,
  ALERT_RULE_GROUP,
  DRIFT_RELATIVE_ERROR_THRESHOLD,
  GRAFANA_SUMMARY_LABELS,
  STALE_AFTER_SECONDS,
  buildAlertRules,
} from './alert-rules.ts';
export type { AlertRuleProvisioning, ProvisionedRule, ProvisionedRuleQuery } from './alert-rules.ts';
export { validateAlertRuleDocument, validateDashboardDocument } from './document-validation.ts';
export { findUnknownSeriesNames } from './series-references.ts';
export { GENERATED_PATHS, GRAFANA_DASHBOARDS_MOUNT, generateArtifacts } from './generated-artifacts.ts';
export { ALERT_DEFINITIONS, PROMETHEUS_STREAM_LABELS, runbookUrl, tunedDefinition } from './alert-definitions.ts';
export type { AlertDefinition, AlertId, AlertOverrides, AlertScope, AlertTuning, SummaryLabels } from './alert-definitions.ts';
export { PROMETHEUS_ALERT_GROUPS, PROMETHEUS_JOBS, PROMETHEUS_SUMMARY_LABELS, RECORDING_RULES, buildPrometheusRules, prometheusRuleManifest, promDuration } from './prometheus-rules.ts';
export type { PrometheusRule, PrometheusRuleFile, PrometheusRuleOptions } from './prometheus-rules.ts';
export type { GeneratedArtifact, GeneratedSet } from './generated-artifacts.ts';
export {
  IMBALANCE_OVERVIEW_PROMETHEUS_UID,
  PROMETHEUS_QUERIES,
  PROMETHEUS_STREAM_VARIABLES,
  buildImbalanceOverviewPrometheus,
  prometheusVariableQuery,
} from './imbalance-overview-prometheus.ts';
export type { PrometheusQuery } from './imbalance-overview-prometheus.ts';
