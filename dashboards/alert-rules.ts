/**
 * Grafana unified-alerting rules for warpwatch, as a file-provisioning document
 * (apiVersion 1, one rule group). Rules are built with the foundation SDK's alerting and
 * expression builders (typed queries, reduce / math / threshold expressions) and converted
 * to the provisioning file shape. Data queries are InfluxQL on the provisioned datasource;
 * the expressions run on Grafana's server-side expression engine (`__expr__`).
 *
 * Each rule's title, uid, thresholds, windows, `for`, labels, summary and runbook come from
 * alert-definitions.ts, which the Prometheus rules (prometheus-rules.ts) are generated from too:
 * - rising imbalance: mean measured loss in the window above a factor times its baseline, with
 *   a minimum number of groups;
 * - drift: mean relative error between the prediction (locality-aware where it exists) and the
 *   measured loss above a threshold;
 * - stale stream: a stream that wrote windows in the lookback wrote none lately;
 * - pipeline stalled: a service received frames but emitted none, or no service reported its
 *   own metrics at all (no data → alerting).
 */
import { QueryBuilder, RuleBuilder, type Query, type Rule } from '@grafana/grafana-foundation-sdk/alerting';
import { TypeMathBuilder, TypeReduceBuilder, TypeThresholdBuilder } from '@grafana/grafana-foundation-sdk/expr';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { FIELDS, LABEL_TAGS, TAGS } from '../contracts/index.ts';
import { ALERT_DEFINITIONS, runbookUrl, type AlertDefinition, type SummaryLabels } from './alert-definitions.ts';
import { EXPRESSION_DATASOURCE_UID, INFLUXQL_DATASOURCE_UID, influxQlDatasourceRef } from './datasource.ts';
import { IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS } from './imbalance-overview.ts';
import type { InfluxQlTarget, QueryCatalog } from './influx-target.ts';
import { selectFrom, type InfluxQlStatement } from './influxql-query.ts';
import { PIPELINE_HEALTH_UID, PIPELINE_PANEL_IDS } from './pipeline-health.ts';
import { promDuration } from './prometheus-rules.ts';

/** Name of the rule group (and the key under which its queries are cataloged). */
export const ALERT_RULE_GROUP = 'warpwatch';

/** Title of the Grafana folder the rules are provisioned into. */
export const ALERT_RULE_FOLDER = 'warpwatch';

/** How often Grafana evaluates the group. */
export const ALERT_EVALUATION_INTERVAL = '1m';

/** Drift rule fires when the mean |predicted − measured| / predicted over its window exceeds this (alert-definitions.ts). */
export const DRIFT_RELATIVE_ERROR_THRESHOLD = ALERT_DEFINITIONS.drift.params.relativeError;

/** A stream is stale when it wrote no window for this many seconds after writing some in the lookback (alert-definitions.ts). */
export const STALE_AFTER_SECONDS = ALERT_DEFINITIONS.streamStale.params.staleSeconds;

/** One data query of a provisioned rule. */
export interface ProvisionedRuleQuery {
  refId: string;
  relativeTimeRange?: { from: number; to: number };
  datasourceUid: string;
  model: Record<string, unknown>;
}

/** One rule in Grafana's alerting file-provisioning format. */
export interface ProvisionedRule {
  uid: string;
  title: string;
  condition: string;
  data: ProvisionedRuleQuery[];
  noDataState: Rule['noDataState'];
  execErrState: Rule['execErrState'];
  for: string;
  annotations: Record<string, string>;
  labels: Record<string, string>;
  isPaused: boolean;
}

/** The provisioning document (`apiVersion: 1`, `groups: [...]`). */
export interface AlertRuleProvisioning {
  apiVersion: 1;
  groups: {
    orgId: number;
    name: string;
    folder: string;
    interval: string;
    rules: ProvisionedRule[];
  }[];
}

