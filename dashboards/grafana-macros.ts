/**
 * Substitutes Grafana's macros and template variables into an InfluxQL raw query the way
 * Grafana's InfluxDB datasource (InfluxQL mode, backend query path of Grafana 10+) does, so
 * tests can run exactly the text Grafana would send to InfluxDB.
 *
 * Two stages, in Grafana's order:
 * 1. Frontend, `templateSrv.replace(query, scopedVars, 'regex')` (public/app/plugins/
 *    datasource/influxdb/datasource.ts `applyVariables`): `$var`, `${var}`, `${var:fmt}` and
 *    `[[var]]` of dashboard variables are replaced; values are regex-escaped with
 *    `escapeRegex` of @grafana/data, multi-value selections become `(a|b)`, a one-element
 *    selection becomes `a`; "All" with a custom all value inserts that value unescaped.
 *    Names that are not dashboard variables (`$timeFilter`, `$__interval`) stay as they are.
 * 2. Backend, pkg/tsdb/influxdb/models/query.go `Build`: `$timeFilter` →
 *    `time >= <from>ms and time <= <to>ms`, `$interval` and `$__interval` →
 *    gtime.FormatInterval(interval) (e.g. `10s`), `$__interval_ms` → milliseconds.
 *
 * Grafana's older frontend query path (before the backend migration) differs only in writing
 * a one-element multi-value selection as `(a)` instead of `a`, which matches the same rows.
 */
import { DashboardsError } from './errors.ts';

/** Grafana's marker for the "All" option of a variable. */
export const ALL_VALUE_MARKER = '$__all';

/** The state of one dashboard template variable at query time. */
export interface TemplateVariableState {
  /** Selected value; a list for multi-value selections; {@link ALL_VALUE_MARKER} for "All". */
  readonly value: string | readonly string[];
  /** Custom value inserted for "All" (e.g. `.*`); absent = all option values as `(a|b|...)`. */
  readonly allValue?: string;
  /** Every option value of the variable (used for "All" without a custom all value). */
  readonly options?: readonly string[];
}

/** What Grafana knows when it runs a panel, annotation or alert query. */
export interface GrafanaQueryContext {
  /** Start of the time range, epoch milliseconds. */
  readonly fromMillis: number;
  /** End of the time range, epoch milliseconds. */
  readonly toMillis: number;
  /** The query interval (`$__interval`) in milliseconds; Grafana raises it to ≥ 1 ms. */
  readonly intervalMillis: number;
  /** Dashboard template variables by name. */
  readonly variables?: Readonly<Record<string, TemplateVariableState>>;
}

/**
 * Escapes regex metacharacters exactly as @grafana/data `escapeRegex` does (the formatter
 * behind the `regex` variable format): `\ ^ $ * + ? . ( ) | [ ] { } /` get a backslash.
 * The slash matters here: stream ids (`job/kernel`) sit inside InfluxQL `/.../` literals.
 *
 * @example
 * escapeGrafanaRegex('matpow/k1.v2'); // 'matpow\\/k1\\.v2'
 */
export function escapeGrafanaRegex(value: string): string {
  return value.replace(/[\\^$*+?.()|[\]{}/]/g, '\\$&');
}

/**
 * Formats a duration as Grafana's backend does for `$__interval` (gtime.FormatInterval):
 * the largest whole unit among y, d, h, m, s, ms, truncated; below 1 ms → `1ms`.
 *
 * @throws RangeError when `intervalMillis` is not a finite number ≥ 0.
 * @example
 * formatGrafanaInterval(10_000); // '10s'
 * formatGrafanaInterval(90_000); // '1m'
 */
export function formatGrafanaInterval(intervalMillis: number): string {
  if (!Number.isFinite(intervalMillis) || intervalMillis < 0) {
    throw new RangeError(`interval must be a finite number of milliseconds ≥ 0, got ${intervalMillis}`);
  }
  const units: readonly (readonly [string, number])[] = [
    ['y', 365 * 24 * 3_600_000],
    ['d', 24 * 3_600_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
    ['ms', 1],
  ];
  for (const [suffix, size] of units) {
    if (intervalMillis >= size) return `${Math.floor(intervalMillis / size)}${suffix}`;
  }
  return '1ms';
}

// Grafana's variable syntax (templateSrv `variableRegex`): $name, [[name(:fmt)]], ${name(.path)(:fmt)}.
const VARIABLE_PATTERN = /\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^}]+))?(?::([^}]+))?\}/g;

