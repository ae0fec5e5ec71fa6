/**
 * Dashboard "Imbalance overview": for the streams selected by job, kernel, device and group
 * size, predicted vs counts vs measured lockstep loss over time, their relative errors,
 * workload loss, the distribution of iteration counts (now, and over time), predicted loss
 * vs group size (the granularity sweep), quantiles of the per-group loss, the best
 * parametric fit, what the sampled groups show (lane idle share, count correlation,
 * divergence cost per exit), and the estimator's alerts as annotations and as a table.
 * Panel semantics and what to do about them: docs/dashboards.md.
 */
import { AnnotationQueryBuilder } from '@grafana/grafana-foundation-sdk/dashboard';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { PanelBuilder as HeatmapPanelBuilder, RowsHeatmapOptionsBuilder } from '@grafana/grafana-foundation-sdk/heatmap';
import { PanelBuilder as BarchartPanelBuilder } from '@grafana/grafana-foundation-sdk/barchart';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { HeatmapCellLayout } from '@grafana/grafana-foundation-sdk/common';
import { FIELDS, TAGS } from '../contracts/index.ts';
import { warpwatchDashboard } from './dashboard-defaults.ts';
import { builtInAnnotation, dashboardDatasourceRef, datasourceVariable, INFLUXQL_INPUT } from './datasource.ts';
import { influxPanel, influxTimeseriesPanel, type InfluxPanelSpec, type PanelQueryContext } from './influx-panel.ts';
import { influxQlAnnotationTarget, type QueryCatalog } from './influx-target.ts';
import { allSeriesTooltip, visibleLegend } from './panel-defaults.ts';
import { selectFrom } from './influxql-query.ts';
import { filterByStreamVariables, streamVariableBuilders } from './stream-variables.ts';

/** uid of the "Imbalance overview" dashboard (stable: links and alert rules point at it). */
export const IMBALANCE_OVERVIEW_UID = 'warpwatch-imbalance';

/** Panel ids of the dashboard, referenced by alert rules (`__panelId__`). */
export const IMBALANCE_PANEL_IDS = {
  loss: 1,
  relativeErrors: 2,
  workloadLoss: 3,
  lossQuantiles: 4,
  sampleSize: 5,
  currentDistribution: 6,
  distributionOverTime: 7,
  granularitySweep: 8,
  bestFit: 9,
  alerts: 10,
  binningErrorBound: 11,
  laneIdle: 12,
  divergenceCost: 13,
  blockLoss: 14,
} as const;

// The estimator closes event-time windows of 10 s by default; a shorter panel interval only
// produces empty buckets.
const MIN_INTERVAL = '10s';
const STREAM_ALIAS = `$tag_${TAGS.stream} · $tag_${TAGS.device} · n=$tag_${TAGS.n} · $col`;
const STREAM_GROUP = [TAGS.stream, TAGS.device, TAGS.n] as const;

/** Grafana's groupingToMatrix names the row column `<rowField>\<columnField>`. */
function matrixRowColumn(rowField: string, columnField: string): string {
  return `${rowField}\\${columnField}`;
}

/** Transformations that turn a (row tag, stream, value) table into a numeric-x matrix. */
function numericMatrix(rowField: string, valueField: string): dashboard.DataTransformerConfig[] {
  const rowColumn = matrixRowColumn(rowField, TAGS.stream);
  return [
    { id: 'groupingToMatrix', options: { columnField: TAGS.stream, rowField, valueField, emptyValue: 'null' } },
    { id: 'convertFieldType', options: { conversions: [{ targetField: rowColumn, destinationType: 'number' }], fields: {} } },
    { id: 'sortBy', options: { sort: [{ field: rowColumn, desc: false }], fields: {} } },
  ];
}

/** Settings of a bar chart with one bar per stream at each value of a numeric tag. */
interface BarsByTagSpec extends InfluxPanelSpec {
  /** Tag whose values (numbers) are the x axis, ascending. */
  readonly xTag: string;
  /** Field plotted as the bar height. */
  readonly valueField: string;
}

