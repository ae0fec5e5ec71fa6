// The pipeline of the estimator's fault tests on a Kafka node private to one test file: the real
// `warpwatch collect` process reading frames from a unix socket, the real `warpwatch estimate`
// processes of one consumer group, and the shared InfluxDB; plus the bookkeeping that checks
// every window: what was sent against what InfluxDB holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { expect } from 'vitest';
import { FAST_ENV } from './collector-agent-helpers.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import {
  addToTable,
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
  writtenWindows,
  type EstimatorChild,
  type WindowTable,
} from './estimator-support.ts';

/** Partitions of the frames topics (the collector's --partitions too). */
export const PARTITIONS = 6;

/** The collector's /healthz fields these tests read. */
export interface CollectorHealth {
  readonly framesIn: number;
  readonly framesOut: number;
  readonly spoolRecords: number;
  readonly accounting: { read: number; delivered: number; dropped: number; held: number; balanced: boolean };
}

/** The real `warpwatch collect` process. */
export interface Agent {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  health(): Promise<CollectorHealth>;
  /** What it wrote to stderr so far. */
  stderr(): string;
}

/** Starts `warpwatch collect` on `socket`, producing to `topic` of `brokers` (quick retries, a 3 s shutdown; `env` added last, e.g. SASL settings), and waits for its metrics port. */
export async function startAgent(socket: string, spoolDir: string, brokers: string, topic: string, extraArgs: readonly string[] = [], env: Record<string, string> = {}): Promise<Agent> {
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--metrics-port', '0', '--socket', socket, '--brokers', brokers, '--spool-dir', spoolDir, '--partitions', String(PARTITIONS), ...extraArgs], {
    env: {
      ...process.env,
      WARPWATCH_INFLUX_URL: 'off',
      WARPWATCH_FRAMES_TOPIC: topic,
      WARPWATCH_DLQ_TOPIC: `${topic}.dlq`,
      ...FAST_ENV,
      ...env,
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
    stderr: () => stderr,
    async health() {
      return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as CollectorHealth;
    },
  };
}

/** One writer per stream on its own connection to the collector's socket. */
export async function connect(socket: string): Promise<Socket> {
  const connection = createConnection(socket);
  await new Promise<void>((resolve, reject) => {
    connection.once('connect', () => resolve());
    connection.once('error', reject);
  });
  return connection;
}

