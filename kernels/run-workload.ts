import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createFrameSplitter, type FrameError } from '../protocol/index.ts';
import { KernelsError, type KernelsErrorCode } from './errors.ts';

/**
 * The workload programs of kernels/ (relax and banded: correlated work):
 * matpow (independent lanes), escape (Mandelbrot pixels), divergence (micro-benchmark), relax
 * (a solver on a 2-D field whose convergence varies smoothly in space) and banded (a CSR row
 * loop whose row lengths vary slowly along the rows). docs/kernels.md "Workload programs".
 */
export const WORKLOAD_NAMES = ['matpow', 'escape', 'divergence', 'relax', 'banded'] as const;
/** A workload name. */
export type WorkloadName = (typeof WORKLOAD_NAMES)[number];
/** Where a workload runs: the CUDA program or the CPU lockstep backend. */
export const BACKEND_NAMES = ['cpu', 'cuda'] as const;
/** A backend name. */
export type BackendName = (typeof BACKEND_NAMES)[number];

/** The one-line JSON report a workload program prints on stderr when it ends. */
export interface WorkloadReport {
  readonly workload: string;
  readonly backend: BackendName;
  /** Lanes per group. */
  readonly n: number;
  readonly launches: number;
  readonly groups: number;
  /** Mean over groups of H from counts (the program's own tally; `warpwatch analyze` recomputes it from frames). */
  readonly lossCounts: number;
  /** Mean over groups of measured H. */
  readonly lossMeasured: number;
  readonly framesWritten: number;
  readonly framesDropped: number;
  /** CPU only: group measurements repeated because the thread was descheduled, and groups still disturbed after all attempts. */
  readonly groupsRemeasured?: number;
  readonly groupsDisturbed?: number;
  /** Wall time of the run, s. */
  readonly seconds: number;
}

/** File name of a workload binary in the build directory. */
export function workloadBinaryName(workload: WorkloadName, backend: BackendName): string {
  return `warpwatch-${workload}-${backend}`;
}

/**
 * The build targets the demo and advise need: the CPU matpow and escape programs only (a
 * full kernels build also compiles tests and, where nvcc exists, CUDA: minutes, not seconds).
 */
export const CPU_WORKLOAD_TARGETS: readonly string[] = Object.freeze([workloadBinaryName('matpow', 'cpu'), workloadBinaryName('escape', 'cpu')]);

/**
 * How a workload program failed: `not-built` (its binary is missing), `cannot-start` (the
 * system refused to start it), `usage` (it rejected its flags: exit 2, docs/kernels.md), `failed`
 * (any other non-zero exit or a signal) or `no-report` (it ended without its JSON report line).
 */
export type WorkloadFailure = 'not-built' | 'cannot-start' | 'usage' | 'failed' | 'no-report';

/**
 * A workload program that did not produce its report, typed so that callers branch on
 * `failure` (e.g. `usage` → a usage error, exit 2) instead of reading the message. Its `code`:
 * WW_ERR_KERNELS_WORKLOAD_USAGE for `usage`, WW_ERR_KERNELS_NO_CUDA for a CUDA program that
 * was not built, WW_ERR_KERNELS_WORKLOAD_FAILED otherwise.
 *
 * @example
 * try { await runWorkload(options); } catch (error) { if (error instanceof WorkloadError && error.failure === 'usage') throw new UsageError(error.message); throw error; }
 */
export class WorkloadError extends KernelsError {
  readonly failure: WorkloadFailure;
  /** The program's exit code; null when it did not run or ended by a signal. */
  readonly exitCode: number | null;
  /** The signal that ended the program, or null. */
  readonly signal: NodeJS.Signals | null;