/** A bar chart of a (x tag, stream, value) table, x numeric and ascending, one bar per stream. */
function barsByTagPanel(context: PanelQueryContext, spec: BarsByTagSpec): BarchartPanelBuilder {
  return influxPanel(new BarchartPanelBuilder(), context, spec)
    .transformations(numericMatrix(spec.xTag, spec.valueField))
    .legend(visibleLegend())
    .tooltip(allSeriesTooltip())
    .xField(matrixRowColumn(spec.xTag, TAGS.stream));
}

/** A query of the window measurement, filtered by the stream variables, per time interval and stream. */
const windowQuery = () => filterByStreamVariables(selectFrom('window')).timeFiltered().groupByTime().groupBy(...STREAM_GROUP).fill('none');
/** A query of the sampled-groups measurement, filtered by the stream variables, per time interval and stream. */
const samplesQuery = () => filterByStreamVariables(selectFrom('samples')).timeFiltered().groupByTime().groupBy(...STREAM_GROUP).fill('none');
/** The target of a time series per stream. */
const byStream = { refId: 'A', alias: STREAM_ALIAS } as const;
/** The target of a table. */
const table = { refId: 'A', resultFormat: 'table' } as const;

/** The dashboard's panels, top to bottom: losses, prediction details, distributions, alerts, sampled groups. */
function panels(catalog: QueryCatalog): cog.Builder<dashboard.Panel>[] {
  const context: PanelQueryContext = { catalog, document: IMBALANCE_OVERVIEW_UID };
  return [...lossPanels(context), ...predictionDetailPanels(context), ...distributionPanels(context), ...alertPanels(context), ...sampledGroupPanels(context)];
}

/** Loss panels: predicted vs counts vs measured, their relative errors, workload loss. */
function lossPanels(context: PanelQueryContext): cog.Builder<dashboard.Panel>[] {
  const w = FIELDS.window;
  const loss = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.loss,
    title: 'Loss: predicted vs counts vs measured',
    description:
      'Lockstep loss C_SIMT/C_MIMD per stream: predicted from the window distribution (with its confidence band; "if work were assigned to lanes at random"), locality-aware from the sampled groups as contiguous runs (the layout the kernel has; docs/model.md §11, with its band), computed from the observed per-group counts, and measured from lane finishing times. 1 = no imbalance.',
    minInterval: MIN_INTERVAL,
    statement: windowQuery()
      .field(w.lossPredicted, { aggregation: 'mean' })
      .field(w.lossPredictedLow, { aggregation: 'mean' })
      .field(w.lossPredictedHigh, { aggregation: 'mean' })
      .field(w.lossLocality, { aggregation: 'mean' })
      .field(w.lossLocalityLow, { aggregation: 'mean' })
      .field(w.lossLocalityHigh, { aggregation: 'mean' })
      .field(w.lossCounts, { aggregation: 'mean' })
      .field(w.lossMeasured, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('none')
    .decimals(3)
    .overrideByRegexp(`.*(${w.lossPredictedLow}|${w.lossPredictedHigh}|${w.lossLocalityLow}|${w.lossLocalityHigh})$`, [
      { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
      { id: 'custom.lineWidth', value: 1 },
    ])
    .span(24)
    .height(10);

  const relativeErrors = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.relativeErrors,
    title: 'Relative errors',
    description:
      'Relative errors between the three losses: predicted vs counts (sampling error of the model), counts vs measured (what iteration counts do not explain), predicted vs measured (end to end).',
    minInterval: MIN_INTERVAL,
    statement: windowQuery()
      .field(w.etaPredictedCounts, { aggregation: 'mean' })
      .field(w.etaCountsMeasured, { aggregation: 'mean' })
      .field(w.etaPredictedMeasured, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('percentunit')
    .min(0)
    .span(12)
    .height(8);

  const workloadLoss = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.workloadLoss,
    title: 'Workload loss',
    description: 'Workload loss E[max]/E[W]: the lockstep cost relative to the mean work per lane, predicted and measured.',
    minInterval: MIN_INTERVAL,
    statement: windowQuery().field(w.workloadLossPredicted, { aggregation: 'mean' }).field(w.workloadLossMeasured, { aggregation: 'mean' }).build(),
    target: byStream,
  })
    .unit('none')
    .decimals(3)
    .span(12)
    .height(8);

  return [loss, relativeErrors, workloadLoss];
}

/** Prediction details: per-group loss quantiles and the sample size per interval. */
function predictionDetailPanels(context: PanelQueryContext): cog.Builder<dashboard.Panel>[] {
  const w = FIELDS.window;
  const lossQuantiles = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.lossQuantiles,
    title: 'Per-group loss quantiles (predicted)',
    description: 'Quantiles (50 %, 90 %, 99 %) of the predicted loss of a single group: how bad the unlucky groups are, not only the mean.',
    minInterval: MIN_INTERVAL,
    statement: windowQuery()
      .field(w.lossQ50, { aggregation: 'mean' })
      .field(w.lossQ90, { aggregation: 'mean' })
      .field(w.lossQ99, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('none')
    .decimals(3)
    .span(12)
    .height(8);

  const sampleSize = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.sampleSize,
    title: 'Sample size per interval',
    description: 'Groups, units (lanes) and launches observed per interval; small samples mean wide confidence bands.',
    minInterval: MIN_INTERVAL,
    statement: windowQuery()
      .field(w.groups, { aggregation: 'sum' })
      .field(w.units, { aggregation: 'sum' })
      .field(w.launches, { aggregation: 'sum' })
      .build(),
    target: byStream,
  })
    .unit('short')
    .span(12)
    .height(8);
  return [lossQuantiles, sampleSize];
}

