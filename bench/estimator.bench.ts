/**
 * Benchmark of the estimator, against the real local Kafka and InfluxDB
 * (deploy/local) with `warpwatch estimate` as a child process:
 *   1. end-to-end latency, frame produced → window point queryable in InfluxDB (InfluxQL), at
 *      1,000 launch summaries/s offered on an absolute schedule (100 streams × 10 launches/s,
 *      1 s windows); target p99 ≤ 2 s; the offered rate actually achieved is recorded; the
 *      same at 10,000 and 20,000/s (target p99 ≤ 500 ms), and at 20,000/s with three instances
 *      in one group, as the sizing rule serves that load (`latency20k3`); 25 s measured at
 *      1,000/s, 60 s at 20,000/s with one instance (InfluxDB's cache snapshots), 15 s otherwise;
 *   2. throughput of one instance: a backlog of launch summaries consumed from Kafka (10 s
 *      windows, and 1 s windows where the model runs 10× as often), a backlog with one
 *      GroupSamples frame (64 sampled groups × n=32) per 4 launch summaries (10 s windows: a
 *      quarter of the groups, 16× the recorder's default rate), and one with the groups the
 *      recorder's default sampling picks (hash, 1 in 64: a frame of ~1 group for ~63 % of the
 *      launches): launch summaries/s and sampled groups/s;
 *   3. memory (RSS) of one instance holding 10,000 live streams; target ≤ 300 MB;
 * and, in process, the engine alone (decode + window + model) against decoding alone, for
 * launch summaries and for GroupSamples frames (sampled groups/s).
 *
 * WARPWATCH_BENCH_ESTIMATOR_CASES=latency,throughput,memory picks parts (default all; for
 * experiments — a partial run still writes the result file); `throughputSamples` and
 * `throughputSamplesDefault` are the two GroupSamples backlogs of `throughput`, alone.
 * The estimator children run as deployed: with deploy/contracts.ts's ESTIMATOR_NODE_FLAGS and
 * IMAGE_PROCESS_ENV (V8's semi-spaces, malloc arenas; an environment variable of the bench's own
 * environment wins). WARPWATCH_BENCH_ESTIMATOR_NODE_FLAGS='--flag ...' adds Node/V8 flags after
 * those (a later flag wins: `--max-semi-space-size=16` measures Node's default).
 * WARPWATCH_BENCH_CPU_PROF_DIR=<dir> runs the estimator children under `node --cpu-prof`
 * (profiles `estimator-<case>.cpuprofile` in that directory, written at their clean exit).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { Producer } from 'kafkajs';
// @ts-expect-error -- a plain JavaScript module of bin/, without type declarations
import { compiledIsCurrent as compiledIsCurrentUntyped } from '../bin/compiled-is-current.mjs';
import { acquireStackLease, resolveLocalStackConfig, silentReporter } from '../deploy/local/index.ts';
import { ESTIMATOR_NODE_FLAGS, IMAGE_PROCESS_ENV } from '../deploy/index.ts';
import { TOPIC_MAX_MESSAGE_BYTES, topicToCreate } from '../contracts/topics.ts';
import { decodeFrame } from '../protocol/index.ts';
import { cachingDefaultPartitioner, createKafkaClient } from '../service/index.ts';
import { installNativeKafkaCrc32c } from '../service/kafka-native-crc.ts';
import { decodeKafkaRecord, encodeKafkaRecord, encodeKafkaRecordBatch, installFastKafkaRecordBatchEncoder, installFastKafkaRecordDecoder, installFastKafkaRecordEncoder, kafkajsRecordBatchEncoder, kafkajsRecordDecoder, kafkajsRecordEncoder, type KafkaRecordReader } from '../service/kafka-record-codec.ts';
import { createEstimatorEngine } from '../estimator/index.ts';
import { MEASUREMENTS } from '../contracts/index.ts';
import { testEngineOptions } from '../estimator/testing/test-support.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';
import { influxSnapshotsBetween, type InfluxSnapshots } from './influx-snapshots.ts';
import {
  DEFAULT_SAMPLING_STRIDE,
  defaultRateSamplesFrameAt,
  frameAt,
  GROUP_SIZE,
  GROUPS_PER_LAUNCH,
  SAMPLED_GROUPS_PER_FRAME,
  samplesFrameAt,
  samplesTemplates,
  SUMMARIES_PER_SAMPLES_FRAME,
  recorderLaunchId,
  templates,
  ITERATION_TICKS,
  DIVERGING_EXIT_TICKS,
  GROUP_OVERHEAD_TICKS,
} from './estimator-frames.ts';

/** Whether bin/warpwatch.mjs runs dist/ (compiled) rather than the sources (bin/compiled-is-current.mjs). */
const compiledIsCurrent = compiledIsCurrentUntyped as (root: URL, env: Record<string, string | undefined>) => boolean;
const EVENT_LAG_METRIC = 'warpwatch_estimator_window_event_lag';
const MODEL_METRIC = 'warpwatch_estimator_model_duration';
const requireHere = createRequire(import.meta.url);
/** kafkajs' protocol decoder (kafkajs/src/protocol/decoder.js), over one record's bytes. */
const KafkaDecoder = createRequire(requireHere.resolve('kafkajs'))('./src/protocol/decoder.js') as new (buffer: Buffer) => KafkaRecordReader;

/**
 * The records' bytes as a fetch response holds them (after each record's length), encoded by
 * kafkajs' record encoder: the frame as value, its stream key, and the headers a collector adds.
 */
function kafkaRecordBytes(frames: readonly Buffer[]): Buffer[] {
  const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
  const encodeRecord = kafkajsRequire('./src/protocol/recordBatch/record/v0/index.js') as (fields: Record<string, unknown>) => { buffer: Buffer };
  return frames.map((frame, i) => {
    const encoded = encodeRecord({
      offsetDelta: i,
      timestampDelta: i,
      key: Buffer.from(`bench${i % 100}/k`),
      value: frame,
      headers: { 'ww-host': 'gpu-host-7', 'ww-source': 'stdin', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    }).buffer;
    return new KafkaDecoder(encoded).readVarIntBytes()!;
  });
}

/** Wall clock the in-process cases run at: after every generated frame (a frame dated ahead of the clock would be rejected as from the future). */
const BENCH_WALL_MILLIS = Date.now() + 86_400_000;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] ?? Number.NaN;
}

async function influx(url: string, database: string, query: string): Promise<{ tags?: Record<string, string>; values: unknown[][] }[]> {
  const response = await fetch(`${url}/query?db=${database}&q=${encodeURIComponent(query)}`, { method: 'POST' });
  const body = (await response.json()) as { results: { series?: { tags?: Record<string, string>; values: unknown[][] }[] }[] };
  return body.results[0]?.series ?? [];
}

/**
 * The estimator children's Node flags: the estimator's as deployed (deploy/contracts.ts), then
 * the bench's own for experiments (heap sizing, GC tracing; a later flag wins).
 */
function childNodeFlags(): string[] {
  return [...ESTIMATOR_NODE_FLAGS, ...(process.env.WARPWATCH_BENCH_ESTIMATOR_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '')];
}

/** How the estimator children run: their Node flags and the process environment of the image (for the notes). */
function childRuntime(): string {
  const env = Object.keys(IMAGE_PROCESS_ENV).map((name) => `${name}=${process.env[name] ?? IMAGE_PROCESS_ENV[name] ?? ''}`);
  return `node ${childNodeFlags().join(' ')}, ${env.join(' ')}`;
}

interface Child {
  process: ChildProcess;
  metricsPort: Promise<number>;
  /** The child's stderr so far (start-up, errors, its exit): for messages when a case fails. */
  stderr: () => string;
}

