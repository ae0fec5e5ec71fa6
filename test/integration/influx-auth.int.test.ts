// InfluxDB with authentication, for real (docs/security.md): an InfluxDB 1.8 private to this file
// (deploy/local with WARPWATCH_STACK_INFLUX_AUTH: `auth-enabled = true`, an admin and a
// write-only user created at set-up). The estimator and the collector write with credentials
// from a file; with wrong ones /healthz is degraded with reason `influx-auth`, the points are
// buffered and counted, and once the file is fixed they are written, without a restart.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame, encodeFrame } from '../../protocol/index.ts';
import { freePort, influxQuery, type LocalInfluxCredentials } from '../../deploy/local/index.ts';
import { estimatorEnv, spawnEstimator, stopChild, waitUntil } from './estimator-support.ts';
import { startPrivateInflux, type PrivateInflux } from './private-influx.ts';
import { requiredEnv } from './stack-env.ts';

const PORT = 28386;
const URL_ = `http://127.0.0.1:${PORT}`;
const DATABASE = 'wwauth';

let influx: PrivateInflux;
let credentials: LocalInfluxCredentials;
let directory: string;

beforeAll(async () => {
  influx = await startPrivateInflux(PORT, DATABASE);
  credentials = influx.credentials;
  directory = mkdtempSync(join(tmpdir(), 'ww-influx-auth-'));
}, 120_000);

afterAll(async () => {
  await influx?.destroy();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
}, 60_000);

async function http(path: string, init: { method?: string; body?: string; token?: string } = {}): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = init.token === undefined ? {} : { Authorization: `Token ${init.token}` };
  const response = await fetch(`${URL_}${path}`, { method: init.method ?? 'GET', headers, body: init.body });
  return { status: response.status, body: await response.text() };
}

const adminToken = (): string => `${credentials.admin.username}:${credentials.admin.password}`;
const writerToken = (): string => `${credentials.writer.username}:${credentials.writer.password}`;

async function countOf(measurement: string, where = ''): Promise<number> {
  const answer = (await influxQuery(URL_, `SELECT count(*) FROM "${measurement}"${where}`, DATABASE, credentials.admin)) as { results: { series?: { values: unknown[][] }[] }[] };
  const row = answer.results[0]?.series?.[0]?.values[0] ?? [];
  return Math.max(0, ...row.slice(1).map(Number).filter(Number.isFinite));
}

interface Health {
  status: string;
  reasons: string[];
}

async function healthOf(port: number): Promise<Health> {
  return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Health;
}

