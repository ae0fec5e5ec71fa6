import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CollectorTotals } from './collector-metrics.ts';
import type { InfluxPoint, InfluxWriterStats } from '../service/index.ts';
import { collectorPipelinePoint, startPipelineReporter, type MetricsPoint, type MetricsPointWriter } from './pipeline-reporter.ts';

/** Writer stats with `written` points written and `writeErrors` failed requests, nothing dropped or buffered. */
function statsOf(written: number, writeErrors: number): InfluxWriterStats {
  const dropped = { overflow: 0, rejected: 0, unwritable: 0, 'no-fields': 0, closed: 0 };
  return { pointsIn: written, pointsWritten: written, pointsDropped: 0, dropped, buffered: 0, batchesWritten: written, batchesInFlight: 0, writeErrors, failingWrites: 0, rejectedAtMillis: 0, authFailing: false };
}

/** In-memory writer double: keeps every point, counts closes, can report write errors. */
function memoryWriter(): MetricsPointWriter & { points: MetricsPoint[]; closes: number[]; errors: number } {
  const writer = {
    points: [] as MetricsPoint[],
    closes: [] as number[],
    errors: 0,
    write(points: readonly InfluxPoint[]) {
      writer.points.push(...(points as MetricsPoint[]));
    },
    stats(): InfluxWriterStats {
      return statsOf(writer.points.length, writer.errors);
    },
    close(timeoutMillis: number) {
      writer.closes.push(timeoutMillis);
      return Promise.resolve(writer.stats());
    },
  };
  return writer;
}

const zeroTotals: CollectorTotals = {
  framesIn: 0,
  framesOut: 0,
  framesRejected: 0,
  dlqOut: 0,
  framesSpooled: 0,
  framesDropped: 0,
  threadRecordsIn: 0,
  connectionsClosedForErrors: 0,
  recordsRecovered: 0,
  droppedByReason: {},
  reroutedByReason: {},
};

describe('collectorPipelinePoint', () => {
  it('maps the totals to the shared warpwatch_pipeline names with service=collector', () => {
    const point = collectorPipelinePoint(
      'host-a:42',
      { ...zeroTotals, framesIn: 10, framesOut: 7, framesRejected: 2, dlqOut: 2, framesSpooled: 3, framesDropped: 1, threadRecordsIn: 999 },
      4,
      1_700_000_000_123,
    );
    expect(point).toEqual({
      measurement: 'warpwatch_pipeline',
      tags: { service: 'collector', instance: 'host-a:42' },
      timestampMillis: 1_700_000_000_123,
      fields: { frames_in: 10, frames_out: 7, frames_rejected: 2, frames_spooled: 3, frames_dropped: 1, influx_write_errors: 4 },
    });
  });
});

describe('startPipelineReporter', () => {
  const startMillis = 1_700_000_000_000;
  beforeEach(() => {
    vi.useFakeTimers({ now: startMillis });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes one point at start, one per interval with the current cumulative totals, and a last one on stop', async () => {
    const writer = memoryWriter();
    let framesIn = 0;
    const reporter = startPipelineReporter({
      instance: 'node-1:7',
      intervalMillis: 10_000,
      totals: () => ({ ...zeroTotals, framesIn, framesOut: Math.max(0, framesIn - 1) }),
      writer,
    });
    expect(writer.points.map((p) => p.timestampMillis)).toEqual([startMillis]);

    framesIn = 5;
    vi.advanceTimersByTime(9_999);
    expect(writer.points).toHaveLength(1);
    vi.advanceTimersByTime(1);
    framesIn = 12;
    vi.advanceTimersByTime(10_000);
    framesIn = 20;
    vi.advanceTimersByTime(5_000);
    const stats = await reporter.stop(1_500);

    expect(writer.points.map((p) => p.timestampMillis - startMillis)).toEqual([0, 10_000, 20_000, 25_000]);
    expect(writer.points.map((p) => p.fields['frames_in'])).toEqual([0, 5, 12, 20]);
    expect(writer.points.map((p) => p.fields['frames_out'])).toEqual([0, 4, 11, 19]);
    for (const point of writer.points) expect(point.tags).toEqual({ service: 'collector', instance: 'node-1:7' });
    expect(writer.closes).toEqual([1_500]);
    expect(stats.pointsWritten).toBe(4);

    // Stopped: no more points, however long we wait or how often stop is called.
    vi.advanceTimersByTime(60_000);
    reporter.report();
    await reporter.stop(1_500);
    expect(writer.points).toHaveLength(4);
    expect(writer.closes).toHaveLength(1);
  });

  it('reports the writer\'s own failed requests as influx_write_errors', () => {
    const writer = memoryWriter();
    const reporter = startPipelineReporter({ instance: 'i', intervalMillis: 1_000, totals: () => zeroTotals, writer });
    writer.errors = 3;
    vi.advanceTimersByTime(1_000);
    expect(writer.points.map((p) => p.fields['influx_write_errors'])).toEqual([0, 3]);
    void reporter.stop(0);
  });

  it('keeps reporting and logs once when a writer throws, and stop still resolves when close rejects', async () => {
    const logs: string[] = [];
    let calls = 0;
    const writer: MetricsPointWriter = {
      write() {
        calls += 1;
        throw new Error('broken writer');
      },
      stats: () => statsOf(0, 0),
      close: () => Promise.reject(new Error('close failed')),
    };
    const reporter = startPipelineReporter({ instance: 'i', intervalMillis: 1_000, totals: () => zeroTotals, writer, log: (_level, message) => logs.push(message) });
    vi.advanceTimersByTime(3_000);
    await expect(reporter.stop(10)).resolves.toEqual(statsOf(0, 0));
    expect(calls).toBe(5); // start, 3 intervals, stop
    expect(logs).toHaveLength(1);
    expect(logs[0]).toContain('broken writer');
  });
});
