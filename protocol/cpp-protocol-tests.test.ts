import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Builds kernels/protocol-tests (GoogleTest of frame.hpp + ww_vectors) with CMake into a cache
// directory and runs its ctest, so `npm test` covers the C++ side of the frame format too.
const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));
const buildDirectory = fileURLToPath(new URL('../.cache/protocol-tests-build', import.meta.url));

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  const output = `${command} ${args.join(' ')}\n${result.error?.message ?? ''}${result.stdout ?? ''}${result.stderr ?? ''}`;
  expect(result.status, output).toBe(0);
}

describe('kernels/protocol-tests (C++)', () => {
  it('builds with CMake and passes ctest: frame.hpp unit tests and both directions of the golden vectors', () => {
    mkdirSync(buildDirectory, { recursive: true });
    run('cmake', ['-S', 'kernels/protocol-tests', '-B', buildDirectory, '-DCMAKE_BUILD_TYPE=Release'], repositoryRoot);
    run('cmake', ['--build', buildDirectory, '--parallel', '2'], repositoryRoot);
    run('ctest', ['--output-on-failure'], buildDirectory);
  }, 600_000);
});
