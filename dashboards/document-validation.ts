/**
 * Structural checks of the generated Grafana documents beyond what the SDK's TypeScript
 * types enforce at compile time: the fields Grafana requires at load time (dashboard
 * schema: title, uid, schemaVersion, templating, annotations, panel type / gridPos; alert
 * provisioning: uid, condition, data, states), value ranges (24-column grid, no overlapping
 * panels, unique ids and refIds), and references (every panel target and rule query uses the
 * provisioned InfluxQL datasource; every expression input names an existing refId).
 * Each function returns every problem found (empty = valid), one sentence each.
 */
import { DASHBOARD_DATASOURCE_UID, DATASOURCE_VARIABLE, EXPRESSION_DATASOURCE_UID, INFLUXDB_DATASOURCE_TYPE, INFLUXQL_DATASOURCE_UID } from './datasource.ts';

type Json = Record<string, unknown>;

const UID_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;
const GRID_COLUMNS = 24;
const DURATION_PATTERN = /^(\d+(ms|s|m|h|d|w))+$/;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

function isInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value);
}

/**
 * Dashboards reference the datasource variable (`${datasource}`), never a uid; provisioned alert
 * rules reference the provisioned InfluxQL datasource by uid.
 */
function checkDatasource(where: string, value: unknown, problems: string[], uid: string = DASHBOARD_DATASOURCE_UID): void {
  if (!isObject(value)) {
    problems.push(`${where}: datasource must be an object { type, uid }, got ${JSON.stringify(value)}`);
    return;
  }
  if (value.type !== INFLUXDB_DATASOURCE_TYPE || value.uid !== uid) {
    problems.push(`${where}: datasource must be { type: "${INFLUXDB_DATASOURCE_TYPE}", uid: "${uid}" }, got ${JSON.stringify(value)}`);
  }
}

function checkInfluxTarget(where: string, target: unknown, problems: string[], uid: string = DASHBOARD_DATASOURCE_UID): void {
  if (!isObject(target)) {
    problems.push(`${where}: target must be an object`);
    return;
  }
  if (!isNonEmptyString(target.refId)) problems.push(`${where}: refId must be a non-empty string`);
  checkDatasource(where, target.datasource, problems, uid);
  if (!isNonEmptyString(target.query)) problems.push(`${where}: query must be a non-empty InfluxQL string`);
  if (target.rawQuery !== true) problems.push(`${where}: rawQuery must be true (queries are raw InfluxQL)`);
  if (target.resultFormat !== 'time_series' && target.resultFormat !== 'table') {
    problems.push(`${where}: resultFormat must be time_series or table, got ${JSON.stringify(target.resultFormat)}`);
  }
}

interface Rectangle {
  readonly name: string;
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
}

function overlaps(a: Rectangle, b: Rectangle): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/**
 * Problems of a dashboard JSON document (empty = loadable by Grafana as provisioned).
 *
 * @example
 * validateDashboardDocument(JSON.parse(text)); // []
 */
