/**
 * Dashboard "Pipeline health": the collector's and estimator's own counters and gauges, as
 * the services write them to InfluxDB in measurement `warpwatch_pipeline` (the agreed route:
 * no Prometheus scrape needed for Grafana). Counters (`frames_*`, `influx_write_errors`) are
 * cumulative per process instance, so panels show their per-second rate with
 * `non_negative_derivative(max(x), 1s)` (a restart resets the counter; the negative step
 * is dropped). `consumer_lag` and `window_latency_millis` are gauges.
 */
import { VariableSort } from '@grafana/grafana-foundation-sdk/dashboard';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { ReduceDataOptionsBuilder } from '@grafana/grafana-foundation-sdk/common';
import { FIELDS, TAGS } from '../contracts/index.ts';
import { warpwatchDashboard } from './dashboard-defaults.ts';
import { builtInAnnotation, datasourceVariable, INFLUXQL_INPUT } from './datasource.ts';
import { influxPanel, influxTimeseriesPanel, type PanelQueryContext } from './influx-panel.ts';
import type { QueryCatalog } from './influx-target.ts';
import { selectFrom, showTagValues, type SelectQueryBuilder } from './influxql-query.ts';
import { multiSelectVariable } from './multi-select-variable.ts';

/** uid of the "Pipeline health" dashboard. */
export const PIPELINE_HEALTH_UID = 'warpwatch-pipeline';

/** Panel ids of the dashboard, referenced by alert rules (`__panelId__`). */
export const PIPELINE_PANEL_IDS = {
  frameRates: 1,
  frameLosses: 2,
  consumerLag: 3,
  windowLatency: 4,
  influxWriteErrors: 5,
  totals: 6,
} as const;

// Services report every few seconds; below this a rate has too few points per bucket.
const MIN_INTERVAL = '15s';
const INSTANCE_ALIAS = `$tag_${TAGS.service}/$tag_${TAGS.instance} $col`;
const p = FIELDS.pipeline;

function filtered(): SelectQueryBuilder<'pipeline'> {
  return selectFrom('pipeline').whereVariable(TAGS.service, TAGS.service).whereVariable(TAGS.instance, TAGS.instance).timeFiltered();
}

function perSecond(builder: SelectQueryBuilder<'pipeline'>, fields: readonly (typeof p)[keyof typeof p][]): SelectQueryBuilder<'pipeline'> {
  return fields
    .reduce((b, field) => b.field(field, { aggregation: 'max', derivativeUnit: '1s' }), builder)
    .groupByTime()
    .groupBy(TAGS.service, TAGS.instance)
    .fill('none');
}

function variables(catalog: QueryCatalog): cog.Builder<dashboard.VariableModel>[] {
  const specs = [
    { name: TAGS.service, label: 'Service', statement: showTagValues('pipeline', TAGS.service) },
    { name: TAGS.instance, label: 'Instance', statement: showTagValues('pipeline', TAGS.instance, [[TAGS.service, TAGS.service]]) },
  ];
  return specs.map((spec) => multiSelectVariable(catalog, PIPELINE_HEALTH_UID, { ...spec, sort: VariableSort.AlphabeticalAsc }));
}

