import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import { decodeFrame } from '../protocol/index.ts';
import { CollectorMetrics } from './collector-metrics.ts';
import { createFrameIntake, type FrameIntake } from './frame-intake.ts';
import { fixtureFrameBytes } from './testing/frame-fixtures.ts';
import type { ProduceRecord } from './produce-record.ts';
import { threadRecordsOf } from './stream-validator.ts';

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

describe.each([
  { mode: 'on the event loop', useWorker: false },
  { mode: 'in the validation worker', useWorker: true },
])('createFrameIntake ($mode)', ({ useWorker }) => {
  let intake: FrameIntake | undefined;
  let clock = 1234;
  const lines: string[] = [];
  const setup = (labels: Record<string, string> = {}) => {
    clock = 1234;
    lines.length = 0;
    const submitted: ProduceRecord[] = [];
    const metrics = new CollectorMetrics(otelMetrics.getMeter('test'), { spoolBytes: () => 0, queueBytes: () => 0 });
    intake = createFrameIntake({
      pipeline: { submit: (r) => submitted.push(r) },
      metrics,
      framesTopic: 'warpwatch.frames',
      dlqTopic: 'warpwatch.dlq',
      hostName: 'gpu-host-7',
      labels,
      useWorker,
      wallClockMillis: () => clock,
      log: (level, line) => lines.push(`${level} ${line}`),
    });
    return { submitted, metrics, intake };
  };
  afterEach(async () => {
    await intake?.close();
    intake = undefined;
  });

  describe('openStream', () => {
    it('forwards the exact frame bytes with stream key and enrichment headers, whatever the chunking', async () => {
      const { submitted, intake, metrics } = setup({ cluster: 'east', team: 'ml' });
      const frames = Array.from({ length: 6 }, (_, i) => fixtureFrameBytes({ job: 'train', kernel: `k${i % 2}`, sequence: i }));
      const stream = intake.openStream('socket', 16);
      const all = concat(frames);
      for (let at = 0; at < all.length; at += 333) stream.push(all.subarray(at, Math.min(all.length, at + 333)));
      await stream.end();
      expect(submitted).toHaveLength(6);
      submitted.forEach((r, i) => {
        expect(r.topic).toBe('warpwatch.frames');
        // The full stream key (contracts/stream-identity.ts): job/kernel, n, source, device UUID, this collector's host.
        const frame = decodeFrame(r.value);
        expect(r.key).toBe(`train/k${i % 2}|n=${frame.groupSize}|${frame.source}|${frame.device.uuid}|gpu-host-7`);
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
      expect(intake.backlogBytes).toBe(0);
    });

    it('keeps each stream in order when many streams interleave', async () => {
      const { submitted, intake } = setup();
      const streams = Array.from({ length: 5 }, () => intake.openStream('socket', 16));
      for (let s = 0; s < 40; s++) streams.forEach((stream, w) => stream.push(fixtureFrameBytes({ job: `w${w}`, kernel: 'k', sequence: s })));
      await Promise.all(streams.map((stream) => stream.end()));
      for (let w = 0; w < 5; w++) {
        expect(submitted.filter((r) => r.key?.split('|')[0] === `w${w}/k`).map((r) => decodeFrame(r.value).frameSequence)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      }
    });

    it('sends garbage and corrupted frames to the DLQ with their error code and keeps the valid ones', async () => {
      const { submitted, intake, metrics } = setup();
      const good0 = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      const corrupt = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 1 });
      corrupt[corrupt.length - 1] = (corrupt[corrupt.length - 1] as number) ^ 0xff; // payload byte → CRC mismatch
      const good2 = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 2 });
      const good3 = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 3 });
      const stream = intake.openStream('stdin', Number.POSITIVE_INFINITY);
      stream.push(concat([good0, new TextEncoder().encode('hello, not a frame'), good2, corrupt, good3]));
      stream.push(good0.subarray(0, 20));
      await stream.end();
      const frames = submitted.filter((r) => r.topic === 'warpwatch.frames');
      const dlq = submitted.filter((r) => r.topic === 'warpwatch.dlq');
      expect(frames.map((r) => decodeFrame(r.value).frameSequence)).toEqual([0, 2, 3]);
      expect(dlq.map((r) => r.headers['ww-error-code'])).toEqual(['WW_ERR_FRAME_BAD_MAGIC', 'WW_ERR_FRAME_CRC_MISMATCH', 'WW_ERR_FRAME_TRUNCATED']);
      expect(dlq.map((r) => r.headers['ww-discarded-bytes'])).toEqual(['18', String(corrupt.length), '20']);
      expect(new TextDecoder().decode(dlq[0]?.value)).toBe('hello, not a frame');
      expect(Buffer.from(dlq[1]?.value ?? []).equals(Buffer.from(corrupt))).toBe(true);
      expect(dlq.every((r) => r.headers['ww-source'] === 'stdin' && r.headers['ww-host'] === 'gpu-host-7' && r.key === null)).toBe(true);
      expect(metrics.totals()).toMatchObject({ framesIn: 3, framesRejected: 3 });
    });

    it('says rejected input in one line per source and code a minute, with how many more were left out', async () => {
      const { intake, submitted } = setup();
      const garbage = new TextEncoder().encode('not a frame at all');
      const good = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      const stream = intake.openStream('socket', Number.POSITIVE_INFINITY);
      for (let i = 0; i < 3; i++) stream.push(concat([garbage, fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: i })]));
      await intake.drain(5_000);
      expect(lines).toEqual(['warn WW_ERR_FRAME_BAD_MAGIC: rejected 18 invalid byte(s) from the socket input: ' + (submitted.find((r) => r.topic === 'warpwatch.dlq')?.headers['ww-error-message'] ?? '') + '; sent to the DLQ warpwatch.dlq (header ww-error-code)']);
      clock += 60_000;
      stream.push(concat([garbage, good]));
      await stream.end();
      expect(lines).toHaveLength(2);
      expect(lines[1]).toMatch(/^warn WW_ERR_FRAME_BAD_MAGIC: .*\(2 more like it in the last minute\)$/);
      expect(submitted.filter((r) => r.topic === 'warpwatch.dlq')).toHaveLength(4);
    });

    it('sends a frame whose identity breaks the rules (a newline in the kernel, a trailing backslash) to the DLQ as WW_ERR_FRAME_INVALID', async () => {
      // contracts/stream-identity.ts: a newline would split the stream's InfluxDB line and start a
      // new point; a trailing backslash cannot be stored as a tag. The vectors are the TS golden
      // LaunchSummary with the kernel edited (protocol/sample-frames.ts).
      const vector = (name: string): Uint8Array => new Uint8Array(readFileSync(fileURLToPath(new URL(`../protocol/vectors/${name}`, import.meta.url))));
      const newline = vector('invalid-WW_ERR_FRAME_INVALID-kernel-newline.bin');
      const backslash = vector('invalid-WW_ERR_FRAME_INVALID-kernel-trailing-backslash.bin');
      const { submitted, intake, metrics } = setup();
      const stream = intake.openStream('socket', 16);
      stream.push(concat([fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 }), newline, backslash, fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 1 })]));
      await stream.end();
      const frames = submitted.filter((r) => r.topic === 'warpwatch.frames');
      const dlq = submitted.filter((r) => r.topic === 'warpwatch.dlq');
      expect(frames.map((r) => decodeFrame(r.value).frameSequence)).toEqual([0, 1]);
      expect(dlq.map((r) => [r.headers['ww-error-code'], r.headers['ww-discarded-bytes']])).toEqual([
        ['WW_ERR_FRAME_INVALID', String(newline.length)],
        ['WW_ERR_FRAME_INVALID', String(backslash.length)],
      ]);
      expect(Buffer.from(dlq[0]?.value ?? []).equals(Buffer.from(newline))).toBe(true);
      expect(dlq[0]?.headers['ww-error-message']).toContain('kernel must not contain control characters (U+000A at byte 2)');
      expect(dlq[1]?.headers['ww-error-message']).toContain("kernel must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at byte 14");
      expect(metrics.totals()).toMatchObject({ framesIn: 2, framesRejected: 2 });
    });

    it('sends garbage and damaged frames that touch each other to the DLQ as one record', async () => {
      const { submitted, intake } = setup();
      const corrupt = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 1 });
      corrupt[corrupt.length - 1] = (corrupt[corrupt.length - 1] as number) ^ 0xff;
      const junk = new TextEncoder().encode('hello, not a frame');
      const stream = intake.openStream('stdin', Number.POSITIVE_INFINITY);
      stream.push(concat([fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 }), junk, corrupt, fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 2 })]));
      await stream.end();
      const dlq = submitted.filter((r) => r.topic === 'warpwatch.dlq');
      expect(dlq).toHaveLength(1);
      expect(dlq[0]?.headers['ww-error-code']).toBe('WW_ERR_FRAME_BAD_MAGIC');
      expect(dlq[0]?.headers['ww-discarded-bytes']).toBe(String(junk.length + corrupt.length));
      expect(Buffer.from(dlq[0]?.value ?? []).equals(Buffer.from(concat([junk, corrupt])))).toBe(true);
      expect(submitted.filter((r) => r.topic === 'warpwatch.frames').map((r) => decodeFrame(r.value).frameSequence)).toEqual([0, 2]);
    });

    it('sends 4 MiB of repeated WWFR garbage as ONE capped DLQ record, keeps the socket open and submits every valid frame', async () => {
      const { submitted, intake, metrics } = setup();
      const garbageLength = 4 * 1024 * 1024;
      const garbage = new Uint8Array(garbageLength);
      for (let i = 0; i < garbageLength; i++) garbage[i] = [0x57, 0x57, 0x46, 0x52][i % 4] as number; // 'WWFR' repeated
      const frames = Array.from({ length: 5 }, (_, i) => fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: i }));
      let closed = 0;
      const stream = intake.openStream('socket', 16, () => closed++);
      const all = concat([frames[0] as Uint8Array, frames[1] as Uint8Array, garbage, frames[2] as Uint8Array, frames[3] as Uint8Array, frames[4] as Uint8Array]);
      for (let at = 0; at < all.length; at += 65536) stream.push(all.subarray(at, Math.min(all.length, at + 65536)));
      await stream.end();
      const dlq = submitted.filter((r) => r.topic === 'warpwatch.dlq');
      expect(dlq).toHaveLength(1);
      expect(dlq[0]?.headers['ww-error-code']).toBe('WW_ERR_FRAME_UNKNOWN_VERSION');
      expect(dlq[0]?.headers['ww-discarded-bytes']).toBe('4194304');
      expect(dlq[0]?.value.length).toBeLessThanOrEqual(64 * 1024);
      expect(Buffer.from(dlq[0]?.value ?? []).equals(Buffer.from(garbage.subarray(0, dlq[0]?.value.length)))).toBe(true);
      const out = submitted.filter((r) => r.topic === 'warpwatch.frames');
      expect(out).toHaveLength(5);
      out.forEach((r, i) => expect(Buffer.from(r.value).equals(Buffer.from(frames[i] as Uint8Array))).toBe(true));
      // DLQ record between frames 1 and 2, in stream order.
      expect(submitted.map((r) => (r.topic === 'warpwatch.dlq' ? 'r' : 'f')).join('')).toBe('ffrfff');
      expect(closed).toBe(0);
      expect(stream.errorCount).toBe(1);
      expect(metrics.totals()).toMatchObject({ framesIn: 5, framesRejected: 1 });
    }, 60_000);

    it('stops a stream once its error budget is spent and calls back once', async () => {
      const { intake, submitted } = setup();
      let closed = 0;
      const stream = intake.openStream('socket', 3, () => closed++);
      const garbage = (i: number): Uint8Array => new TextEncoder().encode(`junk-${i}-`);
      const good = fixtureFrameBytes({ job: 'j', kernel: 'k', sequence: 0 });
      stream.push(concat([garbage(1), good, garbage(2), good, garbage(3), good, garbage(4), good]));
      await stream.end();
      expect(closed).toBe(1);
      expect(stream.errorCount).toBe(3);
      expect(submitted.filter((r) => r.topic === 'warpwatch.dlq')).toHaveLength(3);
    });
  });
});
