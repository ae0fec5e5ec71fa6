// The installable CLI: `npm pack` of this checkout gives a tarball that installs
// globally and runs outside the checkout from its compiled JavaScript (dist/, built by the
// `prepare` script), with no TypeScript and no tsx loader involved: `--version`, `demo --quick`
// (which builds the CPU kernels from the C++ sources the package ships) and a `collect --replay`
// through the validation worker (a separate compiled entry point) into the real broker.
// The pack runs in a copy of the checkout's files, so the checkout's own dist/ is not touched
// while other tests run the CLI.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame } from '../../protocol/index.ts';
import { consumeTopic } from './collector-kafka-helpers.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

describe('npm pack: the installable CLI', () => {
  let work: string;
  let tarball: string;
  let warpwatch: string;
  let elsewhere: string;
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(warpwatch, args, { cwd: elsewhere, encoding: 'utf8', timeout: 300_000, env: { ...process.env, WARPWATCH_INFLUX_URL: 'off', ...env } });

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'ww-pack-'));
    // The checkout's files as git sees them (tracked, and new files not ignored): no dist/, no caches.
    const source = join(work, 'source');
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: root, encoding: 'utf8' }).split('\0').filter((f) => f !== '');
    for (const file of files) {
      if (!existsSync(join(root, file))) continue; // deleted in the working tree
      mkdirSync(dirname(join(source, file)), { recursive: true });
      cpSync(join(root, file), join(source, file));
    }
    symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'));
    const packed = spawnSync('npm', ['pack', '--pack-destination', work, '--no-audit', '--no-fund'], { cwd: source, encoding: 'utf8', timeout: 300_000 });
    expect(packed.status, packed.stderr).toBe(0);
    tarball = join(work, `warpwatch-${version}.tgz`);
    const prefix = join(work, 'prefix');
    const installed = spawnSync('npm', ['install', '-g', '--prefix', prefix, tarball, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: work, encoding: 'utf8', timeout: 300_000 });
    expect(installed.status, installed.stderr).toBe(0);
    warpwatch = join(prefix, 'bin', 'warpwatch');
    elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere);
  }, 600_000);
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('ships the compiled CLI, the kernels sources and the docs, and no TypeScript', () => {
    const listing = execFileSync('tar', ['tzf', tarball], { encoding: 'utf8' }).split('\n').filter((f) => f !== '');
    for (const needed of ['package/bin/warpwatch.mjs', 'package/dist/main.js', 'package/dist/validation-worker.js', 'package/kernels/CMakeLists.txt', 'package/kernels/include/warpwatch/probe.cuh', 'package/README.md']) {
      expect(listing, needed).toContain(needed);
    }
    expect(listing.filter((f) => f.endsWith('.ts'))).toEqual([]);
  });

  it('runs `warpwatch --version` and `--help` from the global install', () => {
    const result = run(['--version']);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe(version);
    const help = run(['--help']);
    expect(help.status, help.stderr).toBe(0);
    for (const command of ['collect', 'estimate', 'model', 'advise', 'analyze', 'demo', 'run']) expect(help.stdout).toContain(`  ${command} `);
  });

  it('runs `warpwatch demo --quick` outside the checkout and writes its report', () => {
    const result = run(['demo', '--quick', '--no-progress', '--out', join(elsewhere, 'demo')]);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/loss_counts vs loss_measured/);
    expect(readdirSync(join(elsewhere, 'demo')).sort()).toEqual(expect.arrayContaining(['report.html', 'results.json']));
  }, 300_000);

  it('replays frames through the compiled validation worker into the real broker, all delivered', async () => {
    const brokers = process.env.WARPWATCH_KAFKA_BROKERS ?? '127.0.0.1:19092';
    const topic = `pack-it-${Date.now().toString(36)}`;
    const file = join(elsewhere, 'frames.wwf');
    writeFileSync(file, Buffer.concat(Array.from({ length: 10 }, (_, s) => Buffer.from(fixtureFrameBytes({ job: 'pack', kernel: 'k', sequence: s })))));
    const result = run(['collect', '--replay', file, '--brokers', brokers, '--spool-dir', join(elsewhere, 'spool'), '--metrics-port', 'off'], {
      WARPWATCH_FRAMES_TOPIC: topic,
      WARPWATCH_DLQ_TOPIC: `${topic}-dlq`,
      WARPWATCH_VALIDATION_WORKER: 'true',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/read 10 \(frames 10, rejected 0\) = delivered 10 .*everything delivered/);
    const got = await consumeTopic(brokers, topic, 10, 60_000);
    expect(got.map((m) => decodeFrame(m.value).frameSequence).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, s) => s));
  }, 200_000);
});
