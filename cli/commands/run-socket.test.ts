// `warpwatch run --socket` with no collector behind the socket: the frames are not
// delivered, so the run fails (exit 1) and says so, and does not suggest analysing a socket.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-run-socket-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('warpwatch run --socket', () => {
  it('exits 1 and names the undelivered frames when no collector serves the socket', async () => {
    const socket = join(directory, 'nobody.sock');
    const result = await runCli('run', 'matpow', '--dist', 'pois(5)', '--n', '8', '--groups', '64', '--socket', socket);
    expect(result.status, result.stderr).toBe(1);
    // One LaunchSummary frame, plus GroupSamples frames when the hash selection picked groups.
    const line = new RegExp(`0 frame\\(s\\) sent to the collector socket ${socket}, (\\d+) dropped \\(not delivered\\); is \`warpwatch collect\` serving that socket\\?`).exec(result.stdout);
    expect(line, result.stdout).not.toBeNull();
    const dropped = Number(line?.[1]);
    expect(dropped).toBeGreaterThanOrEqual(1);
    expect(result.stdout).not.toContain('analyze unix socket');
    expect(result.stderr).toContain(`warpwatch: ${dropped} of ${dropped} frame(s) were not delivered to the collector socket ${socket}`);
  }, 300_000);
});