describe('InfluxDB with authentication (real server)', () => {
  it('refuses anonymous requests; the write-only user may write but not read; the admin may both', async () => {
    const line = `auth_probe value=1 ${Date.now()}`;
    expect((await http(`/write?db=${DATABASE}`, { method: 'POST', body: line })).status).toBe(401);
    expect((await http(`/api/v2/write?bucket=${DATABASE}/autogen&precision=ms`, { method: 'POST', body: line, token: 'nobody:wrong' })).status).toBe(401);
    expect((await http(`/api/v2/write?bucket=${DATABASE}/autogen&precision=ms`, { method: 'POST', body: line, token: writerToken() })).status).toBe(204);
    const read = await http(`/query?db=${DATABASE}&q=${encodeURIComponent('SELECT * FROM auth_probe')}`, { token: writerToken() });
    expect(read.status).toBe(403);
    expect(await countOf('auth_probe')).toBe(1);
    expect(readFileSync(credentials.writerTokenFile, 'utf8')).toBe(writerToken());
    void adminToken;
  });

  it('estimator: wrong credentials from the file -> degraded (influx-auth), windows buffered and counted; the fixed file -> written, no restart', async () => {
    const id = `wwinfluxauth${randomUUID().slice(0, 8)}`;
    const port = await freePort();
    const tokenFile = join(directory, `${id}-token`);
    writeFileSync(tokenFile, `${credentials.writer.username}:wrong-${randomUUID()}\n`, { mode: 0o600 });
    const env = estimatorEnv(id, DATABASE, `${id}-group`, {
      WARPWATCH_INFLUX_URL: URL_,
      WARPWATCH_INFLUX_TOKEN_FILE: tokenFile,
      WARPWATCH_INFLUX_MAX_RETRY_DELAY_MILLIS: '500',
      WARPWATCH_METRICS_PORT: String(port),
    });
    const estimator = spawnEstimator(env, 'auth');
    try {
      await estimator.waitForLog(/group .* on /, 60_000);
      await estimator.waitForLog(/WW_ERR_ESTIMATOR_INFLUX_WRITE/, 30_000);
      // Stamped now: InfluxDB drops points older than the retention policy (30 days).
      const now = BigInt(Date.now()) * 1_000_000n;
      const frames = Array.from({ length: 30 }, (_, sequence) => {
        const frame = decodeFrame(fixtureFrameBytes({ job: id, kernel: 'k', sequence }));
        const start = now + BigInt(sequence) * 1_000_000n;
        return Buffer.from(encodeFrame({ ...frame, startUnixNanos: start, endUnixNanos: start + 1_000_000n }));
      });
      const file = join(directory, `${id}.wwf`);
      writeFileSync(file, Buffer.concat(frames));
      const sent = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'collect', '--replay', file, '--spool-dir', join(directory, `spool-${id}`), '--metrics-port', 'off'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, WARPWATCH_KAFKA_BROKERS: requiredEnv('WARPWATCH_KAFKA_BROKERS'), WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_INFLUX_URL: 'off' },
      });
      expect(sent.status, sent.stderr).toBe(0);
      let health: Health = { status: '', reasons: [] };
      await waitUntil(
        async () => {
          health = await healthOf(port);
          return health.status === 'degraded';
        },
        30_000,
        'a degraded /healthz',
      );
      expect(health.reasons).toEqual(['influx-auth']);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const buffered = Number(/^warpwatch_estimator_influx_buffered_lines\S* (\S+)/m.exec(metrics)?.[1] ?? 'NaN');
      expect(buffered, metrics.split('\n').filter((l) => l.includes('influx')).join('\n')).toBeGreaterThan(0);
      expect(await countOf('warpwatch_window', ` WHERE stream = '${id}/k'`)).toBe(0);

      writeFileSync(tokenFile, `${writerToken()}\n`, { mode: 0o600 });
      await waitUntil(async () => (await countOf('warpwatch_window', ` WHERE stream = '${id}/k'`)) > 0, 30_000, 'the buffered windows in InfluxDB').catch(async (error: unknown) => {
        const shown = JSON.stringify(await influxQuery(URL_, 'SHOW TAG VALUES FROM "warpwatch_window" WITH KEY = "stream"', DATABASE, credentials.admin));
        throw new Error(`${String(error)}\n${shown}\n${estimator.log.join('\n')}\n${(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).split('\n').filter((l) => l.includes('influx')).join('\n')}`);
      });
      await waitUntil(async () => (await healthOf(port)).status === 'ok', 30_000, '/healthz ok again');
    } finally {
      await stopChild(estimator);
    }
    const all = estimator.log.join('\n');
    expect(all).not.toContain(credentials.writer.password);
    expect(all.match(/WW_ERR_ESTIMATOR_INFLUX_WRITE/g) ?? []).toHaveLength(1);
  });

  it('collector: wrong credentials from the file -> degraded (influx-auth), pipeline points buffered; the fixed file -> written, no restart', async () => {
    const id = `wwcollauth${randomUUID().slice(0, 8)}`;
    const tokenFile = join(directory, `${id}-token`);
    writeFileSync(tokenFile, `${credentials.writer.username}:wrong-${randomUUID()}`, { mode: 0o600 });
    const child: ChildProcess = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--stdin', '--metrics-port', '0', '--spool-dir', join(directory, `spool-${id}`), '--instance', id], {
      env: {
        ...process.env,
        WARPWATCH_KAFKA_BROKERS: requiredEnv('WARPWATCH_KAFKA_BROKERS'),
        WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
        WARPWATCH_DLQ_TOPIC: `${id}.dlq`,
        WARPWATCH_INFLUX_URL: URL_,
        WARPWATCH_INFLUX_DATABASE: DATABASE,
        WARPWATCH_INFLUX_TOKEN_FILE: tokenFile,
        WARPWATCH_PIPELINE_INTERVAL_MILLIS: '300',
      },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitUntil(async () => /http:\/\/127\.0\.0\.1:(\d+)\/metrics/.test(stderr), 30_000, 'the collector to start');
      const port = Number(/http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr)?.[1]);
      let health: Health = { status: '', reasons: [] };
      await waitUntil(
        async () => {
          health = await healthOf(port);
          return health.reasons.includes('influx-auth');
        },
        30_000,
        `influx-auth in /healthz (stderr: ${stderr})`,
      );
      expect(health.status).toBe('degraded');
      expect(await countOf('warpwatch_pipeline', ` WHERE instance = '${id}'`)).toBe(0);
      writeFileSync(tokenFile, writerToken(), { mode: 0o600 });
      await waitUntil(async () => (await countOf('warpwatch_pipeline', ` WHERE instance = '${id}'`)) > 0, 60_000, 'pipeline points in InfluxDB');
      await waitUntil(async () => !(await healthOf(port)).reasons.includes('influx-auth'), 30_000, 'influx-auth gone from /healthz');
    } finally {
      child.stdin?.end();
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).not.toContain(credentials.writer.password);
    expect(stderr.match(/WW_ERR_COLLECTOR_INFLUX_WRITE/g) ?? []).toHaveLength(1);
  });
});