interface RuleQueryContext {
  readonly catalog: QueryCatalog;
  readonly ruleTitle: string;
}

function influxQuery(context: RuleQueryContext, refId: string, statement: InfluxQlStatement, fromSeconds: number, toSeconds = 0): cog.Builder<Query> {
  const query = context.catalog.add({ document: ALERT_RULE_GROUP, placement: 'alert-rule', owner: context.ruleTitle, refId, statement });
  const model: InfluxQlTarget & { intervalMs: number; maxDataPoints: number } = {
    refId,
    datasource: influxQlDatasourceRef(),
    query,
    rawQuery: true,
    resultFormat: 'time_series',
    intervalMs: 1000,
    maxDataPoints: 43200,
    _implementsDataqueryVariant() {},
  };
  return new QueryBuilder(refId)
    .datasourceUid(INFLUXQL_DATASOURCE_UID)
    .relativeTimeRange({ from: fromSeconds, to: toSeconds })
    .model({ build: () => model });
}

function expressionQuery(refId: string, expression: cog.Builder<cog.Dataquery>): QueryBuilder {
  return new QueryBuilder(refId).datasourceUid(EXPRESSION_DATASOURCE_UID).model(expression);
}

const expressionDatasource = { type: EXPRESSION_DATASOURCE_UID, uid: EXPRESSION_DATASOURCE_UID };

function reduce(refId: string, input: string, reducer: 'last' | 'sum' | 'mean' | 'max'): QueryBuilder {
  return expressionQuery(
    refId,
    new TypeReduceBuilder().refId(refId).datasource(expressionDatasource).expression(input).reducer(reducer).settings({ mode: 'dropNN' }),
  );
}

function math(refId: string, expression: string): QueryBuilder {
  return expressionQuery(refId, new TypeMathBuilder().refId(refId).datasource(expressionDatasource).expression(expression));
}

function threshold(refId: string, input: string, type: 'gt' | 'lt', value: number): QueryBuilder {
  return expressionQuery(
    refId,
    new TypeThresholdBuilder()
      .refId(refId)
      .datasource(expressionDatasource)
      .expression(input)
      .conditions([{ evaluator: { type, params: [value] } }]),
  );
}

function panelLink(dashboardUid: string, panelId: number): Record<string, string> {
  return { __dashboardUid__: dashboardUid, __panelId__: String(panelId) };
}

/** Label placeholders of the Grafana rules: the InfluxDB tags the queries group by. */
export const GRAFANA_SUMMARY_LABELS: SummaryLabels = Object.freeze({
  stream: `{{ $labels.${TAGS.stream} }}`,
  service: `{{ $labels.${TAGS.service} }}`,
  instance: `{{ $labels.${TAGS.instance} }}`,
});

/** Tags a per-stream rule groups by: the stream identity (alert-definitions.ts lists the Prometheus side). */
const STREAM_GROUP_TAGS = [TAGS.stream, TAGS.job, TAGS.kernel, TAGS.n, TAGS.host, LABEL_TAGS.pod, LABEL_TAGS.namespace, TAGS.device, TAGS.deviceUuid, TAGS.source] as const;

function grafanaTitle(definition: AlertDefinition): string {
  if (definition.grafana === undefined) throw new Error(`${definition.alertname} has no Grafana rule`);
  return definition.grafana.title;
}

/** A RuleBuilder with the title, uid, for, labels and annotations of `definition`. */
function definedRule(definition: AlertDefinition): RuleBuilder {
  return new RuleBuilder(grafanaTitle(definition))
    .uid(definition.grafana?.uid ?? '')
    .execErrState('Error')
    .forDuration(promDuration(definition.forSeconds))
    .labels({ severity: definition.severity, component: definition.component });
}

function annotations(definition: AlertDefinition, description: string, panel: Record<string, string>): Record<string, string> {
  return { summary: definition.summary(GRAFANA_SUMMARY_LABELS), description, runbook_url: runbookUrl(definition), ...panel };
}

