// Helpers of the estimator integration tests (real Kafka and InfluxDB from the global setup):
// unique names, a child `warpwatch estimate` process, InfluxQL queries, frame production.
import { spawn, type ChildProcess } from 'node:child_process';
import { Kafka, logLevel, type Producer } from 'kafkajs';

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

export async function connectedProducer(): Promise<Producer> {
  const producer = kafkaClient().producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
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
