/**
 * The Python package's test harness from TypeScript: installs python/ into the cached venv
 * (python/install.sh) and runs Python there. Used by python/*.test.ts so `npm test` covers the
 * Python producer (docs/python.md).
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The python/ folder of this checkout. */
export const PYTHON_DIR = dirname(fileURLToPath(import.meta.url));

/** What a finished child process left: its exit status (null when killed), signal, stdout and stderr. */
export interface PythonRun {
  readonly status: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command args` without blocking the event loop (a test worker must stay responsive
 * during minutes-long compiles), killing it after `timeoutMillis`.
 *
 * @example const { status, stdout } = await runProcess('python3', ['-V'], {}, 10_000)
 */
export function runProcess(command: string, args: readonly string[], env: Record<string, string>, timeoutMillis: number): Promise<PythonRun> {
  return new Promise((resolve, reject) => {
    // PYTHONSAFEPATH: the current folder (python/) is not put on sys.path, so `import warpwatch`
    // is the installed package, not the source tree beside it.
    const child = spawn(command, args, { cwd: PYTHON_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', PYTHONSAFEPATH: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [], err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMillis);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
  });
}

/**
 * Runs python/install.sh (idempotent: seconds when already done, minutes and ~0.5 GB of wheels
 * the first time) and returns the venv's python executable.
 *
 * @throws Error with the script's stderr when the install fails
 * @example const python = await ensurePythonInstalled(); await runPython(python, ['-m', 'warpwatch.nvrtc_check'])
 */
export async function ensurePythonInstalled(): Promise<string> {
  const result = await runProcess(join(PYTHON_DIR, 'install.sh'), [], {}, 1_500_000);
  if (result.status !== 0) throw new Error(`python/install.sh failed (${String(result.status ?? result.signal)}): ${result.stderr}`);
  const python = result.stdout.trim().split('\n').at(-1);
  if (python === undefined || python === '') throw new Error('python/install.sh printed no python path');
  return python;
}

/**
 * Runs the venv's python with `args` in python/ (no network needed: the venv has everything).
 *
 * @example await runPython(python, ['-m', 'pytest', '-q', 'tests'], { NUMBA_ENABLE_CUDASIM: '1' })
 */
export function runPython(python: string, args: readonly string[], env: Record<string, string> = {}, timeoutMillis = 600_000): Promise<PythonRun> {
  return runProcess(python, args, env, timeoutMillis);
}
