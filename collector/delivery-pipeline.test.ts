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
  /** Records with a value longer than this make the whole batch fail as Kafka does (MESSAGE_TOO_LARGE). */
  rejectValuesOver = Number.POSITIVE_INFINITY;
  #stalled: (() => void)[] = [];
  stall = false;

  readonly produce = async (records: readonly ProduceRecord[]): Promise<void> => {
    if (this.stall) await new Promise<void>((resolve) => this.#stalled.push(resolve));
    if (this.down) throw new Error('broker unreachable');
    if (records.some((r) => r.value.byteLength > this.rejectValuesOver)) {
      // The shape kafkajs gives: a non-retriable wrapper whose cause is the protocol error.
      const protocol = Object.assign(new Error('The request included a message larger than the max message size the server will accept'), { type: 'MESSAGE_TOO_LARGE', retriable: false });
      throw Object.assign(new Error(protocol.message), { name: 'KafkaJSNonRetriableError', cause: protocol });
    }
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
  const openSpool = (maxBytes = 64 << 20, policy: SpoolPolicy = 'drop-oldest', memoryMaxBytes = 1 << 20): DiskSpool =>
    openDiskSpool({
      directory,
      maxBytes,
      segmentBytes: Math.min(maxBytes / 4, 64 * 1024),
      policy,
      fsyncIntervalMillis: 1000,
      memoryMaxBytes,
      onDrop: (count, reason) => metrics.dropped(count, reason),
    });
  const start = (broker: FakeBroker, overrides: Partial<{ maxBatchRecords: number; maxMessageBytes: number; stallMillis: number }> = {}): DeliveryPipeline => {
    pipeline = createDeliveryPipeline({
      produce: broker.produce,
      spool,
      metrics,
      maxBatchBytes: 64 * 1024,
      maxBatchRecords: overrides.maxBatchRecords ?? 50,
      lingerMillis: 1,
      retryBackoffMillis: 20,
      produceTimeoutMillis: 5_000,
      stallMillis: overrides.stallMillis ?? 2_000,
      maxMessageBytes: overrides.maxMessageBytes ?? 1 << 20,
      dlqTopic: 'warpwatch.dlq',
      dlqMaxValueBytes: 1000,
    });
    return pipeline;
  };
  /** Every submitted record is delivered, dropped (counted) or still held: exactly. */
  const expectBalanced = (submitted: number): void => {
    const totals = metrics.totals();
    expect(totals.framesOut + totals.dlqOut + totals.framesDropped + spool.recordCount).toBe(submitted);
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

  describe('failures only an operator can end, and a loop that fails', () => {
    it('names an ACL refusal while it lasts (configurationFailure), keeps the records and delivers them once granted', async () => {
      const broker = new FakeBroker();
      let refuse = true;
      const refusal = Object.assign(new Error('Kafka at b refused: User:c lacks ALLOW Write on Topic warpwatch.frames'), { code: 'WW_ERR_KAFKA_AUTHORIZATION' });
      const p = start({ ...broker, produce: async (records) => (refuse ? Promise.reject(refusal) : broker.produce(records)) } as FakeBroker);
      for (let i = 0; i < 30; i++) p.submit(record(i));
      await until(() => p.state === 'broker-unavailable');
      expect(p.configurationFailure).toBe(`WW_ERR_KAFKA_AUTHORIZATION: ${refusal.message}`);
      expectBalanced(30);
      refuse = false;
      expect(await p.flush(10_000)).toBe(true);
      expect(p.configurationFailure).toBeUndefined();
      expect(broker.delivered.map(seqOf)).toEqual(range(30));
    });

    it('names nothing for an outage (the broker will come back by itself)', async () => {
      const broker = new FakeBroker();
      broker.down = true;
      const p = start(broker);
      p.submit(record(0));
      await until(() => p.state === 'broker-unavailable');
      expect(p.configurationFailure).toBeUndefined();
      broker.down = false;
      expect(await p.flush(10_000)).toBe(true);
    });

    it('resolves `failed` when the loop itself throws; the records stay in the spool', async () => {
      const broker = new FakeBroker();
      const p = start(broker);
      const fault = new Error('spool head unreadable');
      const peek = spool.peek.bind(spool);
      let calls = 0;
      spool.peek = (...args: Parameters<DiskSpool['peek']>) => {
        calls += 1;
        if (calls > 1) throw fault;
        return peek(...args);
      };
      p.submit(record(0));
      expect(await p.flush(10_000)).toBe(true);
      p.submit(record(1));
      await expect(p.failed).resolves.toBe(fault);
      expect(p.state).toBe('closed');
      expect(broker.delivered.map(seqOf)).toEqual([0]);
      expectBalanced(2);
      expect(spool.recordCount).toBe(1);
    });
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
      expect(metrics.totals().framesSpooled).toBe(1000); // write-ahead: every record is on disk before it is sent
    });

    it('never blocks: with a stalled broker every record goes to disk, memory stays bounded, then order is kept', async () => {
      spool.close();
      spool = openSpool(64 << 20, 'drop-oldest', 64 * 1024);
      const broker = new FakeBroker();
      broker.stall = true;
      const p = start(broker);
      for (let i = 0; i < 2000; i++) p.submit(record(i)); // ~600 KB: far over the 64 KiB memory bound
      spool.flushWrites();
      expect(p.queuedBytes).toBeLessThanOrEqual(64 * 1024);
      expect(metrics.totals().framesSpooled).toBe(2000);
      expect(spool.sizeBytes).toBeGreaterThan(2000 * 200);
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
      expectBalanced(600);
    });

    it('counts drops when the spool is full (drop-newest keeps the oldest records)', async () => {
      spool.close();
      spool = openSpool(64 * 1024, 'drop-newest');
      const broker = new FakeBroker();
      broker.down = true;
      const p = start(broker);
      for (let i = 0; i < 1000; i++) p.submit(record(i));
      await until(() => p.state === 'broker-unavailable');
      broker.down = false;
      expect(await p.flush(10_000)).toBe(true);
      const delivered = broker.delivered.map(seqOf);
      const dropped = metrics.totals().framesDropped;
      expect(dropped).toBeGreaterThan(0);
      expect(delivered.length + dropped).toBe(1000);
      expect(metrics.totals().droppedByReason).toEqual({ 'spool-full': dropped });
      expectBalanced(1000);
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

  describe('records Kafka cannot take', () => {
    it('moves a record over the size limit to the DLQ (value capped, reason in headers) and delivers the rest behind it', async () => {
      const broker = new FakeBroker();
      const p = start(broker, { maxMessageBytes: 4096 });
      const big: ProduceRecord = { ...record(1), value: new Uint8Array(10_000).fill(7) };
      p.submit(record(0));
      p.submit(big);
      for (let i = 2; i < 10; i++) p.submit(record(i));
      expect(await p.flush(5_000)).toBe(true);
      expect(broker.delivered.map((r) => r.topic)).toEqual(['warpwatch.frames', 'warpwatch.dlq', ...Array(8).fill('warpwatch.frames')]);
      const dlq = broker.delivered[1] as ProduceRecord;
      expect(dlq.value.byteLength).toBe(1000);
      expect(dlq.headers['ww-error-code']).toBe('WW_ERR_COLLECTOR_RECORD_TOO_LARGE');
      expect(dlq.headers['ww-original-bytes']).toBe('10000');
      expect(dlq.headers['ww-original-key']).toBe(big.key);
      expect(metrics.totals()).toMatchObject({ framesOut: 9, dlqOut: 1, reroutedByReason: { 'too-large': 1 } });
      expectBalanced(10);
    });

    it('isolates a record the broker rejects for good, sends it to the DLQ, and never stalls behind it', async () => {
      const broker = new FakeBroker();
      broker.rejectValuesOver = 5_000;
      const p = start(broker);
      for (let i = 0; i < 30; i++) p.submit(i === 13 ? { ...record(i), value: new Uint8Array(6_000) } : record(i));
      expect(await p.flush(5_000)).toBe(true);
      const frames = broker.delivered.filter((r) => r.topic === 'warpwatch.frames').map(seqOf);
      expect(frames).toEqual(range(30).filter((i) => i !== 13));
      const dlq = broker.delivered.filter((r) => r.topic === 'warpwatch.dlq');
      expect(dlq).toHaveLength(1);
      expect(dlq[0]?.headers['ww-error-code']).toBe('WW_ERR_KAFKA_RECORD_REJECTED');
      expect(dlq[0]?.headers['ww-error-message']).toContain('MESSAGE_TOO_LARGE');
      expect(p.state).toBe('idle');
      expectBalanced(30);
    });
  });

  describe('health state', () => {
    it('reports a stalled send (a frozen broker) after the stall limit, and idle again after it answers', async () => {
      const broker = new FakeBroker();
      broker.stall = true;
      const p = start(broker, { stallMillis: 50 });
      p.submit(record(0));
      await until(() => p.state === 'broker-stalled', 2_000);
      broker.release();
      expect(await p.flush(2_000)).toBe(true);
      expect(p.state).toBe('idle');
    });
  });
});
