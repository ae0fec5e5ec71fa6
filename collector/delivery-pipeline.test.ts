import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CollectorMetrics } from './collector-metrics.ts';
import type { SpoolPolicy } from './config.ts';
import { createDeliveryPipeline, type DeliveryPipeline } from './delivery-pipeline.ts';
import { openDiskSpool, type DiskSpool } from './disk-spool.ts';
import type { ProduceRecord } from './produce-record.ts';

const record = (i: number, stream = i % 4): ProduceRecord => ({
  topic: 'warpwatch.frames',
  key: `job/kernel-${stream}`,
  value: new Uint8Array(200).fill(i & 0xff),
  headers: { seq: String(i).padStart(8, '0') },
  timestampMillis: i,
});
const seqOf = (r: ProduceRecord): number => Number(r.headers.seq);
const range = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => i + from);

/** An in-memory Kafka: records acknowledged in order; can be "down" (rejects) or stalled (never answers until released). */
class FakeBroker {
  readonly delivered: ProduceRecord[] = [];
  readonly batchSizes: number[] = [];
  down = false;
  #stalled: (() => void)[] = [];
  stall = false;

  readonly produce = async (records: readonly ProduceRecord[]): Promise<void> => {
    if (this.stall) await new Promise<void>((resolve) => this.#stalled.push(resolve));
    if (this.down) throw new Error('broker unreachable');
    this.batchSizes.push(records.length);
    this.delivered.push(...records);
  };

  release(): void {
    this.stall = false;
    for (const resolve of this.#stalled.splice(0)) resolve();
  }
}

async function until(condition: () => boolean, timeoutMillis = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

describe('createDeliveryPipeline', () => {
  let directory: string;
  let spool: DiskSpool;
  let metrics: CollectorMetrics;
  let pipeline: DeliveryPipeline | undefined;
  const openSpool = (maxBytes = 64 << 20, policy: SpoolPolicy = 'drop-oldest'): DiskSpool =>
    openDiskSpool({ directory, maxBytes, segmentBytes: Math.min(maxBytes, 64 * 1024), policy, fsyncIntervalMillis: 1000 });
  const start = (broker: FakeBroker, overrides: Partial<{ maxQueueBytes: number; maxBatchRecords: number }> = {}): DeliveryPipeline => {
    pipeline = createDeliveryPipeline({
      produce: broker.produce,
      spool,
      metrics,
      maxQueueBytes: overrides.maxQueueBytes ?? 1 << 20,
      maxBatchBytes: 64 * 1024,
      maxBatchRecords: overrides.maxBatchRecords ?? 50,
      lingerMillis: 1,
      retryBackoffMillis: 20,
      produceTimeoutMillis: 5_000,
    });
    return pipeline;
  };

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'ww-pipeline-'));
    spool = openSpool();
    metrics = new CollectorMetrics(otelMetrics.getMeter('test'), { spoolBytes: () => 0, queueBytes: () => 0 });
  });
  afterEach(async () => {
    await pipeline?.close(1000);
    pipeline = undefined;
    rmSync(directory, { recursive: true, force: true });
  });

  describe('submit', () => {
    it('delivers every record once, in submit order, in bounded batches', async () => {
      const broker = new FakeBroker();
      const p = start(broker, { maxBatchRecords: 50 });
      for (let i = 0; i < 1000; i++) p.submit(record(i));
      expect(await p.flush(10_000)).toBe(true);
      expect(broker.delivered.map(seqOf)).toEqual(range(1000));
      expect(Math.max(...broker.batchSizes)).toBeLessThanOrEqual(50);
      expect(metrics.totals().framesOut).toBe(1000);
      expect(metrics.totals().framesSpooled).toBe(0);
    });

    it('never blocks: a stalled broker makes the queue overflow into the spool, then order is kept', async () => {
      const broker = new FakeBroker();
      broker.stall = true;
      const p = start(broker, { maxQueueBytes: 64 * 1024 });
      for (let i = 0; i < 2000; i++) p.submit(record(i)); // ~600 KB: far over the 64 KiB queue
      expect(p.queuedBytes).toBeLessThanOrEqual(64 * 1024);
      expect(metrics.totals().framesSpooled).toBeGreaterThan(1500);
      broker.release();
      expect(await p.flush(10_000)).toBe(true);
      expect(broker.delivered.map(seqOf)).toEqual(range(2000));
      expect(spool.recordCount).toBe(0);
    });
  });

  describe('broker outage', () => {
    it('spools during the outage and replays in order when the broker returns, losing nothing', async () => {
      const broker = new FakeBroker();
      const p = start(broker);
      for (let i = 0; i < 100; i++) p.submit(record(i));
      await p.flush(10_000);
      broker.down = true;
      for (let i = 100; i < 600; i++) {
        p.submit(record(i));
        if (i % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 3));
      }
      await until(() => p.state === 'broker-unavailable');
      expect(spool.recordCount).toBeGreaterThan(0);
      broker.down = false;
      expect(await p.flush(10_000)).toBe(true);
      expect(broker.delivered.map(seqOf)).toEqual(range(600));
      expect(metrics.totals().framesDropped).toBe(0);
    });

    it('counts drops when the spool is full (drop-newest keeps the oldest records)', async () => {
      spool.close();
      spool = openSpool(64 * 1024, 'drop-newest');
      const broker = new FakeBroker();
      broker.down = true;
      const p = start(broker, { maxQueueBytes: 64 * 1024 });
      for (let i = 0; i < 1000; i++) p.submit(record(i));
      await until(() => p.state === 'broker-unavailable');
      broker.down = false;
      expect(await p.flush(10_000)).toBe(true);
      const delivered = broker.delivered.map(seqOf);
      const dropped = metrics.totals().framesDropped;
      expect(dropped).toBeGreaterThan(0);
      expect(delivered.length + dropped).toBe(1000);
      // Nothing delivered twice, and every stream's records arrive in increasing order.
      expect(new Set(delivered).size).toBe(delivered.length);
      for (let stream = 0; stream < 4; stream++) {
        const ofStream = delivered.filter((s) => s % 4 === stream);
        expect(ofStream).toEqual([...ofStream].sort((a, b) => a - b));
      }
    });
  });

  describe('close', () => {
    it('keeps undelivered records in the spool; the next run delivers them before new ones', async () => {
      const broker = new FakeBroker();
      broker.down = true;
      const p = start(broker);
      for (let i = 0; i < 300; i++) p.submit(record(i));
      const result = await p.close(100);
      pipeline = undefined;
      expect(result.flushed).toBe(false);
      expect(broker.delivered).toHaveLength(0);

      spool = openSpool();
      expect(spool.recordCount).toBe(300);
      broker.down = false;
      const next = start(broker);
      for (let i = 300; i < 350; i++) next.submit(record(i));
      expect(await next.flush(10_000)).toBe(true);
      expect(broker.delivered.map(seqOf)).toEqual(range(350));
    });

    it('reports flushed when everything was acknowledged in time', async () => {
      const broker = new FakeBroker();
      const p = start(broker);
      for (let i = 0; i < 10; i++) p.submit(record(i));
      expect(await p.close(5_000)).toEqual({ flushed: true });
      pipeline = undefined;
      expect(broker.delivered).toHaveLength(10);
    });
  });
});
