import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeInflux, type FakeInflux } from './testing/fake-influx.ts';
import type { InfluxPoint } from './influx-line.ts';
import { Secret } from './secret.ts';
import {
  createInfluxWriter,
  INFLUX_DROP_REASONS,
  INFLUX_REJECTED_HEALTH_MILLIS,
  influxHealthReasons,
  InfluxWriteFailure,
  partialWriteRejections,
  type InfluxDropReason,
  type InfluxWriterOptions,
  type InfluxWriterStats,
} from './influx-writer.ts';

// The writer's logic against a real local HTTP server standing in for InfluxDB (testing/fake-influx.ts):
// batching, concurrency, retries, drops by reason, close. Every test checks the books:
// pointsIn = pointsWritten + Σ dropped + buffered. The real InfluxDB runs in
// test/integration/estimator.int.test.ts and collector-metrics.int.test.ts.

function options(url: string, overrides: Partial<InfluxWriterOptions> = {}): InfluxWriterOptions {
  return {
    url,
    token: new Secret(''),
    org: '-',
    bucket: 'db/autogen',
    batchSize: 50,
    flushIntervalMillis: 0,
    maxBufferPoints: 10_000,
    maxInFlightBatches: 3,
    retry: { initialMillis: 20, maxMillis: 40, jitter: 0.5 },
    requestTimeoutMillis: 5_000,
    ...overrides,
  };
}

function point(i: number): InfluxPoint {
  return { measurement: 'warpwatch_window', tags: { stream: 'j/k' }, fields: { loss_predicted: i }, timestampMillis: 1_700_000_000_000 + i };
}

const points = (from: number, count: number): InfluxPoint[] => Array.from({ length: count }, (_, i) => point(from + i));
const range = (from: number, count: number): number[] => Array.from({ length: count }, (_, i) => from + i);

/** The `loss_predicted` values written, in arrival order. */
function valuesOf(bodies: readonly string[][]): number[] {
  return bodies.flat().map((line) => Number(/loss_predicted=([0-9.e+-]+)/.exec(line)?.[1]));
}

/** The books balance: every point written in is written, dropped for one reason, or buffered. */
function expectBalanced(stats: InfluxWriterStats): void {
  expect(stats.pointsDropped).toBe(INFLUX_DROP_REASONS.reduce((sum, reason) => sum + stats.dropped[reason], 0));
  expect(stats.pointsIn).toBe(stats.pointsWritten + stats.pointsDropped + stats.buffered);
}

/** The Authorization header of 'user:password' credentials (service/influx-client.ts `influxAuthHeaders`). */
const basic = (credentials: string): string => `Basic ${Buffer.from(credentials).toString('base64')}`;

const noDrops = { overflow: 0, rejected: 0, unwritable: 0, 'no-fields': 0, closed: 0 };

