import { metrics as otelMetrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { decodeFrame } from '../protocol/index.ts';
import { CollectorMetrics } from './collector-metrics.ts';
import { createFrameIntake, threadRecordsOf } from './frame-intake.ts';
import { fixtureFrameBytes } from './frame-fixtures.ts';
import type { ProduceRecord } from './produce-record.ts';

function setup(labels: Record<string, string> = {}) {
  const submitted: ProduceRecord[] = [];
  const metrics = new CollectorMetrics(otelMetrics.getMeter('test'), { spoolBytes: () => 0, queueBytes: () => 0 });
  const intake = createFrameIntake({
    pipeline: { submit: (r) => submitted.push(r) },
    metrics,
    framesTopic: 'warpwatch.frames',
    dlqTopic: 'warpwatch.dlq',
    hostName: 'gpu-host-7',
    labels,
    wallClockMillis: () => 1234,
  });
  return { submitted, metrics, intake };
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe('createFrameIntake', () => {
  describe('openStream', () => {
    it('forwards the exact frame bytes with stream key and enrichment headers, whatever the chunking', () => {
      const { submitted, intake, metrics } = setup({ cluster: 'east', team: 'ml' });
      const frames = Array.from({ length: 6 }, (_, i) => fixtureFrameBytes({ job: 'train', kernel: `k${i % 2}`, sequence: i }));
      const stream = intake.openStream('socket', 16);
      const all = concat(frames);
      for (let at = 0; at < all.length; at += 333) stream.push(all.subarray(at, Math.min(all.length, at + 333)));
      stream.end();
      expect(submitted).toHaveLength(6);
      submitted.forEach((r, i) => {
        expect(r.topic).toBe('warpwatch.frames');
        expect(r.key).toBe(`train/k${i % 2}`);
        expect(Buffer.from(r.value).equals(Buffer.from(frames[i] as Uint8Array))).toBe(true);
        expect(r.headers['ww-source']).toBe('socket');
        expect(r.headers['ww-host']).toBe('gpu-host-7');
        expect(r.headers['ww-label-cluster']).toBe('east');
        expect(r.headers['ww-label-team']).toBe('ml');
        expect(r.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        expect(r.timestampMillis).toBe(1234);
      });
      expect(new Set(submitted.map((r) => r.headers.traceparent)).size).toBe(6);
      const expectedThreadRecords = frames.reduce((n, f) => n + threadRecordsOf(decodeFrame(f)), 0);
      expect(metrics.totals()).toMatchObject({ framesIn: 6, framesRejected: 0, threadRecordsIn: expectedThreadRecords });
    });

    it('sends garbage and corrupted frames to the DLQ with their error code and keeps the valid ones', () => {
      const { submitted, intake, metrics } = setup();
      const good1 = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      const corrupt = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 1 });
      corrupt[corrupt.length - 1] = (corrupt[corrupt.length - 1] as number) ^ 0xff; // payload byte → CRC mismatch
      const good2 = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 2 });
      const stream = intake.openStream('stdin', Number.POSITIVE_INFINITY);
      stream.push(concat([good1, new TextEncoder().encode('hello, not a frame'), corrupt, good2]));
      stream.push(good1.subarray(0, 20));
      stream.end();
      const summary = submitted.map((r) => (r.topic === 'warpwatch.dlq' ? r.headers['ww-error-code'] : `frame:${r.key}`));
      expect(summary).toEqual(['frame:j/k', 'WW_ERR_FRAME_BAD_MAGIC', 'WW_ERR_FRAME_CRC_MISMATCH', 'frame:j/k', 'WW_ERR_FRAME_TRUNCATED']);
      const dlq = submitted.filter((r) => r.topic === 'warpwatch.dlq');
      expect(new TextDecoder().decode(dlq[0]?.value)).toBe('hello, not a frame');
      expect(Buffer.from(dlq[1]?.value ?? []).equals(Buffer.from(corrupt))).toBe(true);
      expect(dlq.every((r) => r.headers['ww-source'] === 'stdin' && r.headers['ww-host'] === 'gpu-host-7' && r.key === null)).toBe(true);
      expect(metrics.totals()).toMatchObject({ framesIn: 2, framesRejected: 3 });
    });

    it('asks to close a stream once its error budget is spent', () => {
      const { intake } = setup();
      const stream = intake.openStream('socket', 3);
      const garbage = (i: number): Uint8Array => new TextEncoder().encode(`junk-${i}-`);
      const good = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      // Each garbage run is only rejected once the next magic shows where it ends.
      expect(stream.push(concat([garbage(1), good, garbage(2), good])).close).toBe(false);
      expect(stream.push(concat([garbage(3), good])).close).toBe(true);
      expect(stream.errorCount).toBe(3);
    });
  });
});
