import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { DemoResults } from '../report/demo-results.ts';

// A machine without GoogleTest, as a new user's: CMake reads the toolchain file named by the
// CMAKE_TOOLCHAIN_FILE environment variable on a fresh configure, and this one disables
// find_package(GTest). The demo must still build its two programs (tests off) in a fresh build
// directory and run, and no compiler output may reach the terminal (docs/kernels.md "Building").
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ww-demo-no-gtest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const toolchain = join(scratch, 'no-gtest.cmake');
writeFileSync(toolchain, 'set(CMAKE_DISABLE_FIND_PACKAGE_GTest TRUE)\n');
const env = { ...process.env, CMAKE_TOOLCHAIN_FILE: toolchain };

/** Runs a program without blocking the test worker; resolves with its status and output. */
function run(command: string, args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: root, env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('warpwatch demo without GoogleTest', () => {
  it('the hiding works: configuring the test build fails for want of GTest', async () => {
    const configure = await run('cmake', ['-S', join(root, 'kernels'), '-B', join(scratch, 'tests-build')]);
    expect(configure.status).not.toBe(0);
    expect(`${configure.stdout}${configure.stderr}`).toContain('GTest');
  });

  it('demo --quick builds only its workloads in a fresh build directory and runs', async () => {
    const buildDir = join(scratch, 'workloads-build');
    const out = join(scratch, 'demo');
    const demo = await run(process.execPath, ['bin/warpwatch.mjs', 'demo', '--quick', '--no-progress', '--build-dir', buildDir, '--out', out]);
    expect(demo.status, demo.stderr).toBe(0);
    expect(`${demo.stdout}${demo.stderr}`).not.toMatch(/warning:|\[\d+\/\d+\]|Building CXX/);
    expect(existsSync(join(buildDir, 'warpwatch-escape-cpu'))).toBe(true);
    expect(existsSync(join(buildDir, 'warpwatch-matpow-cpu'))).toBe(true);
    expect(existsSync(join(buildDir, 'warpwatch-kernels-tests'))).toBe(false);
    expect(readFileSync(join(buildDir, 'CMakeCache.txt'), 'utf8')).toMatch(/^WARPWATCH_BUILD_TESTS:BOOL=OFF$/m);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as DemoResults;
    expect(results.runs.length).toBeGreaterThan(0);
  }, 240_000);
});
