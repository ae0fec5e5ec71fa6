import { describe, it, expect } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { GENERATED_PATHS, generateArtifacts } from './generated-artifacts.ts';
import { findUnknownSeriesNames } from './series-references.ts';
import { validateAlertRuleDocument, validateDashboardDocument } from './document-validation.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const generated = generateArtifacts();

/** Every string under a key named `query` anywhere in a JSON value. */
function queryStrings(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) queryStrings(item, found);
  else if (typeof value === 'object' && value !== null) {
    // The datasource variable's `query` is a plugin id (influxdb), not a query.
    if ((value as { type?: unknown }).type === 'datasource') return found;
    for (const [key, item] of Object.entries(value)) {
      if (key === 'query' && typeof item === 'string') found.push(item);
      else queryStrings(item, found);
    }
  }
  return found;
}

function committed(path: string): string {
  const file = join(root, path);
  expect(existsSync(file), `${path} is missing: run \`npm run dashboards\` and commit the result`).toBe(true);
  return readFileSync(file, 'utf8');
}

describe('generated dashboards and alert rules', () => {
  describe('committed files', () => {
    it.each(generated.artifacts.map((a) => [a.path, a.content] as const))(
      '%s equals a fresh regeneration (run `npm run dashboards` after changing dashboards/*.ts)',
      (path, content) => {
        expect(committed(path)).toBe(content);
      },
    );

    it('keeps the provisioning copy of the alert rules identical to the generated one', () => {
      expect(committed(GENERATED_PATHS.alertRulesProvisioning)).toBe(committed(GENERATED_PATHS.alertRules));
    });
  });

  describe('documents as Grafana loads them', () => {
    it('the committed dashboards have every field Grafana requires', () => {
      for (const path of [GENERATED_PATHS.imbalanceOverview, GENERATED_PATHS.pipelineHealth]) {
        expect(validateDashboardDocument(JSON.parse(committed(path))), path).toEqual([]);
      }
    });

    it('the committed alert rules parse as provisioning YAML with consistent references', () => {
      expect(validateAlertRuleDocument(parse(committed(GENERATED_PATHS.alertRulesProvisioning)))).toEqual([]);
    });

    it('has the four required rules and the panels the issue asks for', () => {
      const rules = generated.alertRules.groups.flatMap((g) => g.rules.map((r) => r.uid));
      expect(rules).toEqual(['warpwatch-rising-imbalance', 'warpwatch-drift', 'warpwatch-stream-stale', 'warpwatch-pipeline-stalled']);
      const [imbalance, pipeline] = generated.dashboards;
      expect(imbalance?.templating.list?.map((v) => v.name)).toEqual(['datasource', 'job', 'kernel', 'host', 'pod', 'device', 'device_uuid', 'n']);
      expect(imbalance?.panels?.map((p) => p.type)).toEqual([
        'timeseries', 'timeseries', 'timeseries', 'timeseries', 'timeseries',
        'barchart', 'heatmap', 'barchart', 'table', 'table', 'timeseries', 'timeseries', 'timeseries', 'timeseries',
      ]);
      expect(pipeline?.panels).toHaveLength(6);
    });
  });

  describe('queries', () => {
    const documents = [
      JSON.parse(committed(GENERATED_PATHS.imbalanceOverview)) as unknown,
      JSON.parse(committed(GENERATED_PATHS.pipelineHealth)) as unknown,
      parse(committed(GENERATED_PATHS.alertRulesProvisioning)) as unknown,
    ];
    const inDocuments = documents.flatMap((d) => queryStrings(d));

    it('every query in the files is one the catalog knows (and so the integration test runs)', () => {
      const cataloged = new Set(generated.catalog.entries.map((e) => e.text));
      expect(inDocuments.filter((q) => !cataloged.has(q))).toEqual([]);
      expect(new Set(inDocuments)).toEqual(cataloged);
    });

    it('names only measurements, fields, tags and tag values that contracts/series.ts defines', () => {
      expect(inDocuments.length).toBeGreaterThan(20);
      expect(inDocuments.flatMap((q) => findUnknownSeriesNames(q).map((p) => `${p} in ${q}`))).toEqual([]);
    });
  });
});
