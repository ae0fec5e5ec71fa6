import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics as otelMetrics } from '@opentelemetry/api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CollectorMetrics } from './collector-metrics.ts';
import { defaultSocketPath } from './config.ts';
import type { FrameIntake } from './frame-intake.ts';
import { prepareSocketDirectory, startSocketSource, type SocketSource } from './socket-source.ts';

/** An intake that records the bytes each connection sent. */
function recordingIntake(received: Buffer[]): FrameIntake {
  return {
    openStream: () => ({ push: (chunk: Uint8Array) => void received.push(Buffer.from(chunk)), end: () => Promise.resolve(), errorCount: 0 }),
    backlogBytes: 0,
    overloaded: false,
    relieved: () => Promise.resolve(),
    drain: () => Promise.resolve(true),
    close: () => Promise.resolve(),
  };
}

const modeOf = (path: string): number => lstatSync(path).mode & 0o7777;

describe('socket directory', () => {
  let root: string;
  let source: SocketSource | undefined;
  const received: Buffer[] = [];
  const start = (path: string): Promise<SocketSource> =>
    startSocketSource({
      path,
      mode: 0o660,
      intake: recordingIntake(received),
      metrics: new CollectorMetrics(otelMetrics.getMeter('t'), { spoolBytes: () => 0, queueBytes: () => 0 }),
      maxConnectionErrors: 16,
    });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'ww-sockdir-'));
    received.length = 0;
  });
  afterEach(async () => {
    await source?.close(0);
    source = undefined;
    rmSync(root, { recursive: true, force: true });
  });

  it('creates a missing directory 0750 and the socket 0660, and serves it', async () => {
    const directory = join(root, 'a', 'run');
    source = await start(join(directory, 'collector.sock'));
    expect(modeOf(directory)).toBe(0o750);
    expect(modeOf(join(directory, 'collector.sock'))).toBe(0o660);
    await new Promise<void>((resolve) => {
      const socket = createConnection(join(directory, 'collector.sock'), () => socket.end('hello', () => resolve()));
    });
    await expect.poll(() => Buffer.concat(received).toString()).toBe('hello');
  });

  it('accepts an existing directory of its own that nobody else may write to', async () => {
    const directory = join(root, 'own');
    mkdirSync(directory, { mode: 0o700 });
    source = await start(join(directory, 'collector.sock'));
    expect(modeOf(directory)).toBe(0o700);
  });

  it('refuses a pre-created directory writable by others (the hijack), and creates no socket', async () => {
    const directory = join(root, 'shared');
    mkdirSync(directory);
    chmodSync(directory, 0o777);
    await expect(start(join(directory, 'collector.sock'))).rejects.toMatchObject({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE', message: expect.stringContaining('mode 0777') as string });
    expect(() => lstatSync(join(directory, 'collector.sock'))).toThrow();
  });

  it('refuses a directory writable by its group', () => {
    const directory = join(root, 'group');
    mkdirSync(directory);
    chmodSync(directory, 0o770);
    expect(() => prepareSocketDirectory(directory)).toThrow(expect.objectContaining({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE' }) as Error);
  });

  it('refuses a directory another user owns', () => {
    const directory = join(root, 'theirs');
    mkdirSync(directory, { mode: 0o750 });
    chownSync(directory, 65534, 65534); // the tests run as root (CI too)
    expect(() => prepareSocketDirectory(directory)).toThrow(expect.objectContaining({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE', message: expect.stringContaining('owned by uid 65534') as string }) as Error);
  });

  it('refuses a symbolic link, even to a good directory (never followed)', () => {
    const good = join(root, 'good');
    mkdirSync(good, { mode: 0o750 });
    symlinkSync(good, join(root, 'link'));
    expect(() => prepareSocketDirectory(join(root, 'link'))).toThrow(expect.objectContaining({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE', message: expect.stringContaining('symbolic link') as string }) as Error);
  });

  it('refuses to create the directory under a parent others may write to (not sticky)', () => {
    const parent = join(root, 'open');
    mkdirSync(parent);
    chmodSync(parent, 0o777);
    expect(() => prepareSocketDirectory(join(parent, 'run'))).toThrow(expect.objectContaining({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE' }) as Error);
    // A sticky world-writable parent (like /tmp) is fine: others cannot rename or remove our directory.
    chmodSync(parent, 0o1777);
    prepareSocketDirectory(join(parent, 'run'));
    expect(modeOf(join(parent, 'run'))).toBe(0o750);
  });

  it('refuses a good directory inside a folder another user may write to (it could be renamed away)', () => {
    const open = join(root, 'open2');
    mkdirSync(open);
    chmodSync(open, 0o777);
    const inner = join(open, 'run');
    mkdirSync(inner, { mode: 0o750 });
    expect(() => prepareSocketDirectory(inner)).toThrow(expect.objectContaining({ code: 'WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE', message: expect.stringContaining('writable by others without the sticky bit') as string }) as Error);
  });

  it('defaults to the per-user runtime directory, else a per-user directory in /tmp', () => {
    expect(defaultSocketPath({ XDG_RUNTIME_DIR: '/run/user/1000' })).toBe('/run/user/1000/warpwatch/collector.sock');
    expect(defaultSocketPath({})).toBe(`/tmp/warpwatch-${process.getuid?.() ?? 0}/collector.sock`);
  });
});
