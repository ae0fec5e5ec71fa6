/**
 * Benchmark of the collector: frames/s and thread-records/s from unix-socket
 * writers through validation, enrichment, batching and the idempotent kafkajs producer to
 * the real local Kafka (deploy/local), against a plain kafkajs producer sending the same
 * bytes with the same keys in the same run; memory at steady state.
 *
 * The writers (standing in for GPU jobs) run in a child process, so the CPU time the bench
 * runner records for a collector case is the collector's own (event loop + validation worker).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { Kafka, logLevel } from 'kafkajs';
import { streamKeyOf } from '../contracts/index.ts';
import { createKafkaProducer, loadCollectorConfig, startCollector, threadRecordsOf, type RunningCollector } from '../collector/index.ts';
import { createTraceparentGenerator } from '../collector/trace-context.ts';
import { fixtureFrameBytes } from '../collector/testing/frame-fixtures.ts';
import { acquireStackLease, resolveLocalStackConfig, silentReporter } from '../deploy/local/index.ts';
import { decodeFrame } from '../protocol/index.ts';
import { installNativeKafkaCrc32c } from '../service/kafka-native-crc.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

const STREAMS = 16;
const WRITERS = 4;
const PARTITIONS = 6;

/** Child process: on each "go <socket>" line, writes every share file over its own connection (64 KiB writes), then prints "done". */
const WRITER_SCRIPT = `
const net = require('node:net'); const fs = require('node:fs'); const readline = require('node:readline');
const shares = JSON.parse(process.argv[1]).map((f) => fs.readFileSync(f));
readline.createInterface({ input: process.stdin }).on('line', async (line) => {
  const socketPath = line.slice(3);
  await Promise.all(shares.map((all) => new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath, () => {
      for (let at = 0; at < all.length; at += 65536) socket.write(all.subarray(at, at + 65536));
      socket.end();
    });
    socket.on('close', resolve); socket.on('error', reject);
  })));
  process.stdout.write('done\\n');
});`;

