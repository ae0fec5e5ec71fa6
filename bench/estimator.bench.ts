/**
 * Benchmark of the estimator (issue 6), against the real local Kafka and InfluxDB
 * (deploy/local) with `warpwatch estimate` as a child process:
 *   1. end-to-end latency, frame produced → window point queryable in InfluxDB, at 1,000
 *      launch summaries/s (100 streams × 10 launches/s, 1 s windows); target p99 ≤ 2 s;
 *   2. throughput of one instance: a backlog of launch summaries consumed from Kafka;
 *   3. memory (RSS) of one instance holding 10,000 live streams; target ≤ 300 MB;
 * and, in process, the engine alone (decode + window + model) against decoding alone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { acquireStackLease, resolveLocalStackConfig, silentReporter } from '../deploy/local/index.ts';
import { CategoricalDistribution, createSeededRandom } from '../model/index.ts';
import { decodeFrame, encodeFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { createEstimatorEngine, MEASUREMENTS, syntheticLaunchSummary } from '../estimator/index.ts';
import { testEngineOptions } from '../estimator/test-support.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

const GROUP_SIZE = 32;
const GROUPS_PER_LAUNCH = 64;

function templates(streams: number, seed: number): LaunchSummaryFrame[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: streams }, (_, s) =>
    syntheticLaunchSummary({
      job: `bench${s}`,
      kernel: 'k',
      deviceName: 'synthetic',
      groupSize: GROUP_SIZE,
      source: 'cpu',
      launchId: 0n,
      frameSequence: 0,
      endMillis: 0,
      groups: GROUPS_PER_LAUNCH,
      distribution: CategoricalDistribution.fromPmf(new Map([[1 + (s % 7), 3], [10 + (s % 13), 2], [30, 1]])),
      random,
      measuredOverhead: 0.02,
      measuredNoise: 0.01,
    }),
  );
}

function frameAt(template: LaunchSummaryFrame, launch: number, endMillis: number): Buffer {
  return Buffer.from(
    encodeFrame({ ...template, launchId: BigInt(launch), frameSequence: launch, startUnixNanos: BigInt(endMillis - 1) * 1_000_000n, endUnixNanos: BigInt(endMillis) * 1_000_000n }),
  );
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

async function influx(url: string, database: string, query: string): Promise<{ tags?: Record<string, string>; values: unknown[][] }[]> {
  const response = await fetch(`${url}/query?db=${database}&q=${encodeURIComponent(query)}`, { method: 'POST' });
  const body = (await response.json()) as { results: { series?: { tags?: Record<string, string>; values: unknown[][] }[] }[] };
  return body.results[0]?.series ?? [];
}

interface Child {
  process: ChildProcess;
  metricsPort: Promise<number>;
}

function startEstimatorChild(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'estimate', '--instance', 'bench'], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const metricsPort = new Promise<number>((resolve, reject) => {
    let text = '';
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      text += chunk;
      const match = /metrics 127\.0\.0\.1:(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`estimator exited early:\n${text}`)));
  });
  return { process: child, metricsPort };
}

async function health(port: number): Promise<{ status: string; counters: { framesIn: number; windowsClosed: number }; streams: number }> {
  return (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.json())) as { status: string; counters: { framesIn: number; windowsClosed: number }; streams: number };
}

function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) * 1024 : Number.NaN;
}

async function stopChild(child: Child): Promise<void> {
  if (child.process.exitCode !== null) return;
  const exited = new Promise((resolve) => child.process.on('exit', resolve));
  child.process.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  if (child.process.exitCode === null) child.process.kill('SIGKILL');
}

async function until(probe: () => Promise<boolean>, timeoutMillis: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMillis;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const metrics: Record<string, number> = {};
  const notes: string[] = [];

  // 0. The engine alone, in process: decode + window + model per launch summary (1 s windows, 100 streams).
  const inProcessFrames = 5_000;
  const streamsInProcess = 100;
  const inProcessTemplates = templates(streamsInProcess, 1);
  const inProcessBytes = Array.from({ length: inProcessFrames }, (_, i) => frameAt(inProcessTemplates[i % streamsInProcess]!, i, 1_700_000_000_000 + Math.floor(i / streamsInProcess) * 100));
  await ctx.measure('decode only', () => {
    for (const bytes of inProcessBytes) decodeFrame(bytes);
  }, { runs: 5, parameters: { frames: inProcessFrames } });
  const engineCase = await ctx.measure(
    'engine: decode + windows + model',
    () => {
      const engine = createEstimatorEngine(testEngineOptions({ compute: { ...testEngineOptions().compute, bootstrapReplicates: 32, quantileSamples: 10_000 } }), { writePoints: () => {}, publishDistribution: () => {}, publishAlert: () => {} }, { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} });
      inProcessBytes.forEach((bytes, i) => engine.handleMessage(0, String(i), bytes, 0));
      engine.closeAll();
    },
    { runs: 5, baseline: 'decode only', parameters: { frames: inProcessFrames, streams: streamsInProcess, windowMillis: 1000, bootstrapReplicates: 32 } },
  );
  metrics['engine.launchSummariesPerSecond'] = inProcessFrames / (engineCase.medianMillis / 1000);
  notes.push(`engine in process: ${inProcessFrames} launch summaries (${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE}), 100 streams, 1 s windows = 500 window closes with 32 bootstrap replicates, sweep and quantiles each`);

  const lease = await acquireStackLease(resolveLocalStackConfig(process.env), silentReporter);
  const brokers = lease.endpoints.kafkaBrokers;
  const influxUrl = lease.endpoints.influxUrl;
  const kafka = new Kafka({ clientId: 'estimator-bench', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const runId = `wwbench${Date.now().toString(36)}`;
  const baseEnv = (id: string, extra: Record<string, string>): Record<string, string> => ({
    WARPWATCH_KAFKA_BROKERS: brokers,
    WARPWATCH_INFLUX_URL: influxUrl,
    WARPWATCH_INFLUX_DATABASE: id,
    WARPWATCH_ESTIMATOR_GROUP_ID: `${id}-group`,
    WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
    WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`,
    WARPWATCH_ALERTS_TOPIC: `${id}.alerts`,
    WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`,
    WARPWATCH_METRICS_PORT: '0',
    WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
    WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '1000',
    ...extra,
  });
  const children: Child[] = [];
  try {
    // 1. Latency at 1,000 launch summaries/s.
    {
      const id = `${runId}lat`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 6 }], waitForLeaders: true });
      const streams = 100;
      const perStreamHz = 10;
      const seconds = ctx.quick ? 10 : 25;
      const windowMillis = 1_000;
      const child = startEstimatorChild(baseEnv(id, { WARPWATCH_WINDOW_MILLIS: String(windowMillis), WARPWATCH_IDLE_CLOSE_MILLIS: '2000', WARPWATCH_HISTOGRAM_POINTS: 'false' }));
      children.push(child);
      const port = await child.metricsPort;
      await until(async () => (await health(port)).status !== 'stopping' && (await health(port)).counters !== undefined, 30_000);
      const latencyTemplates = templates(streams, 2);
      // Production time of the last frame of each (stream, window).
      const lastProduced = new Map<string, number>();
      const firstSeen = new Map<string, number>();
      let polling = true;
      const pollMillis: number[] = [];
      const poller = (async () => {
        while (polling) {
          const pollStart = Date.now();
          // Only recent windows: keeps each poll small, so its own duration (recorded) stays short.
          const series = await influx(influxUrl, id, `SELECT "launches" FROM "${MEASUREMENTS.window}" WHERE time > now() - 15s GROUP BY stream`);
          const now = Date.now();
          pollMillis.push(now - pollStart);
          for (const s of series) for (const row of s.values) {
            const key = `${s.tags?.stream}|${Date.parse(String(row[0]))}`;
            if (!firstSeen.has(key)) firstSeen.set(key, now);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      const started = Date.now();
      let launch = 0;
      const tickMillis = 50;
      let sent = 0;
      while (Date.now() - started < seconds * 1000) {
        const tickStart = Date.now();
        const messages: { key: string; value: Buffer }[] = [];
        const perTick = (streams * perStreamHz * tickMillis) / 1000;
        for (let i = 0; i < perTick; i += 1) {
          const s = (launch + i) % streams;
          const now = Date.now();
          messages.push({ key: `bench${s}/k`, value: frameAt(latencyTemplates[s]!, launch + i, now) });
          lastProduced.set(`bench${s}/k|${Math.floor(now / windowMillis) * windowMillis}`, now);
        }
        launch += perTick;
        await producer.send({ topic: `${id}.frames`, acks: 1, messages });
        sent += messages.length;
        const elapsed = Date.now() - tickStart;
        if (elapsed < tickMillis) await new Promise((resolve) => setTimeout(resolve, tickMillis - elapsed));
      }
      const rate = sent / ((Date.now() - started) / 1000);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      polling = false;
      await poller;
      const latencies: number[] = [];
      for (const [key, seen] of firstSeen) {
        const produced = lastProduced.get(key);
        // Only windows that closed by the watermark during production (not the idle-closed last ones).
        if (produced !== undefined && produced < started + seconds * 1000 - 2 * windowMillis) latencies.push(seen - produced);
      }
      latencies.sort((a, b) => a - b);
      pollMillis.sort((a, b) => a - b);
      metrics['latency.pollMedianMillis'] = percentile(pollMillis, 0.5);
      metrics['latency.loadAverage1m'] = loadavg()[0] ?? Number.NaN;
      metrics['latency.ratePerSecond'] = rate;
      metrics['latency.windows'] = latencies.length;
      metrics['latency.p50Millis'] = percentile(latencies, 0.5);
      metrics['latency.p99Millis'] = percentile(latencies, 0.99);
      metrics['latency.maxMillis'] = latencies[latencies.length - 1] ?? Number.NaN;
      const h = await health(port);
      metrics['latency.windowsClosed'] = h.counters.windowsClosed;
      notes.push(
        `latency: ${rate.toFixed(0)} launch summaries/s produced for ${seconds} s (100 streams × 10/s, ${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE} each), 1 s windows; ` +
          `latency = first time the window's point answered an InfluxQL poll (every ~50 ms) − production time of the window's last frame (includes waiting ~100 ms for the next frame that closes the window, and the Influx flush interval 200 ms); ` +
          `machine load average ${(loadavg()[0] ?? 0).toFixed(1)} on ${cpus().length} cores during the run, InfluxQL poll median ${metrics['latency.pollMedianMillis']} ms; ` +
          `${latencies.length} windows: p50 ${metrics['latency.p50Millis']} ms, p99 ${metrics['latency.p99Millis']} ms (target p99 <= 2000 ms: ${(metrics['latency.p99Millis'] ?? Infinity) <= 2000 ? 'met' : 'NOT met'})`,
      );
      await stopChild(child);
    }

    // 2. Throughput: a backlog of launch summaries consumed by one instance.
    {
      const id = `${runId}thr`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 6 }], waitForLeaders: true });
      const streams = 100;
      const frames = ctx.quick ? 20_000 : 50_000;
      const throughputTemplates = templates(streams, 3);
      for (let i = 0; i < frames; i += 1000) {
        const messages = Array.from({ length: Math.min(1000, frames - i) }, (_, j) => {
          const k = i + j;
          const s = k % streams;
          return { key: `bench${s}/k`, value: frameAt(throughputTemplates[s]!, k, 1_700_000_000_000 + Math.floor(k / streams) * 100) };
        });
        await producer.send({ topic: `${id}.frames`, acks: 1, messages });
      }
      const child = startEstimatorChild(baseEnv(id, { WARPWATCH_WINDOW_MILLIS: '10000', WARPWATCH_HISTOGRAM_POINTS: 'false' }));
      children.push(child);
      const port = await child.metricsPort;
      let firstMillis = 0;
      await until(async () => {
        const h = await health(port);
        if (firstMillis === 0 && h.counters.framesIn > 0) firstMillis = Date.now();
        return h.counters.framesIn >= frames;
      }, 300_000);
      const seconds = (Date.now() - firstMillis) / 1000;
      const h = await health(port);
      metrics['throughput.launchSummariesPerSecond'] = h.counters.framesIn / seconds;
      metrics['throughput.groupsPerSecond'] = (h.counters.framesIn * GROUPS_PER_LAUNCH) / seconds;
      metrics['throughput.windowsClosed'] = h.counters.windowsClosed;
      notes.push(
        `throughput: backlog of ${frames} launch summaries (100 streams, event time 100 ms apart per stream, 10 s windows → ${h.counters.windowsClosed} window closes during the run) consumed in ${seconds.toFixed(1)} s = ${(h.counters.framesIn / seconds).toFixed(0)} launch summaries/s, ${((h.counters.framesIn * GROUPS_PER_LAUNCH) / seconds).toFixed(0)} groups/s summarised; GroupSamples frames are counted but not used by the core, so sampled groups/s is not measured`,
      );
      await stopChild(child);
    }

    // 3. Memory with 10,000 live streams (windows of 10 min stay open: every stream holds a window, current, cumulative, dedupe, detector).
    {
      const id = `${runId}mem`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 6 }], waitForLeaders: true });
      const streams = ctx.quick ? 2_000 : 10_000;
      const launchesPerStream = 3;
      const memoryTemplates = templates(50, 4);
      for (let launch = 0; launch < launchesPerStream; launch += 1) {
        for (let s0 = 0; s0 < streams; s0 += 1000) {
          const messages = Array.from({ length: Math.min(1000, streams - s0) }, (_, j) => {
            const s = s0 + j;
            const template = { ...memoryTemplates[s % 50]!, job: `mem${s}` };
            return { key: `mem${s}/k`, value: frameAt(template, launch, 1_700_000_000_000 + launch * 1000) };
          });
          await producer.send({ topic: `${id}.frames`, acks: 1, messages });
        }
      }
      const child = startEstimatorChild(baseEnv(id, { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '600000' }));
      children.push(child);
      const port = await child.metricsPort;
      await until(async () => (await health(port)).counters.framesIn >= streams * launchesPerStream, 300_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // let a checkpoint happen
      const h = await health(port);
      const rss = rssBytes(child.process.pid ?? 0);
      metrics['memory.liveStreams'] = h.streams;
      metrics['memory.rssBytes'] = rss;
      metrics['memory.rssMegabytes'] = rss / 1e6;
      notes.push(`memory: ${h.streams} live streams (3 launches each, open 10 min windows, default settings incl. checkpoint mirror): RSS ${(rss / 1e6).toFixed(0)} MB (target <= 300 MB: ${rss <= 300e6 ? 'met' : 'NOT met'})`);
      await stopChild(child);
    }
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    await producer.disconnect();
    await admin.disconnect();
    for (const suffix of ['lat', 'thr', 'mem']) await influx(influxUrl, `${runId}${suffix}`, `DROP DATABASE "${runId}${suffix}"`).catch(() => undefined);
    await lease.release();
  }
  return { notes, metrics };
}