/** Distribution panels: the current distribution of iteration counts, its course over time, predicted loss vs group size, the best parametric fit. */
function distributionPanels(context: PanelQueryContext): cog.Builder<dashboard.Panel>[] {
  const currentDistribution = barsByTagPanel(context, {
    id: IMBALANCE_PANEL_IDS.currentDistribution,
    title: 'Iteration counts: current distribution',
    description: 'Latest probability of each iteration-count bin (x = lower bound of the bin), one colour per stream.',
    statement: filterByStreamVariables(selectFrom('histogram'))
      .field(FIELDS.histogram.probability, { aggregation: 'last' })
      .timeFiltered()
      .groupBy(TAGS.binLow, TAGS.stream)
      .build(),
    target: table,
    xTag: TAGS.binLow,
    valueField: FIELDS.histogram.probability,
  })
    .unit('percentunit')
    .min(0)
    .span(12)
    .height(9);

  const distributionOverTime = influxPanel(new HeatmapPanelBuilder(), context, {
    id: IMBALANCE_PANEL_IDS.distributionOverTime,
    title: 'Iteration counts over time',
    description: 'Probability of each iteration-count bin (rows, lower bound of the bin) per interval: shifts and new tails show as moving colour.',
    minInterval: MIN_INTERVAL,
    statement: filterByStreamVariables(selectFrom('histogram'))
      .field(FIELDS.histogram.probability, { aggregation: 'mean' })
      .timeFiltered()
      .groupByTime()
      .groupBy(TAGS.binLow)
      .fill('0')
      .build(),
    target: { refId: 'A', alias: `$tag_${TAGS.binLow}` },
  })
    .calculate(false)
    .rowsFrame(new RowsHeatmapOptionsBuilder().layout(HeatmapCellLayout.Ge))
    .unit('percentunit')
    .span(12)
    .height(9);

  const granularitySweep = barsByTagPanel(context, {
    id: IMBALANCE_PANEL_IDS.granularitySweep,
    title: 'Predicted loss vs group size',
    description: 'Granularity sweep: the loss the current distribution would cause with lockstep groups of n = 1, 2, 4, ..., 32 lanes (each stream\'s last sweep in the range: once per 10 s with shorter windows, WARPWATCH_SWEEP_INTERVAL_MILLIS).',
    statement: filterByStreamVariables(selectFrom('sweep'))
      .field(FIELDS.sweep.lossPredicted, { aggregation: 'last' })
      .timeFiltered()
      .groupBy(TAGS.groupSize, TAGS.stream)
      .build(),
    target: table,
    xTag: TAGS.groupSize,
    valueField: FIELDS.sweep.lossPredicted,
  })
    .unit('none')
    .decimals(3)
    .min(1)
    .span(12)
    .height(9);

  const bestFit = influxPanel(new TablePanelBuilder(), context, {
    id: IMBALANCE_PANEL_IDS.bestFit,
    title: 'Best parametric fit',
    description: 'The parametric family that fits the current distribution best (lowest AIC), with its parameters, per stream.',
    statement: filterByStreamVariables(selectFrom('fit'))
      .field(FIELDS.fit.family, { aggregation: 'last' })
      .field(FIELDS.fit.parameters, { aggregation: 'last' })
      .field(FIELDS.fit.aic, { aggregation: 'last' })
      .field(FIELDS.fit.logLikelihood, { aggregation: 'last' })
      .timeFiltered()
      .groupBy(...STREAM_GROUP)
      .build(),
    target: table,
  })
    .transformations([{ id: 'organize', options: { excludeByName: { Time: true }, indexByName: {}, renameByName: {} } }])
    .span(12)
    .height(8);
  return [currentDistribution, distributionOverTime, granularitySweep, bestFit];
}

