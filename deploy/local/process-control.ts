import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { DeployError } from '../errors.ts';

/** What to start as a detached server process. */
export interface DetachedProcessSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** stdout and stderr are appended here. */
  readonly outputFile: string;
  /** The pid is written here (decimal, one line). */
  readonly pidFile: string;
}

/**
 * Starts a server in its own session (setsid), with output appended to a file, so it
 * outlives the process that started it (`npm run stack -- up` exits, the server stays).
 *
 * @returns the pid, also written to `spec.pidFile`.
 * @throws DeployError WW_ERR_STACK_TOOL_MISSING when the command cannot be executed.
 * @example
 * const pid = spawnDetached({ command: 'java', args: ['-version'], cwd: '/tmp', outputFile: '/tmp/o.log', pidFile: '/tmp/o.pid' });
 */
export function spawnDetached(spec: DetachedProcessSpec): number {
  const outputFd = openSync(spec.outputFile, 'a');
  try {
    const child = spawn(spec.command, [...spec.args], {
      cwd: spec.cwd,
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', outputFd, outputFd],
    });
    // spawn reports ENOENT asynchronously; a missing pid means it failed synchronously.
    child.on('error', () => undefined);
    if (child.pid === undefined) {
      throw new DeployError('WW_ERR_STACK_TOOL_MISSING', `could not start "${spec.command}": not found or not executable (install it or set its WARPWATCH_* command variable)`);
    }
    child.unref();
    writeFileSync(spec.pidFile, `${child.pid}\n`);
    return child.pid;
  } finally {
    closeSync(outputFd);
  }
}

/**
 * Reads a pid file written by {@link spawnDetached}.
 *
 * @returns the pid, or undefined when the file is missing or does not hold a pid.
 * @example readPidFile('/cache/kafka/node-19092/kafka.pid'); // 12345
 */
export function readPidFile(pidFile: string): number | undefined {
  if (!existsSync(pidFile)) return undefined;
  const text = readFileSync(pidFile, 'utf8').trim();
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** Removes a pid file if present. @example removePidFile('/tmp/x.pid'); */
export function removePidFile(pidFile: string): void {
  rmSync(pidFile, { force: true });
}

/**
 * True when a process with this pid exists and is not a zombie; on Linux, when
 * `commandLineMarker` is given, its command line must also contain it (a recycled pid
 * of an unrelated process does not count).
 *
 * @example isProcessRunning(pid, 'kafka.Kafka');
 */
export function isProcessRunning(pid: number, commandLineMarker?: string): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (process.platform !== 'linux') return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 3 (after the parenthesised command name) is the state; Z = zombie, X = dead.
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    if (commandLineMarker === undefined) return true;
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').includes(commandLineMarker);
  } catch {
    return false;
  }
}

/** How {@link stopProcess} ended. */
export type StopOutcome = 'not-running' | 'stopped' | 'killed';

/**
 * Stops a server cleanly: SIGTERM, wait up to `timeoutMillis` for it to exit, then SIGKILL.
 *
 * @throws DeployError WW_ERR_STACK_STOP when it is still alive 5 s after SIGKILL.
 * @example await stopProcess(pid, { timeoutMillis: 30_000 }); // 'stopped'
 */
export async function stopProcess(pid: number, options: { timeoutMillis: number; commandLineMarker?: string }): Promise<StopOutcome> {
  if (!isProcessRunning(pid, options.commandLineMarker)) return 'not-running';
  signal(pid, 'SIGTERM');
  if (await waitForExit(pid, options.timeoutMillis)) return 'stopped';
  signal(pid, 'SIGKILL');
  if (await waitForExit(pid, 5_000)) return 'killed';
  throw new DeployError('WW_ERR_STACK_STOP', `process ${pid} still runs ${options.timeoutMillis} ms after SIGTERM and 5000 ms after SIGKILL`, { retriable: true });
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

async function waitForExit(pid: number, timeoutMillis: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMillis;
  while (Date.now() < deadline) {
    if (!isProcessRunning(pid)) return true;
    await sleep(100);
  }
  return !isProcessRunning(pid);
}

/** Resolves after `millis` milliseconds. @example await sleep(250); */
export function sleep(millis: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, millis));
}

/**
 * The last `lineCount` lines of a text file ('' when it does not exist); reads at most
 * the last 256 KiB so huge logs stay cheap.
 *
 * @example tailFile('/cache/kafka/node-19092/logs/server.log', 20);
 */
export function tailFile(path: string, lineCount: number): string {
  if (!existsSync(path)) return '';
  const fd = openSync(path, 'r');
  try {
    const { size } = fstatSync(fd);
    const length = Math.min(size, 256 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    const lines = buffer.toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    return lines.slice(-lineCount).join('\n');
  } finally {
    closeSync(fd);
  }
}

/** What {@link runTool} runs to completion. */
export interface ToolRunSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Output (stdout+stderr) is written here, replacing earlier content. */
  readonly logFile: string;
  /** Words for error messages, e.g. 'Maven download of the Kafka jars'. */
  readonly description: string;
}

/**
 * Runs an install tool (mvn, go, java StorageTool) to completion with its output in a log file.
 *
 * @throws DeployError WW_ERR_STACK_TOOL_MISSING when the command is not found,
 *   WW_ERR_STACK_INSTALL when it exits non-zero (the message holds the last 30 log lines).
 * @example await runTool({ command: 'go', args: ['version'], cwd: '/tmp', logFile: '/tmp/go.log', description: 'go version' });
 */
export function runTool(spec: ToolRunSpec): Promise<void> {
  return new Promise((resolveRun, reject) => {
    const logFd = openSync(spec.logFile, 'w');
    const child = spawn(spec.command, [...spec.args], { cwd: spec.cwd, env: spec.env ?? process.env, stdio: ['ignore', logFd, logFd] });
    child.on('error', (error: NodeJS.ErrnoException) => {
      closeSync(logFd);
      if (error.code === 'ENOENT') {
        reject(new DeployError('WW_ERR_STACK_TOOL_MISSING', `${spec.description} needs "${spec.command}", which is not installed or not on PATH (see docs/stack.md, "Requirements")`, { cause: error }));
      } else {
        reject(new DeployError('WW_ERR_STACK_INSTALL', `${spec.description} could not start "${spec.command}": ${error.message}`, { cause: error, retriable: true }));
      }
    });
    child.on('exit', (code, signalName) => {
      closeSync(logFd);
      if (code === 0) {
        resolveRun();
        return;
      }
      const tail = tailFile(spec.logFile, 30);
      reject(
        new DeployError(
          'WW_ERR_STACK_INSTALL',
          `${spec.description} failed (${code === null ? `signal ${signalName}` : `exit code ${code}`}); full log: ${spec.logFile}; last lines:\n${tail}`,
          { retriable: true },
        ),
      );
    });
  });
}
