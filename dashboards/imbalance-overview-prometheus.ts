/**
 * Dashboard "Imbalance overview (Prometheus)": the Prometheus flavour of "Imbalance overview"
 * for teams that keep the estimator's results in Prometheus (scraped from /metrics or pushed by
 * OTLP, docs/exporting.md) instead of, or beside, InfluxDB. Same stream variables (job, kernel,
 * host, pod, device, group size) as label filters; panels: the three losses, measured over predicted
 * (drift), lane idle share, windows and alerts per stream, and the export table's health.
 * Every PromQL query is listed in {@link PROMETHEUS_QUERIES}, which the integration test runs
 * against a real Prometheus holding the estimator's metrics.
 */
import { QueryVariableBuilder, VariableRefresh, VariableSort } from '@grafana/grafana-foundation-sdk/dashboard';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder as PromQueryBuilder, PromQueryFormat } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as TablePanelBuilder } from '@grafana/grafana-foundation-sdk/table';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { LABEL_TAGS, labelAttributeName, RESULT_METRIC_PROMETHEUS_NAMES as M } from '../contracts/index.ts';
import { warpwatchDashboard } from './dashboard-defaults.ts';
import { builtInAnnotation, dashboardDatasourceRef, datasourceVariable, PROMETHEUS_DATASOURCE_TYPE, PROMETHEUS_INPUT } from './datasource.ts';
import { ALL_REGEX } from './multi-select-variable.ts';
import { allSeriesTooltip, visibleLegend } from './panel-defaults.ts';

/** uid of the Prometheus "Imbalance overview". */
export const IMBALANCE_OVERVIEW_PROMETHEUS_UID = 'warpwatch-imbalance-prometheus';

/** The stream variables: name (= `$name`) and the label each filters. */
export const PROMETHEUS_STREAM_VARIABLES = [
  { name: 'job', label: 'Job', promLabel: 'warpwatch_job' },
  { name: 'kernel', label: 'Kernel', promLabel: 'warpwatch_kernel' },
  { name: 'host', label: 'Host', promLabel: 'warpwatch_host' },
  // The collector label pod as the estimator exports it (k8s.pod.name → k8s_pod_name); absent outside Kubernetes, which All (.*) matches.
  { name: 'pod', label: 'Pod', promLabel: labelAttributeName(LABEL_TAGS.pod).replaceAll('.', '_') },
  { name: 'device', label: 'Device model', promLabel: 'warpwatch_device' },
  { name: 'device_uuid', label: 'Device', promLabel: 'warpwatch_device_uuid' },
  { name: 'n', label: 'Group size', promLabel: 'warpwatch_group_size' },
] as const;

/** Label matchers of the stream variables, e.g. `warpwatch_job=~"$job",…`. */
const STREAM_MATCHERS = PROMETHEUS_STREAM_VARIABLES.map((v) => `${v.promLabel}=~"$${v.name}"`).join(',');
const LEGEND = '{{warpwatch_stream}} · {{warpwatch_device}} · n={{warpwatch_group_size}}';

/** One PromQL query of the dashboard: where it is and its expression (Grafana variables unexpanded). */
export interface PrometheusQuery {
  readonly panel: string;
  readonly refId: string;
  readonly expr: string;
  readonly legend: string;
}

/** Every panel query, in panel order. */
export const PROMETHEUS_QUERIES: readonly PrometheusQuery[] = [
  { panel: 'Loss: predicted vs counts vs measured', refId: 'A', expr: `${M.lossPredicted}{${STREAM_MATCHERS}}`, legend: `${LEGEND} · predicted` },
  { panel: 'Loss: predicted vs counts vs measured', refId: 'B', expr: `${M.lossCounts}{${STREAM_MATCHERS}}`, legend: `${LEGEND} · counts` },
  { panel: 'Loss: predicted vs counts vs measured', refId: 'C', expr: `${M.lossMeasured}{${STREAM_MATCHERS}}`, legend: `${LEGEND} · measured` },
  {
    panel: 'Measured over predicted',
    refId: 'A',
    expr: `max by (warpwatch_stream, warpwatch_device, warpwatch_group_size) (${M.lossMeasured}{${STREAM_MATCHERS}}) / max by (warpwatch_stream, warpwatch_device, warpwatch_group_size) (${M.lossPredicted}{${STREAM_MATCHERS}})`,
    legend: LEGEND,
  },
  { panel: 'Lane idle share', refId: 'A', expr: `${M.laneIdle}{${STREAM_MATCHERS}}`, legend: `${LEGEND} · {{warpwatch_basis}}` },
  { panel: 'Windows and alerts per stream', refId: 'A', expr: `max by (warpwatch_stream) (${M.windows}{${STREAM_MATCHERS}})`, legend: '{{warpwatch_stream}}' },
  { panel: 'Windows and alerts per stream', refId: 'B', expr: `max by (warpwatch_stream) (${M.groups}{${STREAM_MATCHERS}})`, legend: '{{warpwatch_stream}}' },
  { panel: 'Windows and alerts per stream', refId: 'C', expr: `sum by (warpwatch_stream, warpwatch_alert_kind) (${M.alerts}{${STREAM_MATCHERS}})`, legend: '{{warpwatch_stream}} · {{warpwatch_alert_kind}}' },
  { panel: 'Export table', refId: 'A', expr: `sum(${M.exportedStreams})`, legend: 'streams exported' },
  { panel: 'Export table', refId: 'B', expr: `sum by (reason) (${M.evictedStreams})`, legend: 'evicted ({{reason}})' },
];

