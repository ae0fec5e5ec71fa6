import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeployError } from '../errors.ts';
import { isProcessRunning, readPidFile, runTool, spawnDetached, stopProcess, tailFile } from './process-control.ts';

const scratchFolders: string[] = [];
const scratch = (): string => {
  const folder = mkdtempSync(join(tmpdir(), 'ww-process-'));
  scratchFolders.push(folder);
  return folder;
};
afterAll(() => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

describe('spawnDetached and stopProcess', () => {
  it('starts a detached process that writes its pid file, and stops it with SIGTERM', async () => {
    const folder = scratch();
    const pidFile = join(folder, 'sleep.pid');
    const pid = spawnDetached({ command: 'sleep', args: ['30'], cwd: folder, outputFile: join(folder, 'out.log'), pidFile });
    expect(readPidFile(pidFile)).toBe(pid);
    expect(isProcessRunning(pid, 'sleep 30')).toBe(true);
    expect(isProcessRunning(pid, 'something-else')).toBe(false);
    expect(await stopProcess(pid, { timeoutMillis: 5_000 })).toBe('stopped');
    expect(isProcessRunning(pid)).toBe(false);
    expect(await stopProcess(pid, { timeoutMillis: 5_000 })).toBe('not-running');
  });

  it('kills a process that ignores SIGTERM once the timeout has passed', async () => {
    const folder = scratch();
    const readyFile = join(folder, 'handler-installed');
    const script = `process.on('SIGTERM', () => {}); require('node:fs').writeFileSync(${JSON.stringify(readyFile)}, ''); setInterval(() => {}, 1000);`;
    const pid = spawnDetached({ command: process.execPath, args: ['-e', script], cwd: folder, outputFile: join(folder, 'out.log'), pidFile: join(folder, 'p.pid') });
    // Signal only once the child ignores SIGTERM, however slow the machine.
    while (!existsSync(readyFile)) await new Promise((resolveWait) => setTimeout(resolveWait, 50));
    expect(await stopProcess(pid, { timeoutMillis: 300 })).toBe('killed');
    expect(isProcessRunning(pid)).toBe(false);
  });
});

describe('readPidFile', () => {
  it('returns undefined for a missing file or one without a pid', () => {
    const folder = scratch();
    expect(readPidFile(join(folder, 'none.pid'))).toBeUndefined();
    writeFileSync(join(folder, 'bad.pid'), 'abc\n');
    expect(readPidFile(join(folder, 'bad.pid'))).toBeUndefined();
  });
});

describe('tailFile', () => {
  it('returns the last lines, and an empty string for a missing file', () => {
    const folder = scratch();
    const file = join(folder, 'log');
    writeFileSync(file, Array.from({ length: 100 }, (_, i) => `line ${i + 1}`).join('\n') + '\n');
    expect(tailFile(file, 3)).toBe('line 98\nline 99\nline 100');
    expect(tailFile(join(folder, 'missing'), 3)).toBe('');
  });
});

describe('runTool', () => {
  it('writes the tool output to its log and resolves on exit code 0', async () => {
    const folder = scratch();
    const logFile = join(folder, 'tool.log');
    await runTool({ command: 'sh', args: ['-c', 'echo hello'], cwd: folder, logFile, description: 'echo' });
    expect(readFileSync(logFile, 'utf8')).toBe('hello\n');
  });

  it('fails with WW_ERR_STACK_INSTALL quoting the log tail on a non-zero exit', async () => {
    const folder = scratch();
    const failure = runTool({ command: 'sh', args: ['-c', 'echo compile error here; exit 3'], cwd: folder, logFile: join(folder, 't.log'), description: 'the build' });
    await expect(failure).rejects.toMatchObject({ code: 'WW_ERR_STACK_INSTALL', message: expect.stringContaining('compile error here') as unknown });
    await expect(failure).rejects.toThrow(/exit code 3/);
  });

  it('fails with WW_ERR_STACK_TOOL_MISSING when the command does not exist', async () => {
    const folder = scratch();
    const failure = runTool({ command: 'warpwatch-no-such-tool', args: [], cwd: folder, logFile: join(folder, 't.log'), description: 'the build' });
    await expect(failure).rejects.toBeInstanceOf(DeployError);
    await expect(failure).rejects.toMatchObject({ code: 'WW_ERR_STACK_TOOL_MISSING' });
  });
});
