/**
 * Grafana unified-alerting rules for warpwatch, as a file-provisioning document
 * (apiVersion 1, one rule group). Rules are built with the foundation SDK's alerting and
 * expression builders (typed queries, reduce / math / threshold expressions) and converted
 * to the provisioning file shape. Data queries are InfluxQL on the provisioned datasource;
 * the expressions run on Grafana's server-side expression engine (`__expr__`).
 *
 * Rules:
 * - rising imbalance: the estimator's change detector raised a `rising_imbalance` event;
 * - drift: mean relative error between predicted and measured loss above a threshold;
 * - stale stream: a stream that wrote windows in the last hour wrote none in the last 5 min;
 * - pipeline stalled: a service received frames but emitted none for 5 min, or no service
 *   reported its own metrics at all (no data → alerting).
 */
import { QueryBuilder, RuleBuilder, type Query, type Rule } from '@grafana/grafana-foundation-sdk/alerting';
import { TypeMathBuilder, TypeReduceBuilder, TypeThresholdBuilder } from '@grafana/grafana-foundation-sdk/expr';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import { ALERT_KINDS, FIELDS, TAGS } from '../contracts/index.ts';
import { EXPRESSION_DATASOURCE_UID, INFLUXQL_DATASOURCE_UID, influxQlDatasourceRef } from './datasource.ts';
import { IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS } from './imbalance-overview.ts';
import type { InfluxQlTarget, QueryCatalog } from './influx-target.ts';
import { selectFrom, type InfluxQlStatement } from './influxql-query.ts';
import { PIPELINE_HEALTH_UID, PIPELINE_PANEL_IDS } from './pipeline-health.ts';

/** Name of the rule group (and the key under which its queries are cataloged). */
export const ALERT_RULE_GROUP = 'warpwatch';

/** Title of the Grafana folder the rules are provisioned into. */
export const ALERT_RULE_FOLDER = 'warpwatch';

/** How often Grafana evaluates the group. */
export const ALERT_EVALUATION_INTERVAL = '1m';

/** Drift rule fires when the mean |predicted − measured| / predicted over 30 min exceeds this. */
export const DRIFT_RELATIVE_ERROR_THRESHOLD = 0.25;

/** A stream is stale when it wrote no window for this many seconds after writing some in the last hour. */
export const STALE_AFTER_SECONDS = 300;

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

