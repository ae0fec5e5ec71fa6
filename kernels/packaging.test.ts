import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// kernels/ as a package: install into a temporary prefix, then build
// consumers with find_package(warpwatch CONFIG), with pkg-config, and with FetchContent; GTest is
// needed only when the tests are built; the probe refuses architectures below sm_70.

const KERNELS = dirname(fileURLToPath(import.meta.url));
let scratch = '';
let prefix = '';

function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): { status: number | null; output: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: options.cwd, env: { ...process.env, ...options.env }, timeout: 600_000 });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}` };
}
function mustRun(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): string {
  const result = run(command, args, options);
  expect(result.status, `${command} ${args.join(' ')}\n${result.output}`).toBe(0);
  return result.output;
}

// A consumer that uses the installed headers: launch-shape checks and a frame round trip.
const CONSUMER_MAIN = `
#include <cstdio>
#include <stdexcept>
#include <string>
#include "warpwatch/frame.hpp"
#include "warpwatch/launch-shape.hpp"
#include "cpu-backend.hpp"
int main() {
  int failures = 0;
  if (warpwatch::probeBlocksFor(1000, 256, 8) != 32) ++failures;
  if (warpwatch::probeGroupCapacity(4, 256, 8) != 128) ++failures;
  warpwatch::checkProbeLaunchShape(64, 8, 1, 16, 16, 1);  // 2-D grid of 16x16 blocks: whole warps, fine
  try { warpwatch::checkProbeLaunchShape(64, 1, 1, 10, 3, 1); ++failures; }
  catch (const std::invalid_argument& e) { if (std::string(e.what()).rfind("WW_ERR_KERNELS_LAUNCH_SHAPE: block (10, 3, 1) of 30 threads", 0) != 0) ++failures; }
  try { warpwatch::checkProbeLaunchShape(8, 1, 1, 100, 1, 1); ++failures; } catch (const std::invalid_argument&) {}
  warpwatch::checkProbeLaunchShape(8, 1, 1, 96, 1, 1);
  std::printf("consumer ok %d %s\\n", failures, warpwatch::cpu::cpuDeviceInfo().clockHz == 1000000000ull ? "cpu" : "?");
  return failures;
}
`;

function writeConsumer(dir: string, cmake: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'main.cpp'), CONSUMER_MAIN);
  writeFileSync(join(dir, 'CMakeLists.txt'), cmake);
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ww-packaging-'));
  prefix = join(scratch, 'prefix');
  // Headers only: no workloads, no tests, and GTest made unfindable — it must not be needed.
  mustRun('cmake', [
    '-S', KERNELS, '-B', join(scratch, 'build'), `-DCMAKE_INSTALL_PREFIX=${prefix}`,
    '-DWARPWATCH_BUILD_WORKLOADS=OFF', '-DWARPWATCH_BUILD_TESTS=OFF', '-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON',
  ]);
  mustRun('cmake', ['--install', join(scratch, 'build')]);
}, 600_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('kernels/ as an installed package', () => {
  it('installs the headers, the CMake package and warpwatch.pc', () => {
    for (const file of [
      'include/warpwatch/probe.cuh',
      'include/warpwatch/recorder.hpp',
      'include/warpwatch/sink.hpp',
      'include/warpwatch/launch-shape.hpp',
      'include/warpwatch/cpu/cpu-backend.hpp',
      'lib/cmake/warpwatch/warpwatchConfig.cmake',
      'lib/cmake/warpwatch/warpwatchConfigVersion.cmake',
      'lib/cmake/warpwatch/warpwatchTargets.cmake',
      'lib/pkgconfig/warpwatch.pc',
    ]) {
      expect(existsSync(join(prefix, file)), file).toBe(true);
    }
  });

  it('builds and runs a consumer with find_package(warpwatch CONFIG) and warpwatch::headers / warpwatch::cpu', () => {
    const source = join(scratch, 'consumer-cmake');
    writeConsumer(
      source,
      'cmake_minimum_required(VERSION 3.20)\nproject(consumer LANGUAGES CXX)\nfind_package(warpwatch 0.1 CONFIG REQUIRED)\n' +
        'add_executable(consumer main.cpp)\ntarget_link_libraries(consumer PRIVATE warpwatch::headers warpwatch::cpu)\n',
    );
    const build = join(scratch, 'consumer-cmake-build');
    mustRun('cmake', ['-S', source, '-B', build, `-DCMAKE_PREFIX_PATH=${prefix}`]);
    mustRun('cmake', ['--build', build]);
    expect(mustRun(join(build, 'consumer'), [])).toBe('consumer ok 0 cpu\n');
  }, 300_000);

  it('a missing package fails the consumer configure (the find_package test can fail)', () => {
    const source = join(scratch, 'consumer-missing');
    writeConsumer(source, 'cmake_minimum_required(VERSION 3.20)\nproject(consumer LANGUAGES CXX)\nfind_package(warpwatch CONFIG REQUIRED)\n');
    const result = run('cmake', ['-S', source, '-B', join(scratch, 'consumer-missing-build'), `-DCMAKE_PREFIX_PATH=${join(scratch, 'nothing-here')}`]);
    expect(result.status).not.toBe(0);
    expect(result.output).toMatch(/warpwatchConfig\.cmake/);
  });

  it("pkg-config's Cflags resolve to the installed headers, also after the prefix is moved", () => {
    const compileWith = (pcDir: string, out: string): void => {
      const env = { PKG_CONFIG_PATH: pcDir };
      const cflags = mustRun('pkg-config', ['--cflags', 'warpwatch'], { env }).trim().split(/\s+/);
      const libs = mustRun('pkg-config', ['--libs', 'warpwatch'], { env }).trim().split(/\s+/);
      const includeDir = cflags.find((f) => f.startsWith('-I'))?.slice(2) ?? '';
      expect(existsSync(join(includeDir, 'warpwatch', 'probe.cuh')), `${includeDir} holds warpwatch/probe.cuh`).toBe(true);
      // cpu-backend.hpp sits in warpwatch/cpu/ below the same include directory.
      mustRun('g++', [...cflags, '-I', join(includeDir, 'warpwatch', 'cpu'), join(scratch, 'consumer-cmake', 'main.cpp'), '-o', out, ...libs]);
      expect(mustRun(out, [])).toBe('consumer ok 0 cpu\n');
    };
    compileWith(join(prefix, 'lib', 'pkgconfig'), join(scratch, 'consumer-pc'));
    const moved = join(scratch, 'moved-prefix');
    renameSync(prefix, moved);
    try {
      compileWith(join(moved, 'lib', 'pkgconfig'), join(scratch, 'consumer-pc-moved'));
    } finally {
      renameSync(moved, prefix);
    }
  }, 300_000);

  it('FetchContent (source directory) gives the same targets and builds neither workloads nor tests, without GTest', () => {
    const source = join(scratch, 'consumer-fetch');
    writeConsumer(
      source,
      'cmake_minimum_required(VERSION 3.20)\nproject(consumer LANGUAGES CXX)\ninclude(FetchContent)\n' +
        `FetchContent_Declare(warpwatch SOURCE_DIR ${JSON.stringify(KERNELS)})\nFetchContent_MakeAvailable(warpwatch)\n` +
        'add_executable(consumer main.cpp)\ntarget_link_libraries(consumer PRIVATE warpwatch::headers warpwatch::cpu)\n' +
        'if(TARGET warpwatch-matpow-cpu OR TARGET warpwatch-kernels-tests)\n  message(FATAL_ERROR "workloads or tests built in a consumer")\nendif()\n',
    );
    const build = join(scratch, 'consumer-fetch-build');
    mustRun('cmake', ['-S', source, '-B', build, '-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON']);
    mustRun('cmake', ['--build', build, '--target', 'consumer']);
    expect(mustRun(join(build, 'consumer'), [])).toBe('consumer ok 0 cpu\n');
  }, 300_000);

  it('needs GTest only when the tests are built', () => {
    const result = run('cmake', ['-S', KERNELS, '-B', join(scratch, 'with-tests'), '-DWARPWATCH_BUILD_WORKLOADS=OFF', '-DWARPWATCH_BUILD_TESTS=ON', '-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON']);
    expect(result.status).not.toBe(0);
    expect(result.output).toMatch(/GTest/);
  });
});

describe('probe.cuh compile-time checks', () => {
  it('refuses device code for compute capability below 7.0 with a clear #error', () => {
    // nvcc 13 itself no longer compiles for sm_6x, so the preprocessor check is exercised with g++
    // and the macro nvcc defines in device passes (__CUDA_ARCH__ = 600 for sm_60).
    const probe = join(KERNELS, 'include', 'warpwatch', 'probe.cuh');
    const old = run('g++', ['-std=c++17', '-fsyntax-only', '-x', 'c++', '-D__CUDA_ARCH__=600', probe]);
    expect(old.status).not.toBe(0);
    expect(old.output).toMatch(/probe\.cuh needs compute capability 7\.0 \(Volta\) or newer/);
    // At 700 the check passes and compilation goes on (it then needs the CUDA headers, absent from g++).
    const volta = run('g++', ['-std=c++17', '-fsyntax-only', '-x', 'c++', '-D__CUDA_ARCH__=700', probe]);
    expect(volta.output).not.toMatch(/needs compute capability/);
  });
});
