import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDiskSpool, type DiskSpool } from './disk-spool.ts';
import type { ProduceRecord } from './produce-record.ts';
import { acquireSpoolLock } from './spool-lock.ts';

const record = (i: number): ProduceRecord => ({ topic: 't', key: 'k', value: new Uint8Array([i]), headers: {}, timestampMillis: i });

async function until<T>(what: string, probe: () => T | undefined, timeoutMillis = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMillis;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The state letter of /proc/<pid>/stat (R, S, Z, ...), undefined once the process is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

describe.runIf(process.platform === 'linux')('spool lock', () => {
  let directory: string;
  const children: ChildProcess[] = [];
  const spools: DiskSpool[] = [];
  const open = (options: { lockLeaseMillis?: number; onLockTakeOver?: (m: string) => void } = {}): DiskSpool => {
    const spool = openDiskSpool({ directory, maxBytes: 1 << 20, segmentBytes: 1 << 16, policy: 'drop-oldest', fsyncIntervalMillis: 0, memoryMaxBytes: 1 << 20, cursorIntervalMillis: 0, ...options });
    spools.push(spool);
    return spool;
  };
  const drainCount = (spool: DiskSpool): number => {
    let n = 0;
    for (let batch = spool.peek(100, 1 << 20); batch.length > 0; batch = spool.peek(100, 1 << 20)) {
      n += batch.length;
      spool.commit(batch.length);
    }
    return n;
  };
  /** A process holding the spool lock of `directory` (the real spool-lock.ts), started through `sh` so that we are not its parent. */
  const holderScript = (): string => {
    const script = join(directory, '..', `holder-${process.pid}-${Date.now()}.ts`);
    writeFileSync(
      script,
      `import { openDiskSpool } from ${JSON.stringify(resolve('collector/disk-spool.ts'))};\n` +
        `const spool = openDiskSpool({ directory: process.argv[2], maxBytes: 1 << 20, segmentBytes: 1 << 16, policy: 'drop-oldest', fsyncIntervalMillis: 0, memoryMaxBytes: 1 << 20 });\n` +
        `for (let i = 0; i < 25; i++) spool.append({ topic: 't', key: 'k', value: new Uint8Array([i]), headers: {}, timestampMillis: i });\n` +
        `spool.flushWrites();\nconsole.log('locked');\nsetInterval(() => {}, 1000);\n`,
    );
    return script;
  };

  beforeEach(() => {
    directory = join(mkdtempSync(join(tmpdir(), 'ww-lock-')), 'spool');
  });
  afterEach(() => {
    for (const spool of spools.splice(0)) spool.close();
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(join(directory, '..'), { recursive: true, force: true });
  });

  it('refuses a second spool on a live spool directory, in this process and from another process', async () => {
    const first = open();
    expect(() => open()).toThrow(expect.objectContaining({ code: 'WW_ERR_SPOOL_LOCKED' }) as Error);
    first.close();
    // Another process holds it (alive): refused, whatever the LOCK file says.
    const child = spawn(process.execPath, ['--import', 'tsx', holderScript(), directory], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    await until('the holder to lock', () => (out.includes('locked') ? true : undefined));
    writeFileSync(join(directory, 'LOCK'), '999999999');
    expect(() => open()).toThrow(expect.objectContaining({ code: 'WW_ERR_SPOOL_LOCKED' }) as Error);
    expect(() => acquireSpoolLock(directory)).toThrow(/in use by a live collector/);
  });

  it('starts over a LOCK naming a live unrelated process (PID 1, our parent) and delivers what the spool holds', () => {
    const first = open();
    for (let i = 0; i < 12; i++) first.append(record(i));
    first.flushWrites();
    first.abandon(); // a crash: records on disk, lock released by the kernel
    const ownNetns = readlinkSync('/proc/self/ns/net');
    const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    for (const lock of ['1', String(process.ppid), JSON.stringify({ pid: 1, host: 'old', netns: ownNetns, bootId, token: 'x', startedAt: '' })]) {
      writeFileSync(join(directory, 'LOCK'), lock);
      const taken: string[] = [];
      const spool = open({ onLockTakeOver: (m) => taken.push(m) });
      expect(taken).toHaveLength(1);
      expect(spool.recordCount).toBe(12);
      expect(JSON.parse(readFileSync(join(directory, 'LOCK'), 'utf8'))).toMatchObject({ pid: process.pid });
      spool.abandon();
      spools.pop();
    }
    const last = open();
    expect(drainCount(last)).toBe(12);
  });

  it('starts right after its predecessor was SIGKILLed, while that one is still a zombie (not reaped)', async () => {
    // sh starts the holder in the background and replaces itself with sleep, which never reaps it.
    const shell = spawn('sh', ['-c', `"${process.execPath}" --import tsx "${holderScript()}" "${directory}" & echo "pid $!"; exec sleep 60`], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(shell);
    let out = '';
    shell.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const pid = await until('the holder to lock', () => (out.includes('locked') ? Number(/pid (\d+)/.exec(out)?.[1]) : undefined));
    process.kill(pid, 'SIGKILL');
    await until('the holder to be a zombie', () => (processState(pid) === 'Z' ? true : undefined), 10_000);
    expect(() => process.kill(pid, 0)).not.toThrow(); // what the old PID check saw: "alive"
    const spool = open();
    expect(processState(pid)).toBe('Z');
    expect(drainCount(spool)).toBe(25);
  });

  it('across network namespaces: refuses while the LOCK is renewed, takes it over once it is not renewed for the lease', async () => {
    const foreign = { pid: 4242, host: 'other-container', netns: 'net:[1]', bootId: 'other-boot', token: 'foreign', startedAt: '' };
    writeFileSync(join(directory, '..', 'probe'), ''); // the directory exists for the renewing child below
    openDiskSpool({ directory, maxBytes: 1 << 20, segmentBytes: 1 << 16, policy: 'drop-oldest', fsyncIntervalMillis: 0, memoryMaxBytes: 1 << 20 }).close();
    const lockPath = join(directory, 'LOCK');
    writeFileSync(lockPath, JSON.stringify(foreign));
    // A live holder in another namespace renews the file's mtime (a child process, since this thread blocks while it waits).
    const renewer = spawn(process.execPath, ['-e', `setInterval(() => { const t = new Date(); require('fs').utimesSync(${JSON.stringify(lockPath)}, t, t); }, 50)`]);
    children.push(renewer);
    await new Promise((r) => setTimeout(r, 300));
    expect(() => open({ lockLeaseMillis: 1_000 })).toThrow(/another network namespace or host .* is being renewed/);
    renewer.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
    // Not renewed any more: taken over after the lease (1 s here, 10 s by default).
    const started = performance.now();
    const taken: string[] = [];
    open({ lockLeaseMillis: 1_000, onLockTakeOver: (m) => taken.push(m) });
    expect(performance.now() - started).toBeGreaterThanOrEqual(800);
    expect(taken[0]).toContain('was not renewed for 1000 ms');
    // An old LOCK (mtime past the lease) is taken over at once.
    spools.pop()?.close();
    writeFileSync(lockPath, JSON.stringify(foreign));
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old);
    const again = performance.now();
    open({ lockLeaseMillis: 1_000 });
    expect(performance.now() - again).toBeLessThan(500);
  });
});