function startEstimatorChild(env: Record<string, string>, label: string): Child {
  const profileDirectory = process.env.WARPWATCH_BENCH_CPU_PROF_DIR;
  const profile = profileDirectory ? ['--cpu-prof', '--cpu-prof-dir', profileDirectory, '--cpu-prof-name', `estimator-${label}.cpuprofile`] : [];
  profile.push(...childNodeFlags());
  // One instance id per child: instances of one group must differ (three children named alike never settled as a group).
  const child = spawn(process.execPath, [...profile, 'bin/warpwatch.mjs', 'estimate', '--instance', `bench-${label}`], {
    // The image's process environment (malloc arenas) unless the bench's own environment sets it.
    env: { ...IMAGE_PROCESS_ENV, ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  const metricsPort = new Promise<number>((resolve, reject) => {
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      text += chunk;
      const match = /metrics 127\.0\.0\.1:(\d+)/.exec(text);
      if (match) resolve(Number(match[1]));
    });
    child.on('exit', () => reject(new Error(`estimator exited early:\n${text}`)));
  });
  metricsPort.catch(() => undefined);
  return { process: child, metricsPort, stderr: () => text };
}

interface Health {
  status: string;
  partitions?: number[];
  counters: { framesIn: number; framesOut: number; windowsClosed: number; streamsEvicted: number; heapCollections: number; heapCollectionMillis: number };
  streams: number;
  influx?: { pointsWritten: number; batchesWritten?: number };
}

async function health(port: number): Promise<Health> {
  return (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.json())) as Health;
}

/** Cumulative bucket counts (le → count), sum and count of a Prometheus histogram on /metrics. */
async function histogramOf(port: number, name: string): Promise<{ buckets: Map<number, number>; sum: number; count: number }> {
  const text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text());
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const bucket = /_bucket\{[^}]*le="([^"]+)"[^}]*\}\s+(\S+)/.exec(line);
    if (bucket) buckets.set(bucket[1] === '+Inf' ? Number.POSITIVE_INFINITY : Number(bucket[1]), Number(bucket[2]));
    else if (/_sum(\{[^}]*\})?\s/.test(line)) sum = Number(line.trim().split(/\s+/).pop());
    else if (/_count(\{[^}]*\})?\s/.test(line)) count = Number(line.trim().split(/\s+/).pop());
  }
  return { buckets, sum, count };
}

/** Upper bucket bound below which a share p of the observations between two scrapes lies. */
function histogramQuantile(before: Map<number, number>, after: Map<number, number>, p: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const total = (after.get(Number.POSITIVE_INFINITY) ?? 0) - (before.get(Number.POSITIVE_INFINITY) ?? 0);
  for (const bound of bounds) if ((after.get(bound) ?? 0) - (before.get(bound) ?? 0) >= p * total) return bound;
  return Number.NaN;
}