function createWriter(shareFiles: readonly string[]): { write(socketPath: string): Promise<void>; close(): void } {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', WRITER_SCRIPT, JSON.stringify(shareFiles)]);
  let pending: (() => void) | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('done')) pending?.();
  });
  return {
    write: (socketPath) =>
      new Promise<void>((resolve) => {
        pending = resolve;
        child.stdin.write(`go ${socketPath}\n`);
      }),
    close: () => child.kill(),
  };
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const frameCount = ctx.quick ? 5_000 : 20_000;
  const lease = await acquireStackLease(resolveLocalStackConfig(process.env), silentReporter);
  const brokers = lease.endpoints.kafkaBrokers;
  const directory = mkdtempSync(join(tmpdir(), 'ww-collector-bench-'));
  const runId = Date.now().toString(36);
  const cleanups: (() => Promise<void> | void)[] = [];
  try {
    // The same frames for every case: GroupSamples and LaunchSummary alternating, 16 streams.
    const frames = Array.from({ length: frameCount }, (_, i) => Buffer.from(fixtureFrameBytes({ job: `bench-job-${i % STREAMS}`, kernel: 'k', sequence: Math.floor(i / STREAMS) })));
    const keys = frames.map((_, i) => `bench-job-${i % STREAMS}/k`);
    const frameBytes = frames.reduce((n, f) => n + f.length, 0);
    const threadRecords = frames.reduce((n, f) => n + threadRecordsOf(decodeFrame(f)), 0);
    ctx.note(
      `${frameCount} frames (${(frameBytes / 1e6).toFixed(1)} MB, ${threadRecords} thread records) over ${STREAMS} streams; ${WRITERS} socket writers in a child process; ` +
        `${PARTITIONS} partitions; broker ${brokers} (deploy/local Kafka 3.9, single node, same machine; the bench takes a stack lease and gives it back)`,
    );
    const shareFiles = Array.from({ length: WRITERS }, (_, w) => {
      const file = join(directory, `share-${w}.bin`);
      writeFileSync(file, Buffer.concat(frames.filter((_, i) => (i % STREAMS) % WRITERS === w)));
      return file;
    });
    const writer = createWriter(shareFiles);
    cleanups.push(() => writer.close());

    // Baselines: a plain kafkajs producer (default settings, acks -1) in batches of the collector's
    // size limit (1 MiB), one batch at a time, sending (a) the records the collector sends, the
    // same keys, values and headers (ww-source, ww-host, a fresh traceparent each): the target's
    // baseline, since those bytes are the product's contract, not the durable path's cost; and
    // (b) the bare frames with their job/kernel as key and no headers, for reference.
    // Every kafkajs client of the project computes record batch CRCs natively (service/kafka-native-crc.ts);
    // installed before the plain producer's first batch, so that the baseline does too (one module cache per process).
    const nativeBatchCrc = installNativeKafkaCrc32c();
    const kafka = new Kafka({ clientId: 'bench-plain', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const plainTopic = `bench.plain-${runId}`;
    await admin.createTopics({ topics: [{ topic: plainTopic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const plainProducer = kafka.producer({ allowAutoTopicCreation: false });
    await plainProducer.connect();
    cleanups.push(() => plainProducer.disconnect());
    type PlainMessage = { key: string; value: Buffer; headers?: Record<string, string> };
    const batchesOf = (message: (value: Buffer, i: number) => PlainMessage): PlainMessage[][] => {
      const batches: PlainMessage[][] = [[]];
      let batchBytes = 0;
      frames.forEach((value, i) => {
        if (batchBytes + value.length > 1024 * 1024) {
          batches.push([]);
          batchBytes = 0;
        }
        batches[batches.length - 1]?.push(message(value, i));
        batchBytes += value.length;
      });
      return batches;
    };
    const nextTraceparent = createTraceparentGenerator();
    const sameRecordKeys = frames.map((value) => {
      const frame = decodeFrame(value);
      return streamKeyOf({ job: frame.job, kernel: frame.kernel, groupSize: frame.groupSize, source: frame.source, deviceUuid: frame.device.uuid, host: 'bench-host' });
    });
    const sendAll = async (batches: PlainMessage[][]): Promise<void> => {
      for (const messages of batches) await plainProducer.send({ topic: plainTopic, acks: -1, messages });
    };
    // Fresh traceparents per run, as the collector makes them (their cost is in the run).
    const runPlain = (): Promise<void> =>
      sendAll(batchesOf((value, i) => ({ key: sameRecordKeys[i] as string, value, headers: { 'ww-source': 'socket', 'ww-host': 'bench-host', traceparent: nextTraceparent() } })));
    const bareBatches = batchesOf((value, i) => ({ key: keys[i] as string, value }));
    const runBare = (): Promise<void> => sendAll(bareBatches);
    const plainName = 'plain kafkajs producer, same records (keys, values, headers)';
    const bareName = 'plain kafkajs producer, bare frames (job/kernel key, no headers)';
    await ctx.measure(bareName, runBare, { runs: 7, warmupRuns: 1, maxTotalMillis: 30_000, parameters: { frames: frameCount, bytes: frameBytes } });
    await ctx.measure(plainName, runPlain, { runs: 7, warmupRuns: 1, maxTotalMillis: 30_000, parameters: { frames: frameCount, bytes: frameBytes } });

    // The collector: socket → splitter → decode → enrich → queue → batches → idempotent producer.
    let peakRssBytes = 0;
    const startVariant = async (name: string, validationWorker: boolean, env: Record<string, string> = {}): Promise<{ collector: RunningCollector; runCollector: () => Promise<void> }> => {
      const socketPath = join(directory, `${name}.sock`);
      const config = loadCollectorConfig({
        env: { WARPWATCH_FRAMES_TOPIC: `bench.collector-${runId}`, WARPWATCH_DLQ_TOPIC: `bench.dlq-${runId}`, WARPWATCH_VALIDATION_WORKER: String(validationWorker), ...env },
        flags: { socket: socketPath, brokers, partitions: String(PARTITIONS), spoolDir: join(directory, `spool-${name}`), host: 'bench-host', metricsPort: 'off' },
      });
      const producer = createKafkaProducer(config.kafka);
      await producer.ensureTopics();
      const collector = await startCollector({ config, produce: producer.send, meter: otelMetrics.getMeter('bench'), log: (level, message) => ctx.log(`collector ${level}: ${message}`) });
      cleanups.push(async () => {
        await collector.stop();
        await producer.close();
      });
      const runCollector = async (): Promise<void> => {
        const target = collector.metrics.totals().framesOut + frameCount;
        await writer.write(socketPath);
        await until(() => collector.metrics.totals().framesOut >= target);
        peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
      };
      return { collector, runCollector };
    };

    const workerName = 'collector, validation worker';
    const workerVariant = await startVariant('worker', true);
    await ctx.measure(workerName, workerVariant.runCollector, { runs: 7, warmupRuns: 1, maxTotalMillis: 30_000, baseline: plainName, parameters: { frames: frameCount, bytes: frameBytes, validationWorker: true } });
    await workerVariant.collector.stop();

    const defaultName = 'collector (default: write-ahead spool, validation on the event loop)';
    const memoryBefore = process.memoryUsage();
    const inline = await startVariant('inline', false);
    await ctx.measure(defaultName, inline.runCollector, { runs: 7, warmupRuns: 1, maxTotalMillis: 30_000, baseline: plainName, parameters: { frames: frameCount, bytes: frameBytes, validationWorker: false } });
    // Paired runs, alternating which goes first: the wall-time ratio of each pair does not see
    // load that drifts between the measured blocks above (this machine is shared).
    const pairedRatios: number[] = [];
    for (let pair = 0; pair < (ctx.quick ? 2 : 6); pair++) {
      const timed = async (fn: () => Promise<void>): Promise<number> => {
        const started = performance.now();
        await fn();
        return performance.now() - started;
      };
      const plainFirst = pair % 2 === 0;
      const a = await timed(plainFirst ? runPlain : inline.runCollector);
      const b = await timed(plainFirst ? inline.runCollector : runPlain);
      pairedRatios.push(plainFirst ? a / b : b / a);
    }
    pairedRatios.sort((x, y) => x - y);
    const middle = Math.floor(pairedRatios.length / 2);
    const pairedMedianRatio = pairedRatios.length % 2 === 1 ? (pairedRatios[middle] as number) : ((pairedRatios[middle - 1] as number) + (pairedRatios[middle] as number)) / 2;
    const memoryAfter = process.memoryUsage();
    const totals = inline.collector.metrics.totals();

    // The strictest durability policy: fdatasync after every write (one write per event-loop turn).
    const fsyncName = 'collector, fsync after every write';
    const fsyncVariant = await startVariant('fsync', false, { WARPWATCH_SPOOL_FSYNC_INTERVAL_MILLIS: '0' });
    await ctx.measure(fsyncName, fsyncVariant.runCollector, { runs: 5, warmupRuns: 1, maxTotalMillis: 30_000, baseline: plainName, parameters: { frames: frameCount, bytes: frameBytes, fsyncEveryWrite: true } });
    await fsyncVariant.collector.stop();


    // Memory at steady state of the real agent: `warpwatch collect` as its own process, fed the
    // same frames five times, its resident set sampled from /proc every 100 ms.
    const agentMemory = await measureAgentMemory({ directory, brokers, runId, writer, frameCount, rounds: ctx.quick ? 2 : 5 });

    ctx.targetMinSpeedup(defaultName, plainName, 0.5, 'collector throughput at least 0.5 x plain kafkajs sending the same records (same run)');
    const caseOf = (name: string) => ctx.cases.find((c) => c.name === name);
    const perSecond = (millis: number | undefined, count: number): number => (millis === undefined ? 0 : count / (millis / 1000));
    const metrics: Record<string, number> = {};
    for (const [label, name] of [
      ['plain', plainName],
      ['plainBare', bareName],
      ['collectorDefault', defaultName],
      ['collectorWorker', workerName],
      ['collectorFsyncEveryWrite', fsyncName],
    ] as const) {
      const c = caseOf(name);
      metrics[`${label}FramesPerSecondWall`] = perSecond(c?.medianMillis, frameCount);
      metrics[`${label}ThreadRecordsPerSecondWall`] = perSecond(c?.medianMillis, threadRecords);
      metrics[`${label}FramesPerCpuSecond`] = perSecond(c?.medianCpuMillis, frameCount);
      metrics[`${label}CpuMicrosPerFrame`] = c === undefined ? 0 : (c.medianCpuMillis * 1000) / frameCount;
    }
    Object.assign(metrics, {
      pairedMedianWallThroughputRatioToPlain: pairedMedianRatio,
      benchProcessPeakRssBytes: peakRssBytes,
      benchProcessRssAfterRunsBytes: memoryAfter.rss,
      heapUsedBeforeDefaultCollectorBytes: memoryBefore.heapUsed,
      heapUsedAfterRunsBytes: memoryAfter.heapUsed,
      agentSteadyRssBytes: agentMemory.steadyRssBytes,
      agentPeakRssBytes: agentMemory.peakRssBytes,
      agentIdleRssBytes: agentMemory.idleRssBytes,
      collectorSpooledFrames: totals.framesSpooled,
      collectorDroppedFrames: totals.framesDropped,
      nativeKafkaBatchCrc: nativeBatchCrc ? 1 : 0,
    });
    return {
      notes: [
        'thread records = lanes described by the frames (groups x group size); FramesPerSecondWall = frames / median wall time, FramesPerCpuSecond = frames / median CPU time of this process (all threads)',
        `paired interleaved wall-time runs (default collector): collector/plain throughput ratios ${pairedRatios.map((r) => r.toFixed(2)).join(', ')} (median ${pairedMedianRatio.toFixed(2)})`,
        'target baseline: the plain producer sends the records the collector sends (full stream keys, the frames, headers ww-source, ww-host and a fresh traceparent); reference: the bare frames with job/kernel keys and no headers. Beyond it the collector reads the sockets, validates every frame (protocol summarizeFrame, on the event loop by default), makes the headers, and writes every record to its write-ahead disk spool before producing it (one write per event-loop turn)',
        `collector (default) throughput vs the bare-frames producer: ${(() => {
          const bare = ctx.cases.find((c) => c.name === bareName);
          const collector = ctx.cases.find((c) => c.name === defaultName);
          return bare !== undefined && collector !== undefined ? `${(bare.medianCpuMillis / collector.medianCpuMillis).toFixed(2)} (cpu), ${(bare.medianMillis / collector.medianMillis).toFixed(2)} (wall)` : 'n/a';
        })()}`,
        'agent memory: `warpwatch collect` run as a separate process (default settings, metrics on /healthz), RSS from /proc/<pid>/status: idle after start, median over the last rounds (steady), peak',
        `default collector totals after the runs: in ${totals.framesIn}, out ${totals.framesOut}, spooled ${totals.framesSpooled}, dropped ${totals.framesDropped}, rejected ${totals.framesRejected}`,
      ],
      metrics,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rmSync(directory, { recursive: true, force: true });
    await lease.release();
  }
}

/** Runs `warpwatch collect` as a child process, feeds it `rounds` × the frames, samples its RSS. */
async function measureAgentMemory(input: {
  directory: string;
  brokers: string;
  runId: string;
  writer: { write(socketPath: string): Promise<void> };
  frameCount: number;
  rounds: number;
}): Promise<{ idleRssBytes: number; steadyRssBytes: number; peakRssBytes: number }> {
  const socketPath = join(input.directory, 'agent.sock');
  const agent = spawn(
    process.execPath,
    ['bin/warpwatch.mjs', 'collect', '--socket', socketPath, '--brokers', input.brokers, '--spool-dir', join(input.directory, 'agent-spool'), '--metrics-port', '0'],
    { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: `bench.agent-${input.runId}`, WARPWATCH_DLQ_TOPIC: `bench.dlq-${input.runId}` }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  agent.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const deadline = Date.now() + 60_000;
    while (!/started: /.test(stderr)) {
      if (Date.now() > deadline || agent.exitCode !== null) throw new Error(`warpwatch collect did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr)?.[1]);
    const rssBytes = (): number => {
      const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${agent.pid}/status`, 'utf8'));
      return match === null ? 0 : Number(match[1]) * 1024;
    };
    const framesOut = async (): Promise<number> => ((await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { framesOut: number }).framesOut;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const idleRssBytes = rssBytes();
    const samples: number[][] = [];
    for (let round = 0; round < input.rounds; round++) {
      const roundSamples: number[] = [];
      const sampler = setInterval(() => roundSamples.push(rssBytes()), 100);
      const target = (await framesOut()) + input.frameCount;
      await input.writer.write(socketPath);
      while ((await framesOut()) < target) await new Promise((resolve) => setTimeout(resolve, 50));
      clearInterval(sampler);
      roundSamples.push(rssBytes());
      samples.push(roundSamples);
    }
    const steady = samples.slice(Math.max(1, samples.length - 3)).flat().sort((a, b) => a - b);
    return { idleRssBytes, steadyRssBytes: steady[Math.floor(steady.length / 2)] ?? 0, peakRssBytes: Math.max(...samples.flat()) };
  } finally {
    agent.kill('SIGTERM');
    await new Promise<void>((resolve) => (agent.exitCode !== null ? resolve() : agent.once('exit', () => resolve())));
  }
}
