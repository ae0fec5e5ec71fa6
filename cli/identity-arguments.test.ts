// Every CLI flag that names part of a stream identity is read with the rules of
// contracts/stream-identity.ts: one coded line, exit 2, before anything runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { STREAM_SOURCES } from '../contracts/index.ts';
import { BACKEND_NAMES } from '../kernels/index.ts';
import { runCli } from './testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-identity-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const frames = join(process.cwd(), 'protocol', 'vectors', 'cpp-stream.bin');
const code = 'warpwatch: WW_ERR_STREAM_IDENTITY: ';

describe('identity arguments', () => {
  it.each([
    ['run --job', ['run', 'matpow', '--job', 'a/b', '--out', join(directory, 'x.wwf')], "--job must not contain '/', got 'a/b'"],
    ['run --job empty', ['run', 'matpow', '--job', '', '--out', join(directory, 'x.wwf')], "--job must not be empty, got ''"],
    ['run --kernel', ['run', 'matpow', '--kernel', 'k'.repeat(256), '--out', join(directory, 'x.wwf')], `--kernel must be at most 255 UTF-8 bytes (it has 256), got '${'k'.repeat(256)}'`],
    ['run --n', ['run', 'matpow', '--n', '64', '--out', join(directory, 'x.wwf')], "--n must be an integer 1..32, got '64'"],
    ['run --n hex', ['run', 'escape', '--n', '0x10', '--out', join(directory, 'x.wwf')], "--n must be an integer 1..32, got '0x10'"],
    ['analyze --stream', ['analyze', frames, '--stream', 'noslash'], "--stream must be '<job>/<kernel>' (no '/' found), got 'noslash'"],
    ['analyze --stream empty kernel', ['analyze', frames, '--stream', 'job/'], "--stream must be '<job>/<kernel>': its kernel must not be empty, got 'job/'"],
    ['advise --stream', ['advise', '--frames', frames, '--stream', '/kernel'], "--stream must be '<job>/<kernel>': its job must not be empty, got '/kernel'"],
    ['advise --n', ['advise', '--dist', 'pois(3)', '--n', '1e1'], "--n must be an integer 1..32, got '1e1'"],
    ['advise --n above a warp', ['advise', '--stream', 'a/b', '--n', '64'], "--n must be an integer 1..32, got '64'"],
    ['advise --host', ['advise', '--stream', 'a/b', '--host', 'node 7'], "--host must not contain whitespace, control characters or |, got 'node 7'"],
    ['advise --device', ['advise', '--stream', 'a/b', '--device', ''], "--device must be a device UUID or model name: it must not be empty, got ''"],
    // No control character and no backslash InfluxDB cannot store, in any part (contracts/stream-identity.ts identityCharactersProblem).
    ['run --kernel newline', ['run', 'matpow', '--kernel', 'k\nzz', '--out', join(directory, 'x.wwf')], "--kernel must not contain control characters (U+000A at character 2), got 'k\\u000azz'"],
    ['run --kernel C1', ['run', 'matpow', '--kernel', 'k\u0085', '--out', join(directory, 'x.wwf')], "--kernel must not contain control characters (U+0085 at character 2), got 'k\\u0085'"],
    ['run --job backslash', ['run', 'matpow', '--job', 'bs\\', '--out', join(directory, 'x.wwf')], "--job must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character 3, got 'bs\\'"],
    ['advise --host backslash', ['advise', '--stream', 'a/b', '--host', 'hostB\\'], "--host must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character 6, got 'hostB\\'"],
    ['demo --sizes', ['demo', '--sizes', '8,48'], "--sizes must be an integer 1..32, got '48'"],
    ['demo --sizes spaced', ['demo', '--sizes', '8, 16'], "--sizes must be an integer 1..32, got ' 16'"],
  ])('%s', async (_name, args, message) => {
    const result = await runCli(...args);
    expect(result.stderr).toBe(`${code}${message}\n`);
    expect(result.status).toBe(2);
  });

  it.each([
    ['--host', ['--host', 'a|b'], '--host must not contain whitespace, control characters or |, got "a|b"'],
    ['--label', ['--label', 'pod=a\tb'], '--label label must be name=value: its value must not contain control characters (U+0009 at character 2), got "pod=a\\u0009b"'],
    ['--label newline', ['--label', 'pod=p\nzz'], '--label label must be name=value: its value must not contain control characters (U+000A at character 2), got "pod=p\\u000azz"'],
    ['--label backslash', ['--label', 'pod=p\\'], `--label label must be name=value: its value must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character 2, got "pod=p\\"`],
    ['--host backslash', ['--host', 'hostB\\'], `--host must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character 6, got "hostB\\"`],
    ['--label name', ['--label', '1pod=x'], '--label label must be name=value: its name must match [A-Za-z_][A-Za-z0-9_.-]{0,63}, got "1pod=x"'],
  ])('collect %s: the same rules, reported with the collector settings (WW_ERR_COLLECTOR_CONFIG)', async (_name, args, message) => {
    const result = await runCli('collect', '--replay', frames, '--metrics-port', 'off', '--spool-dir', join(directory, 'spool'), ...args);
    expect(result.stderr).toBe(`warpwatch: WW_ERR_COLLECTOR_CONFIG: ${message}\n`);
    expect(result.status).toBe(2);
  });

  it('run --backend names the source of the frames: the backends are exactly the identity sources', () => {
    expect([...BACKEND_NAMES].sort()).toEqual([...STREAM_SOURCES].sort());
  });
});