/** The label_values() query of each stream variable, narrowed by the variables before it. */
export function prometheusVariableQuery(index: number): string {
  const variable = PROMETHEUS_STREAM_VARIABLES[index];
  if (variable === undefined) throw new RangeError(`no stream variable ${index}`);
  const before = PROMETHEUS_STREAM_VARIABLES.slice(0, index).map((v) => `${v.promLabel}=~"$${v.name}"`).join(',');
  return `label_values(${M.windows}{${before}}, ${variable.promLabel})`;
}

function target(query: PrometheusQuery, instant: boolean): PromQueryBuilder {
  const builder = new PromQueryBuilder().refId(query.refId).datasource(dashboardDatasourceRef(PROMETHEUS_DATASOURCE_TYPE)).expr(query.expr).legendFormat(query.legend);
  return instant ? builder.instant() : builder.range();
}

function panelQueries(title: string): PrometheusQuery[] {
  return PROMETHEUS_QUERIES.filter((q) => q.panel === title);
}

function timeseries(id: number, title: string, description: string): TimeseriesPanelBuilder {
  let panel = new TimeseriesPanelBuilder().id(id).title(title).description(description).datasource(dashboardDatasourceRef(PROMETHEUS_DATASOURCE_TYPE));
  for (const query of panelQueries(title)) panel = panel.withTarget(target(query, false));
  return panel.legend(visibleLegend()).tooltip(allSeriesTooltip());
}

function table(id: number, title: string, description: string): TablePanelBuilder {
  let panel = new TablePanelBuilder().id(id).title(title).description(description).datasource(dashboardDatasourceRef(PROMETHEUS_DATASOURCE_TYPE));
  for (const query of panelQueries(title)) panel = panel.withTarget(target(query, true).format(PromQueryFormat.Table));
  return panel;
}

function streamVariables(): cog.Builder<dashboard.VariableModel>[] {
  return PROMETHEUS_STREAM_VARIABLES.map((v, index) =>
    new QueryVariableBuilder(v.name)
      .label(v.label)
      .datasource(dashboardDatasourceRef(PROMETHEUS_DATASOURCE_TYPE))
      .query(prometheusVariableQuery(index))
      .definition(prometheusVariableQuery(index))
      .multi(true)
      .includeAll(true)
      .allValue(ALL_REGEX)
      .current({ selected: true, text: ['All'], value: ['$__all'] })
      .refresh(VariableRefresh.OnTimeRangeChanged)
      .sort(v.name === 'n' ? VariableSort.NumericalAsc : VariableSort.AlphabeticalAsc),
  );
}

/**
 * Builds the dashboard.
 *
 * @example JSON.stringify(withInputs(buildImbalanceOverviewPrometheus(), [PROMETHEUS_INPUT]));
 */
export function buildImbalanceOverviewPrometheus(): dashboard.Dashboard {
  const builder = warpwatchDashboard({
    title: 'warpwatch · Imbalance overview (Prometheus)',
    uid: IMBALANCE_OVERVIEW_PROMETHEUS_UID,
    description: 'Lockstep loss per stream from the estimator\'s OpenTelemetry metrics in Prometheus (docs/exporting.md, docs/dashboards.md).',
    tags: ['warpwatch', 'imbalance', 'prometheus'],
  });
  builder.withVariable(datasourceVariable(PROMETHEUS_INPUT));
  for (const variable of streamVariables()) builder.withVariable(variable);
  builder.annotation(builtInAnnotation());
  builder
    .withPanel(
      timeseries(1, 'Loss: predicted vs counts vs measured', 'Lockstep loss C_SIMT/C_MIMD of each stream\'s latest window: predicted by the model, from the per-group counts, and measured from clocks. 1 = no imbalance.')
        .unit('none')
        .decimals(3)
        .span(24)
        .height(10),
    )
    .withPanel(timeseries(2, 'Measured over predicted', 'loss_measured / loss_predicted: 1 when the model explains the job; drifting away means hardware effects or a changed distribution.').unit('none').decimals(3).span(12).height(8))
    .withPanel(
      timeseries(3, 'Lane idle share', 'Share of lane-time idle in lockstep, 1 − 1/workload loss: measured from clocks and predicted by the model (0..1).')
        .unit('percentunit')
        .min(0)
        .max(1)
        .span(12)
        .height(8),
    )
    .withPanel(table(4, 'Windows and alerts per stream', 'Windows closed, groups seen and alerts raised per stream since the stream entered the export table.').span(12).height(8))
    .withPanel(table(5, 'Export table', 'Streams exported and streams evicted by the cap (WARPWATCH_METRICS_MAX_STREAMS) or for idleness.').span(12).height(8));
  return builder.build();
}
