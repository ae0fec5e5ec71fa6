/**
 * Benchmark of the collector (issue 5): frames/s and thread-records/s from unix-socket
 * writers through validation, enrichment, batching and the idempotent kafkajs producer to
 * the real local Kafka (deploy/local), against a plain kafkajs producer sending the same
 * bytes with the same keys in the same run; memory at steady state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { Kafka, logLevel } from 'kafkajs';
import { createKafkaProducer, loadCollectorConfig, startCollector, threadRecordsOf } from '../collector/index.ts';
import { fixtureFrameBytes } from '../collector/frame-fixtures.ts';
import { acquireStackLease, resolveLocalStackConfig, silentReporter } from '../deploy/local/index.ts';
import { decodeFrame } from '../protocol/index.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

const STREAMS = 16;
const WRITERS = 4;
const PARTITIONS = 6;

function writeAll(path: string, chunks: readonly Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => {
      for (const chunk of chunks) socket.write(chunk);
      socket.end();
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
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
  try {
    // The same frames for both cases: GroupSamples and LaunchSummary alternating, 16 streams.
    const frames = Array.from({ length: frameCount }, (_, i) => Buffer.from(fixtureFrameBytes({ job: `bench-job-${i % STREAMS}`, kernel: 'k', sequence: Math.floor(i / STREAMS) })));
    const keys = frames.map((_, i) => `bench-job-${i % STREAMS}/k`);
    const frameBytes = frames.reduce((n, f) => n + f.length, 0);
    const threadRecords = frames.reduce((n, f) => n + threadRecordsOf(decodeFrame(f)), 0);
    ctx.note(`${frameCount} frames (${(frameBytes / 1e6).toFixed(1)} MB, ${threadRecords} thread records) over ${STREAMS} streams; ${WRITERS} socket writers; ${PARTITIONS} partitions; broker ${brokers} (deploy/local Kafka 3.9, single node, same machine)`);

    // Baseline: a plain kafkajs producer (default settings, acks -1) sending the same bytes and keys
    // in batches of the same size limit as the collector (1 MiB), one batch at a time.
    const kafka = new Kafka({ clientId: 'bench-plain', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    const plainTopic = `bench.plain-${runId}`;
    await admin.createTopics({ topics: [{ topic: plainTopic, numPartitions: PARTITIONS, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const plainProducer = kafka.producer({ allowAutoTopicCreation: false });
    await plainProducer.connect();
    const plainBatches: { key: string; value: Buffer }[][] = [];
    let current: { key: string; value: Buffer }[] = [];
    let currentBytes = 0;
    frames.forEach((value, i) => {
      if (currentBytes + value.length > 1024 * 1024 && current.length > 0) {
        plainBatches.push(current);
        current = [];
        currentBytes = 0;
      }
      current.push({ key: keys[i] as string, value });
      currentBytes += value.length;
    });
    if (current.length > 0) plainBatches.push(current);
    const plainName = 'plain kafkajs producer';
    await ctx.measure(
      plainName,
      async () => {
        for (const messages of plainBatches) await plainProducer.send({ topic: plainTopic, acks: -1, messages });
      },
      { runs: 7, warmupRuns: 1, maxTotalMillis: 30_000, parameters: { frames: frameCount, bytes: frameBytes } },
    );
    const runPlain = async (): Promise<void> => {
      for (const messages of plainBatches) await plainProducer.send({ topic: plainTopic, acks: -1, messages });
    };

    // The collector: socket writers → splitter → decode → enrich → queue → batches → idempotent producer.
    const socketPath = join(directory, 'bench.sock');
    const config = loadCollectorConfig({
      env: { WARPWATCH_FRAMES_TOPIC: `bench.collector-${runId}`, WARPWATCH_DLQ_TOPIC: `bench.dlq-${runId}` },
      flags: { socket: socketPath, brokers, partitions: String(PARTITIONS), spoolDir: join(directory, 'spool'), host: 'bench-host', metricsPort: 'off' },
    });
    const producer = createKafkaProducer(config.kafka);
    await producer.ensureTopics();
    const memoryBefore = process.memoryUsage();
    const collector = await startCollector({ config, produce: producer.send, meter: otelMetrics.getMeter('bench'), log: (level, message) => ctx.log(`collector ${level}: ${message}`) });
    // Each writer sends its share of the frames as 64 KiB writes, the way a recorder flushes its buffer.
    const shares = Array.from({ length: WRITERS }, (_, w) => {
      const all = Buffer.concat(frames.filter((_, i) => i % STREAMS % WRITERS === w));
      const chunks: Buffer[] = [];
      for (let at = 0; at < all.length; at += 64 * 1024) chunks.push(all.subarray(at, at + 64 * 1024));
      return chunks;
    });
    let peakRssBytes = 0;
    const sampler = setInterval(() => {
      peakRssBytes = Math.max(peakRssBytes, process.memoryUsage().rss);
    }, 20);
    const collectorName = 'collector (socket → Kafka)';
    const runCollector = async (): Promise<void> => {
      const target = collector.metrics.totals().framesOut + frameCount;
      await Promise.all(shares.map((chunks) => writeAll(socketPath, chunks)));
      await until(() => collector.metrics.totals().framesOut >= target);
    };
    await ctx.measure(collectorName, runCollector, {
      runs: 7,
      warmupRuns: 1,
      maxTotalMillis: 30_000,
      baseline: plainName,
      parameters: { frames: frameCount, bytes: frameBytes },
    });
    // Paired runs, alternating which goes first: the ratio of each pair is immune to load that
    // drifts between the two blocks above (this machine is shared).
    const pairedRatios: number[] = [];
    for (let pair = 0; pair < (ctx.quick ? 2 : 6); pair++) {
      const timed = async (fn: () => Promise<void>): Promise<number> => {
        const started = performance.now();
        await fn();
        return performance.now() - started;
      };
      const first = pair % 2 === 0 ? await timed(runPlain) : await timed(runCollector);
      const second = pair % 2 === 0 ? await timed(runCollector) : await timed(runPlain);
      pairedRatios.push(pair % 2 === 0 ? first / second : second / first);
    }
    pairedRatios.sort((a, b) => a - b);
    const pairedMedianRatio = pairedRatios.length % 2 === 1 ? (pairedRatios[(pairedRatios.length - 1) / 2] as number) : ((pairedRatios[pairedRatios.length / 2 - 1] as number) + (pairedRatios[pairedRatios.length / 2] as number)) / 2;
    await plainProducer.disconnect();
    clearInterval(sampler);
    const memoryAfter = process.memoryUsage();
    const totals = collector.metrics.totals();
    await collector.stop();
    await producer.close();

    const plain = ctx.cases.find((c) => c.name === plainName);
    const ours = ctx.cases.find((c) => c.name === collectorName);
    const perSecond = (millis: number | undefined, count: number): number => (millis === undefined ? 0 : count / (millis / 1000));
    ctx.targetMinSpeedup(collectorName, plainName, 0.5, 'collector throughput at least 0.5 x plain kafkajs (same bytes, same run)');
    return {
      notes: [
        'throughput = frames per median run; thread records = lanes described by the frames (groups x group size)',
        `paired interleaved runs: collector/plain throughput ratios ${pairedRatios.map((r) => r.toFixed(2)).join(', ')} (median ${pairedMedianRatio.toFixed(2)})`,
        'the plain producer sends the frames without headers; the collector adds ww-source, ww-host and traceparent to every message and validates every frame (in its worker thread)',
        `collector totals after the runs: in ${totals.framesIn}, out ${totals.framesOut}, spooled ${totals.framesSpooled}, dropped ${totals.framesDropped}, rejected ${totals.framesRejected}`,
      ],
      metrics: {
        plainFramesPerSecond: perSecond(plain?.medianMillis, frameCount),
        plainThreadRecordsPerSecond: perSecond(plain?.medianMillis, threadRecords),
        plainMegabytesPerSecond: perSecond(plain?.medianMillis, frameBytes) / 1e6,
        collectorFramesPerSecond: perSecond(ours?.medianMillis, frameCount),
        collectorThreadRecordsPerSecond: perSecond(ours?.medianMillis, threadRecords),
        collectorMegabytesPerSecond: perSecond(ours?.medianMillis, frameBytes) / 1e6,
        collectorThroughputRatioToPlain: plain !== undefined && ours !== undefined ? plain.medianMillis / ours.medianMillis : 0,
        pairedMedianThroughputRatioToPlain: pairedMedianRatio,
        peakRssBytes,
        rssAfterBytes: memoryAfter.rss,
        heapUsedBeforeCollectorBytes: memoryBefore.heapUsed,
        heapUsedAfterRunsBytes: memoryAfter.heapUsed,
        collectorSpooledFrames: totals.framesSpooled,
      },
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await lease.release();
  }
}
