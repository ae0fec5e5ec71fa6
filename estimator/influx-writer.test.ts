import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { EstimatorError } from './errors.ts';
import { createInfluxWriter, type InfluxWriterOptions } from './influx-writer.ts';
import { MEASUREMENTS } from './series.ts';
import type { SeriesPoint } from './series-points.ts';

// A stand-in for InfluxDB's v2 write endpoint on 127.0.0.1: records every request body and
// answers each after `delayMillis` with the status `statusFor` picks. `until` resolves once a
// condition on the fake holds, re-checked on each of its events (a request body received, a
// response sent), so the tests wait for events rather than for fixed times.
interface FakeInflux {
  readonly url: string;
  readonly bodies: string[][];
  /** Requests whose body has arrived (answered or not). */
  received: number;
  maxConcurrent: number;
  delayMillis: number;
  statusFor: (requestIndex: number) => number;
  until(condition: () => boolean): Promise<void>;
  close(): Promise<void>;
}

async function startFakeInflux(): Promise<FakeInflux> {
  let active = 0;
  let requests = 0;
  let watchers: Array<{ condition: () => boolean; resolve: () => void }> = [];
  const notify = (): void => {
    const ready = watchers.filter((watcher) => watcher.condition());
    watchers = watchers.filter((watcher) => !ready.includes(watcher));
    for (const watcher of ready) watcher.resolve();
  };
  const fake = {
    bodies: [] as string[][],
    received: 0,
    maxConcurrent: 0,
    delayMillis: 30,
    statusFor: (_index: number) => 204,
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const index = requests++;
    active += 1;
    fake.maxConcurrent = Math.max(fake.maxConcurrent, active);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const text = request.headers['content-encoding'] === 'gzip' ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
      fake.received += 1;
      notify();
      setTimeout(() => {
        const status = fake.statusFor(index);
        if (status === 204) fake.bodies.push(text.split('\n').filter((line) => line !== ''));
        active -= 1;
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(status === 204 ? undefined : JSON.stringify({ code: 'unavailable', message: 'try later' }));
        notify();
      }, fake.delayMillis);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    until: (condition: () => boolean) => (condition() ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ condition, resolve }))),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

function options(url: string, overrides: Partial<InfluxWriterOptions> = {}): InfluxWriterOptions {
  return {
    url,
    database: 'db',
    retentionPolicy: 'autogen',
    token: '',
    org: '-',
    batchSize: 50,
    flushIntervalMillis: 0,
    maxBufferLines: 10_000,
    minRetryDelayMillis: 20,
    maxRetryDelayMillis: 40,
    requestTimeoutMillis: 5_000,
    maxInFlightBatches: 3,
    ...overrides,
  };
}

function point(i: number): SeriesPoint {
  return { measurement: MEASUREMENTS.window, tags: { stream: 'j/k' }, fields: { loss_predicted: i }, timestampMillis: 1_700_000_000_000 + i };
}

/** The `loss_predicted` values written, in arrival order. */
function valuesOf(bodies: readonly string[][]): number[] {
  return bodies.flat().map((line) => Number(/loss_predicted=([0-9.e+-]+)/.exec(line)?.[1]));
}

