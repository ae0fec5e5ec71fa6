// End to end through a broker outage and through a frame dated ahead of its stream
// (docs/estimator.md, "Late data"), on a Kafka node private to this file (it is SIGKILLed; the
// shared stack's broker is left alone) with the shared InfluxDB: the real `warpwatch collect`
// process reads frames from a unix socket, two (or one) real `warpwatch estimate` processes
// write windows to InfluxDB. Every window must be exact: its launches and groups equal what
// was sent in it, counted here from the frames the writers built.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';
import {
  addToTable as addToWindowTable,
  createDatabase,
  dropDatabase,
  estimatorEnv,
  frameOutcomes,
  launchesOf,
  launchFrame,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
  windowsOf,
  writtenWindows as writtenWindowsOf,
  type EstimatorChild,
  type WindowTable,
} from './estimator-support.ts';

const WINDOW_MILLIS = 2_000;
const IDLE_CLOSE_MILLIS = 5_000;
const PARTITIONS = 6;

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));
const addToTable = (table: WindowTable, job: string, endMillis: number, groups: number): void => addToWindowTable(table, job, endMillis, groups, WINDOW_MILLIS);
const writtenWindows = (database: string, prefix: string): Promise<WindowTable> => writtenWindowsOf(database, prefix, MEASUREMENTS.window);

/** The collector's /healthz fields this file reads. */
interface CollectorHealth {
  readonly framesIn: number;
  readonly framesOut: number;
  readonly spoolRecords: number;
  readonly accounting: { read: number; delivered: number; dropped: number; held: number; balanced: boolean };
}

/** The real `warpwatch collect` process. */
interface Agent {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  health(): Promise<CollectorHealth>;
}

async function startAgent(socket: string, spoolDir: string, brokers: string, topic: string): Promise<Agent> {
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--metrics-port', '0', '--socket', socket, '--brokers', brokers, '--spool-dir', spoolDir, '--partitions', String(PARTITIONS)], {
    env: {
      ...process.env,
      WARPWATCH_INFLUX_URL: 'off',
      WARPWATCH_FRAMES_TOPIC: topic,
      WARPWATCH_DLQ_TOPIC: `${topic}.dlq`,
      WARPWATCH_RETRY_BACKOFF_MILLIS: '200',
      WARPWATCH_KAFKA_RETRIES: '2',
      WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000',
      WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS: '5000',
      WARPWATCH_PRODUCE_TIMEOUT_MILLIS: '5000',
      WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '3000',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let port: number | undefined;
  await waitUntil(
    async () => {
      if (child.exitCode !== null) throw new Error(`collector exited ${child.exitCode}: ${stderr}`);
      port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr)?.[1] ?? Number.NaN);
      return Number.isFinite(port);
    },
    60_000,
    'the collector to start',
  );
  return {
    child,
    exited,
    async health() {
      return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as CollectorHealth;
    },
  };
}

/** One writer per stream on its own connection to the collector's socket. */
async function connect(socket: string): Promise<Socket> {
  const connection = createConnection(socket);
  await new Promise<void>((resolve, reject) => {
    connection.once('connect', () => resolve());
    connection.once('error', reject);
  });
  return connection;
}

