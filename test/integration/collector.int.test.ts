// Collector against the real Kafka of the shared local stack: many concurrent
// socket writers, malformed frames to the DLQ, and SIGTERM of the real CLI process.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKafkaProducer, loadCollectorConfig, startCollector, type RunningCollector } from '../../collector/index.ts';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame } from '../../protocol/index.ts';
import { consumeTopic, topicPartitionCount } from './collector-kafka-helpers.ts';

const brokers = (): string => {
  const value = process.env.WARPWATCH_KAFKA_BROKERS;
  if (value === undefined || value === '') throw new Error('WARPWATCH_KAFKA_BROKERS is not set; test/integration/global-setup.ts sets it');
  return value;
};

function writeAll(path: string, chunks: readonly Uint8Array[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => {
      for (const chunk of chunks) socket.write(chunk);
      socket.end();
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

describe('collector with a real Kafka broker', () => {
  let directory: string;
  let topic: string;
  let dlqTopic: string;
  let collector: RunningCollector | undefined;
  let closeKafka: (() => Promise<void>) | undefined;

  const start = async (partitions: number): Promise<{ socketPath: string }> => {
    const socketPath = join(directory, 'collector.sock');
    const config = loadCollectorConfig({
      env: { WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: dlqTopic, WARPWATCH_MAX_CONNECTION_ERRORS: '10' },
      flags: { socket: socketPath, brokers: brokers(), partitions: String(partitions), spoolDir: join(directory, 'spool'), host: 'it-host', label: ['cluster=it'] },
    });
    const kafka = createKafkaProducer(config.kafka);
    closeKafka = () => kafka.close();
    collector = await startCollector({ config, produce: kafka.send, meter: metrics.getMeter('it'), log: () => {} });
    return { socketPath };
  };

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'ww-collector-it-'));
    const id = randomUUID().slice(0, 8);
    topic = `warpwatch.it.frames-${id}`;
    dlqTopic = `warpwatch.it.dlq-${id}`;
  });
  afterEach(async () => {
    await collector?.stop();
    await closeKafka?.();
    collector = undefined;
    closeKafka = undefined;
    rmSync(directory, { recursive: true, force: true });
  });

  it('creates the topic and delivers frames from many concurrent socket writers byte-identical and in per-stream order', async () => {
    const { socketPath } = await start(4);
    const writers = 32;
    const framesPerWriter = 100;
    const sent = new Map<string, Buffer[]>();
    await Promise.all(
      Array.from({ length: writers }, (_, w) => {
        const frames = Array.from({ length: framesPerWriter }, (_, s) => Buffer.from(fixtureFrameBytes({ job: `it-job-${w}`, kernel: `kernel-${w % 3}`, sequence: s })));
        sent.set(`it-job-${w}/kernel-${w % 3}`, frames);
        const all = Buffer.concat(frames);
        const chunks: Buffer[] = [];
        const step = 777 + 131 * w;
        for (let at = 0; at < all.length; at += step) chunks.push(all.subarray(at, at + step));
        return writeAll(socketPath, chunks);
      }),
    );
    const total = writers * framesPerWriter;
    expect(await collector?.flush(60_000)).toBe(true);
    const got = await consumeTopic(brokers(), topic, total);
    expect(got).toHaveLength(total);
    expect(await topicPartitionCount(brokers(), topic)).toBe(4);
    for (const [stream, frames] of sent) {
      const ofStream = got.filter((m) => m.key?.split('|')[0] === stream);
      expect(ofStream).toHaveLength(framesPerWriter);
      expect(new Set(ofStream.map((m) => m.partition)).size).toBe(1); // key → one partition
      ofStream.sort((a, b) => (a.offset < b.offset ? -1 : 1));
      ofStream.forEach((m, i) => expect(m.value.equals(frames[i] as Buffer)).toBe(true));
    }
    const headers = got[0]?.headers ?? {};
    expect(headers['ww-source']).toBe('socket');
    expect(headers['ww-host']).toBe('it-host');
    expect(headers['ww-label-cluster']).toBe('it');
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(collector?.metrics.totals()).toMatchObject({ framesIn: total, framesOut: total, framesRejected: 0, framesDropped: 0 });
  });

  it('a frames topic deleted under it: the frames wait in the spool, the topic is created again as the spec says, and every frame arrives', async () => {
    const { socketPath } = await start(3);
    const frames = (from: number) => Array.from({ length: 20 }, (_, i) => fixtureFrameBytes({ job: 'deleted', kernel: 'k', sequence: from + i }));
    await writeAll(socketPath, frames(0));
    expect(await collector?.flush(60_000)).toBe(true);
    const admin = new Kafka({ clientId: 'collector-it', brokers: [brokers()], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [topic] });
      await writeAll(socketPath, frames(20));
      expect(await collector?.flush(90_000)).toBe(true);
    } finally {
      await admin.disconnect();
    }
    // Created again by the collector's check (3 partitions, the spec's settings), not by the broker's defaults.
    expect(await topicPartitionCount(brokers(), topic)).toBe(3);
    const messages = await consumeTopic(brokers(), topic, 20);
    expect(messages.map((m) => decodeFrame(new Uint8Array(m.value)).frameSequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => 20 + i));
    expect(collector?.metrics.totals()).toMatchObject({ framesIn: 40, framesOut: 40, framesDropped: 0 });
  });

  it('sends malformed frames to the DLQ with their error codes and keeps serving', async () => {
    const { socketPath } = await start(2);
    const good = (s: number): Buffer => Buffer.from(fixtureFrameBytes({ job: 'dlq-job', kernel: 'k', sequence: s }));
    const crcBroken = good(1);
    crcBroken[crcBroken.length - 3] = (crcBroken[crcBroken.length - 3] as number) ^ 0x55;
    const wrongVersion = good(2);
    wrongVersion[4] = 9; // version field (u16 LE at offset 4)
    const junk = Buffer.from('definitely not a frame');
    const truncated = good(3).subarray(0, 40);
    await writeAll(socketPath, [good(0), junk, good(4), crcBroken, good(5), wrongVersion, good(6), truncated]);
    // Same collector, new connection: it keeps serving.
    await writeAll(socketPath, [good(7), good(8)]);
    expect(await collector?.flush(60_000)).toBe(true);
    const dlq = await consumeTopic(brokers(), dlqTopic, 4);
    expect(dlq.map((m) => m.headers['ww-error-code']).sort()).toEqual(['WW_ERR_FRAME_BAD_MAGIC', 'WW_ERR_FRAME_CRC_MISMATCH', 'WW_ERR_FRAME_TRUNCATED', 'WW_ERR_FRAME_UNKNOWN_VERSION']);
    expect(dlq.every((m) => m.headers['ww-source'] === 'socket' && m.headers['ww-host'] === 'it-host')).toBe(true);
    expect(dlq.find((m) => m.headers['ww-error-code'] === 'WW_ERR_FRAME_BAD_MAGIC')?.value.toString()).toBe('definitely not a frame');
    expect(dlq.find((m) => m.headers['ww-error-code'] === 'WW_ERR_FRAME_CRC_MISMATCH')?.value.equals(crcBroken)).toBe(true);
    const frames = await consumeTopic(brokers(), topic, 6);
    expect(frames.map((m) => decodeFrame(m.value).frameSequence).sort((a, b) => a - b)).toEqual([0, 4, 5, 6, 7, 8]);
  });

  it('flushes everything and exits 0 on SIGTERM (the real CLI process)', async () => {
    const socketPath = join(directory, 'cli.sock');
    const child = spawn(
      process.execPath,
      ['bin/warpwatch.mjs', 'collect', '--socket', socketPath, '--brokers', brokers(), '--partitions', '3', '--spool-dir', join(directory, 'cli-spool'), '--metrics-port', '0'],
      // No pipeline points into the shared database (collector-metrics.int.test.ts covers them).
      { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: dlqTopic, WARPWATCH_BATCH_LINGER_MILLIS: '200', WARPWATCH_INFLUX_URL: 'off' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let signalledAt = 0;
    const exited = new Promise<{ code: number | null; millis: number }>((resolve) => {
      child.once('exit', (code) => resolve({ code, millis: Date.now() - signalledAt }));
    });
    const deadline = Date.now() + 60_000;
    while (!/started: /.test(stderr)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`collector did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr)?.[1]);
    const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { status: string };
    expect(health.status).toBe('ok');
    // /metrics names the agent (not unknown_service): target_info carries service.name, the instance and the host.
    const targetInfo = (await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).split('\n').find((line) => line.startsWith('target_info{')) ?? '';
    expect(targetInfo).toContain('service_name="warpwatch-collector"');
    expect(targetInfo).toMatch(/service_instance_id="[^"]+:\d+"/); // default instance <host>:<pid>
    expect(targetInfo).toMatch(/host_name="[^"]+"/);
    expect(targetInfo).not.toContain('unknown_service');
    const frames = Array.from({ length: 500 }, (_, s) => Buffer.from(fixtureFrameBytes({ job: 'sigterm-job', kernel: `k${s % 5}`, sequence: s })));
    await writeAll(socketPath, frames);
    signalledAt = Date.now();
    child.kill('SIGTERM');
    const { code, millis } = await exited;
    expect(code).toBe(0);
    expect(millis).toBeLessThan(15_000); // WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS default 10 s + exit
    expect(stderr).toMatch(/stopped on SIGTERM: read 500 \(frames 500, rejected 0\) = delivered 500 \(frames 500, DLQ 0\) \+ dropped 0 \+ held 0; everything delivered/);
    const got = await consumeTopic(brokers(), topic, 500);
    expect(got).toHaveLength(500);
    const bySequence = new Map(got.map((m) => [decodeFrame(m.value).frameSequence, m.value]));
    frames.forEach((f, s) => expect(bySequence.get(s)?.equals(f)).toBe(true));
  });
});
