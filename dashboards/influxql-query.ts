/**
 * A small typed InfluxQL query builder. The foundation SDK has no InfluxDB query builder, and
 * hand-written query strings drift from the names the estimator writes; here measurement,
 * field and tag names can only come from contracts/series.ts (the types reject anything
 * else), and the rendered text uses Grafana's InfluxQL macros (`$timeFilter`, `$__interval`,
 * `/^$var$/`) so a dashboard panel or alert rule can carry it as a raw query.
 *
 * Builders are immutable: every method returns a new builder, so a filtered base query can
 * be shared by several panels.
 */
import { FIELDS, LABEL_TAGS, MEASUREMENTS, STREAM_TAGS, TAGS } from '../contracts/index.ts';
import { DashboardsError } from './errors.ts';

/** Key of a measurement in MEASUREMENTS / FIELDS (`window`, `sweep`, ...). */
export type SeriesKey = keyof typeof FIELDS & keyof typeof MEASUREMENTS;

/** A field name the estimator writes into measurement `K`. */
export type FieldName<K extends SeriesKey> = (typeof FIELDS)[K][keyof (typeof FIELDS)[K]];

/** Any tag key the estimator writes. */
export type TagName = (typeof TAGS)[keyof typeof TAGS] | (typeof LABEL_TAGS)[keyof typeof LABEL_TAGS];

/** Label tags (estimator LABEL_TAGS) on window-ish measurements when the stream has them. */
const STREAM_LABEL_TAGS = [LABEL_TAGS.pod, LABEL_TAGS.namespace, LABEL_TAGS.node] as const;

/**
 * Tag keys per measurement, as CONTRACTS.md describes them: the stream tags on every
 * window-ish measurement, plus the one extra tag some measurements carry.
 */
export const MEASUREMENT_TAGS = {
  window: [...STREAM_TAGS, ...STREAM_LABEL_TAGS],
  sweep: [...STREAM_TAGS, ...STREAM_LABEL_TAGS, TAGS.groupSize],
  histogram: [...STREAM_TAGS, ...STREAM_LABEL_TAGS, TAGS.binLow],
  fit: [...STREAM_TAGS, ...STREAM_LABEL_TAGS],
  samples: [...STREAM_TAGS, ...STREAM_LABEL_TAGS],
  alert: [...STREAM_TAGS, ...STREAM_LABEL_TAGS, TAGS.kind, TAGS.series],
  pipeline: [TAGS.service, TAGS.instance],
} as const satisfies Record<SeriesKey, readonly TagName[]>;

/** A tag key measurement `K` carries. */
export type TagOf<K extends SeriesKey> = (typeof MEASUREMENT_TAGS)[K][number];

/** InfluxQL aggregate or selector functions the dashboards use. */
export type Aggregation = 'mean' | 'median' | 'max' | 'min' | 'last' | 'first' | 'count' | 'sum' | 'spread';

/** InfluxQL fill modes for `GROUP BY time(...)`. */
export type FillMode = 'none' | 'null' | '0' | 'previous' | 'linear';

/** One item of the select list. */
export interface FieldSelection {
  /** Field key (from FIELDS). */
  readonly field: string;
  /** Aggregate applied to the field; absent = the raw field. */
  readonly aggregation?: Aggregation;
  /**
   * Rate of a cumulative counter: `non_negative_derivative(<aggregation>(field), <unit>)`, e.g.
   * `1s` for a per-second rate. Needs `aggregation` (usually `max`) and GROUP BY time.
   */
  readonly derivativeUnit?: string;
  /** Column name in the result (`AS "alias"`); defaults to the field key. */
  readonly alias: string;
  /** True when `field` is a tag key selected as a column (`"kind"::tag`), not a field. */
  readonly isTag?: boolean;
}

/** A WHERE condition on a tag. */
export type TagCondition =
  | { readonly kind: 'variable'; readonly tag: string; readonly variable: string }
  | { readonly kind: 'equals'; readonly tag: string; readonly value: string };