function rules(catalog: QueryCatalog): RuleBuilder[] {
  const risingTitle = 'Rising imbalance';
  const rising = new RuleBuilder(risingTitle)
    .uid('warpwatch-rising-imbalance')
    .withQuery(
      influxQuery(
        { catalog, ruleTitle: risingTitle },
        'A',
        selectFrom('alert')
          .field(FIELDS.alert.newLevel, { aggregation: 'count', alias: 'events' })
          .whereEquals(TAGS.kind, ALERT_KINDS.risingImbalance)
          .timeFiltered()
          .groupBy(TAGS.stream)
          .build(),
        900,
      ),
    )
    .withQuery(reduce('B', 'A', 'sum'))
    .withQuery(threshold('C', 'B', 'gt', 0))
    .condition('C')
    .noDataState('OK')
    .execErrState('Error')
    .forDuration('0s')
    .labels({ severity: 'warning', component: 'imbalance' })
    .annotations({
      summary: 'Lockstep loss of {{ $labels.stream }} rose (change detected by the estimator)',
      description:
        'The estimator\'s sequential change detector raised {{ $values.B }} rising-imbalance event(s) for {{ $labels.stream }} in the last 15 min. Open the Imbalance overview, compare the iteration-count distribution before and after the change.',
      ...panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.loss),
    });

  const driftTitle = 'Prediction/measurement drift';
  const drift = new RuleBuilder(driftTitle)
    .uid('warpwatch-drift')
    .withQuery(
      influxQuery(
        { catalog, ruleTitle: driftTitle },
        'A',
        selectFrom('window')
          // η against the locality-aware prediction where the stream has sampled groups (eta_drift),
          // so a kernel whose neighbouring lanes do alike work does not alert forever.
          .field(FIELDS.window.etaDrift, { aggregation: 'mean' })
          .timeFiltered()
          .groupBy(TAGS.stream)
          .build(),
        1800,
      ),
    )
    .withQuery(reduce('B', 'A', 'last'))
    .withQuery(threshold('C', 'B', 'gt', DRIFT_RELATIVE_ERROR_THRESHOLD))
    .condition('C')
    .noDataState('OK')
    .execErrState('Error')
    .forDuration('10m')
    .labels({ severity: 'warning', component: 'model' })
    .annotations({
      summary: 'Predicted and measured loss of {{ $labels.stream }} drifted apart',
      description: `Mean relative error between predicted and measured loss over 30 min is {{ $values.B }} (threshold ${DRIFT_RELATIVE_ERROR_THRESHOLD}; the prediction is the locality-aware one where the stream has sampled groups, docs/model.md §11). The iteration-count model no longer explains the job: check the Relative errors panel (counts vs measured points at effects outside iteration counts).`,
      ...panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.relativeErrors),
    });

  const staleTitle = 'No data from a live stream';
  const staleContext = { catalog, ruleTitle: staleTitle };
  const windowCount = selectFrom('window').field(FIELDS.window.lossPredicted, { aggregation: 'count', alias: 'windows' }).timeFiltered().groupBy(TAGS.stream).build();
  const stale = new RuleBuilder(staleTitle)
    .uid('warpwatch-stream-stale')
    // A: windows in the last hour; B: windows in the last hour up to 5 min ago. A stream
    // present in B with A − B = 0 wrote nothing in the last 5 min. A stream that started
    // less than 5 min ago is absent from B and drops out of the math (no false alarm).
    .withQuery(influxQuery(staleContext, 'A', windowCount, 3600))
    .withQuery(influxQuery(staleContext, 'B', windowCount, 3600, STALE_AFTER_SECONDS))
    .withQuery(reduce('C', 'A', 'last'))
    .withQuery(reduce('D', 'B', 'last'))
    .withQuery(math('E', '$C - $D'))
    .withQuery(threshold('F', 'E', 'lt', 1))
    .condition('F')
    .noDataState('OK')
    .execErrState('Error')
    .forDuration('0s')
    .labels({ severity: 'warning', component: 'pipeline' })
    .annotations({
      summary: 'Stream {{ $labels.stream }} stopped reporting',
      description: `{{ $labels.stream }} wrote windows in the last hour but none in the last ${STALE_AFTER_SECONDS / 60} min. Either the job ended, or frames stopped flowing (check the Pipeline health dashboard).`,
      ...panelLink(IMBALANCE_OVERVIEW_UID, IMBALANCE_PANEL_IDS.sampleSize),
    });

  const stalledTitle = 'Pipeline stalled';
  const stalledContext = { catalog, ruleTitle: stalledTitle };
  const spread = (field: typeof FIELDS.pipeline.framesIn | typeof FIELDS.pipeline.framesOut) =>
    selectFrom('pipeline').field(field, { aggregation: 'spread' }).timeFiltered().groupBy(TAGS.service, TAGS.instance).build();
  const stalled = new RuleBuilder(stalledTitle)
    .uid('warpwatch-pipeline-stalled')
    .withQuery(influxQuery(stalledContext, 'A', spread(FIELDS.pipeline.framesIn), 300))
    .withQuery(influxQuery(stalledContext, 'B', spread(FIELDS.pipeline.framesOut), 300))
    .withQuery(reduce('C', 'A', 'last'))
    .withQuery(reduce('D', 'B', 'last'))
    .withQuery(math('E', '$C > 0 && $D == 0'))
    .withQuery(threshold('F', 'E', 'gt', 0))
    .condition('F')
    // No self-metrics from any service for 5 min means the services are down.
    .noDataState('Alerting')
    .execErrState('Error')
    .forDuration('5m')
    .labels({ severity: 'critical', component: 'pipeline' })
    .annotations({
      summary: '{{ $labels.service }} {{ $labels.instance }} takes frames in but emits none',
      description:
        'For 5 min the instance counted incoming frames but no outgoing ones (or no service reported metrics at all). Check Kafka, the consumer lag and the InfluxDB write errors on the Pipeline health dashboard.',
      ...panelLink(PIPELINE_HEALTH_UID, PIPELINE_PANEL_IDS.frameRates),
    });

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
