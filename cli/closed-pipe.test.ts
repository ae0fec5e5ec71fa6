// bin/warpwatch.mjs: a reader that closes the pipe early (`warpwatch model --help | head -1`)
// ends the command quietly with its exit code, not with an unhandled EPIPE stack trace.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `warpwatch <args>`, closes its stdout after the first chunk, and resolves with its exit code and stderr. */
function runAndCloseEarly(args: readonly string[]): Promise<{ code: number | null; stderr: string; firstChunk: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let firstChunk = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.once('data', (chunk: Buffer) => {
      firstChunk = chunk.toString();
      child.stdout.destroy();
    });
    child.on('exit', (code) => resolve({ code, stderr, firstChunk }));
  });
}

describe('a closed output pipe', () => {
  for (const command of ['run', 'collect', 'estimate', 'analyze', 'compare', 'model', 'help']) {
    it(`ends \`warpwatch ${command} --help\` with exit 0 and nothing on stderr`, async () => {
      const { code, stderr, firstChunk } = await runAndCloseEarly([command, '--help']);
      expect(firstChunk).toMatch(/Usage: warpwatch/);
      expect(stderr).not.toMatch(/EPIPE|Unhandled 'error' event/);
      expect(code).toBe(0);
    }, 30_000);
  }
});
