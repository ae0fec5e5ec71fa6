/**
 * Dashboard "Pipeline health": the collector's and estimator's own counters and gauges, as
 * the services write them to InfluxDB in measurement `warpwatch_pipeline` (the agreed route:
 * no Prometheus scrape needed for Grafana). Counters (`frames_*`, `influx_write_errors`) are
 * cumulative per process instance, so panels show their per-second rate with
 * `non_negative_derivative(max(x), 1s)` (a restart resets the counter; the negative step
 * is dropped). `consumer_lag` and `window_latency_millis` are gauges.
 */
import { DashboardBuilder, DashboardCursorSync, QueryVariableBuilder, VariableRefresh, VariableSort } from '@grafana/grafana-foundation-sdk/dashboard';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { ReduceDataOptionsBuilder } from '@grafana/grafana-foundation-sdk/common';
import { FIELDS, TAGS } from '../estimator/index.ts';
import { builtInAnnotation, influxQlDatasourceRef } from './datasource.ts';
import { influxQlTarget, type QueryCatalog } from './influx-target.ts';
import { allSeriesTooltip, visibleLegend } from './panel-defaults.ts';
import { selectFrom, showTagValues, type SelectQueryBuilder } from './influxql-query.ts';
import { ALL_REGEX } from './stream-variables.ts';

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

function timeseriesPanel(id: number, title: string, description: string): TimeseriesPanelBuilder {
  return new TimeseriesPanelBuilder()
    .id(id)
    .title(title)
    .description(description)
    .datasource(influxQlDatasourceRef())
    .interval(MIN_INTERVAL)
    .legend(visibleLegend())
    .tooltip(allSeriesTooltip());
}

function variables(catalog: QueryCatalog): cog.Builder<dashboard.VariableModel>[] {
  const specs = [
    { name: TAGS.service, label: 'Service', statement: showTagValues('pipeline', TAGS.service) },
    { name: TAGS.instance, label: 'Instance', statement: showTagValues('pipeline', TAGS.instance, [[TAGS.service, TAGS.service]]) },
  ];
  return specs.map((spec) => {
    const query = catalog.add({ document: PIPELINE_HEALTH_UID, placement: 'variable', owner: spec.name, refId: spec.name, statement: spec.statement });
    return new QueryVariableBuilder(spec.name)
      .label(spec.label)
      .datasource(influxQlDatasourceRef())
      .query(query)
      .definition(query)
      .multi(true)
      .includeAll(true)
      .allValue(ALL_REGEX)
      .current({ selected: true, text: ['All'], value: ['$__all'] })
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(VariableSort.AlphabeticalAsc);
  });
}

function panels(catalog: QueryCatalog): cog.Builder<dashboard.Panel>[] {
  const doc = PIPELINE_HEALTH_UID;

  const ratesTitle = 'Frames in / out per second';
  const frameRates = timeseriesPanel(
    PIPELINE_PANEL_IDS.frameRates,
    ratesTitle,
    'Collector: frames received from GPU jobs (in) and produced to Kafka (out). Estimator: frames consumed (in) and frames folded into closed windows (out).',
  )
    .withTarget(influxQlTarget(catalog, doc, ratesTitle, perSecond(filtered(), [p.framesIn, p.framesOut]).build(), { refId: 'A', alias: INSTANCE_ALIAS }))
    .unit('ops')
    .min(0)
    .span(12)
    .height(8);

  const lossesTitle = 'Frames rejected / spooled / dropped per second';
  const frameLosses = timeseriesPanel(
    PIPELINE_PANEL_IDS.frameLosses,
    lossesTitle,
    'Rejected: invalid frames sent to the DLQ. Spooled: kept on disk while Kafka is away (replayed later). Dropped: lost because a bounded buffer overflowed. All three should be 0.',
  )
    .withTarget(
      influxQlTarget(catalog, doc, lossesTitle, perSecond(filtered(), [p.framesRejected, p.framesSpooled, p.framesDropped]).build(), {
        refId: 'A',
        alias: INSTANCE_ALIAS,
      }),
    )
    .unit('ops')
    .min(0)
    .span(12)
    .height(8);

  const lagTitle = 'Consumer lag';
  const consumerLag = timeseriesPanel(
    PIPELINE_PANEL_IDS.consumerLag,
    lagTitle,
    'Estimator: Kafka messages on warpwatch.frames not yet consumed by the group (sum over its partitions), per instance.',
  )
    .withTarget(
      influxQlTarget(
        catalog,
        doc,
        lagTitle,
        filtered().field(p.consumerLag, { aggregation: 'max' }).groupByTime().groupBy(TAGS.service, TAGS.instance).fill('none').build(),
        { refId: 'A', alias: INSTANCE_ALIAS },
      ),
    )
    .unit('short')
    .min(0)
    .span(8)
    .height(8);

  const latencyTitle = 'Window latency';
  const windowLatency = timeseriesPanel(
    PIPELINE_PANEL_IDS.windowLatency,
    latencyTitle,
    'Time from the end of an event-time window to its results being written (mean and worst per interval).',
  )
    .withTarget(
      influxQlTarget(
        catalog,
        doc,
        latencyTitle,
        filtered()
          .field(p.windowLatencyMillis, { aggregation: 'mean', alias: 'mean_window_latency_millis' })
          .field(p.windowLatencyMillis, { aggregation: 'max', alias: 'max_window_latency_millis' })
          .groupByTime()
          .groupBy(TAGS.service, TAGS.instance)
          .fill('none')
          .build(),
        { refId: 'A', alias: INSTANCE_ALIAS },
      ),
    )
    .unit('ms')
    .min(0)
    .span(8)
    .height(8);

  const writeErrorsTitle = 'InfluxDB write errors per second';
  const influxWriteErrors = timeseriesPanel(
    PIPELINE_PANEL_IDS.influxWriteErrors,
    writeErrorsTitle,
    'Failed InfluxDB write attempts (each retried with backoff; points are dropped only when the bounded buffer overflows).',
  )
    .withTarget(influxQlTarget(catalog, doc, writeErrorsTitle, perSecond(filtered(), [p.influxWriteErrors]).build(), { refId: 'A', alias: INSTANCE_ALIAS }))
    .unit('ops')
    .min(0)
    .span(8)
    .height(8);

  const totalsTitle = 'Losses in the time range';
  const totals = new StatPanelBuilder()
    .id(PIPELINE_PANEL_IDS.totals)
    .title(totalsTitle)
    .description('Increase of the rejected, dropped and write-error counters over the selected time range, summed over instances.')
    .datasource(influxQlDatasourceRef())
    .withTarget(
      influxQlTarget(
        catalog,
        doc,
        totalsTitle,
        filtered()
          .field(p.framesRejected, { aggregation: 'spread' })
          .field(p.framesDropped, { aggregation: 'spread' })
          .field(p.influxWriteErrors, { aggregation: 'spread' })
          .groupBy(TAGS.service, TAGS.instance)
          .build(),
        { refId: 'A', alias: INSTANCE_ALIAS },
      ),
    )
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
  const builder = new DashboardBuilder('warpwatch · Pipeline health')
    .uid(PIPELINE_HEALTH_UID)
    .description('Collector and estimator self-metrics from InfluxDB measurement warpwatch_pipeline. See docs/dashboards.md.')
    .tags(['warpwatch', 'pipeline'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .refresh('30s')
    .timezone('browser');
  for (const variable of variables(catalog)) builder.withVariable(variable);
  builder.annotation(builtInAnnotation());
  for (const panel of panels(catalog)) builder.withPanel(panel);
  return builder.build();
}
