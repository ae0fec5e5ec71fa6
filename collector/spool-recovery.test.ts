import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame } from '../protocol/index.ts';
import { startCollector, type RunningCollector } from './collector.ts';
import { loadCollectorConfig } from './config.ts';
import { fixtureGroupSamples } from './testing/frame-fixtures.ts';
import type { ProduceRecord } from './produce-record.ts';

interface Accounting {
  read: number;
  delivered: number;
  dropped: number;
  held: number;
  balanced: boolean;
}

/**
 * The collector over a real spool directory on disk, across a restart, with the damage made
 * between the two runs (the broker is an in-memory double: down in the first run, up in the second).
 */
describe('collector spool recovery', () => {
  let directory: string;
  let collector: RunningCollector | undefined;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'ww-recovery-'));
  });
  afterEach(async () => {
    await collector?.stop();
    collector = undefined;
    rmSync(directory, { recursive: true, force: true });
  });

  const spoolDir = (): string => join(directory, 'spool');
  const config = (env: Record<string, string> = {}) =>
    loadCollectorConfig({
      env: { WARPWATCH_BATCH_LINGER_MILLIS: '1', WARPWATCH_SPOOL_SEGMENT_BYTES: '65536', WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '200', WARPWATCH_RETRY_BACKOFF_MILLIS: '50', ...env },
      flags: { spoolDir: spoolDir(), host: 'test-host', stdin: true },
    });

  /** Run 1: `count` frames read from stdin while the broker is down; stopped with everything held in the spool. */
  async function spoolWhileBrokerDown(count: number): Promise<void> {
    // GroupSamples frames only: every record has the same size, so the test can place damage by arithmetic.
    const frames = Array.from({ length: count }, (_, s) => encodeFrame(fixtureGroupSamples({ job: 'spooled', kernel: 'k', sequence: s })));
    const run = await startCollector({
      config: config(),
      produce: () => Promise.reject(new Error('broker down')),
      meter: otelMetrics.getMeter('t'),
      log: () => {},
      stdin: Readable.from([Buffer.concat(frames)]),
    });
    await run.inputsDone;
    expect(run.spool.recordCount).toBe(count);
    await run.stop();
    expect((run.health() as unknown as { accounting: Accounting }).accounting).toEqual({ read: count, delivered: 0, dropped: 0, held: count, balanced: true });
  }

  /** Run 2: a working broker; returns the frame sequences delivered, the accounting and the log. */
  async function restart(): Promise<{ sequences: number[]; accounting: Accounting; dropped: Record<string, number>; log: string[] }> {
    const delivered: ProduceRecord[] = [];
    const log: string[] = [];
    collector = await startCollector({
      config: config(),
      produce: async (records) => {
        delivered.push(...records);
      },
      meter: otelMetrics.getMeter('t'),
      log: (level, message) => log.push(`${level} ${message}`),
      stdin: Readable.from([]),
    });
    await collector.inputsDone;
    expect(await collector.flush(20_000)).toBe(true);
    const health = collector.health() as unknown as { accounting: Accounting; droppedByReason?: Record<string, number> };
    return { sequences: delivered.map((r) => decodeFrame(r.value).frameSequence), accounting: health.accounting, dropped: collector.metrics.totals().droppedByReason, log };
  }

  it('counts exactly the records lost to a truncated middle segment, bytes corrupted mid-record and a deleted segment; read = delivered + dropped across the restart', async () => {
    const total = 2000;
    await spoolWhileBrokerDown(total);
    const files = readdirSync(spoolDir())
      .filter((n) => n.endsWith('.seg'))
      .sort()
      .map((n) => join(spoolDir(), n));
    // Every record has the same size here: derive it and the records per segment from the files alone.
    const bytes = files.reduce((sum, f) => sum + statSync(f).size, 0);
    expect(bytes % total).toBe(0);
    const recordBytes = bytes / total;
    const perSegment = statSync(files[0] as string).size / recordBytes;
    expect(Number.isInteger(perSegment) && files.length > 16).toBe(true);
    expect(files.slice(0, -1).every((f) => statSync(f).size === perSegment * recordBytes)).toBe(true);
    const lost = new Set<number>();
    // Segment 4 truncated at byte 26,000 (the finding: 44 records lost, reported as 1).
    truncateSync(files[3] as string, 26_000);
    for (let r = Math.floor(26_000 / recordBytes); r < perSegment; r++) lost.add(3 * perSegment + r);
    // Segment 9: 16 bytes overwritten at byte 30,000 (inside one record, or two if it straddles).
    const ninth = readFileSync(files[8] as string);
    ninth.fill(0x77, 30_000, 30_016);
    writeFileSync(files[8] as string, ninth);
    for (let r = Math.floor(30_000 / recordBytes); r <= Math.floor(30_015 / recordBytes); r++) lost.add(8 * perSegment + r);
    // Segment 16 deleted.
    rmSync(files[15] as string);
    for (let r = 0; r < perSegment; r++) lost.add(15 * perSegment + r);
    expect(lost.size).toBeGreaterThan(perSegment + 2);

    const { sequences, accounting, dropped, log } = await restart();
    expect(sequences).toEqual(Array.from({ length: total }, (_, s) => s).filter((s) => !lost.has(s)));
    expect(dropped).toEqual({ 'spool-corrupt': lost.size });
    expect(accounting).toEqual({ read: total, delivered: total - lost.size, dropped: lost.size, held: 0, balanced: true });
    expect(log.find((line) => line.includes('from a previous run'))).toContain(`spool holds ${total - lost.size} record(s) from a previous run and ${lost.size} record(s) were lost to damage`);
    expect(log.filter((line) => line.startsWith('warn WW_ERR_SPOOL_CORRUPT'))).toHaveLength(3);
    if (process.env.WW_SHOW_LOG === '1') console.log(log.join('\n'));
  });

  it('starts over a LOCK naming a live unrelated process (PID 1) and delivers every spooled frame', async () => {
    await spoolWhileBrokerDown(300);
    writeFileSync(join(spoolDir(), 'LOCK'), '1');
    const { sequences, accounting } = await restart();
    expect(sequences).toEqual(Array.from({ length: 300 }, (_, s) => s));
    expect(accounting).toEqual({ read: 300, delivered: 300, dropped: 0, held: 0, balanced: true });
  });
});
