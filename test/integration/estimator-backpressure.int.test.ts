// Backpressure of `warpwatch estimate` (docs/estimator.md, Fault tolerance: Backpressure) against
// the real Kafka and InfluxDB of the shared stack. The estimator writes to InfluxDB through a TCP
// relay in this process that first refuses every connection (InfluxDB "away": each write fails at
// once and is retried), then forwards to the real InfluxDB. While it is away the estimator must
// hold its buffered lines at the high-water mark (not fill its 100,000-line buffer) and stop
// consuming, frames waiting in Kafka; when InfluxDB answers again every window must be written,
// exactly: launches and groups per window equal to what was sent, nothing dropped.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import {
  addToTable,
  createDatabase,
  createFramesTopic,
  dropDatabase,
  estimatorEnv,
  produceLaunches,
  influxUrl,
  metricsPortOf,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
  writtenWindows,
  type EstimatorChild,
  type WindowTable,
} from './estimator-support.ts';

const STREAMS = 20;
const LAUNCHES = 40; // 100 ms apart: 4 one-second windows per stream
const HIGH_WATER = 150;
const WINDOW_MILLIS = 1_000;

const children: EstimatorChild[] = [];
const databases: string[] = [];
const relays: Relay[] = [];

afterAll(async () => {
  await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
  await Promise.all(relays.map((relay) => relay.close()));
  await Promise.all(databases.map((db) => dropDatabase(db).catch(() => undefined)));
});

/** A TCP relay to the real InfluxDB that refuses connections (reset at once) until `open()`. */
interface Relay {
  readonly url: string;
  /** Connections refused so far. */
  refused(): number;
  open(): void;
  close(): Promise<void>;
}

async function startRelay(target: URL): Promise<Relay> {
  let forwarding = false;
  let refused = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (!forwarding) {
      refused += 1;
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('relay has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    refused: () => refused,
    open: () => {
      forwarding = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The /healthz fields this file reads. */
interface Healthz {
  readonly counters: { readonly framesIn: number; readonly framesOut: number; readonly windowsClosed: number };
  readonly influx: { pointsIn: number; pointsWritten: number; pointsDropped: number; buffered: number; dropped: Record<string, number>; failingWrites: number };
  readonly kafkaRecordsDropped: number;
  readonly backpressure: { waitingFor?: string; pauses: number; pausedMillis: number; highWater: Record<string, number> };
}

async function healthz(child: EstimatorChild): Promise<Healthz> {
  return (await (await fetch(`http://127.0.0.1:${metricsPortOf(child)}/healthz`)).json()) as Healthz;
}

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

describe('warpwatch estimate (backpressure)', () => {
  it('while InfluxDB refuses writes, holds its buffered lines at the high-water mark and stops consuming; when it answers, writes every window exactly', async () => {
    const id = uniqueId('wwbackp');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    // One partition: while its batch waits, its lag is not zero, so no window closes by idleness meanwhile.
    await createFramesTopic(`${id}.frames`, 1);
    const launches = generateLaunches({ streams: STREAMS, launchesPerStream: LAUNCHES, launchIntervalMillis: 100, startMillis: 1_700_000_000_000, groups: 16, groupSize: 8, seed: 77 });
    const sent: WindowTable = new Map();
    for (const { frame } of launches) addToTable(sent, frame.job, Number(frame.endUnixNanos / 1_000_000n), frame.groupsCounted, WINDOW_MILLIS);
    await produceLaunches(`${id}.frames`, launches);

    const relay = await startRelay(new URL(influxUrl()));
    relays.push(relay);
    const child = spawnEstimator(
      estimatorEnv(id, database, `${id}-g`, {
        WARPWATCH_INFLUX_URL: relay.url,
        WARPWATCH_INFLUX_HIGH_WATER_LINES: String(HIGH_WATER),
        WARPWATCH_INFLUX_MAX_BUFFER_LINES: '100000',
        WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS: '1000',
      }),
      'backpressure',
    );
    children.push(child);
    await child.waitForLog(/InfluxDB at .* does not answer yet/, 60_000);
    await child.waitForLog(/metrics 127\.0\.0\.1:\d+/, 60_000);

    // InfluxDB away: consumption stops at the mark, well before the input ends.
    await waitUntil(async () => (await healthz(child)).backpressure.waitingFor === 'influx', 60_000, 'the consumer to wait for InfluxDB');
    const paused = await healthz(child);
    await sleep(3_000);
    const later = await healthz(child);
    expect(later.backpressure.waitingFor).toBe('influx');
    expect(later.backpressure.highWater).toEqual({ influx: HIGH_WATER, 'kafka-results': 10_000 });
    expect(later.counters.framesIn).toBe(paused.counters.framesIn); // no frame consumed while paused
    expect(later.counters.framesIn).toBeLessThan(launches.length);
    expect(later.influx.pointsWritten).toBe(0);
    expect(later.influx.failingWrites).toBeGreaterThan(0);
    expect(relay.refused()).toBeGreaterThan(0);
    // Above the mark by at most the outputs of the one message that crossed it (a window close:
    // its window, sweep and histogram points); the buffer's own bound (100,000) is far away.
    expect(later.influx.buffered).toBeGreaterThan(HIGH_WATER);
    expect(later.influx.buffered).toBeLessThanOrEqual(HIGH_WATER + 40);
    expect(later.influx.pointsDropped).toBe(0);
    expect(later.influx.pointsIn).toBe(later.influx.buffered);

    // InfluxDB answers again: everything is consumed and written, nothing lost or counted twice.
    relay.open();
    const windows = [...sent.values()].reduce((sum, perStream) => sum + perStream.size, 0);
    await waitUntil(
      async () => {
        const h = await healthz(child);
        return h.counters.framesIn === launches.length && h.counters.windowsClosed === windows && h.influx.buffered === 0;
      },
      120_000,
      `all ${launches.length} frames consumed, ${windows} windows closed and written`,
    );
    const done = await healthz(child);
    expect(done.counters.framesOut).toBe(launches.length);
    expect(done.influx.pointsDropped).toBe(0);
    expect(done.influx.pointsWritten).toBe(done.influx.pointsIn);
    expect(done.kafkaRecordsDropped).toBe(0);
    expect(done.backpressure.pauses).toBeGreaterThanOrEqual(1);
    expect(done.backpressure.waitingFor).toBeUndefined();
    const written = await writtenWindows(database, 'job', MEASUREMENTS.window);
    expect(written).toEqual(sent);
  }, 240_000);
});
