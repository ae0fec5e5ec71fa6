/**
 * The Grafana datasource every warpwatch panel and alert rule queries: InfluxDB in InfluxQL
 * mode, provisioned by deploy/grafana/datasources (helper "servers") under this uid.
 */
import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { AnnotationQueryBuilder, type AnnotationQuery } from '@grafana/grafana-foundation-sdk/dashboard';

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