function panels(catalog: QueryCatalog): cog.Builder<dashboard.Panel>[] {
  const context: PanelQueryContext = { catalog, document: PIPELINE_HEALTH_UID };
  const byInstance = { refId: 'A', alias: INSTANCE_ALIAS } as const;

  const frameRates = influxTimeseriesPanel(context, {
    id: PIPELINE_PANEL_IDS.frameRates,
    title: 'Frames in / out per second',
    description:
      'Collector: frames received from GPU jobs (in) and produced to Kafka (out). Estimator: frames consumed (in) and frames folded into closed windows (out).',
    minInterval: MIN_INTERVAL,
    statement: perSecond(filtered(), [p.framesIn, p.framesOut]).build(),
    target: byInstance,
  })
    .unit('ops')
    .min(0)
    .span(12)
    .height(8);

  const frameLosses = influxTimeseriesPanel(context, {
    id: PIPELINE_PANEL_IDS.frameLosses,
    title: 'Frames rejected / spooled / dropped per second',
    description:
      'Rejected: invalid frames sent to the DLQ. Spooled: kept on disk while Kafka is away (replayed later). Dropped: lost because a bounded buffer overflowed. All three should be 0.',
    minInterval: MIN_INTERVAL,
    statement: perSecond(filtered(), [p.framesRejected, p.framesSpooled, p.framesDropped]).build(),
    target: byInstance,
  })
    .unit('ops')
    .min(0)
    .span(12)
    .height(8);

  const consumerLag = influxTimeseriesPanel(context, {
    id: PIPELINE_PANEL_IDS.consumerLag,
    title: 'Consumer lag',
    description: 'Estimator: Kafka messages on warpwatch.frames not yet consumed by the group (sum over its partitions), per instance.',
    minInterval: MIN_INTERVAL,
    statement: filtered().field(p.consumerLag, { aggregation: 'max' }).groupByTime().groupBy(TAGS.service, TAGS.instance).fill('none').build(),
    target: byInstance,
  })
    .unit('short')
    .min(0)
    .span(8)
    .height(8);

  const windowLatency = influxTimeseriesPanel(context, {
    id: PIPELINE_PANEL_IDS.windowLatency,
    title: 'Window latency',
    description: 'Time from the end of an event-time window to its results being written (mean and worst per interval).',
    minInterval: MIN_INTERVAL,
    statement: filtered()
      .field(p.windowLatencyMillis, { aggregation: 'mean', alias: 'mean_window_latency_millis' })
      .field(p.windowLatencyMillis, { aggregation: 'max', alias: 'max_window_latency_millis' })
      .groupByTime()
      .groupBy(TAGS.service, TAGS.instance)
      .fill('none')
      .build(),
    target: byInstance,
  })
    .unit('ms')
    .min(0)
    .span(8)
    .height(8);

  const influxWriteErrors = influxTimeseriesPanel(context, {
    id: PIPELINE_PANEL_IDS.influxWriteErrors,
    title: 'InfluxDB write errors per second',
    description: 'Failed InfluxDB write attempts (each retried with backoff; points are dropped only when the bounded buffer overflows).',
    minInterval: MIN_INTERVAL,
    statement: perSecond(filtered(), [p.influxWriteErrors]).build(),
    target: byInstance,
  })
    .unit('ops')
    .min(0)
    .span(8)
    .height(8);

  const totals = influxPanel(new StatPanelBuilder(), context, {
    id: PIPELINE_PANEL_IDS.totals,
    title: 'Losses in the time range',
    description: 'Increase of the rejected, dropped and write-error counters over the selected time range, summed over instances.',
    statement: filtered()
      .field(p.framesRejected, { aggregation: 'spread' })
      .field(p.framesDropped, { aggregation: 'spread' })
      .field(p.influxWriteErrors, { aggregation: 'spread' })
      .groupBy(TAGS.service, TAGS.instance)
      .build(),
    target: byInstance,
  })
    .reduceOptions(new ReduceDataOptionsBuilder().calcs(['sum']).values(false))
    .unit('short')
    .span(24)
    .height(5);

  return [frameRates, frameLosses, consumerLag, windowLatency, influxWriteErrors, totals];
}

/**
 * Builds the "Pipeline health" dashboard; every InfluxQL query is recorded in `catalog`.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` if a query definition is invalid.
 * @example
 * const json = JSON.stringify(buildPipelineHealth(createQueryCatalog()), null, 2);
 */
export function buildPipelineHealth(catalog: QueryCatalog): dashboard.Dashboard {
  const builder = warpwatchDashboard({
    title: 'warpwatch · Pipeline health',
    uid: PIPELINE_HEALTH_UID,
    description: 'Collector and estimator self-metrics from InfluxDB measurement warpwatch_pipeline. See docs/dashboards.md.',
    tags: ['warpwatch', 'pipeline'],
  });
  builder.withVariable(datasourceVariable(INFLUXQL_INPUT));
  for (const variable of variables(catalog)) builder.withVariable(variable);
  builder.annotation(builtInAnnotation());
  for (const panel of panels(catalog)) builder.withPanel(panel);
  return builder.build();
}
