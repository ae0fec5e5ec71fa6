import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../engine/alert-detector.ts';
import { RESULT_METRIC_PROMETHEUS_NAMES as P, type StreamIdentity } from '../../contracts/index.ts';
import { createMetricsExport } from './metrics-export.ts';
import { createResultMetrics, laneIdleShare } from './result-metrics.ts';
import type { WindowResult } from '../engine/window-result.ts';

function identity(job: string): StreamIdentity {
  return { stream: `${job}/k`, job, kernel: 'k', device: 'dev', groupSize: 2, source: 'cpu', deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'h', labels: {} };
}

function windowResult(job: string, values: Partial<WindowResult>): WindowResult {
  return {
    identity: identity(job),
    startMillis: 0,
    endMillis: 1_000,
    launches: 1,
    groups: 4,
    units: 8,
    lossPredicted: undefined,
    lossPredictedLow: undefined,
    lossPredictedHigh: undefined,
    lossPredictedStandardError: undefined,
    lossCounts: undefined,
    lossMeasured: undefined,
    workloadLossPredicted: undefined,
    workloadLossMeasured: undefined,
    etaPredictedCounts: undefined,
    etaCountsMeasured: undefined,
    etaPredictedMeasured: undefined,
    lossQ50: undefined,
    lossQ90: undefined,
    lossQ99: undefined,
    quantileMethod: undefined,
    binningErrorBound: 0,
    sweep: [],
    fit: undefined,
    histogram: [],
    ...values,
  };
}

function alert(job: string, kind: AlertEvent['kind']): AlertEvent {
  return {
    kind,
    identity: identity(job),
    timeMillis: 0,
    series: 'loss_measured',
    oldLevel: 1,
    newLevel: 2,
    statistic: 2,
    evidence: { detector: 'threshold', windowsSinceChange: 1, changeStartMillis: 0, baselineSigma: undefined, threshold: 1.5, windowMillis: 1_000 },
    message: 'm',
  };
}

