// The Grafana rules (InfluxQL) and the Prometheus rules say the same thing: read back from the
// committed files, each alert both have carries the same labels, `for`, summary, runbook,
// thresholds, windows and stream identity, and each Prometheus alert has one definition.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALERT_DEFINITIONS, PROMETHEUS_STREAM_LABELS, tunedDefinition } from './alert-definitions.ts';
import { GENERATED_PATHS } from './generated-artifacts.ts';
import { buildPrometheusRules, promDuration } from './prometheus-rules.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
type Yaml = Record<string, unknown>;
const asRecord = (value: unknown): Yaml => (value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Yaml) : {});
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const read = (path: string): Yaml => asRecord(parse(readFileSync(join(root, path), 'utf8')));

const grafanaRules = asArray(read(GENERATED_PATHS.alertRulesProvisioning)['groups']).flatMap((g) => asArray(asRecord(g)['rules']).map(asRecord));
const promRules = asArray(read(GENERATED_PATHS.prometheusRules)['groups']).flatMap((g) => asArray(asRecord(g)['rules']).map(asRecord));
const promAlerts = promRules.filter((r) => typeof r['alert'] === 'string');

/** Seconds of a Prometheus/Grafana duration such as `1h30m` (written here, not the generator's). */
function seconds(text: string): number {
  const units: Record<string, number> = { h: 3600, m: 60, s: 1 };
  let total = 0;
  for (const match of text.matchAll(/(\d+)([hms])/g)) total += Number(match[1]) * (units[match[2] ?? 's'] ?? 0);
  return total;
}

function grafanaRule(uid: string): Yaml {
  const rule = grafanaRules.find((r) => r['uid'] === uid);
  if (rule === undefined) throw new Error(`no Grafana rule ${uid}`);
  return rule;
}

function promAlert(name: string): Yaml {
  const rule = promAlerts.find((r) => r['alert'] === name);
  if (rule === undefined) throw new Error(`no Prometheus alert ${name}`);
  return rule;
}

/** A data query of a Grafana rule: its time range (s) and its InfluxQL or expression model. */
function grafanaData(rule: Yaml, refId: string): { from: number; to: number; query: string; expression: string; params: number[] } {
  const entry = asArray(rule['data']).map(asRecord).find((d) => d['refId'] === refId);
  const range = asRecord(entry?.['relativeTimeRange']);
  const model = asRecord(entry?.['model']);
  const condition = asRecord(asArray(model['conditions'])[0]);
  return {
    from: Number(range['from'] ?? NaN),
    to: Number(range['to'] ?? NaN),
    query: String(model['query'] ?? ''),
    expression: String(model['expression'] ?? ''),
    params: asArray(asRecord(condition['evaluator'])['params']).map(Number),
  };
}

/** The Prometheus summary with its labels as the Grafana rules name them (InfluxDB tags). */
const asGrafanaLabels = (summary: string): string =>
  summary.replaceAll('$labels.warpwatch_stream', '$labels.stream').replaceAll('$labels.job', '$labels.service').replaceAll('$labels.instance', '$labels.instance');

/** InfluxDB tag of each Prometheus stream label (contracts/series.ts vs contracts/result-metric-names.ts). */
const TAG_OF_LABEL: Record<string, string> = {
  warpwatch_stream: 'stream',
  warpwatch_job: 'job',
  warpwatch_kernel: 'kernel',
  warpwatch_group_size: 'n',
  warpwatch_host: 'host',
  k8s_pod_name: 'pod',
  k8s_namespace_name: 'namespace',
  warpwatch_device: 'device',
  warpwatch_device_uuid: 'device_uuid',
  warpwatch_source: 'source',
};