/** User + system CPU time of a process so far (ms), from /proc (clock ticks of 10 ms). */
function cpuMillisOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Resident set size of a process now (`VmRSS`) or its peak so far (`VmHWM`), in bytes (Linux /proc). */
function rssBytes(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
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
      inProcessBytes.forEach((bytes, i) => engine.handleMessage(0, String(i), bytes, BENCH_WALL_MILLIS));
      engine.closeAll();
    },
    { runs: 5, baseline: 'decode only', parameters: { frames: inProcessFrames, streams: streamsInProcess, windowMillis: 1000, bootstrapReplicates: 32 } },
  );
  metrics['engine.launchSummariesPerSecond'] = inProcessFrames / (engineCase.medianMillis / 1000);
  notes.push(`engine in process: ${inProcessFrames} launch summaries (${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE}), 100 streams, 1 s windows = 500 window closes, each with the standard error (32 bootstrap replicates; auto = linearised for these 3-entry histograms), sweep and quantiles, no parametric fit (the service below fits too)`);

  // 0a. kafkajs' record decoder against the one the Kafka client installs in its place
  // (service/kafka-record-codec.ts), on the records a collector writes: a ~200-byte frame, its
  // stream key and the ww-host, ww-source and traceparent headers.
  const kafkaRecords = kafkaRecordBytes(inProcessBytes.slice(0, 2_000));
  if (!installFastKafkaRecordDecoder()) throw new Error('the record decoder could not be installed in kafkajs');
  const kafkajsDecode = kafkajsRecordDecoder()!;
  const recordContext = { firstOffset: '123456789', firstTimestamp: String(1_700_000_000_000), magicByte: 2, isControlBatch: false, timestampType: 0, maxTimestamp: String(1_700_000_000_000 + kafkaRecords.length) };
  await ctx.measure("kafkajs' record decoder", () => {
    for (const bytes of kafkaRecords) kafkajsDecode(new KafkaDecoder(bytes), recordContext);
  }, { runs: 7, parameters: { records: kafkaRecords.length } });
  const fastRecords = await ctx.measure(
    'installed record decoder',
    () => {
      for (const bytes of kafkaRecords) decodeKafkaRecord(new KafkaDecoder(bytes), recordContext);
    },
    { runs: 7, baseline: "kafkajs' record decoder", parameters: { records: kafkaRecords.length } },
  );
  metrics['kafkaRecordDecoder.recordsPerSecond'] = kafkaRecords.length / (fastRecords.medianMillis / 1000);
  // And the record encoder, on what the estimator produces most: a distribution record (~2 KB of
  // JSON, keyed by stream) per window close.
  if (!installFastKafkaRecordEncoder()) throw new Error('the record encoder could not be installed in kafkajs');
  const kafkajsEncode = kafkajsRecordEncoder()!;
  const resultValue = JSON.stringify({ schema: 'warpwatch.distribution/v1', entries: Array.from({ length: 60 }, (_, i) => [i, i, 1000 + i * 7.25]), padding: 'x'.repeat(400) });
  const results = Array.from({ length: 2_000 }, (_, i) => ({ offsetDelta: i % 500, timestampDelta: i, key: `bench${i % 100}/k|n=32|cpu|00000000-0000-0000-0000-000000000000|`, value: resultValue }));
  await ctx.measure("kafkajs' record encoder", () => {
    for (const fields of results) kafkajsEncode(fields);
  }, { runs: 7, parameters: { records: results.length, valueBytes: resultValue.length } });
  const fastEncode = await ctx.measure(
    'installed record encoder',
    () => {
      for (const fields of results) encodeKafkaRecord(fields);
    },
    { runs: 7, baseline: "kafkajs' record encoder", parameters: { records: results.length, valueBytes: resultValue.length } },
  );
  metrics['kafkaRecordEncoder.recordsPerSecond'] = results.length / (fastEncode.medianMillis / 1000);
  // And the batch encoder around them: the estimator's producer sends up to 500 records a request.
  // Both with the native CRC-32C the Kafka client installs (the batch module binds it when it loads).
  installNativeKafkaCrc32c();
  if (!installFastKafkaRecordBatchEncoder()) throw new Error('the record batch encoder could not be installed in kafkajs');
  const kafkajsBatch = kafkajsRecordBatchEncoder()!;
  const batches = Array.from({ length: 4 }, (_, b) => ({ firstTimestamp: 1_700_000_000_000, maxTimestamp: 1_700_000_000_500, lastOffsetDelta: 499, records: results.slice(b * 500, b * 500 + 500).map((fields) => encodeKafkaRecord(fields)) }));
  await ctx.measure("kafkajs' record batch encoder", async () => {
    for (const batch of batches) await kafkajsBatch(batch);
  }, { runs: 7, parameters: { batches: batches.length, recordsPerBatch: 500, valueBytes: resultValue.length } });
  const fastBatch = await ctx.measure(
    'installed record batch encoder',
    async () => {
      for (const batch of batches) await encodeKafkaRecordBatch(batch);
    },
    { runs: 7, baseline: "kafkajs' record batch encoder", parameters: { batches: batches.length, recordsPerBatch: 500, valueBytes: resultValue.length } },
  );
  metrics['kafkaRecordBatchEncoder.recordsPerSecond'] = (batches.length * 500) / (fastBatch.medianMillis / 1000);

  // 0b. The engine alone on GroupSamples frames: decode + per-group sums, ICC sums and a
  // least-squares row from the reconvergence-stack emulator per sampled group, and the
  // warpwatch_samples summary (divergence fit) per window close.
  const samplesFrames = 2_000;
  const samplesSpacingMillis = 100 * SUMMARIES_PER_SAMPLES_FRAME;
  const inProcessSamples = samplesTemplates(inProcessTemplates, samplesFrames / streamsInProcess, 5);
  const samplesBytes = Array.from({ length: samplesFrames }, (_, i) =>
    samplesFrameAt(inProcessSamples[i % streamsInProcess]![Math.floor(i / streamsInProcess)]!, i, 1_700_000_000_000 + Math.floor(i / streamsInProcess) * samplesSpacingMillis),
  );
  const samplesFrameBytes = samplesBytes.reduce((sum, bytes) => sum + bytes.length, 0) / samplesFrames;
  await ctx.measure('decode only: GroupSamples', () => {
    for (const bytes of samplesBytes) decodeFrame(bytes);
  }, { runs: 5, parameters: { frames: samplesFrames, groupsPerFrame: SAMPLED_GROUPS_PER_FRAME, groupSize: GROUP_SIZE } });
  const samplesCase = await ctx.measure(
    'engine: GroupSamples',
    () => {
      const engine = createEstimatorEngine(testEngineOptions({ compute: { ...testEngineOptions().compute, bootstrapReplicates: 32, quantileSamples: 10_000 } }), { writePoints: () => {}, publishDistribution: () => {}, publishAlert: () => {} }, { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} });
      samplesBytes.forEach((bytes, i) => engine.handleMessage(0, String(i), bytes, BENCH_WALL_MILLIS));
      engine.closeAll();
    },
    { runs: 5, maxTotalMillis: 15_000, baseline: 'decode only: GroupSamples', parameters: { frames: samplesFrames, groupsPerFrame: SAMPLED_GROUPS_PER_FRAME, groupSize: GROUP_SIZE, streams: streamsInProcess, windowMillis: 1000 } },
  );
  const sampledGroups = samplesFrames * SAMPLED_GROUPS_PER_FRAME;
  metrics['engine.sampledGroupsPerSecond'] = sampledGroups / (samplesCase.medianMillis / 1000);
  metrics['engine.sampledGroupsPerCpuSecond'] = sampledGroups / (samplesCase.medianCpuMillis / 1000);
  metrics['engine.samplesFramesPerSecond'] = samplesFrames / (samplesCase.medianMillis / 1000);
  metrics['engine.samplesFrameBytes'] = samplesFrameBytes;
  notes.push(
    `engine in process, GroupSamples: ${samplesFrames} frames of ${SAMPLED_GROUPS_PER_FRAME} sampled groups × n=${GROUP_SIZE} (${(samplesFrameBytes / 1024).toFixed(1)} KiB each; counts 1 + Poisson(λ_g), λ_g = λ_stream·(0.5 + U), λ_stream 4..12; ` +
      `clocks lane = c0 + ${ITERATION_TICKS}·w + U{0..3}, end = c0 + ${ITERATION_TICKS}·max + ${DIVERGING_EXIT_TICKS}·(distinct − 1) + ${GROUP_OVERHEAD_TICKS} + U{0..3}), 100 streams, one frame per stream every ${samplesSpacingMillis} ms ` +
      `(= one per ${SUMMARIES_PER_SAMPLES_FRAME} launches at the summary case's cadence), 1 s windows = ${samplesFrames * (samplesSpacingMillis / 1000)} window closes with samples only (no histogram, so no loss model; the divergence fit runs per close): ` +
      `median ${samplesCase.medianMillis.toFixed(1)} ms wall / ${samplesCase.medianCpuMillis.toFixed(1)} ms CPU = ${(metrics['engine.sampledGroupsPerSecond'] ?? 0).toFixed(0)} sampled groups/s ` +
      `(${(metrics['engine.samplesFramesPerSecond'] ?? 0).toFixed(0)} frames/s), ${(samplesCase.ratioToBaseline ?? Number.NaN).toFixed(1)}× decoding the same frames alone`,
  );

  // The children run what a deployment runs: the compiled dist/ (bin/warpwatch.mjs falls back to
  // the TypeScript sources through tsx when dist/ is stale, which costs CPU at start and ~60 MB).
  ctx.log('  compiling the CLI (node bin/build.mjs)');
  const root = fileURLToPath(new URL('../', import.meta.url));
  execFileSync(process.execPath, [join(root, 'bin', 'build.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const stackConfig = resolveLocalStackConfig(process.env);
  const lease = await acquireStackLease(stackConfig, silentReporter);
  // The local stack's InfluxDB log, for its cache snapshots during a latency case (undefined: an external InfluxDB).
  const influxSnapshots = (fromMillis: number, toMillis: number): InfluxSnapshots | undefined => {
    if (!stackConfig.influx.managed) return undefined;
    try {
      return influxSnapshotsBetween(readFileSync(join(stackConfig.influx.instanceDirectory, 'influxd.log'), 'utf8'), fromMillis, toMillis);
    } catch {
      return undefined;
    }
  };
  const brokers = lease.endpoints.kafkaBrokers;
  const influxUrl = lease.endpoints.influxUrl;
  const kafka = createKafkaClient({ clientId: 'estimator-bench', brokers: brokers.split(',') });
  const admin = kafka.admin();
  await admin.connect();
  // The collector's partitioner (the same partitions as kafkajs' default, remembered per key):
  // the load generator shares the cores of the system it measures, so it should cost no more than a collector.
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: cachingDefaultPartitioner });
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
    // Its own DLQ topic, created by the estimator as contracts/topics.ts says (a shared one made elsewhere may be too small, and then /healthz never says ok).
    WARPWATCH_DLQ_TOPIC: `${id}.dlq`,
    WARPWATCH_METRICS_PORT: '0',
    WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
    WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '1000',
    ...extra,
  });
  const children: Child[] = [];
  try {
    const parts = (process.env.WARPWATCH_BENCH_ESTIMATOR_CASES ?? 'latency,latency10k,latency20k,latency20k3,throughput,throughput2k,scale,memory,memoryFull').split(',').map((p) => p.trim());
    // 1. Latency, frame produced → window point in InfluxDB, at `streams` × 10 launch summaries/s
    // offered with 1 s windows; the windows of `polledStreams` streams spread evenly over the
    // streams (every (streams / polledStreams)-th: bench0, bench20, … of 2,000) are the sample
    // (every window of each), so the InfluxQL polls stay small at any rate. The streams are
    // offered round-robin, so all windows end on the same second and close in the order of the
    // streams' next frames: a burst whose first and last closes are ~100 ms of frames apart. A
    // spread sample sees every part of that burst; a block of neighbouring streams (as before
    // 2026-11-28) saw one part of it, which part set by the run's start time modulo 100 ms.
    const latency = async (suffix: string, prefix: string, streams: number, measuredSeconds: number, polledStreams: number, targetMillis: number, instances = 1): Promise<void> => {
      const id = `${runId}${suffix}`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [topicToCreate('frames', `${id}.frames`, { partitions: 6, replicationFactor: -1 })], waitForLeaders: true });
      const offeredPerSecond = streams * 10;
      const warmupSeconds = 3;
      const seconds = measuredSeconds;
      const windowMillis = 1_000;
      const polledEvery = Math.max(1, Math.floor(streams / polledStreams));
      const polledJobs = new RegExp(`^bench(${Array.from({ length: polledStreams }, (_, s) => s * polledEvery).join('|')})$`);
      // `instances` estimators in one consumer group share the topic's 6 partitions.
      const group = Array.from({ length: instances }, (_, i) =>
        startEstimatorChild(baseEnv(id, { WARPWATCH_WINDOW_MILLIS: String(windowMillis), WARPWATCH_IDLE_CLOSE_MILLIS: '2000', WARPWATCH_HISTOGRAM_POINTS: 'false' }), instances === 1 ? prefix : `${prefix}-${i}`),
      );
      children.push(...group);
      const ports = await Promise.all(group.map((child) => child.metricsPort));
      const groupCpuMillis = (): number => group.reduce((sum, child) => sum + cpuMillisOf(child.process.pid ?? 0), 0);
      const groupHistogram = async (name: string): Promise<Awaited<ReturnType<typeof histogramOf>>> => {
        const parts = await Promise.all(ports.map((port) => histogramOf(port, name)));
        const buckets = new Map<number, number>();
        for (const part of parts) for (const [le, count] of part.buckets) buckets.set(le, (buckets.get(le) ?? 0) + count);
        return { buckets, sum: parts.reduce((sum, part) => sum + part.sum, 0), count: parts.reduce((sum, part) => sum + part.count, 0) };
      };
      // Ready = the group settled with every instance in it: every partition held by one
      // instance, every instance holding some, all restored (a member joining later would
      // rebalance the group during the measurement).
      const ready = await until(async () => {
        const states = await Promise.all(ports.map((port) => health(port)));
        const held = states.flatMap((state) => state.partitions ?? []);
        return states.every((state) => state.status === 'ok' && (state.partitions?.length ?? 0) > 0) && held.length === 6 && new Set(held).size === 6;
      }, 60_000);
      if (!ready) notes.push(`${prefix}: the estimators did not report ready within 60 s (/healthz ${JSON.stringify(await Promise.all(ports.map((port) => health(port).catch(String))))}); measured anyway`);
      const latencyTemplates = templates(streams, 2);
      // Per (stream, window start): production time of the window's last frame, and of the
      // stream's first frame of a later window (the frame whose arrival closes the window).
      const lastProduced = new Map<string, number>();
      const closingProduced = new Map<string, number>();
      const openWindow = new Map<number, number>();
      const firstSeen = new Map<string, number>();
      let polling = true;
      const pollMillis: number[] = [];
      const poller = (async () => {
        while (polling) {
          const pollStart = Date.now();
          // Only recent windows: keeps each poll small, so its own duration (recorded) stays short.
          const series = await influx(influxUrl, id, `SELECT "launches" FROM "${MEASUREMENTS.window}" WHERE time > now() - 15s AND "job" =~ ${polledJobs.toString()} GROUP BY stream`);
          const now = Date.now();
          pollMillis.push(now - pollStart);
          for (const s of series) for (const row of s.values) {
            const key = `${s.tags?.stream}|${Date.parse(String(row[0]))}`;
            if (!firstSeen.has(key)) firstSeen.set(key, now);
          }
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      })();
      // Frames are offered on an absolute schedule (frame k due at k ms), in one send per
      // loop turn of everything due, so a slow send is caught up rather than lowering the rate.
      const totalFrames = (warmupSeconds + seconds) * offeredPerSecond;
      const cpuAtStart = groupCpuMillis();
      const started = Date.now();
      const measureFromMillis = started + warmupSeconds * 1000;
      let cpuAtMeasureStart = cpuAtStart;
      let produced = 0;
      let producedBeforeMeasure = 0;
      let measureStartedAt = 0;
      let lagAtMeasureStart: Awaited<ReturnType<typeof histogramOf>> | undefined;
      let modelAtMeasureStart: Awaited<ReturnType<typeof histogramOf>> | undefined;
      const perSecond = new Map<number, number>();
      while (produced < totalFrames) {
        const due = Math.min(totalFrames, Math.floor(((Date.now() - started) * offeredPerSecond) / 1000) + 1);
        if (due <= produced) {
          await new Promise((resolve) => setTimeout(resolve, 1));
          continue;
        }
        if (measureStartedAt === 0 && Date.now() >= measureFromMillis) {
          measureStartedAt = Date.now();
          producedBeforeMeasure = produced;
          cpuAtMeasureStart = groupCpuMillis();
          void groupHistogram(EVENT_LAG_METRIC).then((h) => (lagAtMeasureStart = h), () => undefined);
          void groupHistogram(MODEL_METRIC).then((h) => (modelAtMeasureStart = h), () => undefined);
        }
        const messages: { key: string; value: Buffer }[] = [];
        for (let k = produced; k < due; k += 1) {
          const s = k % streams;
          const now = Date.now();
          const windowStart = Math.floor(now / windowMillis) * windowMillis;
          const previous = openWindow.get(s);
          if (previous !== undefined && previous < windowStart) closingProduced.set(`bench${s}/k|${previous}`, now);
          openWindow.set(s, windowStart);
          messages.push({ key: `bench${s}/k`, value: frameAt(latencyTemplates[s]!, k, now) });
          lastProduced.set(`bench${s}/k|${windowStart}`, now);
        }
        await producer.send({ topic: `${id}.frames`, acks: 1, messages });
        const second = Math.floor((Date.now() - started) / 1000);
        perSecond.set(second, (perSecond.get(second) ?? 0) + messages.length);
        produced = due;
      }
      const endedAt = Date.now();
      const cpuAtEnd = groupCpuMillis();
      const scrape = async (name: string): Promise<Awaited<ReturnType<typeof histogramOf>>> => {
        try {
          return await groupHistogram(name);
        } catch (error) {
          const text = `${prefix}: /metrics of an estimator failed (${String(error)}); exits ${group.map((child) => child.process.exitCode ?? child.process.signalCode ?? 'none yet').join(', ')}; stderr: ${group.map((child) => child.stderr().slice(-1000)).join('\n---\n')}`;
          ctx.log(text);
          notes.push(text);
          return { buckets: new Map(), sum: Number.NaN, count: 0 };
        }
      };
      const lagAtEnd = await scrape(EVENT_LAG_METRIC);
      const modelAtEnd = await scrape(MODEL_METRIC);
      const rate = (produced - producedBeforeMeasure) / ((endedAt - measureStartedAt) / 1000);
      const fullSeconds = [...perSecond].filter(([second]) => second >= warmupSeconds && second < warmupSeconds + seconds - 1).map(([, count]) => count);
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      polling = false;
      await poller;
      const latencies: number[] = [];
      // Per window start: the latencies of its windows, for the worst window of each second.
      const bySecond = new Map<number, number[]>();
      const pipeline: number[] = [];
      let missing = 0;
      for (const [key, closing] of closingProduced) {
        // Only the polled streams' windows are looked for.
        if (!polledJobs.test(key.slice(0, key.indexOf('/')))) continue;
        const last = lastProduced.get(key);
        // Windows whose frames were all produced after the warm-up and that the watermark closed during production.
        if (last === undefined || last < measureFromMillis || Number(key.slice(key.lastIndexOf('|') + 1)) < measureFromMillis) continue;
        const seen = firstSeen.get(key);
        if (seen === undefined) {
          missing += 1;
          continue;
        }
        latencies.push(seen - last);
        pipeline.push(seen - closing);
        const windowStart = Number(key.slice(key.lastIndexOf('|') + 1));
        const ofSecond = bySecond.get(windowStart) ?? [];
        ofSecond.push(seen - last);
        bySecond.set(windowStart, ofSecond);
      }
      // The worst window of each second: its median is the tail of a usual burst of closes, its
      // maximum the run's worst second (docs/estimator.md, The 20,000/s tail, second by second).
      const secondMaxima = [...bySecond.values()].map((values) => Math.max(...values)).sort((a, b) => a - b);
      latencies.sort((a, b) => a - b);
      pipeline.sort((a, b) => a - b);
      pollMillis.sort((a, b) => a - b);
      const load = loadavg()[0] ?? Number.NaN;
      metrics[`${prefix}.offeredPerSecond`] = offeredPerSecond;
      metrics[`${prefix}.ratePerSecond`] = rate;
      metrics[`${prefix}.minRatePerSecond`] = fullSeconds.length > 0 ? Math.min(...fullSeconds) : Number.NaN;
      metrics[`${prefix}.pollMedianMillis`] = percentile(pollMillis, 0.5);
      metrics[`${prefix}.loadAverage1m`] = load;
      metrics[`${prefix}.estimatorCpuShare`] = (cpuAtEnd - cpuAtMeasureStart) / (endedAt - measureStartedAt);
      metrics[`${prefix}.windows`] = latencies.length;
      metrics[`${prefix}.windowsMissing`] = missing;
      metrics[`${prefix}.p50Millis`] = percentile(latencies, 0.5);
      metrics[`${prefix}.p90Millis`] = percentile(latencies, 0.9);
      metrics[`${prefix}.p99Millis`] = percentile(latencies, 0.99);
      metrics[`${prefix}.maxMillis`] = latencies[latencies.length - 1] ?? Number.NaN;
      metrics[`${prefix}.seconds`] = secondMaxima.length;
      metrics[`${prefix}.secondMaxP50Millis`] = percentile(secondMaxima, 0.5);
      metrics[`${prefix}.secondsOverTarget`] = secondMaxima.filter((value) => value > targetMillis).length;
      // From the first measured frame until the last window was looked for.
      const snapshots = influxSnapshots(measureStartedAt, Date.now());
      metrics[`${prefix}.influxSnapshots`] = snapshots?.count ?? Number.NaN;
      metrics[`${prefix}.influxSnapshotMillis`] = snapshots?.millis ?? Number.NaN;
      metrics[`${prefix}.closingFrameP50Millis`] = percentile(pipeline, 0.5);
      metrics[`${prefix}.closingFrameP99Millis`] = percentile(pipeline, 0.99);
      const lagBefore = lagAtMeasureStart?.buckets ?? new Map<number, number>();
      metrics[`${prefix}.closeLagP50BucketMillis`] = histogramQuantile(lagBefore, lagAtEnd.buckets, 0.5);
      metrics[`${prefix}.closeLagP99BucketMillis`] = histogramQuantile(lagBefore, lagAtEnd.buckets, 0.99);
      metrics[`${prefix}.modelMeanMillis`] = (modelAtEnd.sum - (modelAtMeasureStart?.sum ?? 0)) / Math.max(1, modelAtEnd.count - (modelAtMeasureStart?.count ?? 0));
      const states = await Promise.all(ports.map((port) => health(port).catch(() => undefined)));
      const total = (value: (state: Health) => number | undefined): number => states.reduce((sum, state) => sum + (state === undefined ? Number.NaN : (value(state) ?? 0)), 0);
      metrics[`${prefix}.instances`] = instances;
      // Partitions restored over the run, all instances together: 6 when the group settled once, more after rebalances.
      metrics[`${prefix}.partitionRestores`] = group.reduce((sum, child) => sum + (child.stderr().match(/partition \d+ restored/g) ?? []).length, 0);
      metrics[`${prefix}.windowsClosed`] = total((state) => state.counters.windowsClosed);
      metrics[`${prefix}.framesIn`] = total((state) => state.counters.framesIn);
      metrics[`${prefix}.framesProduced`] = produced;
      metrics[`${prefix}.heapCollections`] = total((state) => state.counters.heapCollections);
      metrics[`${prefix}.heapCollectionMillis`] = total((state) => state.counters.heapCollectionMillis);
      metrics[`${prefix}.influxLinesPerRequest`] = total((state) => state.influx?.pointsWritten) / Math.max(1, total((state) => state.influx?.batchesWritten));
      const p99 = metrics[`${prefix}.p99Millis`] ?? Number.POSITIVE_INFINITY;
      metrics[`${prefix}.polledStreams`] = polledStreams;
      metrics[`${prefix}.targetP99Millis`] = targetMillis;
      metrics[`${prefix}.targetMet`] = p99 <= targetMillis && missing === 0 ? 1 : 0;
      notes.push(
        `${prefix}: offered ${offeredPerSecond} launch summaries/s on an absolute schedule (${streams} streams × 10/s, ${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE} each), 1 s windows, ` +
          `${warmupSeconds} s warm-up then ${seconds} s measured; achieved ${rate.toFixed(0)}/s (slowest full second ${metrics[`${prefix}.minRatePerSecond`]}); ` +
          `latency = time the window's point first answered an InfluxQL poll (every ~50 ms; response time counted) − production time of the window's last frame ` +
          `(so it includes waiting ~100 ms for the stream's next frame, whose event time closes the window); from the closing frame: p50 ${metrics[`${prefix}.closingFrameP50Millis`]} ms, p99 ${metrics[`${prefix}.closingFrameP99Millis`]} ms; ` +
          `inside the estimator, window close − window end (Kafka delivery, consumer queue, model of earlier windows; OpenTelemetry histogram bucket bounds): p50 ≤ ${metrics[`${prefix}.closeLagP50BucketMillis`]} ms, p99 ≤ ${metrics[`${prefix}.closeLagP99BucketMillis`]} ms, model ${(metrics[`${prefix}.modelMeanMillis`] ?? 0).toFixed(2)} ms per window close; ` +
          `machine load average ${load.toFixed(1)} on ${cpus().length} cores, ${instances === 1 ? 'estimator process' : `${instances} estimator processes in one group (6 partitions) together`} used ${((metrics[`${prefix}.estimatorCpuShare`] ?? 0) * 100).toFixed(0)} % of one core, InfluxQL poll median ${metrics[`${prefix}.pollMedianMillis`]} ms, ${(metrics[`${prefix}.influxLinesPerRequest`] ?? 0).toFixed(0)} lines per InfluxDB write request, ${metrics[`${prefix}.heapCollections`]} full collections by the heap target (${(metrics[`${prefix}.heapCollectionMillis`] ?? 0).toFixed(0)} ms, whole run), ${metrics[`${prefix}.partitionRestores`]} partition restores (6 = no rebalance after the first assignment); ` +
          `${latencies.length} windows of the ${polledStreams} polled streams (every ${polledEvery === 1 ? '' : `${polledEvery}th `}stream; ${missing} never seen): p50 ${metrics[`${prefix}.p50Millis`]} ms, p90 ${metrics[`${prefix}.p90Millis`]} ms, p99 ${metrics[`${prefix}.p99Millis`]} ms, max ${metrics[`${prefix}.maxMillis`]} ms; worst window of each of the ${secondMaxima.length} seconds: median ${metrics[`${prefix}.secondMaxP50Millis`]} ms, ${metrics[`${prefix}.secondsOverTarget`]} seconds over ${targetMillis} ms; ${snapshots === undefined ? 'InfluxDB cache snapshots not known (not the local stack\'s InfluxDB)' : `${snapshots.count} InfluxDB cache snapshots meanwhile (${snapshots.millis.toFixed(0)} ms; docs/estimator.md, The 20,000/s tail, second by second)`} (target p99 <= ${targetMillis} ms: ${p99 <= targetMillis && missing === 0 ? 'met' : 'NOT met'})`,
      );
      await Promise.all(group.map((child) => stopChild(child)));
    };
    if (parts.includes('latency')) await latency('lat', 'latency', 100, ctx.quick ? 10 : 25, 100, 2000);
    // The cluster case: 2,000 streams × 10/s = 20,000 launch summaries/s, 2,000 window closes/s, p99 target 500 ms.
    // Measured for 60 s: at this load InfluxDB writes its cache to disk every ~20 s, and a fresh
    // database's first snapshot can come after 15 s, so a shorter run may see none of them
    // (docs/estimator.md, The sweep once per 10 s).
    if (parts.includes('latency20k')) await latency('l20', 'latency20k', 2_000, ctx.quick ? 8 : 60, 100, 500);
    // Between the two: where the tail starts to grow on this machine (Kafka, InfluxDB and this load generator share its cores).
    if (parts.includes('latency10k')) await latency('l10', 'latency10k', 1_000, ctx.quick ? 8 : 15, 100, 500);
    // The cluster case served as the sizing rule says (§ Sizing: three instances for 20,000/s), on the same machine.
    if (parts.includes('latency20k3')) await latency('l23', 'latency20k3', 2_000, ctx.quick ? 8 : 15, 100, 500, 3);

    // 2. Throughput: a backlog of launch summaries (and, with samplesEvery > 0, one GroupSamples
    // frame per samplesEvery launch summaries) consumed by one instance.
    // samplesEvery > 0: every samplesEvery-th launch of a stream also sends a GroupSamples frame of
    // all its 64 groups; defaultRate: instead every launch sends the groups a recorder at its
    // default sampling (hash, 1 in 64) picks, about one, when it picks any.
    const throughput = async (suffix: string, frames: number, windowMillis: number, samplesEvery = 0, streams = 100, defaultRate = false): Promise<void> => {
      const id = `${runId}${suffix}`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 6 }], waitForLeaders: true });
      const throughputTemplates = templates(streams, 3);
      const throughputSamples = samplesEvery > 0 ? samplesTemplates(throughputTemplates, 4, 6) : [];
      // Sends of at most 1,000 messages and ~1 MB (GroupSamples frames are ~25 KB; the broker
      // refuses a record batch over message.max.bytes, 1 MB by default).
      let messages: { key: string; value: Buffer }[] = [];
      let bytes = 0;
      const flush = async (): Promise<void> => {
        if (messages.length > 0) await producer.send({ topic: `${id}.frames`, acks: 1, messages });
        messages = [];
        bytes = 0;
      };
      let samplesFramesProduced = 0;
      let sampledGroupsProduced = 0;
      for (let k = 0; k < frames; k += 1) {
        const s = k % streams;
        const launch = Math.floor(k / streams);
        const endMillis = 1_700_000_000_000 + launch * 100;
        const summary = frameAt(throughputTemplates[s]!, k, endMillis);
        messages.push({ key: `bench${s}/k`, value: summary });
        bytes += summary.length;
        // Every samplesEvery-th launch of a stream, staggered across streams, also sends its sampled groups.
        if (samplesEvery > 0 && (launch + s) % samplesEvery === 0) {
          const template = throughputSamples[s]![launch % throughputSamples[s]!.length]!;
          const samples = defaultRate ? defaultRateSamplesFrameAt(template, k, endMillis) : { bytes: samplesFrameAt(template, k, endMillis), groups: SAMPLED_GROUPS_PER_FRAME };
          if (samples !== undefined) {
            messages.push({ key: `bench${s}/k`, value: samples.bytes });
            bytes += samples.bytes.length;
            samplesFramesProduced += 1;
            sampledGroupsProduced += samples.groups;
          }
        }
        if (messages.length >= 1000 || bytes >= 1_000_000) await flush();
      }
      await flush();
      const totalFrames = frames + samplesFramesProduced;
      const child = startEstimatorChild(baseEnv(id, { WARPWATCH_WINDOW_MILLIS: String(windowMillis), WARPWATCH_HISTOGRAM_POINTS: 'false' }), samplesEvery > 0 ? `throughput-samples${defaultRate ? '-default' : ''}-${windowMillis}` : `throughput-${windowMillis}`);
      children.push(child);
      const port = await child.metricsPort;
      // (time, frames counted) from /healthz every ~100 ms; the rate is the slope between 10 % and
      // 90 % of the backlog, which leaves out start-up and the end (and a probe answered late
      // because the event loop was busy still pairs the right count with its time).
      const samples: [number, number, number][] = [];
      await until(async () => {
        const h = await health(port);
        samples.push([Date.now(), h.counters.framesIn, cpuMillisOf(child.process.pid ?? 0)]);
        return h.counters.framesIn >= totalFrames;
      }, 300_000);
      const at = (share: number): [number, number, number] => samples.find(([, count]) => count >= share * totalFrames) ?? samples[samples.length - 1]!;
      const [t10, f10, c10] = at(0.1);
      const [t90, f90, c90] = at(0.9);
      const seconds = (t90 - t10) / 1000;
      const counted = f90 - f10;
      // The two kinds are interleaved evenly in every partition: split the frames counted by their shares of the backlog.
      const summariesCounted = (counted * frames) / totalFrames;
      const samplesCounted = (counted * samplesFramesProduced) / totalFrames;
      const h = await health(port);
      const prefix =
        (samplesEvery > 0 ? `throughputSamples${defaultRate ? 'Default' : ''}${windowMillis === 10_000 ? '' : `${windowMillis}ms`}` : windowMillis === 10_000 ? 'throughput' : `throughput${windowMillis}ms`) +
        (streams === 100 ? '' : `${streams}streams`);
      const sampledGroupsCounted = (counted * sampledGroupsProduced) / totalFrames;
      metrics[`${prefix}.launchSummariesPerSecond`] = summariesCounted / seconds;
      metrics[`${prefix}.groupsPerSecond`] = (summariesCounted * GROUPS_PER_LAUNCH) / seconds;
      if (samplesEvery > 0) {
        metrics[`${prefix}.samplesFramesPerSecond`] = samplesCounted / seconds;
        metrics[`${prefix}.sampledGroupsPerSecond`] = sampledGroupsCounted / seconds;
      }
      // Process CPU (user + system, /proc) of the estimator per frame between the same two marks: independent of how many cores it got.
      metrics[`${prefix}.cpuMicrosPerFrame`] = ((c90 - c10) * 1000) / counted;
      metrics[`${prefix}.windowsClosed`] = h.counters.windowsClosed;
      metrics[`${prefix}.heapCollections`] = h.counters.heapCollections;
      metrics[`${prefix}.heapCollectionMillis`] = h.counters.heapCollectionMillis;
      metrics[`${prefix}.windowClosesPerSecond`] = (h.counters.windowsClosed * (counted / totalFrames)) / seconds;
      const backlog = defaultRate
        ? `backlog of ${frames} launch summaries (${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE} each) and ${samplesFramesProduced} GroupSamples frames of ${sampledGroupsProduced} sampled groups: the recorder's default sampling (hash, 1 group in ${DEFAULT_SAMPLING_STRIDE}) of every launch, a frame per launch whose hash picked any group`
        : samplesEvery > 0
          ? `backlog of ${frames} launch summaries and ${samplesFramesProduced} GroupSamples frames (one per ${samplesEvery} launches of a stream, ${SAMPLED_GROUPS_PER_FRAME} sampled groups × n=${GROUP_SIZE} each, as in the in-process case: a quarter of the groups, ${DEFAULT_SAMPLING_STRIDE / samplesEvery}× the recorder's default rate)`
          : `backlog of ${frames} launch summaries`;
      const sampled =
        samplesEvery > 0
          ? `, ${(samplesCounted / seconds).toFixed(0)} GroupSamples frames/s = ${(sampledGroupsCounted / seconds).toFixed(0)} sampled groups/s`
          : ' (no GroupSamples frames; see the mixed backlog for sampled groups/s)';
      notes.push(
        `throughput (${windowMillis / 1000} s windows${defaultRate ? ', with GroupSamples at the default rate' : samplesEvery > 0 ? ', with GroupSamples' : ''}${streams === 100 ? '' : `, ${streams} streams`}): ${backlog} (${streams} streams, event time 100 ms apart per stream → ${h.counters.windowsClosed} window closes during the run); ` +
          `${counted} frames consumed between 10 % and 90 % of the backlog in ${seconds.toFixed(2)} s = ${(summariesCounted / seconds).toFixed(0)} launch summaries/s, ${((summariesCounted * GROUPS_PER_LAUNCH) / seconds).toFixed(0)} groups/s summarised${sampled}, ~${(metrics[`${prefix}.windowClosesPerSecond`] ?? 0).toFixed(0)} window closes/s; estimator process CPU ${(metrics[`${prefix}.cpuMicrosPerFrame`] ?? 0).toFixed(1)} µs per frame (/proc, same marks)`,
      );
      await stopChild(child);
    };
    // Backlogs that take ~1.5–2 s between the 10 % and 90 % marks at the rates of 2026-11: shorter
    // ones (100,000 and 30,000 launch summaries until then, ~0.4 s) measured start-up and JIT
    // warm-up as much as the steady state, 10–25 % below it.
    if (parts.includes('throughput')) {
      await throughput('thr', ctx.quick ? 20_000 : 400_000, 10_000);
      await throughput('thw', ctx.quick ? 10_000 : 150_000, 1_000);
    }
    // 60,000 launch summaries and 15,000 GroupSamples frames (~390 MB), ~1.5 s between the marks
    // (12,000 until 2026-11-28).
    if (parts.includes('throughput') || parts.includes('throughputSamples')) await throughput('ths', ctx.quick ? 4_000 : 60_000, 10_000, SUMMARIES_PER_SAMPLES_FRAME);
    // The recorder's default sampling of the same launches (a frame of ~1 group for ~63 % of them):
    // 200,000 launch summaries and ~126,000 GroupSamples frames.
    if (parts.includes('throughput') || parts.includes('throughputSamplesDefault')) await throughput('thd', ctx.quick ? 10_000 : 200_000, 10_000, 1, 100, true);
    // The latency20k shape as a backlog: 2,000 streams with 1 s windows, each stream's histograms its
    // own (the window model cache of 4,096 bases misses), so CPU per frame is measured, not the
    // share of a machine the latency case's estimator got while it fell behind.
    if (parts.includes('throughput2k')) await throughput('thk', ctx.quick ? 20_000 : 120_000, 1_000, 0, 2_000);

    // 4. Scale-out and the consumer's own ceiling, on one backlog (the same records, in the same
    // partitions, in every topic of this part; 10 s windows): `instances` estimators in one group
    // on 6 partitions; then plain kafkajs consuming the 1-instance topic again with eachBatch as
    // the estimator configures it (fetch sizes, one partition at a time), without and with decoding.
    if (parts.includes('scale')) {
      const frames = ctx.quick ? 40_000 : 200_000;
      const streams = 102; // 17 per partition
      const scaleTemplates = templates(streams, 7);
      const records = Array.from({ length: frames }, (_, k) => {
        const s = k % streams;
        return { partition: s % 6, key: `bench${s}/k`, value: frameAt(scaleTemplates[s]!, k, 1_700_000_000_000 + Math.floor(k / streams) * 100) };
      });
      const recordBytes = records.reduce((sum, r) => sum + r.value.length, 0) / frames;
      // A producer of its own: kafkajs keeps refreshing the metadata of every topic a producer
      // sent to, so the shared one would fail once this part's topics are deleted at its end.
      const scaleProducer = kafka.producer({ allowAutoTopicCreation: false });
      await scaleProducer.connect();
      const produceBacklog = async (topic: string): Promise<number> => {
        const started = Date.now();
        await Promise.all(
          [0, 1, 2, 3, 4, 5].map(async (partition) => {
            const mine = records.filter((r) => r.partition === partition);
            for (let i = 0; i < mine.length; i += 1000) await scaleProducer.send({ topic, acks: 1, messages: mine.slice(i, i + 1000) });
          }),
        );
        return Date.now() - started;
      };
      /** Rate (frames/s) and CPU µs per frame between 10 % and 90 % of the backlog, from (time ms, frames, CPU ms) samples. */
      const slope = (samples: readonly [number, number, number][]): { perSecond: number; cpuMicrosPerFrame: number; seconds: number } => {
        const at = (share: number): [number, number, number] => samples.find(([, count]) => count >= share * frames) ?? samples[samples.length - 1]!;
        const [t10, f10, c10] = at(0.1);
        const [t90, f90, c90] = at(0.9);
        return { perSecond: (f90 - f10) / ((t90 - t10) / 1000), cpuMicrosPerFrame: ((c90 - c10) * 1000) / (f90 - f10), seconds: (t90 - t10) / 1000 };
      };
      const scaleTopic = (suffix: string): string => `${runId}${suffix}.frames`;
      const estimatorGroup = async (suffix: string, instances: number): Promise<void> => {
        const id = `${runId}${suffix}`;
        await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
        await admin.createTopics({ topics: [topicToCreate('frames', scaleTopic(suffix), { partitions: 6, replicationFactor: -1 })], waitForLeaders: true });
        // The instances are SIGSTOPped while the backlog is produced (~3 s): the session timeout must outlast that.
        const env = baseEnv(id, { WARPWATCH_WINDOW_MILLIS: '10000', WARPWATCH_HISTOGRAM_POINTS: 'false', WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '15000', WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '1000' });
        const group = Array.from({ length: instances }, (_, i) => startEstimatorChild(env, `scale${instances}-${i}`));
        children.push(...group);
        const ports = await Promise.all(group.map((child) => child.metricsPort));
        // The group settled on an empty topic: every instance holds its share of the 6 partitions and has restored them.
        let shares: number[][] = [];
        const settled = await until(async () => {
          const states = await Promise.all(ports.map((port) => health(port)));
          shares = states.map((h) => [...(h.partitions ?? [])]);
          return states.every((h) => h.status !== 'starting' && h.status !== 'stopping' && (h.partitions ?? []).length === 6 / instances);
        }, 120_000);
        const idleRss = group.map((child) => rssBytes(child.process.pid ?? 0));
        // Held still while the backlog is produced, then let go together: nobody starts early, the producer competes with nobody.
        for (const child of group) child.process.kill('SIGSTOP');
        const produceMillis = await produceBacklog(scaleTopic(suffix));
        for (const child of group) child.process.kill('SIGCONT');
        const samples: [number, number, number][] = [];
        let perInstance: number[] = [];
        await until(async () => {
          const states = await Promise.all(ports.map((port) => health(port)));
          perInstance = states.map((h) => h.counters.framesIn);
          const cpu = group.reduce((sum, child) => sum + cpuMillisOf(child.process.pid ?? 0), 0);
          const total = perInstance.reduce((sum, n) => sum + n, 0);
          samples.push([Date.now(), total, cpu]);
          return total >= frames;
        }, 300_000);
        const after = await Promise.all(ports.map((port) => health(port)));
        const stable = after.every((h, i) => JSON.stringify(h.partitions) === JSON.stringify(shares[i]));
        const { perSecond, cpuMicrosPerFrame, seconds } = slope(samples);
        const key = `scale.estimators${instances}`;
        metrics[`${key}.framesPerSecond`] = perSecond;
        metrics[`${key}.cpuMicrosPerFrame`] = cpuMicrosPerFrame;
        metrics[`${key}.idleRssMegabytes`] = idleRss.reduce((a, b) => a + b, 0) / instances / 1e6;
        metrics[`${key}.produceMillis`] = produceMillis;
        notes.push(
          `scale-out, ${instances} estimator instance(s) in one group: partitions held ${JSON.stringify(shares)} (from /healthz${settled ? '' : '; NOT settled within 120 s'}, ${stable ? 'unchanged to the end' : 'CHANGED during the run'}); ` +
            `frames consumed per instance ${JSON.stringify(perInstance)}; sum of the instances' rates ${perSecond.toFixed(0)} frames/s between 10 % and 90 % of the backlog (${seconds.toFixed(2)} s), ` +
            `process CPU of all instances ${cpuMicrosPerFrame.toFixed(1)} µs per frame (/proc); idle RSS per instance ${(metrics[`${key}.idleRssMegabytes`] ?? 0).toFixed(0)} MB`,
        );
        await Promise.all(group.map((child) => stopChild(child)));
      };
      await estimatorGroup('sc1', 1);
      await estimatorGroup('sc3', 3);
      await scaleProducer.disconnect();

      const ceiling = async (label: string, decode: boolean): Promise<{ perSecond: number; cpuMicrosPerFrame: number }> => {
        const consumer = kafka.consumer({ groupId: `${runId}${label}`, maxWaitTimeInMs: 1_000, maxBytesPerPartition: TOPIC_MAX_MESSAGE_BYTES, maxBytes: 2 * TOPIC_MAX_MESSAGE_BYTES, allowAutoTopicCreation: false });
        await consumer.connect();
        await consumer.subscribe({ topic: scaleTopic('sc1'), fromBeginning: true });
        const samples: [number, number, number][] = [];
        let count = 0;
        let decoded = 0;
        const cpuNow = (): number => {
          const usage = process.cpuUsage();
          return (usage.user + usage.system) / 1000;
        };
        await new Promise<void>((resolve, reject) => {
          consumer
            .run({
              autoCommit: false,
              partitionsConsumedConcurrently: 1,
              eachBatch: async ({ batch }) => {
                if (decode) for (const message of batch.messages) if (message.value !== null && decodeFrame(message.value).type === 'launch-summary') decoded += 1;
                count += batch.messages.length;
                samples.push([Date.now(), count, cpuNow()]);
                if (count >= frames) resolve();
              },
            })
            .catch(reject);
        });
        await consumer.disconnect();
        if (decode && decoded !== frames) notes.push(`kafkajs + decode: ${decoded} of ${frames} frames decoded as launch summaries`);
        const { perSecond, cpuMicrosPerFrame } = slope(samples);
        metrics[`scale.${label}.framesPerSecond`] = perSecond;
        metrics[`scale.${label}.cpuMicrosPerFrame`] = cpuMicrosPerFrame;
        return { perSecond, cpuMicrosPerFrame };
      };
      const plain = await ceiling('kafkajs', false);
      const decoding = await ceiling('kafkajsDecode', true);
      const one = { perSecond: metrics['scale.estimators1.framesPerSecond'] ?? Number.NaN, cpu: metrics['scale.estimators1.cpuMicrosPerFrame'] ?? Number.NaN };
      const three = { perSecond: metrics['scale.estimators3.framesPerSecond'] ?? Number.NaN, cpu: metrics['scale.estimators3.cpuMicrosPerFrame'] ?? Number.NaN };
      metrics['scale.recordBytes'] = recordBytes;
      metrics['scale.rate3over1'] = three.perSecond / one.perSecond;
      metrics['scale.cpuPerFrame3over1'] = three.cpu / one.cpu;
      metrics['scale.estimatorShareOfKafkajsRate'] = one.perSecond / plain.perSecond;
      metrics['scale.estimatorShareOfKafkajsDecodeRate'] = one.perSecond / decoding.perSecond;
      metrics['scale.kafkajsCpuShareOfEstimator'] = plain.cpuMicrosPerFrame / one.cpu;
      notes.push(
        `scale-out backlog: ${frames} launch summaries (${streams} streams pinned to partition s mod 6, ${GROUPS_PER_LAUNCH} groups × n=${GROUP_SIZE}, ${recordBytes.toFixed(0)} bytes per record, event time 100 ms apart per stream, 10 s windows), produced into a fresh topic per case while the instances were SIGSTOPped; ` +
          `3 instances vs 1: ${three.perSecond.toFixed(0)} vs ${one.perSecond.toFixed(0)} frames/s = ${(metrics['scale.rate3over1'] ?? 0).toFixed(2)}× on ${cpus().length} cores (load ${(loadavg()[0] ?? 0).toFixed(1)}, other work on the machine), ` +
          `CPU per frame of all instances together ${three.cpu.toFixed(1)} vs ${one.cpu.toFixed(1)} µs (${(metrics['scale.cpuPerFrame3over1'] ?? 0).toFixed(2)}×; see the per-case notes for whether the group settled); ` +
          `the consumer's own ceiling, kafkajs eachBatch in this process on the 1-instance topic (same fetch sizes, one partition at a time): ${plain.perSecond.toFixed(0)} frames/s at ${plain.cpuMicrosPerFrame.toFixed(2)} CPU-µs per frame without decoding, ` +
          `${decoding.perSecond.toFixed(0)} frames/s at ${decoding.cpuMicrosPerFrame.toFixed(2)} CPU-µs with decoding; one estimator reaches ${((metrics['scale.estimatorShareOfKafkajsRate'] ?? 0) * 100).toFixed(0)} % of the plain consumer's rate ` +
          `(${((metrics['scale.estimatorShareOfKafkajsDecodeRate'] ?? 0) * 100).toFixed(0)} % of consume + decode), and kafkajs alone is ${((metrics['scale.kafkajsCpuShareOfEstimator'] ?? 0) * 100).toFixed(0)} % of the estimator's CPU per frame`,
      );
      await admin.deleteTopics({ topics: [scaleTopic('sc1'), scaleTopic('sc3')] }).catch(() => undefined);
    }

    // 3. Memory with 10,000 live streams (windows of 10 min stay open: every stream holds a window, current, cumulative, dedupe, detector).
    // 5. Memory: RSS of one instance with `streams` distinct streams offered (`launchesPerStream`
    // launch summaries each, open 10 min windows); with `cap` below `streams`, the churn of
    // evictions against WARPWATCH_MAX_STREAMS (evictions counted; every frame still recorded,
    // every evicted window written). `recorderIds`: 64-bit launchIds as a recorder makes them, so
    // that with more launches than the dedupe capacity every dedupe memory is full (the steady
    // state of a long-running job, with its checkpoint records at their largest).
    const memoryCase = async (suffix: string, prefix: string, streams: number, cap: number | undefined, launchesPerStream = 3, recorderIds = false): Promise<void> => {
      const id = `${runId}${suffix}`;
      await influx(influxUrl, id, `CREATE DATABASE "${id}"`);
      await admin.createTopics({ topics: [{ topic: `${id}.frames`, numPartitions: 6 }], waitForLeaders: true });
      const memoryTemplates = templates(50, 4);
      for (let launch = 0; launch < launchesPerStream; launch += 1) {
        for (let s0 = 0; s0 < streams; s0 += 1000) {
          const messages = Array.from({ length: Math.min(1000, streams - s0) }, (_, j) => {
            const s = s0 + j;
            const template = { ...memoryTemplates[s % 50]!, job: `mem${s}` };
            return { key: `mem${s}/k`, value: frameAt(template, launch, 1_700_000_000_000 + launch * 1000, recorderIds ? recorderLaunchId(s, launch) : BigInt(launch)) };
          });
          await producer.send({ topic: `${id}.frames`, acks: 1, messages });
        }
      }
      const env: Record<string, string> = { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '600000' };
      if (cap !== undefined) env.WARPWATCH_MAX_STREAMS = String(cap);
      const child = startEstimatorChild(baseEnv(id, env), prefix);
      children.push(child);
      const port = await child.metricsPort;
      const offered = streams * launchesPerStream;
      await until(async () => (await health(port)).counters.framesIn >= offered, 600_000);
      await new Promise((resolve) => setTimeout(resolve, 3_000)); // let a checkpoint happen
      const h = await health(port);
      const rss = rssBytes(child.process.pid ?? 0);
      const peak = rssBytes(child.process.pid ?? 0, 'VmHWM');
      metrics[`${prefix}.offeredStreams`] = streams;
      metrics[`${prefix}.peakRssMegabytes`] = peak / 1e6;
      metrics[`${prefix}.liveStreams`] = h.streams;
      metrics[`${prefix}.rssBytes`] = rss;
      metrics[`${prefix}.rssMegabytes`] = rss / 1e6;
      metrics[`${prefix}.framesIn`] = h.counters.framesIn;
      metrics[`${prefix}.framesRecorded`] = h.counters.framesOut;
      metrics[`${prefix}.streamsEvicted`] = h.counters.streamsEvicted;
      metrics[`${prefix}.windowsClosed`] = h.counters.windowsClosed;
      metrics[`${prefix}.heapCollections`] = h.counters.heapCollections;
      metrics[`${prefix}.heapCollectionMillis`] = h.counters.heapCollectionMillis;
      // How bin/warpwatch.mjs ran the child: the TypeScript sources through tsx hold ~60 MB more than dist/.
      const childCode = compiledIsCurrent(new URL('../', import.meta.url), process.env) ? 'compiled dist/' : 'TypeScript sources through tsx (dist/ missing or stale)';
      const accounted = h.counters.framesIn === offered && h.counters.framesOut === offered;
      notes.push(
        `${prefix}: ${streams} distinct streams offered${cap === undefined ? '' : ` against WARPWATCH_MAX_STREAMS=${cap}`} (${launchesPerStream} launches each${recorderIds ? ' with recorder launchIds: every dedupe memory full' : ''}, open 10 min windows, default settings incl. checkpoints; estimator ran from ${childCode}, ${childRuntime()}): ` +
          `${h.streams} live streams, ${h.counters.streamsEvicted} evictions (each eviction closes and writes the stream's open window: ${h.counters.windowsClosed} windows closed), ` +
          `frames in ${h.counters.framesIn} of ${offered}, recorded ${h.counters.framesOut}${accounted ? ' (all)' : ' (NOT all)'}; heap target ${process.env.WARPWATCH_HEAP_TARGET_MIB ?? 'default'}: ${h.counters.heapCollections} full collections, ${h.counters.heapCollectionMillis.toFixed(0)} ms; RSS ${(rss / 1e6).toFixed(0)} MB 3 s after the last frame, peak ${(peak / 1e6).toFixed(0)} MB (target <= 300 MB: ${rss <= 300e6 && accounted ? 'met' : 'NOT met'})`,
      );
      await stopChild(child);
    };
    if (parts.includes('memory')) {
      await memoryCase('mem', 'memory', ctx.quick ? 2_000 : 10_000, undefined);
      await memoryCase('mch', 'memoryChurn', ctx.quick ? 4_000 : 20_000, ctx.quick ? 2_000 : 10_000);
    }
    if (parts.includes('memoryFull')) await memoryCase('mfu', 'memoryFull', ctx.quick ? 200 : 1_000, undefined, 1_100, true);
  } finally {
    await Promise.all(children.map((child) => stopChild(child)));
    await producer.disconnect();
    // Every topic of this run (frames backlogs of up to ~1 GB, checkpoints, results): left
    // behind, runs of the bench filled the local broker's disk (36 GB after a few dozen).
    const ownTopics = (await admin.listTopics().catch(() => [] as string[])).filter((topic) => topic.startsWith(runId));
    if (ownTopics.length > 0) await admin.deleteTopics({ topics: ownTopics }).catch((error: unknown) => ctx.log(`  could not delete this run's topics (${String(error)}): ${ownTopics.join(', ')}`));
    await admin.disconnect();
    for (const suffix of ['lat', 'l10', 'l20', 'l23', 'thr', 'thw', 'ths', 'thd', 'thk', 'sc1', 'sc3', 'mem', 'mch', 'mfu']) await influx(influxUrl, `${runId}${suffix}`, `DROP DATABASE "${runId}${suffix}"`).catch(() => undefined);
    await lease.release();
  }
  for (const note of notes) ctx.log(`  note: ${note}`);
  return { notes, metrics };
}