/** Creates a frames topic of {@link PARTITIONS} partitions on `brokers` that takes 8 MiB records. */
export async function createFramesTopic(brokers: string, topic: string, configEntries: readonly { readonly name: string; readonly value: string }[] = []): Promise<void> {
  const admin = new Kafka({ clientId: 'estimator-pipeline-it', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS, configEntries: [{ name: 'max.message.bytes', value: String(8 * 1024 * 1024) }, ...configEntries] }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** Waits until the collector read `total` frames and delivered all of them (nothing dropped, nothing held). */
export async function delivered(agent: Agent, total: number, timeoutMillis = 120_000): Promise<CollectorHealth> {
  let last: CollectorHealth | undefined;
  await waitUntil(
    async () => {
      last = await agent.health();
      return last.framesIn === total && last.spoolRecords === 0 && last.accounting.held === 0;
    },
    timeoutMillis,
    `the collector to deliver ${total} frames`,
  );
  return last as CollectorHealth;
}

/** What a test file's pipelines started, for its afterAll. */
export interface PipelineCleanup {
  readonly databases: string[];
  readonly estimators: EstimatorChild[];
  readonly agents: Agent[];
}

/** SIGKILLs every estimator and collector `cleanup` holds, waits until the collectors are gone, and drops the databases. */
export async function killPipelines(cleanup: PipelineCleanup): Promise<void> {
  await Promise.all(cleanup.estimators.map((child) => stopChild(child, 'SIGKILL')));
  for (const agent of cleanup.agents) agent.child.kill('SIGKILL');
  await Promise.all(cleanup.agents.map((agent) => agent.exited));
  for (const database of cleanup.databases) await dropDatabase(database).catch(() => undefined);
}

/** One pipeline: its id (the prefix of its jobs, topics and database), the estimators of its group and its collector. */
export interface Pipeline {
  readonly id: string;
  readonly database: string;
  readonly group: EstimatorChild[];
  readonly agent: Agent;
  readonly socket: string;
}

/**
 * A database, a frames topic, estimators of one group and a collector, all on `brokers` (the
 * estimator `i` on `estimatorBrokers[i]` when given: one behind a relay), the estimators and the
 * collector pushed to `cleanup` for the file's afterAll.
 */
export async function startPipeline(options: {
  readonly name: string;
  readonly brokers: string;
  readonly directory: string;
  readonly estimators: number;
  readonly env: Record<string, string>;
  readonly estimatorBrokers?: readonly string[];
  /** Settings of the frames topic (e.g. its `compression.type`). */
  readonly framesTopicConfig?: readonly { readonly name: string; readonly value: string }[];
  /** More `warpwatch collect` flags (e.g. `--compression zstd`). */
  readonly collectorArgs?: readonly string[];
  readonly cleanup: { readonly estimators: EstimatorChild[]; readonly agents: Agent[]; readonly databases: string[] };
}): Promise<Pipeline> {
  const id = uniqueId(options.name);
  options.cleanup.databases.push(id);
  await createDatabase(id);
  await createFramesTopic(options.brokers, `${id}.frames`, options.framesTopicConfig);
  const env = estimatorEnv(id, id, `${id}-group`, { WARPWATCH_KAFKA_BROKERS: options.brokers, ...options.env });
  const group = Array.from({ length: options.estimators }, (_, i) => spawnEstimator({ ...env, WARPWATCH_KAFKA_BROKERS: options.estimatorBrokers?.[i] ?? options.brokers }, `${id}-${i}`));
  options.cleanup.estimators.push(...group);
  await Promise.all(group.map((child) => child.waitForLog(/assigned partitions \[\d/, 90_000)));
  const socket = join(options.directory, `${id}-run`, 'collector.sock');
  const agent = await startAgent(socket, join(options.directory, `${id}-spool`), options.brokers, `${id}.frames`, options.collectorArgs);
  options.cleanup.agents.push(agent);
  return { id, database: id, group, agent, socket };
}

/** A load of launches written to the collector's socket; see {@link startLoad}. */
export interface Load {
  /** What was sent so far, per job and window. */
  readonly sent: WindowTable;
  /** Launches sent so far. */
  readonly total: () => number;
  /** Sends nothing until {@link resume} (the streams go idle). */
  pause(): void;
  resume(): void;
  /** Stops sending and closes the connections. */
  stop(): Promise<void>;
}

/**
 * Writes one launch of every job every `everyMillis` (each job on its own connection to `socket`,
 * frames built by launchFrame with a seeded generator) and counts them per window of `windowMillis`.
 */
export async function startLoad(
  socket: string,
  jobs: readonly string[],
  options: { readonly everyMillis: number; readonly windowMillis: number; readonly seed: number; /** First launch sequence (launch ids follow it): loads of one test must not repeat one, or the estimator drops them as duplicates. */ readonly firstSequence?: number },
): Promise<Load> {
  const connections = await Promise.all(jobs.map(() => connect(socket)));
  const random = createSeededRandom(options.seed);
  const sent: WindowTable = new Map();
  let total = 0;
  let sequence = options.firstSequence ?? 0;
  let paused = false;
  const timer = setInterval(() => {
    if (paused) return;
    const now = Date.now();
    jobs.forEach((job, s) => {
      const frame = launchFrame(job, sequence++, now, random);
      addToTable(sent, job, now, frame.groupsCounted, options.windowMillis);
      total += 1;
      connections[s]?.write(encodeFrame(frame));
    });
  }, options.everyMillis);
  return {
    sent,
    total: () => total,
    pause() {
      paused = true;
    },
    resume() {
      paused = false;
    },
    async stop() {
      clearInterval(timer);
      await Promise.all(connections.map((c) => new Promise<void>((resolve) => c.end(() => resolve()))));
    },
  };
}

/**
 * Waits (up to `timeoutMillis`, then compares anyway) until InfluxDB holds every launch of `jobs`
 * that `sent` counts, and returns what it holds with the `late` frames the estimators counted.
 */
export async function settledPipeline(database: string, prefix: string, jobs: readonly string[], sent: WindowTable, group: readonly EstimatorChild[], timeoutMillis = 60_000): Promise<{ written: WindowTable; late: number }> {
  let written: WindowTable = new Map();
  await waitUntil(
    async () => {
      written = await writtenWindows(database, prefix, MEASUREMENTS.window);
      return jobs.every((job) => launchesOf(written, job) === launchesOf(sent, job));
    },
    timeoutMillis,
    'every launch in InfluxDB',
  ).catch(() => undefined);
  written = await writtenWindows(database, prefix, MEASUREMENTS.window);
  const outcomes = await Promise.all(group.filter((child) => child.process.exitCode === null && child.process.signalCode === null).map((child) => frameOutcomes(child)));
  return { written, late: outcomes.reduce((sum, o) => sum + (o['late'] ?? 0), 0) };
}

/** How many windows of `jobs` `table` holds. */
export function windowCount(table: WindowTable, jobs: readonly string[]): number {
  return jobs.reduce((n, job) => n + (table.get(job)?.size ?? 0), 0);
}

/** SIGTERMs `child` and resolves with how long it took to exit (ms) and how (exit code or signal). */
export async function timedStop(child: EstimatorChild): Promise<{ millis: number; exit: string }> {
  const started = Date.now();
  const exit = await stopChild(child, 'SIGTERM');
  return { millis: Date.now() - started, exit };
}

/**
 * Stops `load`, waits until the collector delivered every launch it read (asserting its accounting:
 * read = delivered, nothing dropped or held) and until InfluxDB holds them ({@link settledPipeline}).
 */
export async function finishLoad(pipeline: Pipeline, load: Load, jobs: readonly string[], timeouts: { readonly deliveredMillis?: number; readonly settledMillis?: number } = {}): Promise<{ total: number; delivered: number; written: WindowTable; late: number }> {
  await load.stop();
  const total = load.total();
  const settled = await delivered(pipeline.agent, total, timeouts.deliveredMillis);
  expect(settled.accounting).toMatchObject({ read: total, delivered: total, dropped: 0, held: 0, balanced: true });
  const { written, late } = await settledPipeline(pipeline.database, pipeline.id, jobs, load.sent, pipeline.group, timeouts.settledMillis);
  return { total, delivered: settled.accounting.delivered, written, late };
}