function rules(catalog: QueryCatalog): RuleBuilder[] {
  const risingDefinition = ALERT_DEFINITIONS.risingImbalance;
  const risingContext = { catalog, ruleTitle: grafanaTitle(risingDefinition) };
  const { factor, windowSeconds, baselineSeconds, minGroups } = risingDefinition.params;
  const meanMeasured = selectFrom('window').field(FIELDS.window.lossMeasured, { aggregation: 'mean' }).timeFiltered().groupBy(...STREAM_GROUP_TAGS).build();
  const rising = definedRule(risingDefinition)
    // A: mean measured loss in the window; B: its mean over the baseline before the window;
    // C: groups in the window (the minimum volume, so idle streams do not flap).
    .withQuery(influxQuery(risingContext, 'A', meanMeasured, windowSeconds))
    .withQuery(influxQuery(risingContext, 'B', meanMeasured, windowSeconds + baselineSeconds, windowSeconds))
    .withQuery(influxQuery(risingContext, 'C', selectFrom('window').field(FIELDS.window.groups, { aggregation: 'sum' }).timeFiltered().groupBy(...STREAM_GROUP_TAGS).build(), windowSeconds))
    .withQuery(reduce('D', 'A', 'last'))
    .withQuery(reduce('E', 'B', 'last'))
    .withQuery(reduce('F', 'C', 'last'))
    .withQuery(math('G', `$D > ${factor} * $E && $F >= ${minGroups}`))
    .withQuery(threshold('H', 'G', 'gt', 0))
    .condition('H')
    .noDataState('OK')
    .annotations(
      annotations(
        risingDefinition,
        `${risingDefinition.description(risingDefinition.params)} Now {{ $values.D }}, baseline {{ $values.E }}. Open the Imbalance overview, compare the iteration-count distribution before and after the change.`,
        panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.loss),
      ),
    );

  const driftDefinition = ALERT_DEFINITIONS.drift;
  const driftContext = { catalog, ruleTitle: grafanaTitle(driftDefinition) };
  const { relativeError, windowSeconds: driftWindow, minGroups: driftMinGroups } = driftDefinition.params;
  const drift = definedRule(driftDefinition)
    // A: mean η against the locality-aware prediction where the stream has sampled groups
    // (eta_drift), so a kernel whose neighbouring lanes do alike work does not alert forever;
    // B: groups in the window (the minimum volume).
    .withQuery(influxQuery(driftContext, 'A', selectFrom('window').field(FIELDS.window.etaDrift, { aggregation: 'mean' }).timeFiltered().groupBy(...STREAM_GROUP_TAGS).build(), driftWindow))
    .withQuery(influxQuery(driftContext, 'B', selectFrom('window').field(FIELDS.window.groups, { aggregation: 'sum' }).timeFiltered().groupBy(...STREAM_GROUP_TAGS).build(), driftWindow))
    .withQuery(reduce('C', 'A', 'last'))
    .withQuery(reduce('D', 'B', 'last'))
    .withQuery(math('E', `$C > ${relativeError} && $D >= ${driftMinGroups}`))
    .withQuery(threshold('F', 'E', 'gt', 0))
    .condition('F')
    .noDataState('OK')
    .annotations(
      annotations(
        driftDefinition,
        `${driftDefinition.description(driftDefinition.params)} Now {{ $values.C }}. The iteration-count model no longer explains the job: check the Relative errors panel (counts vs measured points at effects outside iteration counts).`,
        panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.relativeErrors),
      ),
    );

  const staleDefinition = ALERT_DEFINITIONS.streamStale;
  const staleContext = { catalog, ruleTitle: grafanaTitle(staleDefinition) };
  const { staleSeconds, lookbackSeconds } = staleDefinition.params;
  const windowCount = selectFrom('window').field(FIELDS.window.lossPredicted, { aggregation: 'count', alias: 'windows' }).timeFiltered().groupBy(...STREAM_GROUP_TAGS).build();
  const stale = definedRule(staleDefinition)
    // A: windows in the lookback; B: windows in the lookback up to staleSeconds ago. A stream
    // present in B with A − B = 0 wrote nothing in the last staleSeconds. A stream that started
    // less than staleSeconds ago is absent from B and drops out of the math (no false alarm).
    .withQuery(influxQuery(staleContext, 'A', windowCount, lookbackSeconds))
    .withQuery(influxQuery(staleContext, 'B', windowCount, lookbackSeconds, staleSeconds))
    .withQuery(reduce('C', 'A', 'last'))
    .withQuery(reduce('D', 'B', 'last'))
    .withQuery(math('E', '$C - $D'))
    .withQuery(threshold('F', 'E', 'lt', 1))
    .condition('F')
    .noDataState('OK')
    .annotations(annotations(staleDefinition, `${staleDefinition.description(staleDefinition.params)} Check the Pipeline health dashboard.`, panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.sampleSize)));

  const stalledDefinition = ALERT_DEFINITIONS.pipelineStalled;
  const stalledContext = { catalog, ruleTitle: grafanaTitle(stalledDefinition) };
  const stalledWindow = stalledDefinition.params.windowSeconds;
  const spread = (field: typeof FIELDS.pipeline.framesIn | typeof FIELDS.pipeline.framesOut) =>
    selectFrom('pipeline').field(field, { aggregation: 'spread' }).timeFiltered().groupBy(TAGS.service, TAGS.instance).build();
  const stalled = definedRule(stalledDefinition)
    .withQuery(influxQuery(stalledContext, 'A', spread(FIELDS.pipeline.framesIn), stalledWindow))
    .withQuery(influxQuery(stalledContext, 'B', spread(FIELDS.pipeline.framesOut), stalledWindow))
    .withQuery(reduce('C', 'A', 'last'))
    .withQuery(reduce('D', 'B', 'last'))
    .withQuery(math('E', '$C > 0 && $D == 0'))
    .withQuery(threshold('F', 'E', 'gt', 0))
    .condition('F')
    // No self-metrics from any service for the window means the services are down.
    .noDataState('Alerting')
    .annotations(
      annotations(
        stalledDefinition,
        `${stalledDefinition.description(stalledDefinition.params)} (Or no service reported metrics at all.) Check Kafka, the consumer lag and the InfluxDB write errors on the Pipeline health dashboard.`,
        panelLink(PIPELINE_HEALTH_UID, PIPELINE_PANEL_IDS.frameRates),
      ),
    );

  return [rising, drift, stale, stalled];
}

function toProvisionedRule(rule: Rule): ProvisionedRule {
  // JSON round trip drops the SDK's `_implementsDataqueryVariant` marker functions.
  const data = JSON.parse(JSON.stringify(rule.data)) as ProvisionedRuleQuery[];
  return {
    uid: rule.uid ?? '',
    title: rule.title,
    condition: rule.condition,
    data,
    noDataState: rule.noDataState,
    execErrState: rule.execErrState,
    for: rule.for,
    annotations: rule.annotations ?? {},
    labels: rule.labels ?? {},
    isPaused: rule.isPaused ?? false,
  };
}

/**
 * Builds the alert-rule provisioning document; every InfluxQL query is recorded in `catalog`.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` if a query definition is invalid.
 * @example
 * const yamlText = stringify(buildAlertRules(createQueryCatalog()));
 */
export function buildAlertRules(catalog: QueryCatalog): AlertRuleProvisioning {
  return {
    apiVersion: 1,
    groups: [
      {
        orgId: 1,
        name: ALERT_RULE_GROUP,
        folder: ALERT_RULE_FOLDER,
        interval: ALERT_EVALUATION_INTERVAL,
        rules: rules(catalog).map((builder) => toProvisionedRule(builder.build())),
      },
    ],
  };
}