/** A structured SELECT statement; {@link renderInfluxQl} turns it into text. */
export interface InfluxQlSelect {
  readonly statement: 'select';
  readonly seriesKey: SeriesKey;
  readonly measurement: string;
  readonly fields: readonly FieldSelection[];
  readonly conditions: readonly TagCondition[];
  /** True when `$timeFilter` ends the WHERE clause (always, for panels and alert rules). */
  readonly timeFilter: boolean;
  /** `GROUP BY time(<this>)`, e.g. `$__interval` or `1m`; absent = no time buckets. */
  readonly groupByTime?: string;
  readonly groupByTags: readonly string[];
  readonly fill?: FillMode;
  readonly orderByTimeDescending: boolean;
  readonly limit?: number;
}

/** A structured `SHOW TAG VALUES` statement (template variable queries). */
export interface InfluxQlShowTagValues {
  readonly statement: 'show-tag-values';
  readonly seriesKey: SeriesKey;
  readonly measurement: string;
  readonly key: string;
  readonly conditions: readonly TagCondition[];
}

/** Either statement. */
export type InfluxQlStatement = InfluxQlSelect | InfluxQlShowTagValues;

const VARIABLE_NAME = /^[A-Za-z_]\w*$/;
const DURATION = /^(\d+(ns|u|µ|ms|s|m|h|d|w))+$/;
const GRAFANA_INTERVAL_MACROS = new Set(['$__interval', '$interval']);

/** Double-quoted InfluxQL identifier; `"` and `\` escaped as InfluxQL requires. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Single-quoted InfluxQL string literal; `'` and `\` escaped. */
export function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function invalid(message: string): never {
  throw new DashboardsError('WW_ERR_DASHBOARD_QUERY_INVALID', message);
}

function renderCondition(condition: TagCondition): string {
  if (condition.kind === 'variable') {
    // The regex form is the one Grafana's InfluxQL datasource documents for template
    // variables: multi-value and "All" selections interpolate to an escaped alternation.
    return `${quoteIdentifier(condition.tag)} =~ /^$${condition.variable}$/`;
  }
  return `${quoteIdentifier(condition.tag)} = ${quoteString(condition.value)}`;
}

function renderField(selection: FieldSelection): string {
  if (selection.isTag === true) return `${quoteIdentifier(selection.field)}::tag AS ${quoteIdentifier(selection.alias)}`;
  let text = quoteIdentifier(selection.field);
  if (selection.aggregation !== undefined) text = `${selection.aggregation}(${text})`;
  if (selection.derivativeUnit !== undefined) text = `non_negative_derivative(${text}, ${selection.derivativeUnit})`;
  return `${text} AS ${quoteIdentifier(selection.alias)}`;
}

function validateSelect(query: InfluxQlSelect): void {
  const where = `query on ${query.measurement}`;
  if (query.fields.length === 0) invalid(`${where}: select list is empty; add at least one field`);
  if (query.fields.every((f) => f.isTag === true)) invalid(`${where}: InfluxQL needs at least one field in the select list, not only tags`);
  const aggregated = query.fields.filter((f) => f.aggregation !== undefined).length;
  if (aggregated > 0 && query.fields.some((f) => f.isTag === true)) invalid(`${where}: tag columns cannot be mixed with aggregated fields`);
  if (aggregated !== 0 && aggregated !== query.fields.length) {
    invalid(`${where}: InfluxQL cannot mix aggregated and raw fields, got ${aggregated} of ${query.fields.length} aggregated`);
  }
  if (query.groupByTime !== undefined && aggregated === 0) {
    invalid(`${where}: GROUP BY time(${query.groupByTime}) needs an aggregation on every field`);
  }
  const aliases = new Set<string>();
  for (const field of query.fields) {
    if (aliases.has(field.alias)) invalid(`${where}: column alias "${field.alias}" is used twice; aliases must be unique`);
    aliases.add(field.alias);
    if (field.derivativeUnit !== undefined) {
      if (field.aggregation === undefined || query.groupByTime === undefined) {
        invalid(`${where}: derivative of "${field.field}" needs an aggregation and GROUP BY time`);
      }
      if (!DURATION.test(field.derivativeUnit)) invalid(`${where}: derivative unit must be a duration like 1s, got "${field.derivativeUnit}"`);
    }
  }
  if (query.fill !== undefined && query.groupByTime === undefined) invalid(`${where}: fill(${query.fill}) needs GROUP BY time`);
  if (query.groupByTime !== undefined && !GRAFANA_INTERVAL_MACROS.has(query.groupByTime) && !DURATION.test(query.groupByTime)) {
    invalid(`${where}: GROUP BY time() takes $__interval or a duration like 1m, got "${query.groupByTime}"`);
  }
  if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 1)) {
    invalid(`${where}: LIMIT must be a positive integer, got ${query.limit}`);
  }
}