describe('one definition per alert, two generated rule sets that agree', () => {
  const shared = Object.values(ALERT_DEFINITIONS).filter((d) => d.grafana !== undefined);

  it('every Prometheus alert has one definition, every definition one Prometheus alert; Grafana has the four with InfluxDB series', () => {
    expect(promAlerts.map((r) => r['alert']).sort()).toEqual(Object.values(ALERT_DEFINITIONS).map((d) => d.alertname).sort());
    expect(grafanaRules.map((r) => r['uid'])).toEqual(['warpwatch-rising-imbalance', 'warpwatch-drift', 'warpwatch-stream-stale', 'warpwatch-pipeline-stalled']);
    expect(shared.map((d) => d.grafana?.uid)).toEqual(grafanaRules.map((r) => r['uid']));
  });

  it.each(shared.map((d) => [d.alertname, d] as const))('%s: same title, labels, for, summary, runbook and description in both', (_name, definition) => {
    const grafana = grafanaRule(definition.grafana?.uid ?? '');
    const prom = promAlert(definition.alertname);
    expect(grafana['title']).toBe(definition.grafana?.title);
    expect(grafana['labels']).toEqual(prom['labels']);
    expect(prom['labels']).toEqual({ severity: definition.severity, component: definition.component });
    expect(seconds(String(grafana['for']))).toBe(seconds(String(prom['for'])));
    expect(seconds(String(prom['for']))).toBe(definition.forSeconds);
    const grafanaAnnotations = asRecord(grafana['annotations']);
    const promAnnotations = asRecord(prom['annotations']);
    expect(grafanaAnnotations['summary']).toBe(asGrafanaLabels(String(promAnnotations['summary'])));
    expect(grafanaAnnotations['runbook_url']).toBe(promAnnotations['runbook_url']);
    expect(String(grafanaAnnotations['description']).startsWith(String(promAnnotations['description']))).toBe(true);
  });

  it('rising imbalance: same factor, window, baseline and minimum volume', () => {
    const { factor, windowSeconds, baselineSeconds, minGroups } = ALERT_DEFINITIONS.risingImbalance.params;
    const expr = String(promAlert('WarpwatchRisingImbalance')['expr']);
    const match = /avg_over_time\(\S+\[(\w+)\]\) > ([\d.]+) \* avg_over_time\(\S+\[(\w+)\] offset (\w+)\)\)\nand sum by \([^)]*\) \(increase\(warpwatch_groups_total\[(\w+)\]\)\) >= (\d+)/.exec(expr);
    expect(match, expr).not.toBeNull();
    const [, window, promFactor, baseline, offset, volumeWindow, promMinGroups] = match ?? [];
    const grafana = grafanaRule('warpwatch-rising-imbalance');
    const [a, b, c, g] = ['A', 'B', 'C', 'G'].map((refId) => grafanaData(grafana, refId));
    expect([seconds(window ?? ''), seconds(offset ?? ''), seconds(volumeWindow ?? ''), a?.from, b?.to, c?.from]).toEqual(Array(6).fill(windowSeconds));
    expect([seconds(baseline ?? ''), (b?.from ?? 0) - (b?.to ?? 0)]).toEqual([baselineSeconds, baselineSeconds]);
    expect([Number(promFactor), Number(promMinGroups)]).toEqual([factor, minGroups]);
    expect(g?.expression).toBe(`$D > ${factor} * $E && $F >= ${minGroups}`);
    expect(a?.query).toContain('mean("loss_measured")');
    expect(c?.query).toContain('sum("groups")');
  });

  it('drift: same threshold, window and minimum volume; the prediction is the locality-aware one where it exists', () => {
    const { relativeError, windowSeconds, minGroups } = ALERT_DEFINITIONS.drift.params;
    const expr = String(promAlert('WarpwatchPredictionDrift')['expr']);
    const match = /avg_over_time\(\S+\[(\w+)\]\) > ([\d.]+)\nand sum by \([^)]*\) \(increase\(warpwatch_groups_total\[(\w+)\]\)\) >= (\d+)/.exec(expr);
    expect(match, expr).not.toBeNull();
    const grafana = grafanaRule('warpwatch-drift');
    const [a, b, e] = ['A', 'B', 'E'].map((refId) => grafanaData(grafana, refId));
    expect([seconds(match?.[1] ?? ''), seconds(match?.[3] ?? ''), a?.from, b?.from]).toEqual(Array(4).fill(windowSeconds));
    expect([Number(match?.[2]), Number(match?.[4])]).toEqual([relativeError, minGroups]);
    expect(e?.expression).toBe(`$C > ${relativeError} && $D >= ${minGroups}`);
    // Grafana reads eta_drift (locality-aware where sampled); Prometheus prefers warpwatch_loss_locality over warpwatch_loss_predicted.
    expect(a?.query).toContain('mean("eta_drift")');
    const reference = String(promRules.find((r) => r['record'] === 'warpwatch_stream:loss_reference:max')?.['expr']);
    expect(reference).toMatch(/\(warpwatch_loss_locality\)\nor max by \([^)]*\) \(warpwatch_loss_predicted\)$/);
  });

  it('stale stream: same lookback and silence', () => {
    const { staleSeconds, lookbackSeconds } = ALERT_DEFINITIONS.streamStale.params;
    const expr = String(promAlert('WarpwatchStreamStale')['expr']);
    const windows = [...expr.matchAll(/warpwatch_windows_total\[(\w+)\]/g)].map((m) => seconds(m[1] ?? ''));
    expect(windows).toEqual([lookbackSeconds, staleSeconds]);
    const grafana = grafanaRule('warpwatch-stream-stale');
    expect([grafanaData(grafana, 'A').from, grafanaData(grafana, 'B').from, grafanaData(grafana, 'B').to]).toEqual([lookbackSeconds, lookbackSeconds, staleSeconds]);
  });

  it('pipeline stalled: same window', () => {
    const { windowSeconds } = ALERT_DEFINITIONS.pipelineStalled.params;
    const expr = String(promAlert('WarpwatchPipelineStalled')['expr']);
    expect(new Set([...expr.matchAll(/\[(\w+)\]/g)].map((m) => seconds(m[1] ?? '')))).toEqual(new Set([windowSeconds]));
    const grafana = grafanaRule('warpwatch-pipeline-stalled');
    expect([grafanaData(grafana, 'A').from, grafanaData(grafana, 'B').from]).toEqual([windowSeconds, windowSeconds]);
  });

  it('per-stream alerts group by the same stream identity (job, kernel, n, host, pod, device UUID, ...)', () => {
    expect(Object.keys(TAG_OF_LABEL)).toEqual([...PROMETHEUS_STREAM_LABELS]);
    const groupBy = `GROUP BY ${PROMETHEUS_STREAM_LABELS.map((l) => `"${TAG_OF_LABEL[l]}"`).join(', ')}`;
    const promBy = `by (${PROMETHEUS_STREAM_LABELS.join(', ')})`;
    for (const uid of ['warpwatch-rising-imbalance', 'warpwatch-drift', 'warpwatch-stream-stale']) {
      const queries = asArray(grafanaRule(uid)['data']).map((d) => String(asRecord(asRecord(d)['model'])['query'] ?? '')).filter((q) => q !== '');
      for (const query of queries) expect(query, uid).toContain(groupBy);
    }
    for (const name of ['WarpwatchRisingImbalance', 'WarpwatchPredictionDrift', 'WarpwatchStreamStale']) {
      const definition = Object.values(ALERT_DEFINITIONS).find((d) => d.alertname === name);
      expect(definition?.scope).toBe('stream');
    }
    for (const record of promRules.filter((r) => typeof r['record'] === 'string' && r['record'] !== 'warpwatch_stream:loss_drift:ratio')) expect(String(record['expr'])).toContain(promBy);
  });

  it('overrides change thresholds, windows and for of the generated rules (what the integration test uses)', () => {
    const tuned = buildPrometheusRules({ interval: '1s', overrides: { risingImbalance: { windowSeconds: 10, baselineSeconds: 40, factor: 1.1, minGroups: 2, forSeconds: 3 } } });
    const rule = tuned.groups.flatMap((g) => g.rules).find((r) => r.alert === 'WarpwatchRisingImbalance');
    expect(rule?.expr).toContain('[10s]) > 1.1 * avg_over_time(warpwatch_stream:loss_measured:max[40s] offset 10s)');
    expect(rule?.expr).toContain('>= 2');
    expect(rule?.for).toBe('3s');
    expect(tuned.groups.map((g) => g.interval)).toEqual(['1s', '1s']);
    expect(tunedDefinition('drift').params).toEqual(ALERT_DEFINITIONS.drift.params);
    expect([promDuration(5400), promDuration(0), promDuration(90)]).toEqual(['1h30m', '0s', '1m30s']);
    expect(() => promDuration(1.5)).toThrow(RangeError);
  });
});
