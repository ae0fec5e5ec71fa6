// Helpers of the estimator integration tests (real Kafka and InfluxDB from the global setup):
// unique names, a child `warpwatch estimate` process and its /healthz and /metrics, the consumer
// group's assignment, InfluxQL queries, frame production, and the exact table of windows sent
// against the one InfluxDB holds.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import { AssignerProtocol, Kafka, logLevel, type Producer } from 'kafkajs';
import { CategoricalDistribution, type RandomSource } from '../../model/index.ts';
import { MEASUREMENTS, topicToCreate } from '../../contracts/index.ts';
import { encodeFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { syntheticLaunchSummary } from '../../estimator/index.ts';

export const brokers = (): string => process.env['WARPWATCH_KAFKA_BROKERS'] ?? '127.0.0.1:19092';
export const influxUrl = (): string => process.env['WARPWATCH_INFLUX_URL'] ?? 'http://127.0.0.1:18086';

export function uniqueId(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;
}

export async function influxQuery(database: string, query: string): Promise<{ columns: string[]; values: unknown[][]; tags?: Record<string, string> }[]> {
  const response = await fetch(`${influxUrl()}/query?db=${encodeURIComponent(database)}&q=${encodeURIComponent(query)}`, { method: 'POST' });
  if (!response.ok) throw new Error(`InfluxQL ${query} failed: HTTP ${response.status} ${await response.text()}`);
  const body = (await response.json()) as { results: { series?: { columns: string[]; values: unknown[][]; tags?: Record<string, string> }[]; error?: string }[] };
  const result = body.results[0];
  if (result?.error !== undefined) throw new Error(`InfluxQL ${query}: ${result.error}`);
  return result?.series ?? [];
}

export async function createDatabase(name: string): Promise<void> {
  await influxQuery(name, `CREATE DATABASE "${name}"`);
}

export async function dropDatabase(name: string): Promise<void> {
  await influxQuery(name, `DROP DATABASE "${name}"`);
}

/** Env for an estimator with isolated topics, database and group. */
export function estimatorEnv(id: string, database: string, groupId: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    WARPWATCH_KAFKA_BROKERS: brokers(),
    WARPWATCH_INFLUX_URL: influxUrl(),
    WARPWATCH_INFLUX_DATABASE: database,
    WARPWATCH_ESTIMATOR_GROUP_ID: groupId,
    WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
    WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`,
    WARPWATCH_ALERTS_TOPIC: `${id}.alerts`,
    WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`,
    WARPWATCH_DLQ_TOPIC: `${id}.dlq`,
    WARPWATCH_WINDOW_MILLIS: '1000',
    WARPWATCH_IDLE_CLOSE_MILLIS: '1500',
    WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '300',
    WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000',
    WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '500',
    WARPWATCH_METRICS_PORT: '0',
    WARPWATCH_BOOTSTRAP_REPLICATES: '8',
    WARPWATCH_QUANTILE_SAMPLES: '2000',
    ...extra,
  };
}

/** A `warpwatch estimate` child process; stderr is kept for failure messages. */
export interface EstimatorChild {
  readonly process: ChildProcess;
  readonly log: string[];
  /** Resolves with the exit code or signal. */
  readonly exited: Promise<string>;
  /** Resolves when the log shows that partitions were assigned. */
  waitForLog(pattern: RegExp, timeoutMillis: number): Promise<void>;
}

