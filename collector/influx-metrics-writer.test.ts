// The collector's adapter over the shared writer (service/influx-writer.ts, whose logic
// service/influx-writer.test.ts covers): with InfluxDB failing, writes return at once, the
// buffer stays bounded, every point ends up written or counted as dropped, the outage and the
// overflow are logged once each and the recovery once, and the token never reaches a log line.
// The success path runs against the real InfluxDB in test/integration/collector-metrics.int.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeInflux, type FakeInflux } from '../service/testing/fake-influx.ts';
import { createInfluxMetricsWriter } from './influx-metrics-writer.ts';
import type { MetricsPoint } from './pipeline-reporter.ts';
import { Secret } from '../service/index.ts';

const point = (index: number): MetricsPoint => ({
  measurement: 'warpwatch_pipeline',
  tags: { service: 'collector', instance: 'unit-test' },
  fields: { frames_in: index, frames_out: Number.NaN },
  timestampMillis: 1_700_000_000_000 + index,
});

/** Resolves once `condition` holds (checked every 5 ms; the writer's counters change after the fake's events). */
async function until(condition: () => boolean, timeoutMillis = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let fake: FakeInflux | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('createInfluxMetricsWriter', () => {
  it('never throws, stays bounded, logs the outage, the overflow and the recovery once each, and keeps the token out of logs', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    let healthy = false;
    fake.answerFor = () => (healthy ? 204 : 503);
    const logs: { level: string; message: string }[] = [];
    const writer = createInfluxMetricsWriter(
      { url: fake.url, database: 'warpwatch', retentionPolicy: 'autogen', org: '-', token: new Secret('s3cret-token'), maxBufferPoints: 3, requestTimeoutMillis: 2_000 },
      (level, message) => logs.push({ level, message }),
    );
    for (let index = 0; index < 5; index += 1) expect(() => writer.write([point(index)])).not.toThrow();
    // Bound 3: points 0 and 1 go before the first request starts.
    expect(writer.stats()).toMatchObject({ pointsIn: 5, buffered: 3, pointsDropped: 2, pointsWritten: 0 });
    await until(() => writer.stats().writeErrors === 1);
    expect(writer.stats()).toMatchObject({ buffered: 3, failingWrites: 1 }); // a failed request keeps its points
    writer.write([point(5)]);
    expect(writer.stats()).toMatchObject({ buffered: 3, pointsDropped: 3 });
    // The retry comes on its own after the backoff (1 s ± 25 %, then 2 s ± 25 %).
    await until(() => writer.stats().writeErrors === 2);
    healthy = true;
    await until(() => writer.stats().pointsWritten === 3);
    const final = await writer.close(5_000);
    expect(final).toMatchObject({ pointsIn: 6, pointsWritten: 3, buffered: 0, failingWrites: 0, dropped: { overflow: 3, rejected: 0, 'no-fields': 0, closed: 0 } });
    // The newest three survived (2 was dropped when 5 came); NaN fields are left out of the lines.
    expect(fake.bodies.flat()).toEqual([3, 4, 5].map((i) => `warpwatch_pipeline,instance=unit-test,service=collector frames_in=${i}.0 170000000000${i}`));

    const failures = logs.filter((l) => l.message.includes('WW_ERR_COLLECTOR_INFLUX_WRITE'));
    expect(failures).toHaveLength(1);
    expect(failures[0]?.level).toBe('warn');
    expect(failures[0]?.message).toContain('warpwatch/autogen');
    expect(failures[0]?.message).toContain('HTTP 503');
    expect(logs.filter((l) => l.message.includes('dropping the oldest'))).toHaveLength(1);
    expect(logs.filter((l) => l.message.includes('works again after 2 failed attempt(s)'))).toHaveLength(1);
    expect(logs.map((l) => l.message).join('\n')).not.toContain('s3cret-token');
  }, 20_000);
});
