/**
 * Test helper: runs the warpwatch CLI in this process (the same `main()` the binary calls),
 * capturing what it writes to stdout and stderr. Much faster than spawning `bin/warpwatch.mjs`;
 * tests of the binary itself still spawn it.
 */
import { vi } from 'vitest';
import { main } from '../main.ts';

/** Outcome of one {@link runCli} call. */
export interface CliRun {
  /** Exit status `main()` returned (0 ok, 2 usage error, 1 failure). */
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `warpwatch ...args` with stdout and stderr captured (not printed). `process.exitCode`
 * is restored afterwards, so a command that sets it does not change the status of the next run.
 *
 * @example
 * const result = await runCli('model', '--dist', 'geo(0.5)', '--n', '4');
 * expect(result.status, result.stderr).toBe(0);
 */
export async function runCli(...args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const exitCodeBefore = process.exitCode;
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const status = await main(['node', 'warpwatch', ...args]);
    return { status, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
    process.exitCode = exitCodeBefore;
  }
}