let fake: FakeInflux | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('influx-writer', () => {
  it('sends up to maxInFlightBatches requests at a time, every line exactly once, and flush waits for all of them', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 150; // long enough that the three first requests overlap even on a loaded machine
    const writer = createInfluxWriter(options(fake.url), () => {});
    writer.write(Array.from({ length: 500 }, (_, i) => point(i)));
    await writer.flush();
    expect(fake.maxConcurrent).toBe(3);
    expect(fake.bodies.every((body) => body.length <= 50)).toBe(true);
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect(writer.stats()).toMatchObject({ linesWritten: 500, batchesWritten: 10, buffered: 0, batchesInFlight: 0, linesDropped: 0 });
    expect(await writer.close(1_000)).toBe(0);
  });

  it('with maxInFlightBatches 1 keeps one request in flight', async () => {
    fake = await startFakeInflux();
    const writer = createInfluxWriter(options(fake.url, { maxInFlightBatches: 1 }), () => {});
    writer.write(Array.from({ length: 200 }, (_, i) => point(i)));
    await writer.flush();
    expect(fake.maxConcurrent).toBe(1);
    expect(valuesOf(fake.bodies)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    await writer.close(1_000);
  });

  it('sends queued points without an explicit flush (on the next event-loop turn when flushIntervalMillis is 0)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    const writer = createInfluxWriter(options(fake.url), () => {});
    writer.write([point(1), point(2)]);
    const served = fake;
    await served.until(() => served.bodies.length > 0);
    expect(valuesOf(fake.bodies)).toEqual([1, 2]);
    await writer.close(1_000);
  });

  it('while a request is in flight, gathers small writes into the next request instead of one request each', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 300;
    const writer = createInfluxWriter(options(fake.url), () => {});
    writer.write([point(0)]);
    const served = fake;
    await served.until(() => served.received === 1); // request 1 is in flight now
    for (let i = 1; i <= 20; i += 1) {
      writer.write([point(i)]);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.flush();
    // Without gathering: 21 requests. With it: the first, then one more once 50 ms have passed
    // (or request 1 finished), and at most one more on a slow machine.
    expect(fake.bodies.length).toBeLessThanOrEqual(3);
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(Array.from({ length: 21 }, (_, i) => i));
    await writer.close(1_000);
  });

  it('puts a batch refused with 503 back and retries it after a backoff; flush rejects meanwhile, then everything arrives once', async () => {
    fake = await startFakeInflux();
    fake.statusFor = (index) => (index === 1 ? 503 : 204);
    const errors: EstimatorError[] = [];
    const writer = createInfluxWriter(options(fake.url), (error) => errors.push(error));
    writer.write(Array.from({ length: 150 }, (_, i) => point(i)));
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EstimatorError);
    expect((failure as EstimatorError).retriable).toBe(true);
    expect(errors).toHaveLength(1);
    expect(writer.stats().failingWrites).toBe(1); // /healthz says degraded now
    // The retry happens on its own after the backoff (20–40 ms ± jitter): wait until the fake has
    // stored all 150 lines, then flush (no longer backing off) waits for the writer to see the answer.
    const served = fake;
    await served.until(() => served.bodies.flat().length >= 150);
    await writer.flush();
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => i));
    expect(writer.stats()).toMatchObject({ linesWritten: 150, writeErrors: 1, failingWrites: 0, buffered: 0, linesDropped: 0 });
    await writer.close(1_000);
  });

  it('bounds the buffer including lines in flight and counts what it drops (oldest queued first)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 200;
    const writer = createInfluxWriter(options(fake.url, { maxBufferLines: 200, maxInFlightBatches: 1 }), () => {});
    writer.write(Array.from({ length: 50 }, (_, i) => point(i)));
    const served = fake;
    await served.until(() => served.received === 1); // the first batch is in flight now
    expect(writer.stats()).toMatchObject({ batchesInFlight: 1, buffered: 50 });
    writer.write(Array.from({ length: 250 }, (_, i) => point(1000 + i)));
    // 300 lines > 200: the 100 oldest queued lines (1000..1099) go, the 50 in flight stay.
    expect(writer.stats()).toMatchObject({ buffered: 200, linesDropped: 100 });
    await writer.flush();
    const values = valuesOf(fake.bodies).sort((a, b) => a - b);
    expect(values).toEqual([...Array.from({ length: 50 }, (_, i) => i), ...Array.from({ length: 150 }, (_, i) => 1100 + i)]);
    await writer.close(1_000);
  });

  it('rejects a maxInFlightBatches outside 1..64', () => {
    expect(() => createInfluxWriter(options('http://127.0.0.1:9', { maxInFlightBatches: 0 }), () => {})).toThrow(RangeError);
  });
});
