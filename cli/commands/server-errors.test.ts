// With Kafka and InfluxDB down, `warpwatch collect` and `warpwatch estimate` say once, in one
// line per server, what to try, and keep retrying: the collector keeps spooling and
// reports /healthz degraded (nothing lost), the estimator keeps running. Real processes against
// real closed ports, no mocks. (The local-stack hint for the default addresses is checked in
// service/server-hint.test.ts: the default ports may be served by a stack on this machine.)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { closedPort } from '../../service/testing/test-support.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'ww-server-errors-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(directory, { recursive: true, force: true });
});


/** Starts `warpwatch ...args` with only the given WARPWATCH_* variables; stderr is collected. */
function start(args: readonly string[], env: Record<string, string>): { child: ChildProcess; stderr: () => string; exited: () => boolean } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('WARPWATCH_')));
  const child = spawn(process.execPath, [join(root, 'bin', 'warpwatch.mjs'), ...args], { cwd: directory, env: { ...clean, ...env }, stdio: ['pipe', 'ignore', 'pipe'] });
  children.push(child);
  let text = '';
  let exited = false;
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  child.once('exit', () => (exited = true));
  return { child, stderr: () => text, exited: () => exited };
}

async function waitFor(condition: () => boolean, timeoutMillis: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting; stderr so far:\n${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const linesMatching = (text: string, pattern: RegExp): string[] => text.split('\n').filter((line) => pattern.test(line));

describe('servers down', () => {
  it('collect: one line per server with the variable to check; keeps spooling, /healthz degraded, no kafkajs retry logs', async () => {
    const kafkaPort = await closedPort();
    const influxPort = await closedPort();
    const run = start(
      ['collect', '--stdin', '--spool-dir', join(directory, 'spool'), '--metrics-port', '0', '--influx-url', `http://127.0.0.1:${influxPort}`, '--pipeline-interval-millis', '300'],
      { WARPWATCH_KAFKA_BROKERS: `127.0.0.1:${kafkaPort}` },
    );
    run.child.stdin?.write(readFileSync(join(root, 'protocol', 'vectors', 'cpp-stream.bin'))); // 4 frames; stdin stays open
    const kafkaHint = new RegExp(`WW_ERR_KAFKA_PRODUCE: .*; check WARPWATCH_KAFKA_BROKERS \\(or --brokers\\): nothing answers at 127\\.0\\.0\\.1:${kafkaPort}$`);
    const influxHint = new RegExp(`WW_ERR_COLLECTOR_INFLUX_WRITE: .*points buffered; check WARPWATCH_INFLUX_URL \\(or --influx-url\\): nothing answers at http://127\\.0\\.0\\.1:${influxPort}\\. Further failures`);
    await waitFor(() => linesMatching(run.stderr(), kafkaHint).length > 0 && linesMatching(run.stderr(), influxHint).length > 0, 30_000, run.stderr);
    const port = Number(/metrics http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(run.stderr())?.[1]);
    await new Promise((resolve) => setTimeout(resolve, 6_000)); // six retries of each server later
    const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { status: string };
    const stderr = run.stderr();
    expect(run.exited(), stderr).toBe(false); // nothing-lost contract: it does not give up
    expect(health.status).toBe('degraded');
    expect(linesMatching(stderr, kafkaHint), stderr).toHaveLength(1);
    expect(linesMatching(stderr, influxHint), stderr).toHaveLength(1);
    expect(linesMatching(stderr, /kafkajs|ECONNREFUSED/).length, stderr).toBe(2); // the two lines above, nothing per retry
  }, 60_000);

  it('estimate: one line per server with the variable to check, not repeated while kafkajs retries', async () => {
    const kafkaPort = await closedPort();
    const influxPort = await closedPort();
    const run = start(['estimate', '--metrics-port', 'off', '--brokers', `127.0.0.1:${kafkaPort}`], { WARPWATCH_INFLUX_URL: `http://127.0.0.1:${influxPort}` });
    const kafkaHint = new RegExp(`WW_ERR_ESTIMATOR_KAFKA: Kafka at 127\\.0\\.0\\.1:${kafkaPort} does not answer .*; check WARPWATCH_KAFKA_BROKERS \\(or --brokers\\): nothing answers at 127\\.0\\.0\\.1:${kafkaPort}$`);
    const influxHint = new RegExp(`InfluxDB at http://127\\.0\\.0\\.1:${influxPort} does not answer yet; .*; check WARPWATCH_INFLUX_URL \\(or --influx-url\\): nothing answers at http://127\\.0\\.0\\.1:${influxPort}$`);
    await waitFor(() => linesMatching(run.stderr(), kafkaHint).length > 0 && linesMatching(run.stderr(), influxHint).length > 0, 30_000, run.stderr);
    // kafkajs reconnects several times in the next seconds (the start gives up after its retries,
    // 10..60 s: then one more line says so, exit 1, without repeating the hint).
    await waitFor(() => run.exited(), 6_000, run.stderr).catch(() => undefined);
    const stderr = run.stderr();
    const others = stderr.trimEnd().split('\n').filter((line) => !kafkaHint.test(line) && !influxHint.test(line));
    expect(linesMatching(stderr, kafkaHint), stderr).toHaveLength(1);
    expect(linesMatching(stderr, influxHint), stderr).toHaveLength(1);
    expect(others, stderr).toEqual(run.exited() ? [`warpwatch: WW_ERR_ESTIMATOR_KAFKA: creating or checking topics on 127.0.0.1:${kafkaPort}: Connection error: connect ECONNREFUSED 127.0.0.1:${kafkaPort}`] : []);
  }, 60_000);
});
