// The InfluxDB adapter when InfluxDB cannot be reached (a port nothing listens on): writes
// return at once, the queue stays bounded, every point ends up either written or counted as
// dropped, and the outage is logged once. The success path runs against the real InfluxDB in
// test/integration/collector-metrics.int.test.ts.
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createInfluxMetricsWriter } from './influx-metrics-writer.ts';
import type { MetricsPoint } from './pipeline-reporter.ts';
import { Secret } from './secret.ts';

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

async function until(condition: () => boolean, timeoutMillis = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const point = (index: number): MetricsPoint => ({
  measurement: 'warpwatch_pipeline',
  tags: { service: 'collector', instance: 'unit-test' },
  fields: { frames_in: index, frames_out: Number.NaN },
  timestampMillis: 1_700_000_000_000 + index,
});

describe('createInfluxMetricsWriter with InfluxDB unreachable', () => {
  it('never throws, stays bounded, counts every lost point and logs the outage once', async () => {
    const logs: { level: string; message: string }[] = [];
    const writer = createInfluxMetricsWriter(
      { url: await closedPortUrl(), database: 'warpwatch', retentionPolicy: 'autogen', org: '-', token: new Secret('s3cret-token'), maxBufferPoints: 3, requestTimeoutMillis: 2_000 },
      (level, message) => logs.push({ level, message }),
    );
    // The first write starts a request with point 0; while it is in flight, 4 more arrive.
    for (let index = 0; index < 5; index += 1) expect(() => writer.write(point(index))).not.toThrow();
    // Bound 3, and the in-flight point is never dropped: points 1 and 2 go.
    expect(writer.stats()).toMatchObject({ buffered: 3, pointsDropped: 2, pointsWritten: 0 });
    await until(() => writer.stats().writeErrors === 1);
    expect(writer.stats().buffered).toBe(3); // a failed request keeps its points

    // The next write retries (once per write: once per interval in the collector).
    writer.write(point(5));
    expect(writer.stats()).toMatchObject({ buffered: 3, pointsDropped: 3 });
    await until(() => writer.stats().writeErrors === 2);

    const final = await writer.close(5_000);
    expect(final.buffered).toBe(0);
    expect(final.pointsWritten).toBe(0);
    expect(final.pointsWritten + final.pointsDropped).toBe(6);
    expect(final.writeErrors).toBeGreaterThanOrEqual(3);
    // Writes after close are counted, not queued.
    writer.write(point(6));
    expect(writer.stats()).toMatchObject({ buffered: 0, pointsDropped: 7 });

    const failures = logs.filter((l) => l.message.includes('WW_ERR_COLLECTOR_INFLUX_WRITE'));
    expect(failures).toHaveLength(1);
    expect(failures[0]?.level).toBe('warn');
    expect(failures[0]?.message).toContain('warpwatch/autogen');
    expect(logs.filter((l) => l.message.includes('dropping the oldest'))).toHaveLength(1);
    expect(logs.map((l) => l.message).join('\n')).not.toContain('s3cret-token');
  });
});
