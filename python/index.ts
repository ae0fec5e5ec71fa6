/**
 * The Python package's test harness from TypeScript: installs python/ into the cached venv
 * (python/install.sh) and runs Python there. Used by python/*.test.ts so `npm test` covers the
 * Python producer (docs/python.md).
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The python/ folder of this checkout. */
export const PYTHON_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * Runs python/install.sh (idempotent: seconds when already done, minutes and ~0.5 GB of wheels
 * the first time) and returns the venv's python executable.
 *
 * @throws Error with the script's stderr when the install fails
 * @example const python = ensurePythonInstalled(); spawnSync(python, ['-m', 'warpwatch.nvrtc_check'])
 */
export function ensurePythonInstalled(): string {
  const result = spawnSync(join(PYTHON_DIR, 'install.sh'), [], { encoding: 'utf8', timeout: 1_500_000 });
  if (result.status !== 0) throw new Error(`python/install.sh failed (${String(result.status ?? result.signal)}): ${result.stderr}`);
  const python = result.stdout.trim().split('\n').at(-1);
  if (python === undefined || python === '') throw new Error('python/install.sh printed no python path');
  return python;
}

/**
 * Runs the venv's python with `args` in python/ (no network needed: the venv has everything).
 *
 * @example runPython(python, ['-m', 'pytest', '-q', 'tests'], { NUMBA_ENABLE_CUDASIM: '1' })
 */
export function runPython(python: string, args: readonly string[], env: Record<string, string> = {}, timeoutMillis = 600_000): SpawnSyncReturns<string> {
  return spawnSync(python, args, {
    cwd: PYTHON_DIR,
    encoding: 'utf8',
    timeout: timeoutMillis,
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env },
  });
}