export function spawnEstimator(env: Record<string, string>, instance: string): EstimatorChild {
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'estimate', '--instance', instance], {
    cwd: process.cwd(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log: string[] = [];
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (line === '') continue;
      log.push(`[${instance}] ${line}`);
      for (const waiter of [...waiters]) {
        if (waiter.pattern.test(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
    }
  });
  const exited = new Promise<string>((resolve) => child.on('exit', (code, signal) => resolve(signal ?? String(code))));
  return {
    process: child,
    log,
    exited,
    waitForLog(pattern, timeoutMillis) {
      if (log.some((line) => pattern.test(line))) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no log line matching ${pattern} within ${timeoutMillis} ms:\n${log.join('\n')}`)), timeoutMillis);
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

export async function stopChild(child: EstimatorChild, signal: NodeJS.Signals = 'SIGTERM'): Promise<string> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return child.exited;
  child.process.kill(signal);
  return child.exited;
}

export function kafkaClient(): Kafka {
  return new Kafka({ brokers: brokers().split(','), clientId: 'estimator-int-test', logLevel: logLevel.NOTHING });
}

export async function createTopic(topic: string, partitions: number): Promise<void> {
  const admin = kafkaClient().admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** Creates a frames topic as the services would (contracts/topics.ts: its cleanup policy and max.message.bytes), so /healthz reports no topic-config problem. */
export async function createFramesTopic(topic: string, partitions: number): Promise<void> {
  const admin = kafkaClient().admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [topicToCreate('frames', topic, { partitions, replicationFactor: -1 })], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/**
 * Messages of `topic` the consumer group has committed, summed over partitions: what it has
 * processed and checkpointed (the estimator checkpoints before it commits). The topics are new
 * per run, so this counts from 0.
 */
export async function committedMessages(groupId: string, topic: string): Promise<number> {
  const admin = kafkaClient().admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return (entry?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

export async function connectedProducer(): Promise<Producer> {
  const producer = kafkaClient().producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
}

/** Sends generated launches (estimator/testing generateLaunches) to `topic` as encoded frames under their stream keys, acknowledged by every replica. */
export async function produceLaunches(topic: string, launches: readonly { readonly key: string; readonly frame: LaunchSummaryFrame }[]): Promise<void> {
  const producer = await connectedProducer();
  try {
    await producer.send({ topic, acks: -1, messages: launches.map((l) => ({ key: l.key, value: Buffer.from(encodeFrame(l.frame)) })) });
  } finally {
    await producer.disconnect();
  }
}

/** The checkpoint topic as a compacted reader sees it: the last value of each key (null = tombstone), every partition read to its end. */
export async function checkpointTopicRecords(topic: string): Promise<Map<string, string | null>> {
  const admin = kafkaClient().admin();
  await admin.connect();
  const highs = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  await admin.disconnect();
  const values = new Map<string, string | null>();
  if ([...highs.values()].every((high) => high === 0n)) return values;
  const consumer = kafkaClient().consumer({ groupId: uniqueId('ckpt-reader') });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const positions = new Map<number, bigint>();
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const key = message.key?.toString('utf8');
      if (key !== undefined) values.set(key, message.value === null ? null : message.value.toString('utf8'));
      positions.set(partition, BigInt(message.offset));
      await Promise.resolve();
    },
  });
  const readToEnd = (): boolean => [...highs].every(([partition, high]) => (positions.get(partition) ?? -1n) + 1n >= high);
  await waitUntil(() => Promise.resolve(readToEnd()), 30_000, `the checkpoint topic read to its end (${JSON.stringify(Object.fromEntries([...highs].map(([p, h]) => [p, String(h)])))})`);
  await consumer.disconnect();
  return values;
}

/** Polls `probe` until it returns true or the time is up. */
export async function waitUntil(probe: () => Promise<boolean>, timeoutMillis: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  for (;;) {
    if (await probe()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMillis} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** All rows of a measurement as sorted JSON lines (tags + fields + time): comparable across databases. */
export async function measurementRows(database: string, measurement: string): Promise<string[]> {
  const series = await influxQuery(database, `SELECT * FROM "${measurement}" GROUP BY *`);
  const rows: string[] = [];
  for (const s of series) {
    for (const values of s.values) {
      const row: Record<string, unknown> = { ...(s.tags ?? {}) };
      s.columns.forEach((column, i) => {
        row[column] = values[i];
      });
      rows.push(JSON.stringify(Object.keys(row).sort().map((k) => [k, row[k]])));
    }
  }
  return rows.sort();
}

/** estimatorEnv without its session/heartbeat overrides: the service's defaults apply (the failover bound of docs/estimator.md is stated for them). */
export function defaultsEnv(id: string, database: string, groupId: string, extra: Record<string, string> = {}): Record<string, string> {
  const env = estimatorEnv(id, database, groupId, extra);
  delete env['WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS'];
  delete env['WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS'];
  return env;
}

/** Port of an estimator child's /metrics and /healthz, from its start-up log line. */
export function metricsPortOf(estimator: EstimatorChild): number {
  const port = /metrics 127\.0\.0\.1:(\d+)/.exec(estimator.log.join('\n'))?.[1];
  if (port === undefined) throw new Error(`no metrics port in the estimator's log:\n${estimator.log.join('\n')}`);
  return Number(port);
}

/** The /healthz fields the integration tests read. */
export interface EstimatorHealthz {
  readonly status: string;
  readonly partitions: readonly number[];
  readonly streams: number;
  /** Frames behind the end of the frames topic, null while unknown. */
  readonly consumerLag?: number | null;
  readonly counters: { readonly framesIn: number; readonly windowsClosed: number };
}

/** An estimator child's /healthz. */
export async function healthOf(estimator: EstimatorChild): Promise<EstimatorHealthz> {
  return (await (await fetch(`http://127.0.0.1:${metricsPortOf(estimator)}/healthz`)).json()) as EstimatorHealthz;
}

/** Sum of an estimator's `warpwatch.estimator.frames` counter per outcome, from its /metrics. */
export async function frameOutcomes(estimator: EstimatorChild): Promise<Record<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPortOf(estimator)}/metrics`)).text();
  const outcomes: Record<string, number> = {};
  for (const match of text.matchAll(/^warpwatch_estimator_frames\w*\{([^}]*)\}\s+(\S+)/gm)) {
    const outcome = /outcome="([^"]*)"/.exec(match[1] ?? '')?.[1] ?? '?';
    outcomes[outcome] = (outcomes[outcome] ?? 0) + Number(match[2]);
  }
  return outcomes;
}

/**
 * The consumer group as the broker sees it (kafkajs admin describeGroups): its state and, per
 * member (client id), the partitions of `topic` assigned to it, sorted.
 */
export async function groupAssignment(groupId: string, topic: string): Promise<{ state: string; members: Map<string, number[]> }> {
  const admin = kafkaClient().admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const group = groups[0];
    const members = new Map<string, number[]>();
    for (const member of group?.members ?? []) {
      const assignment = AssignerProtocol.MemberAssignment.decode(member.memberAssignment);
      members.set(`${member.clientId} ${member.memberId}`, [...(assignment?.assignment[topic] ?? [])].sort((a, b) => a - b));
    }
    return { state: group?.state ?? 'Unknown', members };
  } finally {
    await admin.disconnect();
  }
}

/** Launches and groups per window start (ms), per stream (job). */
export type WindowTable = Map<string, Map<number, { launches: number; groups: number }>>;

/** Counts one launch of `job` ending at `endMillis` with `groups` groups into its window of `windowMillis`. */
export function addToTable(table: WindowTable, job: string, endMillis: number, groups: number, windowMillis: number): void {
  let windows = table.get(job);
  if (windows === undefined) table.set(job, (windows = new Map()));
  const start = Math.floor(endMillis / windowMillis) * windowMillis;
  const cell = windows.get(start) ?? { launches: 0, groups: 0 };
  windows.set(start, { launches: cell.launches + 1, groups: cell.groups + groups });
}

/**
 * What InfluxDB holds: launches and groups of every `warpwatch_window` point of the jobs
 * starting with `prefix`. A window is one point per (stream tags, window start): written twice
 * it is stored once, so a window counted twice shows as launches and groups above what was sent.
 */
export async function writtenWindows(database: string, prefix: string, measurement: string): Promise<WindowTable> {
  const query = `SELECT "launches", "groups" FROM "${measurement}" WHERE "job" =~ /^${prefix}/ GROUP BY "job"`;
  const response = await fetch(`${influxUrl()}/query?${new URLSearchParams({ db: database, q: query, epoch: 'ms' }).toString()}`);
  const body = (await response.json()) as { results: { series?: { tags: { job: string }; values: [number, number, number][] }[] }[] };
  const table: WindowTable = new Map();
  for (const series of body.results[0]?.series ?? []) {
    table.set(series.tags.job, new Map(series.values.map(([time, launches, groups]) => [time, { launches, groups }])));
  }
  return table;
}

/**
 * The windows of `job` (job names starting with `job`) in `database` once InfluxDB holds one of
 * them, read again 1 s later so that windows written together are all there, sorted by start.
 *
 * @throws Error when none is written within `timeoutMillis`.
 */
export async function settledWindowsOf(database: string, job: string, timeoutMillis = 60_000): Promise<[number, { launches: number; groups: number }][]> {
  await waitUntil(async () => ((await writtenWindows(database, 'job', MEASUREMENTS.window)).get(job)?.size ?? 0) > 0, timeoutMillis, `a window of ${job} in InfluxDB`);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  return windowsOf(await writtenWindows(database, 'job', MEASUREMENTS.window), job);
}

/** Launches of `job` over all its windows in `table`. */
export function launchesOf(table: WindowTable, job: string): number {
  let total = 0;
  for (const cell of table.get(job)?.values() ?? []) total += cell.launches;
  return total;
}

/** The windows of `job` as sorted [start, {launches, groups}] pairs, for toEqual. */
export function windowsOf(table: WindowTable, job: string): [number, { launches: number; groups: number }][] {
  return [...(table.get(job) ?? new Map<number, { launches: number; groups: number }>())].sort((a, b) => a[0] - b[0]);
}

const launchDistribution = CategoricalDistribution.fromPmf(new Map([[1, 4], [3, 3], [12, 2], [40, 1]]));

/** A LaunchSummary of `job` ending at `endMillis`, with 4..8 groups of 8 lanes (varying, so the groups per window check more than the launch count). */
export function launchFrame(job: string, sequence: number, endMillis: number, random: RandomSource): LaunchSummaryFrame {
  return syntheticLaunchSummary({
    job,
    kernel: 'k',
    deviceName: 'synthetic',
    groupSize: 8,
    source: 'cpu',
    launchId: BigInt(sequence),
    frameSequence: sequence,
    endMillis,
    groups: 4 + (sequence % 5),
    distribution: launchDistribution,
    random,
    measuredOverhead: 0.02,
    measuredNoise: 0.01,
  });
}

/**
 * The estimator processes and InfluxDB databases of one test file, SIGKILLed and dropped after
 * its tests: call once at the top of the file (it registers vitest's afterAll) and push what the
 * tests start into the two arrays.
 *
 * @example const { children, databases } = cleanedUpAfterAll(); children.push(spawnEstimator(env, 'a'));
 */
export function cleanedUpAfterAll(): { readonly children: EstimatorChild[]; readonly databases: string[] } {
  const children: EstimatorChild[] = [];
  const databases: string[] = [];
  afterAll(async () => {
    await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
    await Promise.all(databases.map((db) => dropDatabase(db).catch(() => undefined)));
  });
  return { children, databases };
}
