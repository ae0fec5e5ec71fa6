import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { KernelsError } from './errors.ts';

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
 * Runs a workload program with the given flags (see kernels/include/warpwatch/workload-options.hpp)
 * and returns its report. Frames go where the flags say (--out FILE | --out - | --socket PATH).
 *
 * @throws KernelsError WW_ERR_KERNELS_NO_CUDA (cuda backend not built), WW_ERR_KERNELS_WORKLOAD_USAGE
 *   (the program rejected a flag: exit 2; the message is the program's), WW_ERR_KERNELS_WORKLOAD_FAILED (any other failure).
 * @example
 * const report = await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: ['--dist', 'pois(30)', '--out', 'f.bin'] });
 */
export function runWorkload(options: {
  readonly binDir: string;
  readonly workload: WorkloadName;
  readonly backend: BackendName;
  readonly args: readonly string[];
}): Promise<WorkloadReport> {
  const binary = join(options.binDir, workloadBinaryName(options.workload, options.backend));
  if (!existsSync(binary)) {
    const hint = options.backend === 'cuda' ? 'no CUDA compiler was found when kernels/ was built; run kernels/install-nvcc.sh or use --backend cpu' : 'build kernels/ first';
    return Promise.reject(new KernelsError(options.backend === 'cuda' ? 'WW_ERR_KERNELS_NO_CUDA' : 'WW_ERR_KERNELS_WORKLOAD_FAILED', `${binary} does not exist: ${hint}`));
  }
  return new Promise((resolvePromise, reject) => {
    const child = spawn(binary, [...options.args], { stdio: ['ignore', 'inherit', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 16)); // bounded: keep the tail
    });
    child.on('error', (error) => reject(new KernelsError('WW_ERR_KERNELS_WORKLOAD_FAILED', `cannot start ${binary}: ${error.message}`, { cause: error })));
    child.on('close', (code, signal) => {
      const lines = stderr.trim().split('\n');
      if (code === 2) {
        reject(new KernelsError('WW_ERR_KERNELS_WORKLOAD_USAGE', lines.map((l) => l.replace(/^\S+: /, '')).join('; ')));
        return;
      }
      if (code !== 0) {
        reject(new KernelsError('WW_ERR_KERNELS_WORKLOAD_FAILED', `${workloadBinaryName(options.workload, options.backend)} ended with ${signal ?? `exit ${code}`}: ${lines.slice(-5).join(' | ')}`));
        return;
      }
      const last = lines[lines.length - 1] ?? '';
      try {
        resolvePromise(JSON.parse(last) as WorkloadReport);
      } catch (error) {
        reject(new KernelsError('WW_ERR_KERNELS_WORKLOAD_FAILED', `${binary} printed no report line (got '${last.slice(0, 200)}')`, { cause: error }));
      }
    });
  });
}