/**
 * Renders a statement as InfluxQL text with Grafana macros left in place.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the statement is not valid
 *   InfluxQL (empty select list, mixed aggregated/raw fields, fill without GROUP BY time, ...).
 * @example
 * renderInfluxQl(selectFrom('window').field(FIELDS.window.lossPredicted, { aggregation: 'mean' }).timeFiltered().build());
 * // SELECT mean("loss_predicted") AS "loss_predicted" FROM "warpwatch_window" WHERE $timeFilter
 */
export function renderInfluxQl(statement: InfluxQlStatement): string {
  if (statement.statement === 'show-tag-values') {
    let text = `SHOW TAG VALUES FROM ${quoteIdentifier(statement.measurement)} WITH KEY = ${quoteIdentifier(statement.key)}`;
    if (statement.conditions.length > 0) text += ` WHERE ${statement.conditions.map(renderCondition).join(' AND ')}`;
    return text;
  }
  validateSelect(statement);
  let text = `SELECT ${statement.fields.map(renderField).join(', ')} FROM ${quoteIdentifier(statement.measurement)}`;
  const where = statement.conditions.map(renderCondition);
  if (statement.timeFilter) where.push('$timeFilter');
  if (where.length > 0) text += ` WHERE ${where.join(' AND ')}`;
  const groupBy: string[] = [];
  if (statement.groupByTime !== undefined) groupBy.push(`time(${statement.groupByTime})`);
  groupBy.push(...statement.groupByTags.map(quoteIdentifier));
  if (groupBy.length > 0) text += ` GROUP BY ${groupBy.join(', ')}`;
  if (statement.fill !== undefined) text += ` fill(${statement.fill})`;
  if (statement.orderByTimeDescending) text += ' ORDER BY time DESC';
  if (statement.limit !== undefined) text += ` LIMIT ${statement.limit}`;
  return text;
}

/** Options of {@link SelectQueryBuilder.field}. */
export interface FieldOptions {
  readonly aggregation?: Aggregation;
  /** Per-unit rate of a cumulative counter (see {@link FieldSelection.derivativeUnit}). */
  readonly derivativeUnit?: string;
  readonly alias?: string;
}

/**
 * Immutable builder of a SELECT on one estimator measurement.
 *
 * @example
 * const q = selectFrom('window')
 *   .field(FIELDS.window.lossMeasured, { aggregation: 'mean' })
 *   .whereVariable(TAGS.job, 'job')
 *   .timeFiltered()
 *   .groupByTime()
 *   .groupBy(TAGS.stream)
 *   .fill('none')
 *   .render();
 */
export class SelectQueryBuilder<K extends SeriesKey> {
  private readonly query: InfluxQlSelect;

  /** Use {@link selectFrom}. */
  constructor(query: InfluxQlSelect) {
    this.query = query;
  }

  private with(change: Partial<InfluxQlSelect>): SelectQueryBuilder<K> {
    return new SelectQueryBuilder<K>({ ...this.query, ...change });
  }

  /** Adds a field to the select list. */
  field(field: FieldName<K>, options: FieldOptions = {}): SelectQueryBuilder<K> {
    const name = field as string;
    const selection: FieldSelection = {
      field: name,
      alias: options.alias ?? name,
      ...(options.aggregation === undefined ? {} : { aggregation: options.aggregation }),
      ...(options.derivativeUnit === undefined ? {} : { derivativeUnit: options.derivativeUnit }),
    };
    return this.with({ fields: [...this.query.fields, selection] });
  }

  /** Selects a tag as a column of raw rows (tables, annotations): `"tag"::tag AS "tag"`. */
  tagColumn(tag: TagOf<K>, alias: string = tag): SelectQueryBuilder<K> {
    return this.with({ fields: [...this.query.fields, { field: tag, alias, isTag: true }] });
  }

