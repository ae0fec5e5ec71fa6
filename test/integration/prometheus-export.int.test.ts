// The estimator's results as OpenTelemetry metrics against real servers:
// hand-made LaunchSummary frames → real Kafka → `startEstimator` → (a) /metrics scraped by a
// real Prometheus 2.42 (Debian's package; without it the 3.16 below) and (b) OTLP/HTTP push into a real Prometheus 3.16
// built from the Go module proxy (its OTLP receiver). Values are read back with PromQL through
// the HTTP API and compared with values computed here from the frames by enumeration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureOtlpPrometheus, findSystemPrometheus, promQuery, resolveLocalStackConfig, startPrometheus, type PromSample, type RunningPrometheus } from '../../deploy/local/index.ts';
import { readFileSync } from 'node:fs';
import { GENERATED_PATHS, PROMETHEUS_QUERIES, PROMETHEUS_STREAM_VARIABLES, prometheusVariableQuery } from '../../dashboards/index.ts';
import { loadEstimatorConfig, startEstimator, type RunningEstimator } from '../../estimator/index.ts';
import { encodeFrame, histogramOfCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { brokers, connectedProducer, uniqueId, waitUntil } from './estimator-support.ts';

/** One launch given lane by lane: counts per group, and the clock sums the probe would report. */
interface Launch {
  readonly job: string;
  readonly n: number;
  readonly groups: readonly (readonly number[])[];
  /** Σ over groups of measured C_SIMT/C_MIMD. */
  readonly sumMeasuredLoss: number;
  readonly sumSimt: number;
  readonly sumMimd: number;
  readonly endMillis: number;
  readonly launchId: number;
}

function frameOf(launch: Launch): LaunchSummaryFrame {
  const counts = launch.groups.flat();
  return {
    type: 'launch-summary',
    job: launch.job,
    kernel: 'k',
    launchId: BigInt(launch.launchId),
    frameSequence: 0,
    source: 'cpu',
    groupSize: launch.n,
    sync: true,
    device: { name: 'test device', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1_000_000_000 },
    startUnixNanos: BigInt(launch.endMillis - 1) * 1_000_000n,
    endUnixNanos: BigInt(launch.endMillis) * 1_000_000n,
    groupCount: launch.groups.length,
    groupsCounted: launch.groups.length,
    sumSimtClocks: BigInt(launch.sumSimt),
    sumMimdClocks: BigInt(launch.sumMimd),
    sumMeasuredLoss: launch.sumMeasuredLoss,
    sumCountsLoss: launch.groups.reduce((sum, g) => sum + (g.length * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0),
    sumMaxCounts: launch.groups.reduce((sum, g) => sum + Math.max(...g), 0),
    sumCounts: counts.reduce((a, b) => a + b, 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(counts),
  };
}

/**
 * E[n·max/Σ] and E[max]/E[W] for n i.i.d. lanes drawn from the launch's lane counts, by
 * enumerating every n-tuple of support values (independent of the model code).
 */
function enumerate(launch: Launch): { loss: number; workloadLoss: number } {
  const lanes = launch.groups.flat();
  const pmf = new Map<number, number>();
  for (const v of lanes) pmf.set(v, (pmf.get(v) ?? 0) + 1 / lanes.length);
  const support = [...pmf.keys()];
  let loss = 0;
  let expectedMax = 0;
  const tuple: number[] = [];
  const walk = (depth: number, probability: number): void => {
    if (depth === launch.n) {
      const max = Math.max(...tuple);
      const sum = tuple.reduce((a, b) => a + b, 0);
      loss += probability * ((launch.n * max) / sum);
      expectedMax += probability * max;
      return;
    }
    for (const v of support) {
      tuple.push(v);
      walk(depth + 1, probability * (pmf.get(v) ?? 0));
      tuple.pop();
    }
  };
  walk(0, 1);
  const mean = support.reduce((s, v) => s + v * (pmf.get(v) ?? 0), 0);
  return { loss, workloadLoss: expectedMax / mean };
}

const RUN = uniqueId('wwprom');
const T0 = Date.now() - 60_000;
// Stream A: two launches in two windows, loss_measured 1.5 above the alert threshold 1.4 (one alert: no re-arm in between).
const A1: Launch = { job: `${RUN}a`, n: 2, groups: [[1, 1], [1, 3], [3, 1], [3, 3]], sumMeasuredLoss: 6, sumSimt: 600, sumMimd: 480, endMillis: T0 + 2_100, launchId: 1 };
const A2: Launch = { ...A1, endMillis: T0 + 3_100, launchId: 2 };
// Stream B: one launch, n = 4, below the threshold.
const B1: Launch = { job: `${RUN}b`, n: 4, groups: [[2, 2, 2, 2], [2, 2, 2, 6]], sumMeasuredLoss: 2.5, sumSimt: 700, sumMimd: 400, endMillis: T0 + 2_200, launchId: 1 };
// Stream C: exported first, then evicted by the cap of 2 streams when A and B arrive.
const C1: Launch = { job: `${RUN}c`, n: 2, groups: [[5, 5]], sumMeasuredLoss: 1, sumSimt: 100, sumMimd: 100, endMillis: T0 + 1_100, launchId: 1 };
const THRESHOLD = 1.4;
const POD_A = `${RUN}-pod-a`;

/** Independently computed expectations of a stream's latest window. */
function expected(launch: Launch): { lossPredicted: number; lossCounts: number; lossMeasured: number; idleMeasured: number; idlePredicted: number } {
  const { loss, workloadLoss } = enumerate(launch);
  const lossCounts = launch.groups.reduce((sum, g) => sum + (g.length * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0) / launch.groups.length;
  return {
    lossPredicted: loss,
    lossCounts,
    lossMeasured: launch.sumMeasuredLoss / launch.groups.length,
    idleMeasured: 1 - launch.sumMimd / launch.sumSimt,
    idlePredicted: 1 - 1 / workloadLoss,
  };
}

let scraper: RunningPrometheus | undefined;
let receiver: RunningPrometheus | undefined;
let estimator: RunningEstimator | undefined;
const log: string[] = [];

beforeAll(async () => {
  const otlpBinary = await ensureOtlpPrometheus(resolveLocalStackConfig(process.env).cacheDirectory);
  // The scraper: Debian's Prometheus 2.42 when installed (.ci/run installs it), else the 3.16 built
  // above, so `npm test` needs nothing installed by hand.
  const system = findSystemPrometheus(process.env) ?? otlpBinary;
  receiver = await startPrometheus({ binary: otlpBinary, scrapeTargets: [], scrapeIntervalMillis: 1_000, otlpReceiver: true });

  const env = {
    WARPWATCH_FRAMES_TOPIC: `${RUN}.frames`,
    WARPWATCH_DISTRIBUTIONS_TOPIC: `${RUN}.distributions`,
    WARPWATCH_ALERTS_TOPIC: `${RUN}.alerts`,
    WARPWATCH_CHECKPOINT_TOPIC: `${RUN}.checkpoints`,
    WARPWATCH_KAFKA_PARTITIONS: '1',
    WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
    WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '500',
    WARPWATCH_WINDOW_MILLIS: '1000',
    WARPWATCH_IDLE_CLOSE_MILLIS: '1000',
    WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '500',
    WARPWATCH_BOOTSTRAP_REPLICATES: '0',
    WARPWATCH_QUANTILES: 'false',
    WARPWATCH_FIT: 'false',
    WARPWATCH_HISTOGRAM_POINTS: 'false',
    WARPWATCH_ALERT_LOSS_THRESHOLD: String(THRESHOLD),
    WARPWATCH_METRICS_MAX_STREAMS: '2',
    WARPWATCH_OTLP_ENDPOINT: receiver.otlpMetricsUrl,
    WARPWATCH_OTLP_INTERVAL_MILLIS: '500',
  };
  const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${RUN}-g`, influxUrl: 'off', metricsPort: '0', instance: `${RUN}-est` } });
  estimator = await startEstimator(config, (line) => log.push(line));
  scraper = await startPrometheus({ binary: system, scrapeTargets: [`127.0.0.1:${estimator.metricsPort}`], scrapeIntervalMillis: 1_000, otlpReceiver: false });

  const producer = await connectedProducer();
  try {
    // Stream A comes through a collector in pod POD_A (its label header), the others carry none.
    const send = (launches: readonly Launch[]) =>
      producer.send({
        topic: `${RUN}.frames`,
        messages: launches.map((l) => ({ key: `${l.job}/k`, value: Buffer.from(encodeFrame(frameOf(l))), headers: l.job === A1.job ? { 'ww-label-pod': POD_A } : {} })),
      });
    await send([C1]);
    const metricsUrl = `http://127.0.0.1:${estimator.metricsPort}/metrics`;
    const exported = async (job: string): Promise<boolean> => (await fetch(metricsUrl).then((r) => r.text())).includes(`warpwatch_job="${job}"`);
    await waitUntil(() => exported(C1.job), 60_000, 'stream C on /metrics');
    // Prometheus scrapes C at least once before it is evicted.
    await waitUntil(async () => (await promQuery(scraper?.url ?? '', `warpwatch_loss_predicted{warpwatch_job="${C1.job}"}`)).length === 1, 30_000, 'stream C in Prometheus');
    await send([A1, B1, A2]);
    await waitUntil(async () => (await fetch(metricsUrl).then((r) => r.text())).match(/warpwatch_windows_total\{[^}]*\} 2/) !== null && (await exported(B1.job)), 60_000, 'streams A (2 windows) and B on /metrics');
  } finally {
    await producer.disconnect();
  }
}, 600_000);

afterAll(async () => {
  await estimator?.stop();
  await scraper?.stop();
  await receiver?.stop();
});

/** Polls a PromQL query until it returns `count` samples (the next scrape or push may be pending). */
async function settled(url: string, expression: string, count: number): Promise<PromSample[]> {
  let samples: PromSample[] = [];
  await waitUntil(
    async () => {
      samples = await promQuery(url, expression);
      return samples.length === count;
    },
    30_000,
    `${count} sample(s) of ${expression} at ${url}`,
  ).catch((error: unknown) => {
    throw new Error(`${error instanceof Error ? error.message : String(error)}; got ${JSON.stringify(samples)}; estimator log:\n${log.join('\n')}`);
  });
  return samples;
}

const byJob = (job: string): string => `{warpwatch_job="${job}"}`;

for (const path of ['scrape', 'otlp'] as const) {
  describe(`estimator results in Prometheus via ${path === 'scrape' ? '/metrics scraped by Prometheus 2.42' : 'OTLP push into Prometheus 3.16'}`, () => {
    const url = (): string => (path === 'scrape' ? scraper?.url : receiver?.url) ?? '';

    it('per-stream losses and lane idle shares equal the values enumerated from the frames', async () => {
      for (const launch of [A2, B1]) {
        const want = expected(launch);
        const one = async (expression: string): Promise<number> => (await settled(url(), expression, 1))[0]?.value ?? Number.NaN;
        expect(await one(`warpwatch_loss_predicted${byJob(launch.job)}`)).toBeCloseTo(want.lossPredicted, 12);
        expect(await one(`warpwatch_loss_counts${byJob(launch.job)}`)).toBeCloseTo(want.lossCounts, 12);
        expect(await one(`warpwatch_loss_measured${byJob(launch.job)}`)).toBeCloseTo(want.lossMeasured, 12);
        expect(await one(`warpwatch_lane_idle_ratio{warpwatch_job="${launch.job}",warpwatch_basis="measured"}`)).toBeCloseTo(want.idleMeasured, 12);
        expect(await one(`warpwatch_lane_idle_ratio{warpwatch_job="${launch.job}",warpwatch_basis="predicted"}`)).toBeCloseTo(want.idlePredicted, 12);
      }
      // The hand-checked values behind the enumeration: A = {1,3} equally likely, n = 2 → 1.25; idle 1 − 480/600 = 0.2.
      expect(expected(A1).lossPredicted).toBeCloseTo(1.25, 15);
      expect(expected(A1).idleMeasured).toBeCloseTo(0.2, 15);
    });

    it('counters: windows, groups and alerts per stream; the stream identity is on every series', async () => {
      const windows = await settled(url(), `warpwatch_windows_total${byJob(A1.job)}`, 1);
      expect(windows[0]?.value).toBe(2);
      expect(windows[0]?.metric).toMatchObject({ warpwatch_stream: `${A1.job}/k`, warpwatch_kernel: 'k', warpwatch_device: 'test device', warpwatch_group_size: '2', warpwatch_source: 'cpu' });
      // The collector label pod as the semantic-convention attribute k8s.pod.name; B has no label, no attribute.
      expect(windows[0]?.metric['k8s_pod_name']).toBe(POD_A);
      expect((await settled(url(), `warpwatch_windows_total${byJob(B1.job)}`, 1))[0]?.metric['k8s_pod_name']).toBeUndefined();
      expect((await settled(url(), `warpwatch_groups_total${byJob(A1.job)}`, 1))[0]?.value).toBe(8);
      expect((await settled(url(), `warpwatch_windows_total${byJob(B1.job)}`, 1))[0]?.value).toBe(1);
      // loss_measured 1.5 > 1.4 in both windows of A, but the threshold re-arms only below 0.98·1.4: one alert.
      const alerts = await settled(url(), `warpwatch_alerts_total{warpwatch_job=~"${RUN}.*"}`, 1);
      expect(alerts[0]?.metric).toMatchObject({ warpwatch_job: A1.job, warpwatch_alert_kind: 'rising_imbalance' });
      expect(alerts[0]?.value).toBe(1);
    });

    it('the cap of 2 streams evicted C (counted, reason cap) and its series are gone', async () => {
      expect((await settled(url(), 'warpwatch_export_streams_evicted_total{reason="cap"}', 1))[0]?.value).toBe(1);
      expect((await settled(url(), 'warpwatch_export_streams_evicted_total{reason="idle"}', 1))[0]?.value).toBe(0);
      expect((await settled(url(), 'warpwatch_export_streams', 1))[0]?.value).toBe(2);
      // No sample of C in the last 3 s (scrapes every 1 s, pushes every 0.5 s). A scrape also marks C
      // stale at once; a push has no staleness marker, so plain queries show C for the 5 min lookback.
      await settled(url(), `count_over_time(warpwatch_loss_predicted${byJob(C1.job)}[3s])`, 0);
      expect((await settled(url(), `count(count_over_time(warpwatch_loss_predicted{warpwatch_job=~"${RUN}.*"}[3s]))`, 1))[0]?.value).toBe(2);
      if (path === 'scrape') await settled(url(), `warpwatch_loss_predicted${byJob(C1.job)}`, 0);
    });

    it('resource attributes: service.name warpwatch-estimator, service.instance.id, host.name', async () => {
      const [target] = await settled(url(), 'target_info', 1);
      if (path === 'scrape') {
        expect(target?.metric).toMatchObject({ service_name: 'warpwatch-estimator', service_instance_id: `${RUN}-est` });
      } else {
        // The OTLP receiver maps service.name to job and service.instance.id to instance.
        expect(target?.metric).toMatchObject({ job: 'warpwatch-estimator', instance: `${RUN}-est` });
        const [loss] = await settled(url(), `warpwatch_loss_predicted${byJob(A1.job)}`, 1);
        expect(loss?.metric).toMatchObject({ job: 'warpwatch-estimator', instance: `${RUN}-est` });
      }
      expect(target?.metric['host_name']).toMatch(/.+/);
      expect(JSON.stringify(target?.metric)).not.toContain('unknown_service');
    });
  });
}

describe('Prometheus "Imbalance overview": every PromQL query against Prometheus 2.42 holding the estimator metrics', () => {
  // Grafana's values for the variables: job = this run's jobs (a regex, as a multi-value selection becomes), the rest All (.*).
  const variables: Record<string, string> = { job: `${RUN}.*`, kernel: '.*', host: '.*', pod: '.*', device: '.*', device_uuid: '.*', n: '.*' };
  const interpolate = (expr: string): string => expr.replace(/\$(\w+)/g, (whole, name: string) => variables[name] ?? whole);
  const A = expected(A2);
  const B = expected(B1);
  const want: Record<string, Record<string, number>> = {
    'Loss: predicted vs counts vs measured/A': { [`${A1.job}/k`]: A.lossPredicted, [`${B1.job}/k`]: B.lossPredicted },
    'Loss: predicted vs counts vs measured/B': { [`${A1.job}/k`]: A.lossCounts, [`${B1.job}/k`]: B.lossCounts },
    'Loss: predicted vs counts vs measured/C': { [`${A1.job}/k`]: A.lossMeasured, [`${B1.job}/k`]: B.lossMeasured },
    'Measured over predicted/A': { [`${A1.job}/k`]: A.lossMeasured / A.lossPredicted, [`${B1.job}/k`]: B.lossMeasured / B.lossPredicted },
    'Lane idle share/A': {
      [`${A1.job}/k measured`]: A.idleMeasured,
      [`${A1.job}/k predicted`]: A.idlePredicted,
      [`${B1.job}/k measured`]: B.idleMeasured,
      [`${B1.job}/k predicted`]: B.idlePredicted,
    },
    'Windows and alerts per stream/A': { [`${A1.job}/k`]: 2, [`${B1.job}/k`]: 1 },
    'Windows and alerts per stream/B': { [`${A1.job}/k`]: 8, [`${B1.job}/k`]: 2 },
    'Windows and alerts per stream/C': { [`${A1.job}/k rising_imbalance`]: 1 },
    'Export table/A': { '': 2 },
    'Export table/B': { cap: 1, idle: 0 },
  };
  const keyOf = (metric: Readonly<Record<string, string>>): string =>
    [metric['warpwatch_stream'] ?? metric['reason'] ?? '', metric['warpwatch_basis'] ?? metric['warpwatch_alert_kind'] ?? ''].filter((p) => p !== '').join(' ');

  it('the committed dashboard holds exactly the cataloged queries, importable (__inputs) with a datasource variable', () => {
    const document = JSON.parse(readFileSync(GENERATED_PATHS.imbalanceOverviewPrometheus, 'utf8')) as {
      __inputs: { pluginId: string }[];
      templating: { list: { name: string; type: string; query: unknown }[] };
      panels: { targets: { expr: string; datasource: { uid: string } }[] }[];
    };
    expect(document.__inputs.map((i) => i.pluginId)).toEqual(['prometheus']);
    expect(document.templating.list.map((v) => [v.name, v.type])).toEqual([['datasource', 'datasource'], ...PROMETHEUS_STREAM_VARIABLES.map((v) => [v.name, 'query'])]);
    const exprs = document.panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs).toEqual(PROMETHEUS_QUERIES.map((q) => q.expr));
    expect(new Set(document.panels.flatMap((p) => p.targets.map((t) => t.datasource.uid)))).toEqual(new Set(['${datasource}']));
  });

  it.each(PROMETHEUS_QUERIES.map((q) => [`${q.panel}/${q.refId}`, q.expr] as const))('%s returns the values computed from the frames', async (key, expr) => {
    const expectation = want[key];
    expect(expectation, `no expectation for ${key}`).toBeDefined();
    const samples = await settled(scraper?.url ?? '', interpolate(expr), Object.keys(expectation ?? {}).length);
    const got = Object.fromEntries(samples.map((sample) => [keyOf(sample.metric), sample.value]));
    expect(Object.keys(got).sort()).toEqual(Object.keys(expectation ?? {}).sort());
    for (const [name, value] of Object.entries(expectation ?? {})) expect(got[name], name).toBeCloseTo(value, 12);
  });

  it('the variable queries (label_values) list this run\'s streams', async () => {
    for (const [index, variable] of PROMETHEUS_STREAM_VARIABLES.entries()) {
      const match = /^label_values\((.*), (\w+)\)$/.exec(interpolate(prometheusVariableQuery(index)));
      expect(match, variable.name).not.toBeNull();
      const response = (await fetch(`${scraper?.url ?? ''}/api/v1/label/${match?.[2] ?? ''}/values?${new URLSearchParams({ 'match[]': match?.[1] ?? '' }).toString()}`).then((r) => r.json())) as {
        status: string;
        data: string[];
      };
      expect(response.status).toBe('success');
      // Frames produced straight to Kafka carry no ww-host header: the host label is empty (absent), so $host lists nothing.
      const wantedByVariable: Record<string, string[]> = { job: [A1.job, B1.job], kernel: ['k'], host: [], pod: [POD_A], device: ['test device'], device_uuid: ['00000000-0000-0000-0000-000000000000'], n: ['2', '4'] };
      const wanted = wantedByVariable[variable.name] ?? [];
      for (const value of wanted) expect(response.data, variable.name).toContain(value);
    }
  });
});

/**
 * The PromQL queries docs/exporting.md and docs/querying.md show, read from their ```promql code
 * blocks (one query a line, `# comment` after it), so a doc edit cannot drift from this test.
 */
function documentedPromqlQueries(): { file: string; query: string }[] {
  const queries: { file: string; query: string }[] = [];
  for (const file of ['docs/exporting.md', 'docs/querying.md']) {
    const text = readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
    for (const block of text.matchAll(/```promql\n([\s\S]*?)```/g)) {
      for (const line of (block[1] ?? '').split('\n')) {
        const query = line.replace(/\s+#\s.*$/, '').trim();
        if (query !== '') queries.push({ file, query });
      }
    }
  }
  return queries;
}

describe('the PromQL queries the docs show, against Prometheus 2.42 scraping the estimator', () => {
  const A = expected(A2);
  const B = expected(B1);
  // What each documented query must return here, by output labels, computed from the frames sent
  // (C was evicted by the cap and is stale in the scraper). A query without an entry fails: a new
  // doc query needs an expectation.
  const want: Record<string, { key: (metric: Readonly<Record<string, string>>) => string; values: Record<string, [number, number]>; optional?: Record<string, [number, number]> }> = {
    'warpwatch_loss_measured{warpwatch_job="$JOB"}': { key: (m) => m['warpwatch_stream'] ?? '', values: { [`${A1.job}/k`]: [A.lossMeasured, A.lossMeasured] } },
    'warpwatch_loss_measured / warpwatch_loss_predicted': {
      key: (m) => m['warpwatch_stream'] ?? '',
      values: { [`${A1.job}/k`]: [A.lossMeasured / A.lossPredicted, A.lossMeasured / A.lossPredicted], [`${B1.job}/k`]: [B.lossMeasured / B.lossPredicted, B.lossMeasured / B.lossPredicted] },
    },
    'max by (warpwatch_job) (warpwatch_lane_idle_ratio{warpwatch_basis="measured"})': {
      key: (m) => m['warpwatch_job'] ?? '',
      values: { [A1.job]: [A.idleMeasured, A.idleMeasured], [B1.job]: [B.idleMeasured, B.idleMeasured] },
    },
    'sum by (warpwatch_job) (warpwatch_alerts_total)': { key: (m) => m['warpwatch_job'] ?? '', values: { [A1.job]: [1, 1] } },
    // A rate over 5 min of counters that rose by at most 8 (A) and 2 (B) groups: between 0 and that rise per second.
    // C (1 group, evicted) has a rate too when the scraper saw it twice before the eviction.
    'rate(warpwatch_groups_total[5m])': {
      key: (m) => m['warpwatch_stream'] ?? '',
      values: { [`${A1.job}/k`]: [0, 8], [`${B1.job}/k`]: [0, 2] },
      optional: { [`${C1.job}/k`]: [0, 1] },
    },
  };
  const documented = documentedPromqlQueries();

  it('the docs show PromQL queries, each with an expectation here', () => {
    expect(documented.length).toBeGreaterThanOrEqual(5);
    for (const { file, query } of documented) expect(want[query], `${file}: ${query}`).toBeDefined();
  });

  it.each(documented.map((d) => [d.file, d.query] as const))('%s: %s', async (_file, query) => {
    const expectation = want[query];
    if (expectation === undefined) throw new Error(`no expectation for ${query}`);
    const required = Object.keys(expectation.values).sort();
    const bounds = { ...expectation.optional, ...expectation.values };
    let got: Record<string, number> = {};
    // Polled until every required series is there (the next scrape may be pending).
    await waitUntil(
      async () => {
        got = Object.fromEntries((await promQuery(scraper?.url ?? '', query.replaceAll('$JOB', A1.job))).map((sample) => [expectation.key(sample.metric), sample.value]));
        return required.every((name) => name in got);
      },
      30_000,
      `${required.join(', ')} from ${query}`,
    ).catch((error: unknown) => {
      throw new Error(`${error instanceof Error ? error.message : String(error)}; got ${JSON.stringify(got)}`);
    });
    expect(Object.keys(got).filter((name) => !(name in bounds))).toEqual([]);
    for (const [name, [low, high]] of Object.entries(bounds).filter(([name]) => name in got)) {
      const value = got[name] ?? Number.NaN;
      if (low === high) expect(value, name).toBeCloseTo(low, 12);
      else {
        expect(value, name).toBeGreaterThanOrEqual(low);
        expect(value, name).toBeLessThanOrEqual(high);
      }
    }
  });
});
