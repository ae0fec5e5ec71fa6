import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeFrame } from '../protocol/index.ts';
import { startCollector, type RunningCollector } from './collector.ts';
import { loadCollectorConfig } from './config.ts';
import { fixtureFrameBytes } from './testing/frame-fixtures.ts';
import { startHealthServer } from './health-server.ts';
import type { InfluxWriterStats } from '../service/index.ts';
import type { MetricsPoint, MetricsPointWriter } from './pipeline-reporter.ts';
import type { ProduceRecord } from './produce-record.ts';

async function until(condition: () => boolean, timeoutMillis = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function writeAll(path: string, chunks: Uint8Array[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(path, () => {
      for (const chunk of chunks) socket.write(chunk);
      socket.end();
    });
    socket.on('close', () => resolve());
    socket.on('error', reject);
  });
}

describe('startCollector', () => {
  let directory: string;
  let collector: RunningCollector | undefined;
  const delivered: ProduceRecord[] = [];
  const produce = async (records: readonly ProduceRecord[]): Promise<void> => {
    delivered.push(...records);
  };

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'ww-collector-'));
    delivered.length = 0;
  });
  afterEach(async () => {
    await collector?.stop();
    collector = undefined;
    rmSync(directory, { recursive: true, force: true });
  });

  const config = (flags: Parameters<typeof loadCollectorConfig>[0]['flags'] = {}, env: Record<string, string> = {}) =>
    loadCollectorConfig({ env: { WARPWATCH_BATCH_LINGER_MILLIS: '1', ...env }, flags: { spoolDir: join(directory, 'spool'), host: 'test-host', ...flags } });

  describe('socket source', () => {
    it('takes frames from many concurrent writers: all arrive byte-identical and in per-stream order', async () => {
      const socketPath = join(directory, 'ww.sock');
      collector = await startCollector({ config: config({ socket: socketPath }), produce, meter: otelMetrics.getMeter('t'), log: () => {} });
      expect(statSync(socketPath).mode & 0o777).toBe(0o660);
      const writers = 24;
      const framesPerWriter = 60;
      const sent = new Map<string, Uint8Array[]>();
      await Promise.all(
        Array.from({ length: writers }, (_, w) => {
          const frames = Array.from({ length: framesPerWriter }, (_, s) => fixtureFrameBytes({ job: `job${w}`, kernel: 'kern', sequence: s }));
          sent.set(`job${w}/kern`, frames);
          // Split writes at odd boundaries so frames straddle chunks.
          const all = Buffer.concat(frames);
          const chunks: Uint8Array[] = [];
          for (let at = 0; at < all.length; at += 1000 + w * 17) chunks.push(all.subarray(at, at + 1000 + w * 17));
          return writeAll(socketPath, chunks);
        }),
      );
      await until(() => delivered.length === writers * framesPerWriter);
      for (const [stream, frames] of sent) {
        const got = delivered.filter((r) => r.key?.split('|')[0] === stream);
        expect(got).toHaveLength(framesPerWriter);
        got.forEach((r, i) => expect(Buffer.from(r.value).equals(Buffer.from(frames[i] as Uint8Array))).toBe(true));
      }
      expect(collector.metrics.totals()).toMatchObject({ framesIn: writers * framesPerWriter, framesOut: writers * framesPerWriter, framesRejected: 0 });
    });

    it('closes a connection that keeps sending garbage after its error budget, and keeps serving others', async () => {
      const socketPath = join(directory, 'ww.sock');
      collector = await startCollector({ config: config({ socket: socketPath }, { WARPWATCH_MAX_CONNECTION_ERRORS: '2' }), produce, meter: otelMetrics.getMeter('t'), log: () => {} });
      const good = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      const junk = new TextEncoder().encode('garbage!');
      await writeAll(socketPath, [junk, good, junk, good, junk, good, junk, good]);
      await writeAll(socketPath, [good]);
      await until(() => collector?.metrics.totals().connectionsClosedForErrors === 1 && delivered.filter((r) => r.topic === 'warpwatch.frames').length >= 2);
      const dlq = delivered.filter((r) => r.topic === 'warpwatch.dlq');
      expect(dlq.length).toBe(2);
      expect(dlq.every((r) => r.headers['ww-error-code'] === 'WW_ERR_FRAME_BAD_MAGIC' && r.headers['ww-source'] === 'socket')).toBe(true);
    });

    it('refuses a socket path another process serves, and replaces a stale one', async () => {
      const socketPath = join(directory, 'busy.sock');
      const other = createServer(() => {});
      await new Promise<void>((resolve) => other.listen(socketPath, resolve));
      await expect(startCollector({ config: config({ socket: socketPath }), produce, meter: otelMetrics.getMeter('t'), log: () => {} })).rejects.toMatchObject({
        code: 'WW_ERR_COLLECTOR_SOCKET_IN_USE',
      });
      await new Promise<void>((resolve) => other.close(() => resolve()));
      // A crashed collector leaves its socket file: a child that listens, then dies by SIGKILL.
      const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(socketPath)}, () => console.log('up'))`]);
      await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      child.kill('SIGKILL');
      await new Promise<void>((resolve) => child.once('exit', () => resolve()));
      expect(statSync(socketPath).isSocket()).toBe(true);
      collector = await startCollector({ config: config({ socket: socketPath }), produce, meter: otelMetrics.getMeter('t'), log: () => {} });
      expect(statSync(socketPath).isSocket()).toBe(true);
    });
  });

  describe('accounting', () => {
    it('pauses reading while the validation worker is behind, and drops nothing', async () => {
      // A backlog bound of 64 KiB against a burst of ~14 MB on stdin: the old intake dropped whole chunks here.
      const c = config({ stdin: true }, { WARPWATCH_VALIDATION_WORKER: 'true', WARPWATCH_QUEUE_MAX_BYTES: '64KiB', WARPWATCH_BATCH_MAX_BYTES: '16KiB' });
      const stdin = new Readable({ read() {} });
      collector = await startCollector({ config: c, produce, meter: otelMetrics.getMeter('t'), log: () => {}, stdin });
      for (let s = 0; s < 400; s++) {
        const frame = Buffer.from(fixtureFrameBytes({ job: 'burst', kernel: 'k', sequence: s }));
        stdin.push(Buffer.concat(Array.from({ length: 20 }, () => frame))); // ~34 KB each
      }
      stdin.push(null);
      await collector.inputsDone;
      expect(await collector.flush(30_000)).toBe(true);
      const health = collector.health() as unknown as { framesDropped: number; accounting: { read: number; delivered: number; dropped: number; held: number; balanced: boolean } };
      expect(health.framesDropped).toBe(0);
      expect(health.accounting).toEqual({ read: 8000, delivered: 8000, dropped: 0, held: 0, balanced: true });
      expect(delivered.map((r) => decodeFrame(r.value).frameSequence)).toEqual(Array.from({ length: 8000 }, (_, i) => Math.floor(i / 20)));
    });
  });

  describe('stdin and replay sources', () => {
    it('replays frame files and reads stdin, then reports the inputs done', async () => {
      const file = join(directory, 'run.wwf');
      const fileFrames = Array.from({ length: 40 }, (_, s) => fixtureFrameBytes({ job: 'replayed', kernel: 'k', sequence: s }));
      writeFileSync(file, Buffer.concat(fileFrames));
      const stdinFrames = Array.from({ length: 10 }, (_, s) => fixtureFrameBytes({ job: 'piped', kernel: 'k', sequence: s }));
      collector = await startCollector({
        config: config({ replay: [file], stdin: true }),
        produce,
        meter: otelMetrics.getMeter('t'),
        log: () => {},
        stdin: Readable.from([Buffer.concat(stdinFrames)]),
      });
      await collector.inputsDone;
      expect(await collector.flush(5_000)).toBe(true);
      const replayed = delivered.filter((r) => r.key?.split('|')[0] === 'replayed/k');
      expect(replayed.map((r) => decodeFrame(r.value).frameSequence)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      expect(replayed.every((r) => r.headers['ww-source'] === 'file')).toBe(true);
      expect(delivered.filter((r) => r.key?.split('|')[0] === 'piped/k' && r.headers['ww-source'] === 'stdin')).toHaveLength(10);
    });
  });

  describe('stop', () => {
    it('flushes what was received before returning', async () => {
      const socketPath = join(directory, 'ww.sock');
      let release: () => void = () => {};
      const gate = new Promise<void>((resolve) => (release = resolve));
      const slowProduce = async (records: readonly ProduceRecord[]): Promise<void> => {
        await gate;
        delivered.push(...records);
      };
      const running = await startCollector({ config: config({ socket: socketPath }), produce: slowProduce, meter: otelMetrics.getMeter('t'), log: () => {} });
      await writeAll(socketPath, Array.from({ length: 30 }, (_, s) => fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: s })));
      await until(() => running.metrics.totals().framesIn === 30);
      setTimeout(release, 50);
      expect(await running.stop()).toEqual({ flushed: true });
      expect(delivered).toHaveLength(30);
    });

    it('writes warpwatch_pipeline points at start and, after the flush, with the final totals; /healthz shows the writer', async () => {
      const file = join(directory, 'run.wwf');
      const valid = Array.from({ length: 12 }, (_, s) => fixtureFrameBytes({ job: 'm', kernel: 'k', sequence: s }));
      const invalid = Buffer.from(valid[0] ?? new Uint8Array());
      invalid[invalid.length - 1] = (invalid[invalid.length - 1] ?? 0) ^ 0xff; // breaks the CRC: one frame to the DLQ
      writeFileSync(file, Buffer.concat([...valid, invalid]));
      const points: MetricsPoint[] = [];
      const closes: number[] = [];
      let failing = 0;
      /** Writer stats with `written` points written, nothing dropped or buffered. */
      const statsOf = (written: number): InfluxWriterStats => ({
        pointsIn: written,
        pointsWritten: written,
        pointsDropped: 0,
        dropped: { overflow: 0, rejected: 0, unwritable: 0, 'no-fields': 0, closed: 0 },
        buffered: 0,
        batchesWritten: written,
        batchesInFlight: 0,
        writeErrors: 0,
        failingWrites: 0,
        rejectedAtMillis: 0,
        authFailing: false,
      });
      const writer: MetricsPointWriter = {
        write: (written) => points.push(...(written as MetricsPoint[])),
        stats: () => ({ ...statsOf(points.length), failingWrites: failing }),
        close: (timeoutMillis) => {
          closes.push(timeoutMillis);
          return Promise.resolve(statsOf(points.length));
        },
      };
      const running = await startCollector({
        config: config({ replay: [file], instance: 'unit-host:1' }),
        produce,
        meter: otelMetrics.getMeter('t'),
        log: () => {},
        metricsWriter: writer,
      });
      expect(points).toHaveLength(1);
      expect(points[0]?.fields['frames_in']).toBe(0);
      await running.inputsDone;
      expect(running.health()['influx']).toEqual(statsOf(1));
      // A writer whose last requests failed makes the collector degraded (reason influx-write), not unhealthy.
      failing = 2;
      expect(running.health()).toMatchObject({ status: 'degraded', reasons: ['influx-write'] });
      failing = 0;
      await running.stop();
      expect(closes).toHaveLength(1);
      const last = points[points.length - 1];
      expect(last?.tags).toEqual({ service: 'collector', instance: 'unit-host:1' });
      expect(last?.fields).toEqual({ frames_in: 12, frames_out: 12, frames_rejected: 1, frames_spooled: 13, frames_dropped: 0, influx_write_errors: 0 });
    });
  });
});

describe('startHealthServer', () => {
  it('serves /healthz and Prometheus /metrics with the collector counters', async () => {
    const exporter = new PrometheusExporter({ preventServerStart: true });
    const provider = new MeterProvider({ readers: [exporter] });
    const directory = mkdtempSync(join(tmpdir(), 'ww-health-'));
    const collector = await startCollector({
      config: loadCollectorConfig({ env: {}, flags: { stdin: true, spoolDir: join(directory, 'spool') } }),
      produce: async () => {},
      meter: provider.getMeter('warpwatch-collector'),
      log: () => {},
      stdin: Readable.from([Buffer.concat([fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 }), new TextEncoder().encode('junk')])]),
    });
    await collector.inputsDone;
    await collector.flush(5_000);
    const server = await startHealthServer({ host: '127.0.0.1', port: 0, metricsHandler: (q, s) => exporter.getMetricsRequestHandler(q, s), health: () => collector.health() });
    try {
      const health = await fetch(`http://127.0.0.1:${server.port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ status: 'ok', framesIn: 1, framesRejected: 1, framesOut: 1, dlqOut: 1 });
      const text = await (await fetch(`http://127.0.0.1:${server.port}/metrics`)).text();
      expect(text).toMatch(/warpwatch_collector_frames_in_total\{[^}]*source="stdin"[^}]*\} 1/);
      expect(text).toMatch(/warpwatch_collector_frames_rejected_total\{[^}]*code="WW_ERR_FRAME_BAD_MAGIC"[^}]*\} 1/);
      expect(text).toContain('warpwatch_collector_produce_duration');
      expect(text).toContain('warpwatch_collector_spool_size');
      expect((await fetch(`http://127.0.0.1:${server.port}/other`)).status).toBe(404);
    } finally {
      await server.close();
      await collector.stop();
      await provider.shutdown();
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