  constructor(
    failure: WorkloadFailure,
    message: string,
    options?: { readonly code?: KernelsErrorCode; readonly exitCode?: number | null; readonly signal?: NodeJS.Signals | null; readonly cause?: unknown },
  ) {
    super(options?.code ?? (failure === 'usage' ? 'WW_ERR_KERNELS_WORKLOAD_USAGE' : 'WW_ERR_KERNELS_WORKLOAD_FAILED'), message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkloadError';
    this.failure = failure;
    this.exitCode = options?.exitCode ?? null;
    this.signal = options?.signal ?? null;
  }
}

/**
 * Runs a workload program with the given flags (see kernels/include/warpwatch/workload-options.hpp)
 * and returns its report. Frames go where the flags say (--out FILE | --out - | --socket PATH);
 * stdout is the caller's. {@link streamWorkloadFrames} is the same run with the frames handed over.
 *
 * @throws WorkloadError (a KernelsError) WW_ERR_KERNELS_NO_CUDA (cuda backend not built), WW_ERR_KERNELS_WORKLOAD_USAGE
 *   (the program rejected a flag: exit 2; the message is the program's), WW_ERR_KERNELS_WORKLOAD_FAILED (any other failure).
 * @example
 * const report = await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: ['--dist', 'pois(30)', '--out', 'f.bin'] });
 */
export async function runWorkload(options: {
  readonly binDir: string;
  readonly workload: WorkloadName;
  readonly backend: BackendName;
  readonly args: readonly string[];
}): Promise<WorkloadReport> {
  const name = workloadBinaryName(options.workload, options.backend);
  const binary = join(options.binDir, name);
  if (!existsSync(binary)) {
    const hint = options.backend === 'cuda' ? 'no CUDA compiler was found when kernels/ was built; run kernels/install-nvcc.sh or use --backend cpu' : 'build kernels/ first';
    throw new WorkloadError('not-built', `${binary} does not exist: ${hint}`, options.backend === 'cuda' ? { code: 'WW_ERR_KERNELS_NO_CUDA' } : {});
  }
  const end = await startWorkload(binary, options.args, 'inherit').ended;
  if (end.exitCode === 2) {
    throw new WorkloadError('usage', end.stderrLines.map((l) => l.replace(/^\S+: /, '')).join('; '), { exitCode: 2 });
  }
  return reportOf(end, binary, name);
}

/** What a streamed workload run produced besides its frames. */
export interface StreamedWorkloadRun {
  /** The program's one-line JSON report (stderr). */
  readonly report: WorkloadReport;
  /** Frames handed to `onFrame`. */
  readonly frames: number;
  /** The splitter's errors, one per contiguous rejected stretch of stdout, normally none. */
  readonly frameErrors: readonly FrameError[];
  /** Bytes the splitter rejected in total (exact, Σ of the stretches' lengths), normally 0. */
  readonly rejectedBytes: number;
}

/**
 * Runs a CPU workload program with `--out -` and hands every frame it writes on stdout to
 * `onFrame` as the exact bytes (protocol's splitter, CRC checked, payload not decoded), in
 * order. `onFrame` may return a promise: stdout is paused until it settles, so a slow
 * transport (Kafka) applies back-pressure to the program instead of buffering without bound.
 * An error thrown or rejected by `onFrame` stops the program and is rethrown as it is.
 *
 * @throws WorkloadError (failure `usage` for exit 2; its message names the command line and the
 *   program's last lines) when the binary is missing, cannot start, exits non-zero or prints no report.
 * @example
 * const { report } = await streamWorkloadFrames({ binDir, workload: 'matpow', args: ['--dist', 'pois(30)'], onFrame: (raw) => transport.deliver(raw) });
 */
export async function streamWorkloadFrames(options: {
  readonly binDir: string;
  readonly workload: WorkloadName;
  readonly args: readonly string[];
  readonly onFrame: (raw: Uint8Array) => void | Promise<void>;
}): Promise<StreamedWorkloadRun> {
  const name = workloadBinaryName(options.workload, 'cpu');
  const binary = join(options.binDir, name);
  if (!existsSync(binary)) {
    throw new WorkloadError('not-built', `${binary} does not exist: the kernels build did not produce the CPU ${options.workload} program`);
  }
  // --quiet suppresses the report line; it is needed here, so it is never passed.
  const args = [...options.args.filter((a) => a !== '--quiet'), '--out', '-'];
  const { child, ended } = startWorkload(binary, args, 'pipe');
  const stdout = child.stdout!;
  const splitter = createFrameSplitter();
  const frameErrors: FrameError[] = [];
  let rejectedBytes = 0;
  let frames = 0;
  let failure: unknown;
  let chain: Promise<void> = Promise.resolve();

  const handleItems = (items: ReturnType<typeof splitter.push>): void => {
    for (const item of items) {
      if ('error' in item) {
        frameErrors.push(item.error);
        rejectedBytes += item.discardedLength;
        continue;
      }
      frames += 1;
      const result = options.onFrame(item.raw);
      if (result !== undefined) {
        stdout.pause();
        chain = chain.then(() => result).then(
          () => {
            stdout.resume();
          },
          (error: unknown) => {
            failure ??= error;
            child.kill('SIGTERM');
          },
        );
      }
    }
  };

  stdout.on('data', (chunk: Buffer) => {
    if (failure !== undefined) return;
    try {
      handleItems(splitter.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    } catch (error) {
      failure ??= error;
      child.kill('SIGTERM');
    }
  });
  const end = await ended;
  if (failure === undefined) {
    try {
      handleItems(splitter.end());
    } catch (error) {
      failure = error;
    }
  }
  await chain;
  if (failure !== undefined) throw failure;
  if (end.exitCode !== 0) {
    throw new WorkloadError(end.exitCode === 2 ? 'usage' : 'failed', `${name} ${args.join(' ')} ended with ${endedWith(end)}`, { exitCode: end.exitCode, signal: end.signal });
  }
  return { report: reportOf(end, binary, name), frames, frameErrors, rejectedBytes };
}

/** How a workload program ended: exit code or signal, and its stderr split into lines (trimmed). */
interface WorkloadEnd {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderrLines: readonly string[];
}

/**
 * Starts a workload program, the one place a workload is spawned: stdin closed, stdout inherited
 * or piped (for frames), stderr kept (a bounded tail: the report line is the last one).
 * `ended` settles when the program has closed its streams.
 *
 * @throws (ended rejects) WorkloadError `cannot-start` when the system cannot start it.
 */
function startWorkload(binary: string, args: readonly string[], stdout: 'inherit' | 'pipe'): { readonly child: ChildProcess; readonly ended: Promise<WorkloadEnd> } {
  const child = spawn(binary, [...args], { stdio: ['ignore', stdout, 'pipe'] });
  const ended = new Promise<WorkloadEnd>((resolvePromise, reject) => {
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 16)); // bounded: keep the tail
    });
    child.on('error', (error) => reject(new WorkloadError('cannot-start', `cannot start ${binary}: ${error.message}`, { cause: error })));
    child.on('close', (exitCode, signal) => resolvePromise({ exitCode, signal, stderrLines: stderr.trim().split('\n') }));
  });
  return { child, ended };
}

/** `exit 3: last | lines` or `SIGKILL: last | lines`: how the program ended and its last 5 stderr lines. */
function endedWith(end: WorkloadEnd): string {
  return `${end.signal ?? `exit ${end.exitCode}`}: ${end.stderrLines.slice(-5).join(' | ')}`;
}

/**
 * The report of a program that ended: its last stderr line, parsed.
 *
 * @throws WorkloadError `failed` (non-zero exit or a signal), `no-report` (no JSON last line).
 */
function reportOf(end: WorkloadEnd, binary: string, name: string): WorkloadReport {
  if (end.exitCode !== 0) throw new WorkloadError('failed', `${name} ended with ${endedWith(end)}`, { exitCode: end.exitCode, signal: end.signal });
  const last = end.stderrLines[end.stderrLines.length - 1] ?? '';
  try {
    return JSON.parse(last) as WorkloadReport;
  } catch (error) {
    throw new WorkloadError('no-report', `${binary} printed no report line (got '${last.slice(0, 200)}')`, { exitCode: 0, cause: error });
  }
}
