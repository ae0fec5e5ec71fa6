import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stackEndpoints, withStackLock } from './local-stack.ts';
import { silentReporter } from './progress.ts';
import { resolveLocalStackConfig } from './stack-config.ts';

const scratchFolders: string[] = [];
const scratchConfig = () => {
  const folder = mkdtempSync(join(tmpdir(), 'ww-lock-'));
  scratchFolders.push(folder);
  return resolveLocalStackConfig({ WARPWATCH_CACHE_DIR: folder });
};
afterAll(() => {
  for (const folder of scratchFolders) rmSync(folder, { recursive: true, force: true });
});

describe('withStackLock', () => {
  it('runs concurrent holders one after another, never overlapping', async () => {
    const config = scratchConfig();
    const events: string[] = [];
    const holder = (name: string) =>
      withStackLock(config, silentReporter, async () => {
        events.push(`${name} in`);
        await new Promise((resolveHold) => setTimeout(resolveHold, 50));
        events.push(`${name} out`);
      });
    await Promise.all([holder('a'), holder('b'), holder('c')]);
    for (let i = 0; i < events.length; i += 2) {
      expect(events[i]?.endsWith(' in')).toBe(true);
      expect(events[i + 1]).toBe(`${events[i]?.split(' ')[0]} out`);
    }
    expect(existsSync(join(config.cacheDirectory, 'stack.lock'))).toBe(false);
  });

  it('takes over a lock left by a process that no longer exists', async () => {
    const config = scratchConfig();
    const lock = join(config.cacheDirectory, 'stack.lock');
    mkdirSync(lock, { recursive: true });
    // pid_max on Linux is at most 2^22, so this pid cannot exist.
    writeFileSync(join(lock, 'pid'), '99999999\n');
    await expect(withStackLock(config, silentReporter, () => Promise.resolve('taken'))).resolves.toBe('taken');
  });

  it('releases the lock when the work throws', async () => {
    const config = scratchConfig();
    await expect(withStackLock(config, silentReporter, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(existsSync(join(config.cacheDirectory, 'stack.lock'))).toBe(false);
  });
});

describe('stackEndpoints', () => {
  it('gives the WARPWATCH_* values clients use', () => {
    expect(stackEndpoints(resolveLocalStackConfig({}))).toEqual({ kafkaBrokers: '127.0.0.1:19092', influxUrl: 'http://127.0.0.1:18086', influxDatabase: 'warpwatch' });
  });
});