/** Prometheus text of one collection, as lines `name{labels} value` (no scope label, no target_info). */
async function scrape(results: ReturnType<typeof createResultMetrics>): Promise<string[]> {
  const exporter = new PrometheusExporter({ preventServerStart: true, metricProducers: [results.producer], withoutScopeInfo: true, withoutTargetInfo: true });
  const provider = new MeterProvider({ readers: [exporter] });
  const text = new PrometheusSerializer(undefined, false, undefined, true, true).serialize((await exporter.collect()).resourceMetrics);
  await provider.shutdown();
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('result metrics (per-stream OpenTelemetry results)', () => {
  it('lane idle share is 1 − 1/L, the idle share of lane-time', () => {
    // L = ΣC_SIMT/ΣC_MIMD = 5/4: busy lane-time 4 of 5 → idle 1/5.
    expect(laneIdleShare(5 / 4)).toBeCloseTo(1 / 5, 15);
    expect(laneIdleShare(1)).toBe(0);
    expect(laneIdleShare(0.9)).toBeUndefined();
    expect(laneIdleShare(Number.NaN)).toBeUndefined();
    expect(laneIdleShare(undefined)).toBeUndefined();
  });

  it('exports the latest window per stream with identity labels; counters add up; missing values are not exported', async () => {
    const results = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000 });
    results.recordWindow(windowResult('a', { lossPredicted: 1.5, lossCounts: 1.25, lossMeasured: 1.75, workloadLossMeasured: 2, workloadLossPredicted: 4 / 3 }));
    results.recordWindow(windowResult('a', { lossPredicted: 1.125, lossCounts: 1.0625, lossMeasured: undefined, workloadLossMeasured: undefined, workloadLossPredicted: 1.25, groups: 6 }));
    results.recordAlert(alert('a', 'rising_imbalance'));
    results.recordAlert(alert('a', 'rising_imbalance'));
    results.recordAlert(alert('a', 'drift'));
    const lines = await scrape(results);
    const labels = 'warpwatch_stream="a/k",warpwatch_job="a",warpwatch_kernel="k",warpwatch_device="dev",warpwatch_device_uuid="00000000-0000-0000-0000-000000000000",warpwatch_host="h",warpwatch_group_size="2",warpwatch_source="cpu"';
    expect(lines).toContain(`${P.lossPredicted}{${labels}} 1.125`);
    expect(lines).toContain(`${P.lossCounts}{${labels}} 1.0625`);
    expect(lines.some((l) => l.startsWith(`${P.lossMeasured}{`))).toBe(false); // latest window had no clocks
    const idle = lines.find((l) => l.startsWith(`${P.laneIdle}{${labels},warpwatch_basis="predicted"} `));
    expect(Number(idle?.split(' ').at(-1))).toBeCloseTo(0.2, 14); // 1 − 1/1.25 = 1/5
    expect(lines.some((l) => l.includes('warpwatch_basis="measured"'))).toBe(false);
    expect(lines).toContain(`${P.windows}{${labels}} 2`);
    expect(lines).toContain(`${P.groups}{${labels}} 10`);
    expect(lines).toContain(`${P.alerts}{${labels},warpwatch_alert_kind="rising_imbalance"} 2`);
    expect(lines).toContain(`${P.alerts}{${labels},warpwatch_alert_kind="drift"} 1`);
    expect(lines).toContain(`${P.exportedStreams} 1`);
    expect(lines.some((l) => l.startsWith(`${P.lossBlock}{`))).toBe(false); // no block runs
  });

  it('exports the block-level loss of a window with block runs (model.md §11a)', async () => {
    const results = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000 });
    results.recordWindow(windowResult('b', { lossPredicted: 1.5, lossCounts: 1.25, lossMeasured: 1.75, workloadLossMeasured: 2, workloadLossPredicted: 4 / 3, lossBlock: 1.375 }));
    const lines = await scrape(results);
    expect(lines.some((l) => l.startsWith(`${P.lossBlock}{warpwatch_stream="b/k",`) && l.endsWith(' 1.375'))).toBe(true);
  });

  it('exports the locality-aware loss of a window with sampled groups (model.md §11)', async () => {
    const results = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000 });
    results.recordWindow(windowResult('l', { lossPredicted: 4.17, lossCounts: 1.7, lossMeasured: 1.71, lossLocality: 1.6875 }));
    results.recordWindow(windowResult('m', { lossPredicted: 1.5 }));
    const lines = await scrape(results);
    const locality = lines.filter((l) => l.startsWith(`${P.lossLocality}{`));
    expect(locality).toHaveLength(1); // stream m has no sampled groups: not exported
    expect(locality[0]?.startsWith(`${P.lossLocality}{warpwatch_stream="l/k",`)).toBe(true);
    expect(locality[0]?.endsWith(' 1.6875')).toBe(true);
  });

  it('collector labels named in labelAttributes become attributes (pod → k8s_pod_name, others warpwatch_label_<name>); the latest labels win', async () => {
    const results = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000, labelAttributes: ['pod', 'namespace', 'team'] });
    const labelled = (pod: string): WindowResult => ({ ...windowResult('p', { lossPredicted: 1.5 }), identity: { ...identity('p'), labels: { pod, namespace: 'ns', team: 'vision', node: 'n7' } } });
    results.recordWindow(labelled('pod-a'));
    let line = (await scrape(results)).find((l) => l.startsWith(`${P.lossPredicted}{`)) ?? '';
    expect(line).toContain('k8s_pod_name="pod-a"');
    expect(line).toContain('k8s_namespace_name="ns"');
    expect(line).toContain('warpwatch_label_team="vision"');
    expect(line).not.toContain('n7'); // node is not in labelAttributes
    results.recordWindow(labelled('pod-b')); // the job moved to another pod: same stream, new labels
    const lines = (await scrape(results)).filter((l) => l.startsWith(`${P.lossPredicted}{`));
    expect(lines).toHaveLength(1);
    line = lines[0] ?? '';
    expect(line).toContain('k8s_pod_name="pod-b"');
    // Without labelAttributes no label is exported.
    const plain = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000 });
    plain.recordWindow(labelled('pod-a'));
    expect((await scrape(plain)).join('\n')).not.toContain('pod-a');
  });

  it('escapes label values as the Prometheus text format requires: \\ as \\\\, " as \\", a newline as \\n', async () => {
    // The identity rules keep control characters out of streams (contracts/stream-identity.ts);
    // the exposition must stay well-formed whatever a value holds.
    const results = createResultMetrics({ maxMetricStreams: 10, streamTtlMillis: 60_000, nowMillis: () => 5_000, labelAttributes: ['team'] });
    const odd = 'k\\"q\nz\\';
    results.recordWindow({ ...windowResult('p', { lossPredicted: 1.5 }), identity: { ...identity('p'), kernel: odd, stream: `p/${odd}`, labels: { team: 'a "b" \\c' } } });
    const lines = (await scrape(results)).filter((l) => l.startsWith(`${P.lossPredicted}{`));
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    expect(line).toContain('="k\\\\\\"q\\nz\\\\"');
    expect(line).toContain('="p/k\\\\\\"q\\nz\\\\"');
    expect(line).toContain('warpwatch_label_team="a \\"b\\" \\\\c"');
    expect(line.endsWith(' 1.5')).toBe(true);
  });

  it('caps the exported streams: the least recently updated one goes, counted with reason cap; idle streams go after the TTL', async () => {
    let now = 0;
    const results = createResultMetrics({ maxMetricStreams: 2, streamTtlMillis: 10_000, nowMillis: () => now });
    results.recordWindow(windowResult('a', { lossPredicted: 2 }));
    now = 1;
    results.recordWindow(windowResult('b', { lossPredicted: 3 }));
    now = 2;
    results.recordWindow(windowResult('a', { lossPredicted: 2.5 })); // a is now the most recent
    now = 3;
    results.recordWindow(windowResult('c', { lossPredicted: 4 })); // evicts b
    let lines = await scrape(results);
    expect(lines.filter((l) => l.startsWith(`${P.lossPredicted}{`)).map((l) => l.replace(/\{warpwatch_stream="(\w)\/k".*\}/, ' $1'))).toEqual([
      `${P.lossPredicted} a 2.5`,
      `${P.lossPredicted} c 4`,
    ]);
    expect(lines).toContain(`${P.evictedStreams}{reason="cap"} 1`);
    expect(lines).toContain(`${P.evictedStreams}{reason="idle"} 0`);
    expect(results.stats()).toEqual({ streams: 2, evicted: { cap: 1, idle: 0 } });
    // a updated at 2, c at 3; at 10 002 a is 10 000 ms idle (goes), c 9 999 ms (stays).
    now = 10_002;
    lines = await scrape(results);
    expect(lines.filter((l) => l.startsWith(`${P.lossPredicted}{`)).length).toBe(1);
    expect(lines).toContain(`${P.evictedStreams}{reason="idle"} 1`);
    // b comes back: a new series whose counter starts again at 1.
    results.recordWindow(windowResult('b', { lossPredicted: 3 }));
    lines = await scrape(results);
    expect(lines.find((l) => l.startsWith(`${P.windows}{warpwatch_stream="b/k"`))?.endsWith(' 1')).toBe(true);
  });

  it('the resource names the service, the instance and the host (not unknown_service)', async () => {
    const exp = createMetricsExport({ instanceId: 'est-7', prometheus: true, otlp: undefined, maxMetricStreams: 5, streamTtlMillis: 1_000, log: () => {} });
    const text = new PrometheusSerializer().serialize((await exp.prometheus!.collect()).resourceMetrics);
    await exp.shutdown();
    const target = text.split('\n').find((l) => l.startsWith('target_info{')) ?? '';
    expect(target).toContain('service_name="warpwatch-estimator"');
    expect(target).toContain('service_instance_id="est-7"');
    expect(target).toMatch(/host_name="[^"]+"/);
    expect(text).not.toContain('unknown_service');
  });

  it('rejects a cap below 1', () => {
    expect(() => createResultMetrics({ maxMetricStreams: 0, streamTtlMillis: 1 })).toThrow(RangeError);
  });
});