function formatValue(name: string, value: string | readonly string[], format: string): string {
  if (format === 'raw') return typeof value === 'string' ? value : value.join(',');
  if (format !== 'regex') {
    throw new DashboardsError(
      'WW_ERR_DASHBOARD_TEMPLATE_VARIABLE',
      `variable "${name}" uses format "${format}"; the InfluxQL substitution supports regex (default) and raw`,
    );
  }
  if (typeof value === 'string') return escapeGrafanaRegex(value);
  const escaped = value.map(escapeGrafanaRegex);
  return escaped.length === 1 ? (escaped[0] as string) : `(${escaped.join('|')})`;
}

/**
 * Stage 1: replaces dashboard template variables (Grafana's `regex` format).
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_TEMPLATE_VARIABLE` for "All" without options or
 *   custom all value, or an unsupported `${var:format}`.
 * @example
 * replaceTemplateVariables('"job" =~ /^$job$/', { job: { value: ['a', 'b.c'] } }); // '"job" =~ /^(a|b\\.c)$/'
 */
export function replaceTemplateVariables(
  query: string,
  variables: Readonly<Record<string, TemplateVariableState>>,
): string {
  return query.replace(VARIABLE_PATTERN, (match: string, ...groups: (string | undefined)[]) => {
    const name = groups[0] ?? groups[1] ?? groups[3];
    const format = groups[2] ?? groups[5] ?? 'regex';
    if (name === undefined || !Object.hasOwn(variables, name)) return match;
    const state = variables[name] as TemplateVariableState;
    if (state.value === ALL_VALUE_MARKER || (Array.isArray(state.value) && state.value.includes(ALL_VALUE_MARKER))) {
      // templateSrv: a custom all value is inserted as it is, never formatted.
      if (state.allValue !== undefined) return state.allValue;
      if (state.options === undefined) {
        throw new DashboardsError(
          'WW_ERR_DASHBOARD_TEMPLATE_VARIABLE',
          `variable "${name}" is set to All but has neither a custom all value nor a list of options`,
        );
      }
      return formatValue(name, state.options, format);
    }
    return formatValue(name, state.value, format);
  });
}

/**
 * Stage 2: the macros Grafana's InfluxDB backend replaces in a raw InfluxQL query.
 *
 * @throws RangeError when the time range is not finite or `from > to`.
 * @example
 * replaceInfluxMacros('WHERE $timeFilter GROUP BY time($__interval)', { fromMillis: 0, toMillis: 60_000, intervalMillis: 10_000 });
 * // 'WHERE time >= 0ms and time <= 60000ms GROUP BY time(10s)'
 */
export function replaceInfluxMacros(query: string, context: GrafanaQueryContext): string {
  const { fromMillis, toMillis } = context;
  if (!Number.isFinite(fromMillis) || !Number.isFinite(toMillis) || fromMillis > toMillis) {
    throw new RangeError(`time range must be finite with from ≤ to, got from=${fromMillis} to=${toMillis}`);
  }
  // models.ParseQuery raises the interval to at least 1 ms.
  const intervalMillis = Math.max(1, Math.floor(context.intervalMillis));
  const intervalText = formatGrafanaInterval(intervalMillis);
  const timeFilter = `time >= ${Math.trunc(fromMillis)}ms and time <= ${Math.trunc(toMillis)}ms`;
  return query
    .replaceAll('$timeFilter', timeFilter)
    .replaceAll('$interval', intervalText)
    .replaceAll('$__interval_ms', String(intervalMillis))
    .replaceAll('$__interval', intervalText);
}

/**
 * Both stages: the exact InfluxQL text Grafana sends to InfluxDB for a raw query.
 *
 * @throws DashboardsError `WW_ERR_DASHBOARD_TEMPLATE_VARIABLE`, RangeError (see the stages).
 * @example
 * interpolateInfluxQl('SELECT mean("loss_measured") FROM "warpwatch_window" WHERE "job" =~ /^$job$/ AND $timeFilter GROUP BY time($__interval)',
 *   { fromMillis: 1000, toMillis: 61000, intervalMillis: 10000, variables: { job: { value: 'matpow' } } });
 */
export function interpolateInfluxQl(query: string, context: GrafanaQueryContext): string {
  return replaceInfluxMacros(replaceTemplateVariables(query, context.variables ?? {}), context);
}