/** The alerts table and the binning error bound. */
function alertPanels(context: PanelQueryContext): cog.Builder<dashboard.Panel>[] {
  const w = FIELDS.window;
  const alerts = influxPanel(new TablePanelBuilder(), context, {
    id: IMBALANCE_PANEL_IDS.alerts,
    title: 'Alerts',
    description: 'Alert events of the estimator (rising imbalance, prediction/measurement drift, stale stream) with the series they concern, newest first.',
    statement: filterByStreamVariables(selectFrom('alert'))
      .tagColumn(TAGS.kind)
      .tagColumn(TAGS.stream)
      .tagColumn(TAGS.series)
      .field(FIELDS.alert.oldLevel)
      .field(FIELDS.alert.newLevel)
      .field(FIELDS.alert.statistic)
      .field(FIELDS.alert.message)
      .timeFiltered()
      .newestFirst()
      .limit(200)
      .build(),
    target: table,
  })
    .span(16)
    .height(8);

  const binningErrorBound = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.binningErrorBound,
    title: 'Binning error bound',
    description: 'Absolute bound on the error of the predicted loss caused by binning a wide support (0 while the distribution is kept exactly).',
    minInterval: MIN_INTERVAL,
    statement: windowQuery().field(w.binningErrorBound, { aggregation: 'max' }).build(),
    target: byStream,
  })
    .unit('none')
    .min(0)
    .span(8)
    .height(8);
  return [alerts, binningErrorBound];
}

