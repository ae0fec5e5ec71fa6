// The container image, checked without a Docker engine: the files of the image's
// final stage are assembled from the Dockerfile's own COPY lines into a temporary directory,
// production dependencies are installed there as the dependencies stage does (`npm ci
// --omit=dev`), and the CLI runs from that directory: `collect --help`, `estimate --help`, and
// a `collect --replay` of recorded frames into the real broker. A file the image forgets (the
// CLI imports it at start) fails here.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame } from '../../protocol/index.ts';
import { consumeTopic } from './collector-kafka-helpers.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** The stages of a Dockerfile: FROM image, and COPY instructions as [sources, destination, from-stage]. */
function parseDockerfile(text: string): { from: string; copies: { sources: string[]; destination: string; fromStage: string | undefined }[]; runs: string[] }[] {
  const stages: { from: string; copies: { sources: string[]; destination: string; fromStage: string | undefined }[]; runs: string[] }[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    const from = /^FROM\s+(\S+)/i.exec(line);
    if (from !== null) stages.push({ from: from[1] as string, copies: [], runs: [] });
    const copy = /^COPY\s+(--from=(\S+)\s+)?(.+)$/i.exec(line);
    if (copy !== null) {
      const parts = (copy[3] as string).split(/\s+/);
      stages[stages.length - 1]?.copies.push({ sources: parts.slice(0, -1), destination: parts[parts.length - 1] as string, fromStage: copy[2] });
    }
    const run = /^RUN\s+(.+)$/i.exec(line);
    if (run !== null) stages[stages.length - 1]?.runs.push(run[1] as string);
  }
  return stages;
}

describe('the Docker image (assembled from the Dockerfile without Docker)', () => {
  const dockerfile = parseDockerfile(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  let app: string;
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['bin/warpwatch.mjs', ...args], { cwd: app, encoding: 'utf8', timeout: 120_000, env: { ...process.env, NODE_ENV: 'production', WARPWATCH_INFLUX_URL: 'off', ...env } });

  beforeAll(() => {
    app = mkdtempSync(join(tmpdir(), 'ww-image-'));
    const [dependencies, final] = [dockerfile[0], dockerfile[dockerfile.length - 1]];
    // The dependencies stage: its COPY lines, then its `npm ci` (production dependencies only).
    for (const copy of dependencies?.copies ?? []) for (const source of copy.sources) cpSync(join(root, source), join(app, source));
    for (const command of dependencies?.runs ?? []) {
      expect(command, 'the dependencies stage installs production dependencies').toMatch(/^npm ci --omit=dev/);
      // The Dockerfile's own command (with --prefer-offline: the packages are in npm's cache).
      const installed = spawnSync('sh', ['-c', `${command} --prefer-offline`], { cwd: app, encoding: 'utf8', timeout: 300_000 });
      expect(installed.status, installed.stderr).toBe(0);
    }
    // The final stage's own COPY lines (node_modules comes from the stage above, already in place).
    for (const copy of final?.copies ?? []) {
      if (copy.fromStage !== undefined) continue;
      for (const source of copy.sources) {
        const target = copy.destination.endsWith('/') || copy.sources.length > 1 ? join(app, copy.destination, source) : resolve(app, copy.destination);
        mkdirSync(resolve(target, '..'), { recursive: true });
        cpSync(join(root, source), target, { recursive: true });
      }
    }
  }, 400_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));

  it('is based on Node 22 LTS in both stages', () => {
    for (const stage of dockerfile) expect(stage.from).toMatch(/^node:22-/);
  });

  it('runs `collect --help` and `estimate --help`', () => {
    for (const command of ['collect', 'estimate']) {
      const result = run([command, '--help']);
      expect(result.status, `${command} --help: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain(`warpwatch ${command}`);
    }
  });

  it('replays recorded frames into the real broker and says everything was delivered', async () => {
    const brokers = process.env.WARPWATCH_KAFKA_BROKERS ?? '127.0.0.1:19092';
    const topic = `image-it-${Date.now().toString(36)}`;
    const file = join(app, 'frames.wwf');
    writeFileSync(file, Buffer.concat(Array.from({ length: 12 }, (_, s) => Buffer.from(fixtureFrameBytes({ job: 'image', kernel: 'k', sequence: s })))));
    const result = run(['collect', '--replay', file, '--brokers', brokers, '--spool-dir', join(app, 'spool'), '--metrics-port', 'off'], {
      WARPWATCH_FRAMES_TOPIC: topic,
      WARPWATCH_DLQ_TOPIC: `${topic}-dlq`,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/read 12 \(frames 12, rejected 0\) = delivered 12 .*everything delivered/);
    const got = await consumeTopic(brokers, topic, 12, 60_000);
    expect(got.map((m) => decodeFrame(m.value).frameSequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, s) => s));
  }, 200_000);
});