export function validateDashboardDocument(document: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(document)) return ['dashboard must be a JSON object'];
  if (!isNonEmptyString(document.title)) problems.push('dashboard: title must be a non-empty string');
  if (typeof document.uid !== 'string' || !UID_PATTERN.test(document.uid)) {
    problems.push(`dashboard: uid must match ${UID_PATTERN.source}, got ${JSON.stringify(document.uid)}`);
  }
  if (!isInteger(document.schemaVersion) || document.schemaVersion < 36) {
    problems.push(`dashboard: schemaVersion must be an integer ≥ 36, got ${JSON.stringify(document.schemaVersion)}`);
  }
  const time = document.time;
  if (!isObject(time) || !isNonEmptyString(time.from) || !isNonEmptyString(time.to)) problems.push('dashboard: time must be { from, to }');

  const inputs = document.__inputs;
  if (!Array.isArray(inputs) || !inputs.some((input: unknown) => isObject(input) && input.type === 'datasource' && input.pluginId === INFLUXDB_DATASOURCE_TYPE && isNonEmptyString(input.name))) {
    problems.push(`dashboard: __inputs must list an ${INFLUXDB_DATASOURCE_TYPE} datasource input (what "Import dashboard" asks for)`);
  }
  const templating = document.templating;
  if (isObject(templating) && Array.isArray(templating.list) && !templating.list.some((v: unknown) => isObject(v) && v.name === DATASOURCE_VARIABLE)) {
    problems.push(`dashboard: templating.list must hold the datasource variable $${DATASOURCE_VARIABLE}`);
  }
  if (!isObject(templating) || !Array.isArray(templating.list)) {
    problems.push('dashboard: templating.list must be an array');
  } else {
    const names = new Set<string>();
    templating.list.forEach((variable: unknown, index) => {
      const where = `variable ${index}`;
      if (!isObject(variable)) return problems.push(`${where}: must be an object`);
      if (typeof variable.name !== 'string' || !/^\w+$/.test(variable.name)) problems.push(`${where}: name must be a word, got ${JSON.stringify(variable.name)}`);
      else if (names.has(variable.name)) problems.push(`${where}: name "${variable.name}" is used twice`);
      else names.add(variable.name);
      if (variable.name === DATASOURCE_VARIABLE) {
        // The datasource variable: lists InfluxDB datasources; import and provisioning pick one.
        if (variable.type !== 'datasource' || variable.query !== INFLUXDB_DATASOURCE_TYPE) problems.push(`${where}: $${DATASOURCE_VARIABLE} must be a datasource variable of type ${INFLUXDB_DATASOURCE_TYPE}`);
        return undefined;
      }
      if (variable.type !== 'query') problems.push(`${where}: type must be "query", got ${JSON.stringify(variable.type)}`);
      checkDatasource(where, variable.datasource, problems);
      if (!isNonEmptyString(variable.query)) problems.push(`${where}: query must be a non-empty InfluxQL string`);
      return undefined;
    });
  }

  const annotations = document.annotations;
  if (!isObject(annotations) || !Array.isArray(annotations.list)) {
    problems.push('dashboard: annotations.list must be an array');
  } else {
    annotations.list.forEach((annotation: unknown, index) => {
      const where = `annotation ${index}`;
      if (!isObject(annotation)) return problems.push(`${where}: must be an object`);
      if (!isNonEmptyString(annotation.name)) problems.push(`${where}: name must be a non-empty string`);
      if (typeof annotation.enable !== 'boolean') problems.push(`${where}: enable must be a boolean`);
      if (!isNonEmptyString(annotation.iconColor)) problems.push(`${where}: iconColor must be a non-empty string`);
      if (annotation.builtIn === 1) {
        // Grafana's own "Annotations & Alerts": no InfluxQL target.
        const ds = annotation.datasource;
        if (!isObject(ds) || ds.type !== 'grafana') problems.push(`${where}: the built-in annotation must use the grafana datasource`);
        return undefined;
      }
      checkDatasource(where, annotation.datasource, problems);
      checkInfluxTarget(`${where} target`, annotation.target, problems);
      return undefined;
    });
  }

  if (!Array.isArray(document.panels) || document.panels.length === 0) {
    problems.push('dashboard: panels must be a non-empty array');
    return problems;
  }
  const ids = new Set<number>();
  const placed: Rectangle[] = [];
  document.panels.forEach((panel: unknown, index) => {
    if (!isObject(panel)) return problems.push(`panel ${index}: must be an object`);
    const where = `panel ${index} (${JSON.stringify(panel.title)})`;
    if (!isNonEmptyString(panel.type)) problems.push(`${where}: type must be a non-empty string`);
    if (!isNonEmptyString(panel.title)) problems.push(`${where}: title must be a non-empty string`);
    if (!isInteger(panel.id) || panel.id < 1) problems.push(`${where}: id must be a positive integer, got ${JSON.stringify(panel.id)}`);
    else if (ids.has(panel.id)) problems.push(`${where}: id ${panel.id} is used twice`);
    else ids.add(panel.id);
    const grid = panel.gridPos;
    if (!isObject(grid) || ![grid.x, grid.y, grid.w, grid.h].every(isInteger)) {
      problems.push(`${where}: gridPos must be { x, y, w, h } integers`);
    } else {
      const rect = { name: where, x: grid.x as number, y: grid.y as number, w: grid.w as number, h: grid.h as number };
      if (rect.w < 1 || rect.w > GRID_COLUMNS) problems.push(`${where}: gridPos.w must be 1..${GRID_COLUMNS}, got ${rect.w}`);
      if (rect.x < 0 || rect.x + rect.w > GRID_COLUMNS) problems.push(`${where}: gridPos.x + w must be within 0..${GRID_COLUMNS}, got x=${rect.x} w=${rect.w}`);
      if (rect.y < 0 || rect.h < 1) problems.push(`${where}: gridPos.y must be ≥ 0 and h ≥ 1, got y=${rect.y} h=${rect.h}`);
      for (const other of placed) if (overlaps(rect, other)) problems.push(`${where}: overlaps ${other.name}`);
      placed.push(rect);
    }
    if (!isObject(panel.fieldConfig) || !isObject(panel.fieldConfig.defaults) || !Array.isArray(panel.fieldConfig.overrides)) {
      problems.push(`${where}: fieldConfig must be { defaults, overrides }`);
    }
    if (!isObject(panel.options)) problems.push(`${where}: options must be an object`);
    checkDatasource(where, panel.datasource, problems);
    if (!Array.isArray(panel.targets) || panel.targets.length === 0) {
      problems.push(`${where}: targets must be a non-empty array`);
    } else {
      const refIds = new Set<unknown>();
      panel.targets.forEach((target: unknown, t) => {
        checkInfluxTarget(`${where} target ${t}`, target, problems);
        const refId = isObject(target) ? target.refId : undefined;
        if (refIds.has(refId)) problems.push(`${where} target ${t}: refId ${JSON.stringify(refId)} is used twice`);
        refIds.add(refId);
      });
    }
    return undefined;
  });
  return problems;
}