async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${address.port}`;
}

let fake: FakeInflux | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('createInfluxWriter', () => {
  it('sends up to maxInFlightBatches requests at a time, every point exactly once, and flush waits for all of them', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 150; // long enough that the three first requests overlap even on a loaded machine
    const writer = createInfluxWriter(options(fake.url));
    writer.write(points(0, 500));
    await writer.flush();
    expect(fake.maxConcurrent).toBe(3);
    expect(fake.bodies.every((body) => body.length <= 50)).toBe(true);
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(range(0, 500));
    expect(writer.stats()).toEqual({ pointsIn: 500, pointsWritten: 500, pointsDropped: 0, dropped: noDrops, buffered: 0, batchesWritten: 10, batchesInFlight: 0, writeErrors: 0, failingWrites: 0, rejectedAtMillis: 0, authFailing: false });
    const final = await writer.close(1_000);
    expect(final.dropped.closed).toBe(0);
    expectBalanced(final);
  });

  it('with maxInFlightBatches 1 keeps one request in flight and the order of the points', async () => {
    fake = await startFakeInflux();
    const writer = createInfluxWriter(options(fake.url, { maxInFlightBatches: 1 }));
    writer.write(points(0, 200));
    await writer.flush();
    expect(fake.maxConcurrent).toBe(1);
    expect(valuesOf(fake.bodies)).toEqual(range(0, 200));
    await writer.close(1_000);
  });

  it('sends queued points without an explicit flush (on the next event-loop turn when flushIntervalMillis is 0)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    const writer = createInfluxWriter(options(fake.url));
    writer.write([point(1), point(2)]);
    const served = fake;
    await served.until(() => served.bodies.length > 0);
    expect(valuesOf(fake.bodies)).toEqual([1, 2]);
    await writer.close(1_000);
  });

  it('while a request is in flight, gathers small writes into the next request instead of one request each', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 300;
    const writer = createInfluxWriter(options(fake.url));
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
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(range(0, 21));
    await writer.close(1_000);
  });

  it('keeps a batch refused for its credentials (401), says influx-auth, reads the token again and writes it once accepted', async () => {
    fake = await startFakeInflux();
    // InfluxDB accepts only the right credentials; `accepted` stands for the token file being fixed.
    let accepted = false;
    const served = fake;
    served.answerFor = (index) => (served.authorizations[index] === basic('u:right') ? 204 : 401);
    const tokens: string[] = [];
    const failures: InfluxWriteFailure[] = [];
    const writer = createInfluxWriter(options(fake.url, { token: new Secret('u:wrong'), refreshToken: () => (tokens.push(accepted ? 'u:right' : 'u:wrong'), new Secret(tokens.at(-1) ?? '')) }), {
      onError: (failure) => failures.push(failure),
    });
    writer.write(points(0, 40));
    await served.until(() => served.received >= 2);
    expect(writer.stats()).toMatchObject({ authFailing: true, pointsDropped: 0, pointsWritten: 0 });
    expect(influxHealthReasons(writer.stats())).toEqual(['influx-auth']);
    expectBalanced(writer.stats());
    expect(failures[0]?.message).toMatch(/HTTP 401.*refused the credentials.*read again before each retry/s);
    expect(failures[0]?.message).not.toContain('u:wrong');
    accepted = true;
    await served.until(() => served.bodies.flat().length >= 40);
    await writer.flush();
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(range(0, 40));
    expect(writer.stats()).toMatchObject({ authFailing: false, pointsWritten: 40, pointsDropped: 0, buffered: 0 });
    expect(influxHealthReasons(writer.stats())).toEqual([]);
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    // The Secret read again is what reaches the wire: refused requests carried the old token, the accepted one the new.
    expect(fake.authorizations[0]).toBe(basic('u:wrong'));
    expect(fake.authorizations.at(-1)).toBe(basic('u:right'));
    await writer.close(1_000);
  });

  it('puts a batch refused with 503 back and retries it after a backoff; flush rejects meanwhile, then everything arrives once', async () => {
    fake = await startFakeInflux();
    fake.answerFor = (index) => (index === 1 ? 503 : 204);
    const failures: InfluxWriteFailure[] = [];
    const recovered: number[] = [];
    const writer = createInfluxWriter(options(fake.url), { onError: (failure) => failures.push(failure), onRecovered: (n) => recovered.push(n) });
    writer.write(points(0, 150));
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(InfluxWriteFailure);
    expect(failure).toMatchObject({ retriable: true, status: 503, points: 50 });
    expect(failures).toHaveLength(1);
    expect(writer.stats().failingWrites).toBe(1); // /healthz says degraded now
    expectBalanced(writer.stats());
    // The retry happens on its own after the backoff (20–40 ms ± jitter): wait until the fake has
    // stored all 150 points, then flush (no longer backing off) waits for the writer to see the answer.
    const served = fake;
    await served.until(() => served.bodies.flat().length >= 150);
    await writer.flush();
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual(range(0, 150));
    expect(writer.stats()).toMatchObject({ pointsIn: 150, pointsWritten: 150, writeErrors: 1, failingWrites: 0, buffered: 0, pointsDropped: 0 });
    expect(recovered).toEqual([1]);
    await writer.close(1_000);
  });

  it('bounds the buffer including points in flight and drops the oldest queued ones (reason overflow)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 200;
    const drops: Array<[InfluxDropReason, number]> = [];
    const writer = createInfluxWriter(options(fake.url, { maxBufferPoints: 200, maxInFlightBatches: 1 }), { onDrop: (reason, count) => drops.push([reason, count]) });
    writer.write(points(0, 50));
    const served = fake;
    await served.until(() => served.received === 1); // the first batch is in flight now
    expect(writer.stats()).toMatchObject({ batchesInFlight: 1, buffered: 50 });
    writer.write(points(1000, 250));
    // 300 points > 200: the 100 oldest queued points (1000..1099) go, the 50 in flight stay.
    expect(writer.stats()).toMatchObject({ pointsIn: 300, buffered: 200, pointsDropped: 100, dropped: { ...noDrops, overflow: 100 } });
    expectBalanced(writer.stats());
    expect(drops).toEqual([['overflow', 100]]);
    await writer.flush();
    expect(valuesOf(fake.bodies).sort((a, b) => a - b)).toEqual([...range(0, 50), ...range(1100, 150)]);
    expect(writer.stats()).toMatchObject({ pointsWritten: 200, buffered: 0 });
    expectBalanced(await writer.close(1_000));
  });

  it('exact books through 500, a closed socket and a 400: the first two are retried, the 400 batch is dropped (reason rejected)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    const answers: Array<number | 'destroy'> = [500, 'destroy', 400];
    fake.answerFor = (index) => answers[index] ?? 204;
    const failures: InfluxWriteFailure[] = [];
    const writer = createInfluxWriter(options(fake.url, { batchSize: 10, maxInFlightBatches: 1, retry: { initialMillis: 5, maxMillis: 10 } }), {
      onError: (failure) => {
        expectBalanced(writer.stats());
        failures.push(failure);
      },
    });
    writer.write(points(0, 30));
    const served = fake;
    // Batch 0..9 fails three times (500, socket closed, 400: dropped); 10..29 go through.
    await served.until(() => served.bodies.flat().length >= 20);
    await writer.flush();
    expect(failures.map((f) => [f.status, f.retriable, f.points, f.failingWrites])).toEqual([
      [500, true, 10, 1],
      [undefined, true, 10, 2],
      [400, false, 10, 3],
    ]);
    expect(failures[2]?.message).toMatch(/^writing 10 points to InfluxDB http:\/\/127\.0\.0\.1:\d+ \(bucket db\/autogen\) failed with HTTP 400: .*batch dropped/);
    // InfluxDB answered (an HTTP status): no hint about where it runs.
    expect([failures[0]?.hint, failures[2]?.hint]).toEqual([undefined, undefined]);
    expect(valuesOf(fake.bodies)).toEqual(range(10, 20));
    const stats = writer.stats();
    expect(stats).toEqual({
      pointsIn: 30,
      pointsWritten: 20,
      pointsDropped: 10,
      dropped: { ...noDrops, rejected: 10 },
      buffered: 0,
      batchesWritten: 2,
      batchesInFlight: 0,
      writeErrors: 3,
      failingWrites: 0,
      rejectedAtMillis: expect.any(Number) as number,
      authFailing: false,
    });
    expect(Date.now() - stats.rejectedAtMillis).toBeLessThan(60_000);
    expectBalanced(stats);
    await writer.close(1_000);
  });

  it('a partial write (HTTP 400 naming refused lines): those lines dropped as rejected, the others counted written, not retried', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    // As InfluxDB 1.8.10 answers (test/integration/influx-line.int.test.ts checks the real one): two unparsable lines, one more dropped after parsing.
    const error = "partial write: unable to parse 'p1,t=bad\\ f=1 1000': invalid tag format\nunable to parse 'p1,t=bad2\\ f=1 1000': invalid tag format dropped=1";
    fake.answerFor = (index) => (index === 0 ? { status: 400, json: JSON.stringify({ error }) } : 204);
    const failures: InfluxWriteFailure[] = [];
    const writer = createInfluxWriter(options(fake.url, { batchSize: 10, maxInFlightBatches: 1 }), { onError: (failure) => failures.push(failure) });
    writer.write(points(0, 10));
    await expect(writer.flush()).rejects.toThrow(/failed with HTTP 400: 400 Bad Request: .*partial write: .*; 3 of 10 points dropped \(InfluxDB refused them\), the others written$/s);
    expect(failures.map((f) => [f.status, f.retriable, f.points])).toEqual([[400, false, 10]]);
    const stats = writer.stats();
    expect(stats).toMatchObject({ pointsIn: 10, pointsWritten: 7, buffered: 0, dropped: { ...noDrops, rejected: 3 }, writeErrors: 1, batchesWritten: 0 });
    expectBalanced(stats);
    expect(influxHealthReasons(stats)).toEqual(['influx-write', 'influx-rejected']);
    expect(fake.received).toBe(1); // not retried
    await writer.close(1_000);
  });

  it('leaves out non-finite fields and drops a point with none left (reason no-fields)', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 0;
    const writer = createInfluxWriter(options(fake.url));
    writer.write([
      { measurement: 'm', tags: {}, fields: { a: Number.NaN, b: 2 }, timestampMillis: 1_000 },
      { measurement: 'm', tags: {}, fields: { a: Number.POSITIVE_INFINITY }, timestampMillis: 2_000 },
      { measurement: 'm', tags: {}, fields: {}, timestampMillis: 3_000 },
      { measurement: 'm', tags: {}, fields: { s: 'text' }, timestampMillis: 4_000 },
    ]);
    await writer.flush();
    expect(fake.bodies.flat()).toEqual(['m b=2.0 1000', 'm s="text" 4000']);
    expect(writer.stats()).toMatchObject({ pointsIn: 4, pointsWritten: 2, dropped: { ...noDrops, 'no-fields': 2 } });
    expectBalanced(writer.stats());
    await writer.close(1_000);
  });

  it('close with InfluxDB unreachable: one forced attempt, then what is buffered counts as dropped (closed), as does a write after close', async () => {
    const failures: InfluxWriteFailure[] = [];
    const url = await closedPortUrl();
    const writer = createInfluxWriter(options(url, { batchSize: 10, maxBufferPoints: 20, maxInFlightBatches: 1, urlFlag: '--influx-url' }), { onError: (f) => failures.push(f) });
    writer.write(points(0, 25));
    expect(writer.stats()).toMatchObject({ pointsIn: 25, buffered: 20, dropped: { ...noDrops, overflow: 5 } });
    const final = await writer.close(5_000);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    // Nothing answers: the failure says what to try (service/server-hint.ts), at the end of its message too.
    expect(failures[0]?.hint).toBe(`check WARPWATCH_INFLUX_URL (or --influx-url): nothing answers at ${url}`);
    expect(failures[0]?.message.endsWith(`; ${failures[0]?.hint}`)).toBe(true);
    expect(final).toMatchObject({ pointsIn: 25, pointsWritten: 0, buffered: 0, batchesInFlight: 0, dropped: { ...noDrops, overflow: 5, closed: 20 } });
    expectBalanced(final);
    writer.write([point(99)]);
    expect(writer.stats()).toMatchObject({ pointsIn: 26, buffered: 0, dropped: { ...noDrops, overflow: 5, closed: 21 } });
    expectBalanced(writer.stats());
    expect(await writer.close(5_000)).toEqual(final); // idempotent: the first close's result
  });

  it('close that times out counts the points in flight as dropped (closed) and ignores their late answer', async () => {
    fake = await startFakeInflux();
    fake.delayMillis = 400;
    const writer = createInfluxWriter(options(fake.url, { batchSize: 10, maxInFlightBatches: 1 }));
    writer.write(points(0, 15));
    const served = fake;
    await served.until(() => served.received === 1); // 0..9 in flight, 10..14 queued
    const final = await writer.close(50);
    expect(final).toMatchObject({ pointsIn: 15, pointsWritten: 0, buffered: 0, batchesInFlight: 0, dropped: { ...noDrops, closed: 15 } });
    await served.until(() => served.bodies.length === 1); // the late answer arrives
    await new Promise((resolve) => setImmediate(resolve));
    expect(writer.stats()).toEqual(final);
  });

  it('never sends a point whose tag InfluxDB cannot store unchanged: dropped as unwritable, reported once per write, the others written', async () => {
    fake = await startFakeInflux();
    const failures: InfluxWriteFailure[] = [];
    const writer = createInfluxWriter(options(fake.url), { onError: (failure) => failures.push(failure) });
    const bad = (host: string): InfluxPoint => ({ ...point(0), tags: { stream: 'j/k', host } });
    writer.write([point(1), bad('hostB\\'), point(2), bad('k\nzz')]);
    await writer.flush();
    expect(valuesOf(fake.bodies)).toEqual([1, 2]);
    expect(fake.bodies.flat().every((line) => !line.includes('hostB') && !line.includes('zz'))).toBe(true);
    const stats = writer.stats();
    expect(stats).toMatchObject({ pointsIn: 4, pointsWritten: 2, dropped: { ...noDrops, unwritable: 2 } });
    expectBalanced(stats);
    expect(failures.map((failure) => failure.message)).toEqual([
      `a point for InfluxDB ${fake.url} (bucket db/autogen) was not written: tag host "hostB\\\\" cannot be written to InfluxDB: it has a '\\' before ',', '=', a space or at the end; dropped (counted as 'unwritable')`,
    ]);
    expect(influxHealthReasons(stats)).toEqual(['influx-rejected']);
    await writer.close(1_000);
  });

  it('reads the partial-write answer of InfluxDB 1.8: one rejection per unparsable line plus dropped=<n>', () => {
    // Answers as InfluxDB 1.8.10 gives them (test/integration/influx-line.int.test.ts checks the real one).
    expect(partialWriteRejections("partial write: unable to parse 'p1,t=bad\\ f=1 1000': invalid tag format\nunable to parse 'p1,t=bad2\\ f=1 1000': invalid tag format dropped=0", 4)).toBe(2);
    expect(partialWriteRejections("partial write: unable to parse 'p3,k=a': missing fields dropped=0", 2)).toBe(1);
    expect(partialWriteRejections('partial write: field type conflict: input field "f" on measurement "m" is type string, already exists as type float dropped=3', 10)).toBe(3);
    expect(partialWriteRejections('partial write: points beyond retention policy dropped=12', 5)).toBe(5);
    expect(partialWriteRejections("unable to parse 'q5,t=a=b f=1 1000': invalid tag format", 1)).toBeUndefined();
    expect(partialWriteRejections('database not found: "nope"', 7)).toBeUndefined();
  });

  it('health: influx-write while requests fail, influx-rejected for INFLUX_REJECTED_HEALTH_MILLIS after points were refused', () => {
    expect(influxHealthReasons(undefined)).toEqual([]);
    expect(influxHealthReasons({ failingWrites: 0, rejectedAtMillis: 0 }, 1e12)).toEqual([]);
    expect(influxHealthReasons({ failingWrites: 2 }, 1e12)).toEqual(['influx-write']);
    expect(influxHealthReasons({ failingWrites: 1, rejectedAtMillis: 1e12 }, 1e12 + INFLUX_REJECTED_HEALTH_MILLIS - 1)).toEqual(['influx-write', 'influx-rejected']);
    expect(influxHealthReasons({ failingWrites: 0, rejectedAtMillis: 1e12 }, 1e12 + INFLUX_REJECTED_HEALTH_MILLIS)).toEqual([]);
  });

  it('rejects maxInFlightBatches outside 1..64 and a batch size or bound below 1', () => {
    expect(() => createInfluxWriter(options('http://127.0.0.1:9', { maxInFlightBatches: 0 }))).toThrow(RangeError);
    expect(() => createInfluxWriter(options('http://127.0.0.1:9', { maxInFlightBatches: 65 }))).toThrow(RangeError);
    expect(() => createInfluxWriter(options('http://127.0.0.1:9', { batchSize: 0 }))).toThrow(RangeError);
    expect(() => createInfluxWriter(options('http://127.0.0.1:9', { maxBufferPoints: 0.5 }))).toThrow(RangeError);
  });
});
