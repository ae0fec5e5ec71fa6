// Helpers of the collector integration tests that run the real `warpwatch collect` process:
// start it (directly, or under a shell whose SIGSTOP keeps it a zombie after it dies), read
// its /healthz, write frames to its socket, and check what came back from Kafka.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { expect } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame } from '../../protocol/index.ts';
import type { ConsumedMessage } from './collector-kafka-helpers.ts';

/** The /healthz body fields the collector tests read. */
export interface Health {
  readonly status: string;
  readonly reasons: string[];
  readonly framesIn: number;
  readonly framesOut: number;
  readonly dlqOut: number;
  readonly framesRejected: number;
  readonly framesDropped: number;
  readonly recordsRecovered: number;
  readonly spoolRecords: number;
  readonly droppedByReason: Record<string, number>;
  readonly accounting: { read: number; delivered: number; dropped: number; held: number; balanced: boolean };
}

/** The real `warpwatch collect` process. */
export interface Agent {
  /** The spawned process: the collector itself, or the shell above it (`underShell`). */
  readonly child: ChildProcess;
  /** Pid of the collector process (the shell's child with `underShell`). */
  readonly pid: number;
  /** `Date.now()` just before the process was spawned. */
  readonly spawnedAt: number;
  readonly stderr: () => string;
  /** Exit code of `child` (with `underShell`: the shell's, after it reaped the collector). */
  readonly exited: Promise<number | null>;
  health(): Promise<Health>;
  /** Highest resident set size seen so far (sampled every 50 ms), bytes. */
  peakRssBytes(): number;
}

/** Options of {@link startAgent}. */
export interface AgentOptions {
  /** stdin of the collector (default 'ignore'). */
  readonly stdin?: 'ignore' | 'pipe';
  /**
   * Runs the collector as the child of `sh`, so a test can SIGSTOP the shell and SIGKILL the
   * collector: it then stays a zombie (dead, not reaped) until the shell gets SIGCONT.
   */
  readonly underShell?: boolean;
}

/** Resolves after `millis` ms. */
export const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** Polls `probe` every 50 ms until it returns a value (not undefined); throws after `timeoutMillis`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMillis: number): Promise<T> {
  const deadline = Date.now() + timeoutMillis;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMillis} ms waiting for ${what}`);
    await sleep(50);
  }
}

function rssBytes(pid: number): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? 0 : Number(kb) * 1024;
  } catch {
    return 0;
  }
}

/** The state letter of a process in /proc (R, S, Z, ...), or undefined when it is gone (reaped). */
export function processState(pid: number): string | undefined {
  try {
    return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/**
 * Spawns `warpwatch collect --metrics-port 0 ...args` (InfluxDB off) and waits until it
 * serves /healthz (its start line names the port). Throws when it exits first.
 */
export async function startAgent(args: string[], env: Record<string, string>, options: AgentOptions = {}): Promise<Agent> {
  const command = [process.execPath, 'bin/warpwatch.mjs', 'collect', '--metrics-port', '0', ...args];
  const spawnedAt = Date.now();
  const child = options.underShell
    ? // `<&0` keeps stdin (a background job would get /dev/null); `$!` is the collector's pid; `wait` reaps it (once the shell runs).
      spawn('sh', ['-c', '"$@" <&0 & echo "agent-pid=$!" >&2; wait $!', 'sh', ...command], {
        env: { ...process.env, WARPWATCH_INFLUX_URL: 'off', ...env },
        stdio: [options.stdin ?? 'ignore', 'ignore', 'pipe'],
      })
    : spawn(command[0] as string, command.slice(1), {
        env: { ...process.env, WARPWATCH_INFLUX_URL: 'off', ...env },
        stdio: [options.stdin ?? 'ignore', 'ignore', 'pipe'],
      });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = options.underShell
    ? await until(
        'the shell to start the agent',
        () => {
          const match = /agent-pid=(\d+)/.exec(stderr);
          return match === null ? undefined : Number(match[1]);
        },
        30_000,
      )
    : (child.pid as number);
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(pid))), 50);
  void exited.then(() => clearInterval(sampler));
  const port = await until(
    'the agent to start',
    () => {
      if (child.exitCode !== null) throw new Error(`agent exited ${child.exitCode}: ${stderr}`);
      const match = /http:\/\/127\.0\.0\.1:(\d+)\/metrics/.exec(stderr);
      return match === null ? undefined : Number(match[1]);
    },
    60_000,
  );
  return {
    child,
    pid,
    spawnedAt,
    stderr: () => stderr,
    exited,
    peakRssBytes: () => peak,
    async health() {
      return (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Health;
    },
  };
}

/** Writes `chunks` to the socket as fast as it takes them, then ends the connection. */
export async function writeAll(path: string, chunks: Iterable<Uint8Array>): Promise<void> {
  const socket = createConnection(path);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  for (const chunk of chunks) {
    if (!socket.write(chunk)) await new Promise<void>((resolve) => socket.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve) => socket.end(() => resolve()));
}

/** The fixture frame `sequence` of `job` (GroupSamples for even sequences, LaunchSummary for odd). */
export const frame = (job: string, sequence: number): Uint8Array => fixtureFrameBytes({ job, kernel: 'k', sequence });
/** Frames `from` .. `from + count - 1` of `job`. */
export const frames = (job: string, from: number, count: number): Uint8Array[] => Array.from({ length: count }, (_, i) => frame(job, from + i));

/** The `job#sequence` name of each consumed frame, in order, each checked byte-identical to what was sent. */
export function frameNames(messages: readonly ConsumedMessage[]): string[] {
  return messages.map((message) => {
    const decoded = decodeFrame(message.value);
    expect(message.value.equals(Buffer.from(frame(decoded.job, decoded.frameSequence)))).toBe(true);
    return `${decoded.job}#${decoded.frameSequence}`;
  });
}

/** Distinct (job, sequence) pairs among consumed frames, each checked byte-identical to what was sent. */
export function distinctFrames(messages: readonly ConsumedMessage[]): Set<string> {
  return new Set(frameNames(messages));
}

/** Fast failure detection, so each case stays short. */
export const FAST_ENV = {
  WARPWATCH_RETRY_BACKOFF_MILLIS: '200',
  WARPWATCH_KAFKA_RETRIES: '2',
  WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000',
  WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS: '5000',
  WARPWATCH_PRODUCE_TIMEOUT_MILLIS: '5000',
  WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '3000',
};