  /**
   * Keeps rows whose tag matches the dashboard variable, as `"tag" =~ /^$variable$/`.
   *
   * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when the variable name is not a word.
   */
  whereVariable(tag: TagOf<K>, variable: string): SelectQueryBuilder<K> {
    if (!VARIABLE_NAME.test(variable)) invalid(`template variable name must match ${VARIABLE_NAME.source}, got "${variable}"`);
    return this.with({ conditions: [...this.query.conditions, { kind: 'variable', tag, variable }] });
  }

  /** Keeps rows whose tag equals a literal value, as `"tag" = 'value'`. */
  whereEquals(tag: TagOf<K>, value: string): SelectQueryBuilder<K> {
    return this.with({ conditions: [...this.query.conditions, { kind: 'equals', tag, value }] });
  }

  /** Ends the WHERE clause with Grafana's `$timeFilter` (the dashboard or rule time range). */
  timeFiltered(): SelectQueryBuilder<K> {
    return this.with({ timeFilter: true });
  }

  /** `GROUP BY time(interval)`; default `$__interval` (Grafana's panel interval). */
  groupByTime(interval = '$__interval'): SelectQueryBuilder<K> {
    return this.with({ groupByTime: interval });
  }

  /** Adds tags to GROUP BY: one result series per tag combination. */
  groupBy(...tags: TagOf<K>[]): SelectQueryBuilder<K> {
    return this.with({ groupByTags: [...this.query.groupByTags, ...tags] });
  }

  /** `fill(mode)` for empty time buckets. */
  fill(mode: FillMode): SelectQueryBuilder<K> {
    return this.with({ fill: mode });
  }

  /** Newest rows first (`ORDER BY time DESC`). */
  newestFirst(): SelectQueryBuilder<K> {
    return this.with({ orderByTimeDescending: true });
  }

  /** `LIMIT n` rows per series. */
  limit(rows: number): SelectQueryBuilder<K> {
    return this.with({ limit: rows });
  }

  /** The structured statement. */
  build(): InfluxQlSelect {
    return this.query;
  }

  /** The InfluxQL text (see {@link renderInfluxQl}). */
  render(): string {
    return renderInfluxQl(this.query);
  }
}

/**
 * Starts a SELECT on the measurement the estimator writes under `MEASUREMENTS[seriesKey]`.
 *
 * @example
 * selectFrom('pipeline').field(FIELDS.pipeline.consumerLag, { aggregation: 'max' }).timeFiltered().render();
 */
export function selectFrom<K extends SeriesKey>(seriesKey: K): SelectQueryBuilder<K> {
  return new SelectQueryBuilder<K>({
    statement: 'select',
    seriesKey,
    measurement: MEASUREMENTS[seriesKey],
    fields: [],
    conditions: [],
    timeFilter: false,
    groupByTags: [],
    orderByTimeDescending: false,
  });
}

/**
 * `SHOW TAG VALUES FROM <measurement> WITH KEY = <tag> [WHERE "t" =~ /^$var$/ AND ...]`:
 * the query of a template variable that lists the values of one tag, filtered by the
 * variables before it.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_QUERY_INVALID` when a variable name is not a word.
 * @example
 * renderInfluxQl(showTagValues('window', TAGS.kernel, [[TAGS.job, 'job']]));
 * // SHOW TAG VALUES FROM "warpwatch_window" WITH KEY = "kernel" WHERE "job" =~ /^$job$/
 */
export function showTagValues<K extends SeriesKey>(
  seriesKey: K,
  key: TagOf<K>,
  filters: readonly (readonly [TagOf<K>, string])[] = [],
): InfluxQlShowTagValues {
  for (const [, variable] of filters) {
    if (!VARIABLE_NAME.test(variable)) invalid(`template variable name must match ${VARIABLE_NAME.source}, got "${variable}"`);
  }
  return {
    statement: 'show-tag-values',
    seriesKey,
    measurement: MEASUREMENTS[seriesKey],
    key,
    conditions: filters.map(([tag, variable]) => ({ kind: 'variable', tag, variable })),
  };
}
