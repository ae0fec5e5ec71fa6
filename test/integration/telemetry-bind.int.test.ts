// Where /metrics and /healthz listen (docs/security.md): loopback by default outside containers,
// all interfaces only when WARPWATCH_METRICS_HOST says so (the container images and manifests
// do). Checked from outside each real process: the kernel's socket table (/proc/net/tcp) and a
// connection to the machine's own non-loopback address.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../deploy/local/index.ts';
import { requiredEnv } from './stack-env.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-bind-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The local IPv4 addresses the kernel reports listening on `port` (hex little-endian decoded). */
function listeningAddresses(port: number): string[] {
  const rows = readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1);
  const found: string[] = [];
  for (const row of rows) {
    const [, local, , state] = row.trim().split(/\s+/);
    if (local === undefined || state !== '0A') continue; // 0A = LISTEN
    const [hexAddress = '', hexPort = ''] = local.split(':');
    if (Number.parseInt(hexPort, 16) !== port) continue;
    const bytes = (hexAddress.match(/../g) ?? []).map((byte) => Number.parseInt(byte, 16)).reverse();
    found.push(bytes.join('.'));
  }
  return found;
}

const externalAddress = (): string | undefined =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address;

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

async function startService(command: 'collect' | 'estimate', port: number, env: Record<string, string>): Promise<{ child: ChildProcess; stop: () => Promise<void> }> {
  const id = `wwbind${randomUUID().slice(0, 8)}`;
  const args = command === 'collect' ? ['collect', '--stdin', '--metrics-port', String(port), '--spool-dir', join(directory, id)] : ['estimate', '--instance', id];
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', ...args], {
    env: {
      ...process.env,
      WARPWATCH_KAFKA_BROKERS: requiredEnv('WARPWATCH_KAFKA_BROKERS'),
      WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
      WARPWATCH_DLQ_TOPIC: `${id}.dlq`,
      WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions`,
      WARPWATCH_ALERTS_TOPIC: `${id}.alerts`,
      WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`,
      WARPWATCH_ESTIMATOR_GROUP_ID: `${id}-group`,
      WARPWATCH_INFLUX_URL: 'off',
      WARPWATCH_METRICS_PORT: String(port),
      ...env,
    },
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 60_000;
  while (listeningAddresses(port).length === 0) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${command} did not listen on ${port}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    async stop() {
      child.stdin?.end();
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('telemetry endpoints bind address (real processes)', () => {
  const external = externalAddress();

  for (const command of ['collect', 'estimate'] as const) {
    it(`${command}: loopback only by default; all interfaces only with WARPWATCH_METRICS_HOST=0.0.0.0`, async () => {
      expect(external, 'this check needs a non-loopback IPv4 address').toBeDefined();
      const port = await freePort();
      const byDefault = await startService(command, port, {});
      try {
        expect(listeningAddresses(port)).toEqual(['127.0.0.1']);
        expect(await connects('127.0.0.1', port)).toBe(true);
        expect(await connects(external ?? '', port)).toBe(false);
      } finally {
        await byDefault.stop();
      }
      const open = await startService(command, port, { WARPWATCH_METRICS_HOST: '0.0.0.0' });
      try {
        expect(listeningAddresses(port)).toEqual(['0.0.0.0']);
        expect(await connects(external ?? '', port)).toBe(true);
      } finally {
        await open.stop();
      }
    });
  }
});
