/**
 * What every warpwatch panel sets the same way: id, title, description, the provisioned
 * InfluxQL datasource and one raw-mode query target recorded in the {@link QueryCatalog}
 * under the panel's title (so a title is written once and cannot drift from its catalog
 * entry). Visualisation-specific settings are chained on the returned builder.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { dashboardDatasourceRef } from './datasource.ts';
import { influxQlTarget, type InfluxQlTargetOptions, type QueryCatalog } from './influx-target.ts';
import type { InfluxQlStatement } from './influxql-query.ts';
import { allSeriesTooltip, visibleLegend } from './panel-defaults.ts';

/** The panel-builder methods {@link influxPanel} calls; every foundation-SDK panel builder has them. */
export interface InfluxPanelBuilder<Self> {
  id(id: number): Self;
  title(title: string): Self;
  description(description: string): Self;
  datasource(datasource: DataSourceRef): Self;
  interval(interval: string): Self;
  withTarget(target: cog.Builder<cog.Dataquery>): Self;
}

/** Where the panels of one document record their queries. */
export interface PanelQueryContext {
  readonly catalog: QueryCatalog;
  /** Dashboard uid the queries are cataloged under. */
  readonly document: string;
}

/** One panel's common settings and its single InfluxQL query. */
export interface InfluxPanelSpec {
  /** Panel id (alert rules link to it through `__panelId__`). */
  readonly id: number;
  /** Panel title, also the catalog owner of the query. */
  readonly title: string;
  readonly description: string;
  /**
   * Smallest `$__interval` Grafana may pick for `GROUP BY time(...)`, e.g. `'10s'`; omit for
   * panels without time buckets.
   */
  readonly minInterval?: string;
  readonly statement: InfluxQlStatement;
  readonly target: InfluxQlTargetOptions;
}

/**
 * Sets id, title, description, datasource and (when given) the minimum interval on `builder`,
 * then adds the spec's query as its target. The calls are made in this order, which fixes the
 * key order of the generated JSON.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is invalid.
 * @example
 * influxPanel(new TablePanelBuilder(), { catalog, document: 'warpwatch-imbalance' }, {
 *   id: 9, title: 'Best fit', description: '...', statement, target: { refId: 'A', resultFormat: 'table' },
 * }).span(12);
 */
export function influxPanel<B extends InfluxPanelBuilder<B>>(builder: B, context: PanelQueryContext, spec: InfluxPanelSpec): B {
  let panel = builder.id(spec.id).title(spec.title).description(spec.description).datasource(dashboardDatasourceRef());
  if (spec.minInterval !== undefined) panel = panel.interval(spec.minInterval);
  return panel.withTarget(influxQlTarget(context.catalog, context.document, spec.title, spec.statement, spec.target));
}

/**
 * A time-series panel ({@link influxPanel}) with the visible legend and the all-series tooltip.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is invalid.
 * @example
 * influxTimeseriesPanel(context, { id: 1, title: 'Loss', description: '...', minInterval: '10s', statement, target: { refId: 'A' } }).unit('none');
 */
export function influxTimeseriesPanel(context: PanelQueryContext, spec: InfluxPanelSpec): TimeseriesPanelBuilder {
  return influxPanel(new TimeseriesPanelBuilder(), context, spec).legend(visibleLegend()).tooltip(allSeriesTooltip());
}
