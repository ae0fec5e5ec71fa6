/**
 * A multi-select InfluxQL query variable with an "All" option, the form every warpwatch
 * dashboard variable takes: its `SHOW TAG VALUES` statement is recorded in the
 * {@link QueryCatalog}, "All" is the regex {@link ALL_REGEX} (so `"tag" =~ /^$var$/` matches
 * every value), and the values refresh when the time range changes.
 */
import { QueryVariableBuilder, VariableRefresh, type VariableSort } from '@grafana/grafana-foundation-sdk/dashboard';
import { dashboardDatasourceRef } from './datasource.ts';
import type { QueryCatalog } from './influx-target.ts';
import type { InfluxQlStatement } from './influxql-query.ts';

/** Custom "All" value: InfluxQL regex that matches every tag value. */
export const ALL_REGEX = '.*';

/** Settings of {@link multiSelectVariable}. */
export interface MultiSelectVariableSpec {
  /** Variable name (`$name` in queries), also its catalog owner and refId. */
  readonly name: string;
  readonly label: string;
  /** Shown as the variable's help text; omitted from the document when absent. */
  readonly description?: string;
  /** The `SHOW TAG VALUES` statement listing the values. */
  readonly statement: InfluxQlStatement;
  readonly sort: VariableSort;
}

/**
 * Builds the variable and records its query in `catalog` under `document` (placement
 * `variable`). Initially every value ("All") is selected.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is invalid.
 * @example
 * multiSelectVariable(catalog, 'warpwatch-pipeline', {
 *   name: 'service', label: 'Service', statement: showTagValues('pipeline', 'service'), sort: VariableSort.AlphabeticalAsc,
 * });
 */
export function multiSelectVariable(catalog: QueryCatalog, document: string, spec: MultiSelectVariableSpec): QueryVariableBuilder {
  const query = catalog.add({ document, placement: 'variable', owner: spec.name, refId: spec.name, statement: spec.statement });
  const labelled = new QueryVariableBuilder(spec.name).label(spec.label);
  // The SDK builder stores keys in call order; description sits between label and datasource.
  return (spec.description === undefined ? labelled : labelled.description(spec.description))
    .datasource(dashboardDatasourceRef())
    .query(query)
    .definition(query)
    .multi(true)
    .includeAll(true)
    .allValue(ALL_REGEX)
    .current({ selected: true, text: ['All'], value: ['$__all'] })
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(spec.sort);
}
