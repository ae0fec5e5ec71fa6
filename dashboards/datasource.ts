/**
 * The Grafana datasource every warpwatch panel and alert rule queries: InfluxDB in InfluxQL
 * mode, provisioned by deploy/grafana/datasources (helper "servers") under this uid.
 */
import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { AnnotationQueryBuilder, DatasourceVariableBuilder, type AnnotationQuery } from '@grafana/grafana-foundation-sdk/dashboard';

/** uid of the provisioned InfluxQL datasource (agreed in /tmp/team/status-dashboards.md). */
export const INFLUXQL_DATASOURCE_UID = 'warpwatch-influxql';

/** Grafana plugin id of the InfluxDB datasource. */
export const INFLUXDB_DATASOURCE_TYPE = 'influxdb';

/** uid Grafana's alerting uses for server-side expressions (reduce, math, threshold). */
export const EXPRESSION_DATASOURCE_UID = '__expr__';

/**
 * Reference to the InfluxQL datasource, as panels and targets carry it.
 *
 * @example
 * new TimeseriesPanelBuilder().datasource(influxQlDatasourceRef());
 */
export function influxQlDatasourceRef(): DataSourceRef {
  return { type: INFLUXDB_DATASOURCE_TYPE, uid: INFLUXQL_DATASOURCE_UID };
}

/** Name of the datasource template variable every warpwatch dashboard has (`${datasource}`). */
export const DATASOURCE_VARIABLE = 'datasource';

/** uid every panel, target and variable of a dashboard carries: the datasource variable. */
export const DASHBOARD_DATASOURCE_UID = '${' + DATASOURCE_VARIABLE + '}';

/** Grafana plugin id of the Prometheus datasource. */
export const PROMETHEUS_DATASOURCE_TYPE = 'prometheus';

/** One entry of a dashboard's `__inputs` (what Grafana's "Import dashboard" asks for). */
export interface DashboardInput {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly type: 'datasource';
  readonly pluginId: string;
  readonly pluginName: string;
}

/** The import input of the InfluxQL dashboards (Grafana replaces `${DS_WARPWATCH_INFLUXQL}`). */
export const INFLUXQL_INPUT: DashboardInput = {
  name: 'DS_WARPWATCH_INFLUXQL',
  label: 'warpwatch InfluxQL',
  description: 'InfluxDB datasource (InfluxQL) holding the warpwatch database',
  type: 'datasource',
  pluginId: INFLUXDB_DATASOURCE_TYPE,
  pluginName: 'InfluxDB',
};

/** The import input of the Prometheus dashboard. */
export const PROMETHEUS_INPUT: DashboardInput = {
  name: 'DS_WARPWATCH_PROMETHEUS',
  label: 'warpwatch Prometheus',
  description: 'Prometheus datasource holding the estimator metrics (warpwatch_*)',
  type: 'datasource',
  pluginId: PROMETHEUS_DATASOURCE_TYPE,
  pluginName: 'Prometheus',
};

/**
 * Reference to the dashboard's datasource variable, as panels, targets, query variables and
 * annotations of a dashboard carry it: imports and provisioning choose the datasource, no uid
 * is hard-coded.
 *
 * @example new TimeseriesPanelBuilder().datasource(dashboardDatasourceRef(INFLUXDB_DATASOURCE_TYPE));
 */
export function dashboardDatasourceRef(type: string = INFLUXDB_DATASOURCE_TYPE): DataSourceRef {
  return { type, uid: DASHBOARD_DATASOURCE_UID };
}

/**
 * The datasource template variable (`$datasource`) of a dashboard: lists the datasources of
 * the input's plugin type; its current value is the import placeholder `${DS_…}`, which
 * Grafana's import replaces with the chosen datasource. A provisioned copy (no import) has no
 * such datasource, so Grafana selects the default datasource of that type.
 *
 * @example dashboardBuilder.withVariable(datasourceVariable(INFLUXQL_INPUT));
 */
export function datasourceVariable(input: DashboardInput): DatasourceVariableBuilder {
  const placeholder = '${' + input.name + '}';
  return new DatasourceVariableBuilder(DATASOURCE_VARIABLE)
    .label('Datasource')
    .description(input.description)
    .type(input.pluginId)
    .current({ selected: true, text: placeholder, value: placeholder });
}

/**
 * A dashboard document with `__inputs` first (the form Grafana's "Export for sharing
 * externally" writes), ready for "Import dashboard".
 *
 * @example toJson(withInputs(dashboard, [INFLUXQL_INPUT]));
 */
export function withInputs<T extends object>(dashboard: T, inputs: readonly DashboardInput[]): { __inputs: DashboardInput[] } & T {
  return { __inputs: [...inputs], ...dashboard };
}

/**
 * Grafana's built-in "Annotations & Alerts" annotation: shows annotations saved in Grafana
 * and the state changes of alert rules linked to a panel (`__panelId__`).
 *
 * @example
 * dashboardBuilder.annotation(builtInAnnotation());
 */
export function builtInAnnotation(): cog.Builder<AnnotationQuery> {
  return new AnnotationQueryBuilder()
    .name('Annotations & Alerts')
    .builtIn(1)
    .type('dashboard')
    .datasource({ type: 'grafana', uid: '-- Grafana --' })
    .enable(true)
    .hide(true)
    .iconColor('rgba(0, 211, 255, 1)');
}
