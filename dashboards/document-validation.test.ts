import { describe, it, expect } from 'vitest';
import { GENERATED_PATHS, generateArtifacts } from './generated-artifacts.ts';
import { validateAlertRuleDocument, validateDashboardDocument } from './document-validation.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- mutating JSON fixtures

const generated = generateArtifacts();
/** The dashboard files as written (with `__inputs`). */
const dashboardFiles = [GENERATED_PATHS.imbalanceOverview, GENERATED_PATHS.pipelineHealth].map((path) => generated.artifacts.find((a) => a.path === path)?.content ?? '');
function freshDashboard(): Json {
  return JSON.parse(dashboardFiles[0] ?? '') as Json;
}
function freshRules(): Json {
  return JSON.parse(JSON.stringify(generated.alertRules)) as Json;
}

describe('document-validation', () => {
  describe('validateDashboardDocument', () => {
    it('accepts the generated dashboards', () => {
      for (const text of dashboardFiles) expect(validateDashboardDocument(JSON.parse(text))).toEqual([]);
    });

    it.each<[string, (d: Json) => void, RegExp]>([
      ['missing title', (d) => delete d.title, /title must be a non-empty string/],
      ['bad uid', (d) => (d.uid = 'has space'), /uid must match/],
      ['panel wider than the grid', (d) => (d.panels[1].gridPos.w = 30), /gridPos.w must be 1..24, got 30/],
      ['overlapping panels', (d) => (d.panels[2].gridPos = { ...d.panels[1].gridPos }), /overlaps panel 1/],
      ['duplicate panel id', (d) => (d.panels[2].id = d.panels[1].id), /is used twice/],
      ['missing panel type', (d) => delete d.panels[0].type, /type must be a non-empty string/],
      ['wrong datasource uid', (d) => (d.panels[0].targets[0].datasource.uid = 'other'), /datasource must be/],
      ['non-raw query', (d) => (d.panels[0].targets[0].rawQuery = false), /rawQuery must be true/],
      ['duplicate refId', (d) => d.panels[0].targets.push({ ...d.panels[0].targets[0] }), /refId "A" is used twice/],
      ['variable without query', (d) => delete d.templating.list[1].query, /query must be a non-empty/],
      ['no __inputs (not importable)', (d) => delete d.__inputs, /__inputs must list/],
      ['no datasource variable', (d) => d.templating.list.shift(), /datasource variable \$datasource/],
      ['hard-coded datasource uid', (d) => (d.panels[0].datasource.uid = 'warpwatch-influxql'), /datasource must be/],
      ['annotation without iconColor', (d) => delete d.annotations.list[1].iconColor, /iconColor/],
    ])('reports %s', (_name, mutate, message) => {
      const d = freshDashboard();
      mutate(d);
      expect(validateDashboardDocument(d).join('\n')).toMatch(message);
    });
  });

  describe('validateAlertRuleDocument', () => {
    it('accepts the generated rules', () => {
      expect(validateAlertRuleDocument(freshRules())).toEqual([]);
    });

    it.each<[string, (d: Json) => void, RegExp]>([
      ['wrong apiVersion', (d) => (d.apiVersion = 2), /apiVersion must be 1/],
      ['condition naming no query', (d) => (d.groups[0].rules[0].condition = 'Z'), /condition must name one of its refIds/],
      ['expression reading a later query', (d) => (d.groups[0].rules[2].data[2].model.expression = 'C'), /input "C" is not an earlier refId/],
      ['math reading an unknown query', (d) => (d.groups[0].rules[2].data[4].model.expression = '$C - $X'), /input "X"/],
      ['missing time range', (d) => delete d.groups[0].rules[0].data[0].relativeTimeRange, /relativeTimeRange/],
      ['unknown datasource', (d) => (d.groups[0].rules[0].data[0].datasourceUid = 'prom'), /datasourceUid must be/],
      ['bad for duration', (d) => (d.groups[0].rules[0].for = 'soon'), /for must be a duration/],
      ['duplicate rule uid', (d) => (d.groups[0].rules[1].uid = d.groups[0].rules[0].uid), /is used twice/],
      ['bad noDataState', (d) => (d.groups[0].rules[0].noDataState = 'Maybe'), /noDataState must be one of/],
    ])('reports %s', (_name, mutate, message) => {
      const d = freshRules();
      mutate(d);
      expect(validateAlertRuleDocument(d).join('\n')).toMatch(message);
    });
  });
});
