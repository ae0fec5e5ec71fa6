import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { workloadBinaryName, type WorkloadReport } from '../../kernels/index.ts';
import { createFrameSplitter, type FrameError } from '../../protocol/index.ts';
import { DemoError } from './errors.ts';

/**
 * The build targets the demo and advise need: the CPU matpow and escape programs only (a
 * full kernels build also compiles tests and, where nvcc exists, CUDA: minutes, not seconds).
 */
export const CPU_WORKLOAD_TARGETS: readonly string[] = Object.freeze([workloadBinaryName('matpow', 'cpu'), workloadBinaryName('escape', 'cpu')]);

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
 *
 * @throws DemoError WW_ERR_DEMO_WORKLOAD when the binary is missing, exits non-zero or prints no report.
 * @example
 * const { report } = await streamWorkloadFrames({ binDir, workload: 'matpow', args: ['--dist', 'pois(30)'], onFrame: (raw) => transport.deliver(raw) });
 */
export function streamWorkloadFrames(options: {
  readonly binDir: string;
  readonly workload: 'matpow' | 'escape';
  readonly args: readonly string[];
  readonly onFrame: (raw: Uint8Array) => void | Promise<void>;
}): Promise<StreamedWorkloadRun> {
  const binary = join(options.binDir, workloadBinaryName(options.workload, 'cpu'));
  if (!existsSync(binary)) {
    return Promise.reject(new DemoError('WW_ERR_DEMO_WORKLOAD', `${binary} does not exist: the kernels build did not produce the CPU ${options.workload} program`));
  }
  return new Promise((resolvePromise, reject) => {
    // --quiet suppresses the report line; the demo needs it, so it is never passed here.
    const args = [...options.args.filter((a) => a !== '--quiet'), '--out', '-'];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const splitter = createFrameSplitter();
    const frameErrors: FrameError[] = [];
    let rejectedBytes = 0;
    let frames = 0;
    let stderr = '';
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
          child.stdout.pause();
          chain = chain.then(() => result).then(
            () => {
              child.stdout.resume();
            },
            (error: unknown) => {
              failure ??= error;
              child.kill('SIGTERM');
            },
          );
        }
      }
    };

    child.stdout.on('data', (chunk: Buffer) => {
      if (failure !== undefined) return;
      try {
        handleItems(splitter.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
      } catch (error) {
        failure ??= error;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 16));
    });
    child.on('error', (error) => reject(new DemoError('WW_ERR_DEMO_WORKLOAD', `cannot start ${binary}: ${error.message}`, { cause: error })));
    child.on('close', (code, signal) => {
      if (failure === undefined) {
        try {
          handleItems(splitter.end());
        } catch (error) {
          failure = error;
        }
      }
      chain
        .then(() => {
          if (failure !== undefined) throw failure;
          const lines = stderr.trim().split('\n');
          if (code !== 0) {
            throw new DemoError('WW_ERR_DEMO_WORKLOAD', `${workloadBinaryName(options.workload, 'cpu')} ${args.join(' ')} ended with ${signal ?? `exit ${code}`}: ${lines.slice(-5).join(' | ')}`);
          }
          const last = lines[lines.length - 1] ?? '';
          let report: WorkloadReport;
          try {
            report = JSON.parse(last) as WorkloadReport;
          } catch (error) {
            throw new DemoError('WW_ERR_DEMO_WORKLOAD', `${binary} printed no report line (got '${last.slice(0, 200)}')`, { cause: error });
          }
          resolvePromise({ report, frames, frameErrors, rejectedBytes });
        })
        .catch(reject);
    });
  });
}
