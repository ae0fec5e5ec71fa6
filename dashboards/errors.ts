/**
 * Errors of dashboards/: dashboards, alert rules and the InfluxQL they carry.
 * One base class with a stable `code`, a `retriable` flag and the underlying `cause`; every
 * code is listed in {@link DASHBOARDS_ERROR_CODES} and documented in docs/errors.md.
 */

/** Every error code dashboards/ raises. */
export const DASHBOARDS_ERROR_CODES = [
  'WW_ERR_DASHBOARD_QUERY_INVALID',
  'WW_ERR_DASHBOARD_UNKNOWN_SERIES_NAME',
  'WW_ERR_DASHBOARD_TEMPLATE_VARIABLE',
  'WW_ERR_DASHBOARD_SCHEMA',
] as const;

/** One of {@link DASHBOARDS_ERROR_CODES}. */
export type DashboardsErrorCode = (typeof DASHBOARDS_ERROR_CODES)[number];

/**
 * Base class of every dashboards/ error. None is retriable: they all describe a definition
 * that is wrong, and running it again gives the same answer.
 *
 * @example
 * throw new DashboardsError('WW_ERR_DASHBOARD_QUERY_INVALID', 'select list is empty; add at least one field');
 */
export class DashboardsError extends Error {
  /** Stable machine-readable code, listed in docs/errors.md. */
  readonly code: DashboardsErrorCode;
  /** Always false for this folder (definitions do not heal by retrying). */
  readonly retriable: boolean;

  constructor(code: DashboardsErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DashboardsError';
    this.code = code;
    this.retriable = false;
  }
}

/**
 * A generated dashboard or alert-rule document misses a field Grafana requires or holds a
 * value Grafana rejects. `problems` lists every problem found, one sentence each.
 *
 * @example
 * new DashboardSchemaError('imbalance-overview', ['panel 3 ("Loss") gridPos.w must be 1..24, got 30']);
 */
export class DashboardSchemaError extends DashboardsError {
  /** One entry per problem: where, what was checked, what arrived, what is allowed. */
  readonly problems: readonly string[];

  constructor(documentName: string, problems: readonly string[]) {
    super('WW_ERR_DASHBOARD_SCHEMA', `${documentName}: ${problems.join('; ')}`);
    this.name = 'DashboardSchemaError';
    this.problems = Object.freeze([...problems]);
  }
}
