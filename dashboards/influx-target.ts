/**
 * A Grafana InfluxDB (InfluxQL) query target for the foundation SDK, which has no InfluxDB
 * package: `{ refId, datasource, query, rawQuery: true, resultFormat, alias }`, the shape
 * Grafana's InfluxDB datasource stores for a raw-mode query. Every target built here is also
 * recorded in a {@link QueryCatalog}, so tests can run each panel's query against a real
 * InfluxDB and know which columns and tags it must return.
 */
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type { DataSourceRef } from '@grafana/grafana-foundation-sdk/common';
import { dashboardDatasourceRef } from './datasource.ts';
import { renderInfluxQl, type InfluxQlStatement } from './influxql-query.ts';

/** How Grafana shapes the InfluxDB result: one frame per series, or one table. */
export type InfluxResultFormat = 'time_series' | 'table';

/** The stored form of an InfluxQL raw-mode target (Grafana's InfluxQuery). */
export interface InfluxQlTarget extends cog.Dataquery {
  refId: string;
  datasource: DataSourceRef;
  query: string;
  rawQuery: true;
  resultFormat: InfluxResultFormat;
  alias?: string;
  hide?: boolean;
}

/** Where in the generated documents a query lives. */
export type QueryPlacement = 'panel' | 'annotation' | 'variable' | 'alert-rule';

/** One query of a dashboard or rule file, with what it must return. */
export interface CatalogedQuery {
  /** Dashboard uid, or the alert rule group name. */
  readonly document: string;
  readonly placement: QueryPlacement;
  /** Panel title, annotation name, variable name or rule title. */
  readonly owner: string;
  readonly refId: string;
  /** Rendered InfluxQL with Grafana macros in place. */
  readonly text: string;
  readonly statement: InfluxQlStatement;
}

/**
 * Collects every query of the documents being built.
 *
 * @example
 * const catalog = createQueryCatalog();
 * catalog.add({ document: 'x', placement: 'panel', owner: 'Loss', refId: 'A', statement });
 */
export interface QueryCatalog {
  /** Records a query; returns its rendered text. */
  add(entry: Omit<CatalogedQuery, 'text'>): string;
  /** Everything recorded so far, in order. */
  readonly entries: readonly CatalogedQuery[];
}

/** Creates an empty {@link QueryCatalog}. */
export function createQueryCatalog(): QueryCatalog {
  const entries: CatalogedQuery[] = [];
  return {
    add(entry) {
      const text = renderInfluxQl(entry.statement);
      entries.push({ ...entry, text });
      return text;
    },
    entries,
  };
}

/** Options of {@link influxQlTarget}. */
export interface InfluxQlTargetOptions {
  readonly refId: string;
  readonly resultFormat?: InfluxResultFormat;
  /** Series name pattern, e.g. `$tag_stream $col`. */
  readonly alias?: string;
}

/**
 * A builder (for `PanelBuilder.withTarget`) of one InfluxQL raw-mode target; the statement
 * is rendered once and recorded in the catalog under the panel's title.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is invalid.
 * @example
 * panel.withTarget(influxQlTarget(catalog, 'overview', 'Loss', statement, { refId: 'A', alias: '$tag_stream $col' }));
 */
export function influxQlTarget(
  catalog: QueryCatalog,
  document: string,
  panelTitle: string,
  statement: InfluxQlStatement,
  options: InfluxQlTargetOptions,
): cog.Builder<cog.Dataquery> {
  const query = catalog.add({ document, placement: 'panel', owner: panelTitle, refId: options.refId, statement });
  const target: InfluxQlTarget = {
    refId: options.refId,
    datasource: dashboardDatasourceRef(),
    query,
    rawQuery: true,
    resultFormat: options.resultFormat ?? 'time_series',
    ...(options.alias === undefined ? {} : { alias: options.alias }),
    _implementsDataqueryVariant() {},
  };
  return { build: () => target };
}

/** Options of {@link influxQlAnnotationTarget}: which result columns become the event parts. */
export interface InfluxQlAnnotationOptions {
  /** Column shown as the annotation text. */
  readonly textColumn: string;
  /** Columns whose values become annotation tags. */
  readonly tagsColumns: readonly string[];
  /** Column shown as the title (optional). */
  readonly titleColumn?: string;
}

/**
 * The target of an InfluxQL annotation query in the form Grafana's InfluxDB datasource
 * migrates legacy annotations to (`fromAnnotations: true`, `textColumn`, `tagsColumn`).
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is invalid.
 * @example
 * new AnnotationQueryBuilder().target(influxQlAnnotationTarget(catalog, 'overview', 'Alerts', statement, { textColumn: 'message', tagsColumns: ['kind'] }));
 */
export function influxQlAnnotationTarget(
  catalog: QueryCatalog,
  document: string,
  annotationName: string,
  statement: InfluxQlStatement,
  options: InfluxQlAnnotationOptions,
): cog.Builder<cog.Dataquery> {
  const query = catalog.add({ document, placement: 'annotation', owner: annotationName, refId: 'Anno', statement });
  const target: InfluxQlTarget & Record<string, unknown> = {
    refId: 'Anno',
    datasource: dashboardDatasourceRef(),
    query,
    rawQuery: true,
    resultFormat: 'table',
    fromAnnotations: true,
    textColumn: options.textColumn,
    tagsColumn: options.tagsColumns.join(','),
    titleColumn: options.titleColumn ?? '',
    _implementsDataqueryVariant() {},
  };
  return { build: () => target };
}
