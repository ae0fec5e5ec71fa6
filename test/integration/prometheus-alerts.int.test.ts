// The generated Prometheus alerting rules against real servers: LaunchSummary frames whose
// measured loss rises go through the real Kafka to a running estimator; a real Prometheus
// (Debian's 2.42; without it the 3.16 that deploy/local builds) scrapes its /metrics every second
// and evaluates the rules of dashboards/prometheus-rules.ts, generated with windows of seconds.
// The rising-imbalance alert of the rising stream goes pending, then firing, with the stream's
// labels; a steady stream beside it never alerts. The metric names the rules read from the
// estimator and from the collector are checked against their real /metrics.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { stringify } from 'yaml';
import { RESULT_METRIC_PROMETHEUS_NAMES, SERVICE_METRICS } from '../../contracts/index.ts';
import { PROMETHEUS_JOBS, buildPrometheusRules } from '../../dashboards/index.ts';
import { ensureOtlpPrometheus, findSystemPrometheus, freePort, promQuery, resolveLocalStackConfig, startPrometheus, type PromSample, type RunningPrometheus } from '../../deploy/local/index.ts';
import { loadEstimatorConfig, startEstimator, type RunningEstimator } from '../../estimator/index.ts';
import { encodeFrame, histogramOfCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { brokers, connectedProducer, uniqueId, waitUntil } from './estimator-support.ts';

const RUN = uniqueId('wwalert');
const RISING = `${RUN}rise`;
const STEADY = `${RUN}steady`;
const UUID = '11111111-2222-3333-4444-555555555555';
/** Seconds of steady loss before the rise (the baseline), then seconds of the higher loss. */
const BASELINE_PHASE_SECONDS = 25;
const RISE_PHASE_MAX_SECONDS = 60;
const SEND_EVERY_MILLIS = 500;
/** Each launch: 4 groups of n = 2; measured loss per group = sumMeasuredLoss / 4. */
const GROUPS = [[1, 3], [3, 1], [2, 2], [1, 1]] as const;
const LOW_LOSS = 1.2;
const HIGH_LOSS = 2.0;
/** The rules, with the rising-imbalance windows shortened from minutes to seconds. */
const TUNING = { windowSeconds: 8, baselineSeconds: 15, factor: 1.25, minGroups: 8, forSeconds: 4 } as const;

function frame(job: string, launchId: number, measuredLoss: number, endMillis: number): LaunchSummaryFrame {
  const counts = GROUPS.flat();
  return {
    type: 'launch-summary',
    job,
    kernel: 'k',
    launchId: BigInt(launchId),
    frameSequence: 0,
    source: 'cpu',
    groupSize: 2,
    sync: true,
    device: { name: 'test device', uuid: UUID, computeCapability: { major: 0, minor: 0 }, clockHz: 1_000_000_000 },
    startUnixNanos: BigInt(endMillis - 1) * 1_000_000n,
    endUnixNanos: BigInt(endMillis) * 1_000_000n,
    groupCount: GROUPS.length,
    groupsCounted: GROUPS.length,
    sumSimtClocks: BigInt(Math.round(1000 * measuredLoss)),
    sumMimdClocks: 1000n,
    sumMeasuredLoss: measuredLoss * GROUPS.length,
    sumCountsLoss: GROUPS.reduce((sum, g) => sum + (g.length * Math.max(...g)) / (g[0] + g[1]), 0),
    sumMaxCounts: GROUPS.reduce((sum, g) => sum + Math.max(...g), 0),
    sumCounts: counts.reduce((a, b) => a + b, 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(counts),
  };
}

let prometheus: RunningPrometheus | undefined;
let estimator: RunningEstimator | undefined;
let producer: Awaited<ReturnType<typeof connectedProducer>> | undefined;
const log: string[] = [];
let launchId = 0;
let metricsText = '';

async function send(measuredByJob: Readonly<Record<string, number>>): Promise<void> {
  launchId += 1;
  const now = Date.now();
  await producer?.send({
    topic: `${RUN}.frames`,
    messages: Object.entries(measuredByJob).map(([job, loss]) => ({ key: `${job}/k`, value: Buffer.from(encodeFrame(frame(job, launchId, loss, now))), headers: { 'ww-label-pod': `${job}-pod` } })),
  });
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

beforeAll(async () => {
  const binary = findSystemPrometheus(process.env) ?? (await ensureOtlpPrometheus(resolveLocalStackConfig(process.env).cacheDirectory));
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
    WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '1000',
    WARPWATCH_BOOTSTRAP_REPLICATES: '0',
    WARPWATCH_QUANTILES: 'false',
    WARPWATCH_FIT: 'false',
    WARPWATCH_HISTOGRAM_POINTS: 'false',
  };
  const config = loadEstimatorConfig({ env, flags: { brokers: brokers(), groupId: `${RUN}-g`, influxUrl: 'off', metricsPort: '0', instance: `${RUN}-est` } });
  estimator = await startEstimator(config, (line) => log.push(line));
  const rules = buildPrometheusRules({ interval: '1s', overrides: { risingImbalance: TUNING } });
  prometheus = await startPrometheus({ binary, scrapeTargets: [`127.0.0.1:${estimator.metricsPort}`], scrapeIntervalMillis: 1_000, otlpReceiver: false, ruleFiles: [stringify(rules)] });
  producer = await connectedProducer();
}, 600_000);

afterAll(async () => {
  await producer?.disconnect();
  await estimator?.stop();
  await prometheus?.stop();
});

const alertsOf = async (job: string): Promise<PromSample[]> => promQuery(prometheus?.url ?? '', `ALERTS{alertname="WarpwatchRisingImbalance",warpwatch_job="${job}"}`);

describe('Prometheus alerting rules on a real estimator scraped by a real Prometheus', () => {
  it('loads the generated rules: the private Prometheus evaluates every warpwatch alert', async () => {
    const response = (await fetch(`${prometheus?.url ?? ''}/api/v1/rules`).then((r) => r.json())) as { data: { groups: { name: string; rules: { name: string; type: string }[] }[] } };
    const alerts = response.data.groups.flatMap((g) => g.rules.filter((r) => r.type === 'alerting').map((r) => r.name));
    expect(alerts).toContain('WarpwatchRisingImbalance');
    expect(alerts).toHaveLength(11);
  });

  it('rising loss: the alert goes pending, then firing with the stream labels; a steady stream stays silent', async () => {
    // Baseline: both streams at the low loss.
    const baselineEnd = Date.now() + BASELINE_PHASE_SECONDS * 1000;
    while (Date.now() < baselineEnd) {
      await send({ [RISING]: LOW_LOSS, [STEADY]: LOW_LOSS });
      await sleep(SEND_EVERY_MILLIS);
    }
    metricsText = await fetch(`http://127.0.0.1:${estimator?.metricsPort ?? 0}/metrics`).then((r) => r.text());
    expect(await alertsOf(RISING)).toEqual([]);
    // The rise; poll the alert states while sending.
    const states: string[] = [];
    const riseStart = Date.now();
    let firing: PromSample | undefined;
    while (firing === undefined && Date.now() - riseStart < RISE_PHASE_MAX_SECONDS * 1000) {
      await send({ [RISING]: HIGH_LOSS, [STEADY]: LOW_LOSS });
      const samples = await alertsOf(RISING);
      for (const sample of samples) if (states.at(-1) !== sample.metric['alertstate']) states.push(sample.metric['alertstate'] ?? '');
      firing = samples.find((s) => s.metric['alertstate'] === 'firing');
      await sleep(SEND_EVERY_MILLIS);
    }
    const riseSeconds = (Date.now() - riseStart) / 1000;
    expect(firing, `no firing alert within ${RISE_PHASE_MAX_SECONDS} s; states ${states.join(' → ')}; estimator log:\n${log.join('\n')}`).toBeDefined();
    expect(states).toEqual(['pending', 'firing']);
    // At least `for` after the condition could first hold.
    expect(riseSeconds).toBeGreaterThanOrEqual(TUNING.forSeconds);
    expect(firing?.metric).toMatchObject({
      alertname: 'WarpwatchRisingImbalance',
      severity: 'warning',
      component: 'imbalance',
      warpwatch_stream: `${RISING}/k`,
      warpwatch_job: RISING,
      warpwatch_kernel: 'k',
      warpwatch_group_size: '2',
      warpwatch_device_uuid: UUID,
      warpwatch_device: 'test device',
      warpwatch_source: 'cpu',
      k8s_pod_name: `${RISING}-pod`,
    });
    // The scrape's job and instance are folded away (one alert per stream whichever estimator exports it).
    expect(firing?.metric['instance']).toBeUndefined();
    // The alert's summary and runbook as Alertmanager would receive them.
    const api = (await fetch(`${prometheus?.url ?? ''}/api/v1/alerts`).then((r) => r.json())) as { data: { alerts: { labels: Record<string, string>; annotations: Record<string, string>; state: string }[] } };
    const mine = api.data.alerts.filter((a) => a.labels['warpwatch_job'] === RISING && a.labels['alertname'] === 'WarpwatchRisingImbalance');
    expect(mine.map((a) => [a.state, a.annotations['summary'], a.annotations['runbook_url']])).toEqual([
      ['firing', `Lockstep loss of ${RISING}/k rose against its own baseline`, 'docs/alerts.md#warpwatchrisingimbalance'],
    ]);
    // The measured loss Prometheus saw: the low value in the baseline, the high one now.
    const [measured] = await promQuery(prometheus?.url ?? '', `warpwatch_stream:loss_measured:max{warpwatch_job="${RISING}"}`);
    expect(measured?.value).toBeCloseTo(HIGH_LOSS, 12);
    // The steady stream never had an alert of any kind for its stream alerts.
    const steady = await promQuery(prometheus?.url ?? '', `count_over_time(ALERTS{warpwatch_job="${STEADY}"}[5m])`);
    expect(steady).toEqual([]);
    const [steadyLoss] = await promQuery(prometheus?.url ?? '', `warpwatch_stream:loss_measured:max{warpwatch_job="${STEADY}"}`);
    expect(steadyLoss?.value).toBeCloseTo(LOW_LOSS, 12);
  }, 180_000);

  it('the metric names the rules read from the estimator are on its real /metrics', () => {
    const names = new Set(metricsText.split('\n').filter((l) => l !== '' && !l.startsWith('#')).map((l) => /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(l)?.[0]));
    const read = [
      RESULT_METRIC_PROMETHEUS_NAMES.lossMeasured,
      RESULT_METRIC_PROMETHEUS_NAMES.lossPredicted,
      RESULT_METRIC_PROMETHEUS_NAMES.groups,
      RESULT_METRIC_PROMETHEUS_NAMES.windows,
      RESULT_METRIC_PROMETHEUS_NAMES.evictedStreams,
      SERVICE_METRICS.estimatorFrames.prometheus,
      SERVICE_METRICS.estimatorConsumerLag.prometheus,
      SERVICE_METRICS.estimatorInfluxDroppedLines.prometheus,
    ];
    for (const name of read) expect(names.has(name), `${name} on /metrics`).toBe(true);
    // The scrape job the service-health rules select on is the one a private Prometheus gets.
    expect(metricsText).toContain('warpwatch_estimator_frames_total{outcome="recorded"');
    expect(PROMETHEUS_JOBS.estimator).toBe('warpwatch-estimator');
  });

  it('the estimator\'s scrape target is up under the job the down alert selects', async () => {
    const [up] = await promQuery(prometheus?.url ?? '', `up{job="${PROMETHEUS_JOBS.estimator}"}`);
    expect(up?.value).toBe(1);
    expect(await promQuery(prometheus?.url ?? '', 'ALERTS{alertname="WarpwatchEstimatorDown"}')).toEqual([]);
  });
});

describe('the collector metric names the rules read, on a real collector\'s /metrics', () => {
  it('frames in, out and rejected (a frame with a bad CRC) are exported under the names of SERVICE_METRICS', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'ww-alerts-collector-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--stdin', '--brokers', brokers(), '--partitions', '1', '--spool-dir', join(directory, 'spool'), '--metrics-port', String(port)], {
      // No pipeline points into the shared database.
      env: { ...process.env, WARPWATCH_FRAMES_TOPIC: `${RUN}.collector.frames`, WARPWATCH_DLQ_TOPIC: `${RUN}.collector.dlq`, WARPWATCH_INFLUX_URL: 'off' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitUntil(async () => /started: /.test(stderr) || child.exitCode !== null, 60_000, 'collector start').catch((error: unknown) => {
        throw new Error(`${String(error)}; exit ${child.exitCode}; output:\n${stderr}`);
      });
      expect(child.exitCode, stderr).toBeNull();
      const frames = [0, 1, 2].map((sequence) => Buffer.from(fixtureFrameBytes({ job: `${RUN}c`, kernel: 'k', sequence })));
      const broken = Buffer.from(frames[0] ?? Buffer.alloc(0));
      broken[broken.length - 1] = (broken[broken.length - 1] ?? 0) ^ 0xff; // CRC mismatch: rejected to the DLQ
      // The broken frame between valid ones (a stream still open does not end it).
      child.stdin.write(Buffer.concat([frames[0] ?? Buffer.alloc(0), broken, ...frames.slice(1)]));
      const wanted = [SERVICE_METRICS.collectorFramesIn, SERVICE_METRICS.collectorFramesOut, SERVICE_METRICS.collectorFramesRejected].map((m) => m.prometheus);
      let text = '';
      await waitUntil(
        async () => {
          text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
          return wanted.every((name) => new RegExp(`^${name}\\{[^}]*\\} [1-9]`, 'm').test(text));
        },
        60_000,
        `${wanted.join(', ')} counted on the collector's /metrics`,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; /metrics:\n${text}\nstderr:\n${stderr}`);
      });
      expect(text).toMatch(new RegExp(`^${SERVICE_METRICS.collectorFramesIn.prometheus}\\{[^}]*\\} 3$`, 'm'));
      expect(text).toMatch(new RegExp(`^${SERVICE_METRICS.collectorFramesRejected.prometheus}\\{[^}]*code="[A-Z_]+"[^}]*\\} 1$`, 'm'));
    } finally {
      child.stdin.end();
      child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