async function createFramesTopic(brokers: string, topic: string): Promise<void> {
  const admin = new Kafka({ clientId: 'estimator-outage-it', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, configEntries: [{ name: 'max.message.bytes', value: String(8 * 1024 * 1024) }] }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

describe('estimator through a broker outage and an outlier frame (private Kafka node, real collector and estimators)', () => {
  let kafka: PrivateKafka;
  let directory: string;
  const databases: string[] = [];
  const estimators: EstimatorChild[] = [];
  const agents: Agent[] = [];

  beforeAll(async () => {
    kafka = createPrivateKafka(29692);
    await kafka.start();
    directory = mkdtempSync(join(tmpdir(), 'ww-estimator-outage-it-'));
  }, 180_000);
  afterAll(async () => {
    await Promise.all(estimators.map((child) => stopChild(child, 'SIGKILL')));
    for (const agent of agents) agent.child.kill('SIGKILL');
    await Promise.all(agents.map((agent) => agent.exited));
    await kafka.destroy();
    for (const database of databases) await dropDatabase(database).catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  /** A database, a frames topic, `count` estimators (one group) and a collector, all on the private node. */
  async function pipeline(name: string, count: number): Promise<{ id: string; database: string; group: EstimatorChild[]; agent: Agent; socket: string }> {
    const id = uniqueId(name);
    databases.push(id);
    await createDatabase(id);
    await createFramesTopic(kafka.brokers, `${id}.frames`);
    const env = estimatorEnv(id, id, `${id}-group`, {
      WARPWATCH_KAFKA_BROKERS: kafka.brokers,
      WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS),
      WARPWATCH_IDLE_CLOSE_MILLIS: String(IDLE_CLOSE_MILLIS),
      WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000',
      WARPWATCH_HISTOGRAM_POINTS: 'false',
      WARPWATCH_FIT: 'false',
      WARPWATCH_QUANTILES: 'false',
      WARPWATCH_SWEEP_GROUP_SIZES: 'off',
    });
    const group = Array.from({ length: count }, (_, i) => spawnEstimator(env, `${id}-${i}`));
    estimators.push(...group);
    await Promise.all(group.map((child) => child.waitForLog(/assigned partitions \[\d/, 90_000)));
    const socket = join(directory, `${id}-run`, 'collector.sock');
    const agent = await startAgent(socket, join(directory, `${id}-spool`), kafka.brokers, `${id}.frames`);
    agents.push(agent);
    return { id, database: id, group, agent, socket };
  }

  /** Waits until the collector read `total` frames and delivered all of them (nothing dropped, nothing held). */
  async function delivered(agent: Agent, total: number): Promise<CollectorHealth> {
    let last: CollectorHealth | undefined;
    await waitUntil(
      async () => {
        last = await agent.health();
        return last.framesIn === total && last.spoolRecords === 0 && last.accounting.held === 0;
      },
      120_000,
      `the collector to deliver ${total} frames`,
    );
    return last as CollectorHealth;
  }

  it('writes every window exactly (launches and groups as sent) when the broker is SIGKILLed for 20 s: 10 streams × 20 launches/s, collector + two estimators', async () => {
    const { id, database, group, agent, socket } = await pipeline('wwoutage', 2);
    const STREAMS = 10;
    const jobs = Array.from({ length: STREAMS }, (_, s) => `${id}s${s}`);
    const connections = await Promise.all(jobs.map(() => connect(socket)));
    const random = createSeededRandom(24);
    const sent: WindowTable = new Map();
    let total = 0;
    let sequence = 0;
    const timer = setInterval(() => {
      const now = Date.now();
      jobs.forEach((job, s) => {
        const frame = launchFrame(job, sequence++, now, random);
        addToTable(sent, job, now, frame.groupsCounted);
        total += 1;
        connections[s]?.write(encodeFrame(frame));
      });
    }, 50);

    await sleep(6_000);
    await kafka.signal('SIGKILL');
    const killedAt = Date.now();
    await sleep(20_000);
    const outageMillis = Date.now() - killedAt;
    await kafka.start();
    const restartedAfter = Date.now() - killedAt;
    await sleep(6_000);
    clearInterval(timer);
    await Promise.all(connections.map((c) => new Promise<void>((resolve) => c.end(() => resolve()))));

    const settled = await delivered(agent, total);
    expect(settled.accounting).toMatchObject({ read: total, delivered: total, dropped: 0, held: 0, balanced: true });
    // The last windows close by idleness; wait until InfluxDB holds every launch (or time runs out, then compare anyway).
    let written: WindowTable = new Map();
    await waitUntil(
      async () => {
        written = await writtenWindows(database, id);
        return jobs.every((job) => launchesOf(written, job) === launchesOf(sent, job));
      },
      60_000,
      'every launch in InfluxDB',
    ).catch(() => undefined);
    written = await writtenWindows(database, id);
    const outcomes = await Promise.all(group.map((child) => frameOutcomes(child)));
    const late = outcomes.reduce((sum, o) => sum + (o['late'] ?? 0), 0);
    let windows = 0;
    for (const job of jobs) windows += sent.get(job)?.size ?? 0;
    process.stderr.write(
      `[estimator outage] broker down ${outageMillis} ms (up again ${restartedAfter} ms after the kill); collector read ${total} = delivered ${settled.accounting.delivered}; ` +
        `${windows} windows sent, ${jobs.reduce((n, job) => n + (written.get(job)?.size ?? 0), 0)} written; late ${late}\n`,
    );
    expect(outageMillis).toBeGreaterThanOrEqual(15_000);
    expect(restartedAfter).toBeLessThanOrEqual(45_000);
    for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(sent, job));
    expect(late).toBe(0);
  }, 400_000);

  it('records every frame of a steady stream when one of its frames is dated 240 s ahead; the outlier waits in its own window', async () => {
    const { id, database, group, agent, socket } = await pipeline('wwahead', 1);
    const job = `${id}steady`;
    const connection = await connect(socket);
    const random = createSeededRandom(240);
    const sent: WindowTable = new Map();
    const OUTLIER = 100;
    for (let sequence = 0; sequence < 200; sequence += 1) {
      const now = Date.now();
      // Frame 100 is dated 240 s ahead: inside WARPWATCH_MAX_FUTURE_SKEW_MILLIS (5 min), so not rejected.
      const endMillis = sequence === OUTLIER ? now + 240_000 : now;
      const frame = launchFrame(job, sequence, endMillis, random);
      if (sequence !== OUTLIER) addToTable(sent, job, endMillis, frame.groupsCounted);
      connection.write(encodeFrame(frame));
      await sleep(50);
    }
    await new Promise<void>((resolve) => connection.end(() => resolve()));
    await delivered(agent, 200);

    let written: WindowTable = new Map();
    await waitUntil(
      async () => {
        written = await writtenWindows(database, id);
        return launchesOf(written, job) >= 199;
      },
      60_000,
      'the steady windows in InfluxDB',
    ).catch(() => undefined);
    await sleep(1_000);
    written = await writtenWindows(database, id);
    const [estimator] = group;
    const outcomes = await frameOutcomes(estimator as EstimatorChild);
    process.stderr.write(`[estimator ahead] outcomes ${JSON.stringify(outcomes)}; ${written.get(job)?.size ?? 0} windows written of ${sent.get(job)?.size ?? 0} steady\n`);
    // Every steady window exact, and nothing else written: the outlier's window (240 s ahead of
    // the clock) is held open until the stream or the clock gets there.
    expect(windowsOf(written, job)).toEqual(windowsOf(sent, job));
    expect(outcomes['recorded']).toBe(200);
    expect(outcomes['late'] ?? 0).toBe(0);
  }, 300_000);
});