/** Sampled-groups panels: lane idle share and count correlation, divergence cost, warps in blocks. */
function sampledGroupPanels(context: PanelQueryContext): cog.Builder<dashboard.Panel>[] {
  const w = FIELDS.window;
  const laneIdle = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.laneIdle,
    title: 'Sampled groups: lane idle share and count correlation',
    description:
      'From GroupSamples: share of lane time spent waiting for the deepest lane (1 − ΣC_MIMD/ΣC_SIMT), and the intra-group correlation of iteration counts (≈ 0: lanes independent, as the model assumes; > 0: neighbouring lanes get similar work, so measured-by-counts loss sits below the prediction).',
    minInterval: MIN_INTERVAL,
    statement: samplesQuery()
      .field(FIELDS.samples.laneIdleFraction, { aggregation: 'mean' })
      .field(FIELDS.samples.countIcc, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('percentunit')
    .span(12)
    .height(8);

  const divergenceCost = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.divergenceCost,
    title: 'Sampled groups: divergence cost',
    description:
      'Least-squares fit over each window\'s sampled groups of (c_end − c0) ≈ c + T·iterations + δ·diverging exits (model.md §4), in device clock ticks (SM cycles; ns on the CPU backend): T per iteration, δ per exit with its standard error. δ within 2 standard errors of 0: no measurable divergence cost.',
    minInterval: MIN_INTERVAL,
    statement: samplesQuery()
      .field(FIELDS.samples.iterationTicks, { aggregation: 'mean' })
      .field(FIELDS.samples.deltaTicks, { aggregation: 'mean' })
      .field(FIELDS.samples.deltaStandardError, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('none')
    .decimals(1)
    .span(12)
    .height(8);

  const blockLoss = influxTimeseriesPanel(context, {
    id: IMBALANCE_PANEL_IDS.blockLoss,
    title: 'Two levels: warps in blocks',
    description:
      'From block runs (GroupSamples with selection block: whole thread blocks, docs/model.md §11a). A block keeps its SM resources until its slowest warp ends: block-level loss Σ K·n·T / Σ w (lane time the block holds over lane work, with its band) = warp level Σ n·t / Σ w × warps in blocks Σ K·T / Σ t (block time over the mean warp time; 1 = the warps of a block end together). Empty without block runs.',
    minInterval: MIN_INTERVAL,
    statement: windowQuery()
      .field(w.lossBlock, { aggregation: 'mean' })
      .field(w.lossBlockLow, { aggregation: 'mean' })
      .field(w.lossBlockHigh, { aggregation: 'mean' })
      .field(w.lossBlockWarps, { aggregation: 'mean' })
      .field(w.lossWarpInBlock, { aggregation: 'mean' })
      .build(),
    target: byStream,
  })
    .unit('none')
    .decimals(3)
    .overrideByRegexp(`.*(${w.lossBlockLow}|${w.lossBlockHigh})$`, [
      { id: 'custom.lineStyle', value: { fill: 'dash', dash: [4, 4] } },
      { id: 'custom.lineWidth', value: 1 },
    ])
    .span(24)
    .height(8);
  return [laneIdle, divergenceCost, blockLoss];
}

/** Name of the annotation that shows the estimator's alerts on every time-series panel. */
export const ALERT_ANNOTATION_NAME = 'warpwatch alerts';

/**
 * Builds the "Imbalance overview" dashboard; every InfluxQL query it contains is recorded in
 * `catalog` (panels, the alert annotation, the variables).
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` if a query definition is invalid.
 * @example
 * const catalog = createQueryCatalog();
 * const json = JSON.stringify(buildImbalanceOverview(catalog), null, 2);
 */
export function buildImbalanceOverview(catalog: QueryCatalog): dashboard.Dashboard {
  const builder = warpwatchDashboard({
    title: 'warpwatch · Imbalance overview',
    uid: IMBALANCE_OVERVIEW_UID,
    description: 'Predicted vs measured SIMT lockstep loss per stream (warpwatch). See docs/dashboards.md.',
    tags: ['warpwatch', 'imbalance'],
  });
  builder.withVariable(datasourceVariable(INFLUXQL_INPUT));
  for (const variable of streamVariableBuilders(catalog, IMBALANCE_OVERVIEW_UID)) builder.withVariable(variable);
  builder.annotation(builtInAnnotation());
  builder.annotation(
    new AnnotationQueryBuilder()
      .name(ALERT_ANNOTATION_NAME)
      .datasource(dashboardDatasourceRef())
      .enable(true)
      .iconColor('red')
      .target(
        influxQlAnnotationTarget(
          catalog,
          IMBALANCE_OVERVIEW_UID,
          ALERT_ANNOTATION_NAME,
          filterByStreamVariables(selectFrom('alert'))
            .field(FIELDS.alert.message)
            .tagColumn(TAGS.kind)
            .tagColumn(TAGS.stream)
            .tagColumn(TAGS.series)
            .timeFiltered()
            .build(),
          { textColumn: FIELDS.alert.message, tagsColumns: [TAGS.kind, TAGS.stream, TAGS.series] },
        ),
      ),
  );
  for (const panel of panels(catalog)) builder.withPanel(panel);
  return builder.build();
}