const NO_DATA_STATES = new Set(['OK', 'Alerting', 'NoData', 'KeepLast']);
const EXEC_ERROR_STATES = new Set(['OK', 'Alerting', 'Error', 'KeepLast']);
const EXPRESSION_TYPES = new Set(['reduce', 'math', 'threshold', 'resample', 'classic_conditions']);

function expressionInputs(model: Json): string[] {
  const expression = typeof model.expression === 'string' ? model.expression : '';
  if (model.type === 'math') return [...expression.matchAll(/\$\{?(\w+)\}?/g)].map((m) => m[1] as string);
  return expression === '' ? [] : [expression];
}

/**
 * Problems of an alert-rule provisioning document (Grafana file provisioning, apiVersion 1).
 *
 * @example
 * validateAlertRuleDocument(parse(yamlText)); // []
 */
export function validateAlertRuleDocument(document: unknown): string[] {
  const problems: string[] = [];
  if (!isObject(document)) return ['alert rules: document must be an object'];
  if (document.apiVersion !== 1) problems.push(`alert rules: apiVersion must be 1, got ${JSON.stringify(document.apiVersion)}`);
  if (!Array.isArray(document.groups) || document.groups.length === 0) return [...problems, 'alert rules: groups must be a non-empty array'];
  const uids = new Set<string>();
  document.groups.forEach((group: unknown, g) => {
    if (!isObject(group)) return problems.push(`group ${g}: must be an object`);
    if (!isInteger(group.orgId) || group.orgId < 1) problems.push(`group ${g}: orgId must be a positive integer`);
    if (!isNonEmptyString(group.name)) problems.push(`group ${g}: name must be a non-empty string`);
    if (!isNonEmptyString(group.folder)) problems.push(`group ${g}: folder must be a non-empty string`);
    if (typeof group.interval !== 'string' || !DURATION_PATTERN.test(group.interval)) problems.push(`group ${g}: interval must be a duration like 1m`);
    if (!Array.isArray(group.rules) || group.rules.length === 0) return problems.push(`group ${g}: rules must be a non-empty array`);
    group.rules.forEach((rule: unknown, r) => {
      if (!isObject(rule)) return problems.push(`group ${g} rule ${r}: must be an object`);
      const where = `rule ${JSON.stringify(rule.title ?? r)}`;
      if (typeof rule.uid !== 'string' || !UID_PATTERN.test(rule.uid)) problems.push(`${where}: uid must match ${UID_PATTERN.source}`);
      else if (uids.has(rule.uid)) problems.push(`${where}: uid ${rule.uid} is used twice`);
      else uids.add(rule.uid);
      if (!isNonEmptyString(rule.title) || rule.title.length > 190) problems.push(`${where}: title must be 1..190 characters`);
      if (typeof rule.for !== 'string' || !DURATION_PATTERN.test(rule.for)) problems.push(`${where}: for must be a duration like 5m or 0s`);
      if (!NO_DATA_STATES.has(String(rule.noDataState))) problems.push(`${where}: noDataState must be one of ${[...NO_DATA_STATES].join(', ')}`);
      if (!EXEC_ERROR_STATES.has(String(rule.execErrState))) problems.push(`${where}: execErrState must be one of ${[...EXEC_ERROR_STATES].join(', ')}`);
      if (!Array.isArray(rule.data) || rule.data.length === 0) return problems.push(`${where}: data must be a non-empty array`);
      const refIds = new Set<string>();
      for (const query of rule.data as unknown[]) {
        if (!isObject(query) || !isNonEmptyString(query.refId) || !isObject(query.model)) {
          problems.push(`${where}: every data entry needs refId and model`);
          continue;
        }
        const at = `${where} query ${query.refId}`;
        if (refIds.has(query.refId)) problems.push(`${at}: refId is used twice`);
        refIds.add(query.refId);
        if (query.model.refId !== query.refId) problems.push(`${at}: model.refId must equal refId`);
        if (query.datasourceUid === INFLUXQL_DATASOURCE_UID) {
          checkInfluxTarget(at, query.model, problems, INFLUXQL_DATASOURCE_UID);
          const range = query.relativeTimeRange;
          if (!isObject(range) || !isInteger(range.from) || !isInteger(range.to) || range.from <= range.to) {
            problems.push(`${at}: relativeTimeRange must be { from, to } seconds ago with from > to`);
          }
        } else if (query.datasourceUid === EXPRESSION_DATASOURCE_UID) {
          if (!EXPRESSION_TYPES.has(String(query.model.type))) problems.push(`${at}: expression type ${JSON.stringify(query.model.type)} is unknown`);
          for (const input of expressionInputs(query.model)) {
            // Expressions may only use queries defined before them.
            if (!refIds.has(input) || input === query.refId) problems.push(`${at}: expression input "${input}" is not an earlier refId`);
          }
        } else {
          problems.push(`${at}: datasourceUid must be ${INFLUXQL_DATASOURCE_UID} or ${EXPRESSION_DATASOURCE_UID}, got ${JSON.stringify(query.datasourceUid)}`);
        }
      }
      if (typeof rule.condition !== 'string' || !refIds.has(rule.condition)) problems.push(`${where}: condition must name one of its refIds`);
      return undefined;
    });
    return undefined;
  });
  return problems;
}
