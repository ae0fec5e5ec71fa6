import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernelsError } from './errors.ts';

/** The repository root (kernels/.. ). */
const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where `ensureKernelsBuilt` builds by default (gitignored). */
export const DEFAULT_KERNELS_BUILD_DIR = join(repositoryRoot, '.cache', 'warpwatch', 'kernels-build');

/** Where kernels/install-nvcc.sh puts the CUDA toolkit from NVIDIA's wheels (a link to it). */
export const DEFAULT_CUDA_TOOLKIT_DIR = join(repositoryRoot, '.cache', 'warpwatch', 'cuda');

/** What a build produced. */
export interface KernelsBuild {
  /** Directory holding warpwatch-<workload>-cpu (and -cuda when built) and the test runner. */
  readonly binDir: string;
  /** Whether the CUDA workloads were compiled (an nvcc was found). */
  readonly hasCuda: boolean;
}

/** Options of {@link ensureKernelsBuilt}. */
export interface KernelsBuildOptions {
  /** Build directory; default {@link DEFAULT_KERNELS_BUILD_DIR}. */
  readonly buildDir?: string;
  /** nvcc to use; default `<DEFAULT_CUDA_TOOLKIT_DIR>/bin/nvcc` when it exists, else whatever CMake finds. */
  readonly cudaCompiler?: string;
  /** Receives each line of cmake's output (progress); default: dropped. */
  readonly onProgress?: (line: string) => void;
  /** Longest wait for another process's build of the same directory, ms; default 15 min. */
  readonly lockTimeoutMillis?: number;
  /** Build only these targets (e.g. ['warpwatch-matpow-cpu']); default: everything (tests and CUDA included). */
  readonly targets?: readonly string[];
}

/** Runs a command, streaming its output lines to onProgress; resolves with the exit code. */
function runStreaming(command: string, args: readonly string[], onProgress: (line: string) => void): Promise<{ code: number; tail: string[] }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const tail: string[] = [];
    let partial = '';
    const onData = (chunk: Buffer): void => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        onProgress(line);
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(new KernelsError('WW_ERR_KERNELS_TOOL_MISSING', `${command} was not found on PATH; install cmake >= 3.20, a C++17 compiler and libgtest-dev`, { cause: error }));
      } else reject(error);
    });
    child.on('close', (code) => {
      if (partial) {
        onProgress(partial);
        tail.push(partial);
      }
      resolvePromise({ code: code ?? 1, tail });
    });
  });
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A directory lock (mkdir is atomic) so that parallel test workers and CLI runs build one at a time. */
async function withBuildLock<T>(buildDir: string, timeoutMillis: number, body: () => Promise<T>): Promise<T> {
  const lockDir = `${buildDir}.lock`;
  const pidFile = join(lockDir, 'pid');
  const deadline = Date.now() + timeoutMillis;
  mkdirSync(dirname(lockDir), { recursive: true });
  for (;;) {
    try {
      mkdirSync(lockDir);
      writeFileSync(pidFile, String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      let holder = Number.NaN;
      try {
        holder = Number(readFileSync(pidFile, 'utf8'));
      } catch {
        // The holder has not written its pid yet; wait for it.
      }
      if (Number.isInteger(holder) && !isProcessAlive(holder)) {
        rmSync(lockDir, { recursive: true, force: true }); // left behind by a killed build
        continue;
      }
      if (Date.now() > deadline) {
        throw new KernelsError('WW_ERR_KERNELS_BUILD_FAILED', `another process (pid ${holder}) has held ${lockDir} for more than ${timeoutMillis} ms; remove it if no build runs`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  try {
    return await body();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

async function hasNinja(): Promise<boolean> {
  try {
    const { code } = await runStreaming('ninja', ['--version'], () => undefined);
    return code === 0;
  } catch {
    return false;
  }
}

/**
 * Configures (when needed) and builds the kernels/ CMake project, incrementally: an up-to-date
 * build costs one `cmake --build` no-op. Safe to call from parallel processes (directory lock).
 * CUDA targets are built when nvcc exists (kernels/install-nvcc.sh, or on PATH / CUDACXX).
 *
 * @returns the directory holding the workload binaries, and whether the CUDA ones exist.
 * @throws KernelsError WW_ERR_KERNELS_TOOL_MISSING (no cmake), WW_ERR_KERNELS_BUILD_FAILED (configure or compile failed; the message holds the last output lines).
 * @example
 * const { binDir } = await ensureKernelsBuilt({ onProgress: (line) => process.stderr.write(`${line}\n`) });
 */
export async function ensureKernelsBuilt(options: KernelsBuildOptions = {}): Promise<KernelsBuild> {
  const buildDir = options.buildDir ?? DEFAULT_KERNELS_BUILD_DIR;
  const onProgress = options.onProgress ?? (() => undefined);
  const defaultNvcc = join(DEFAULT_CUDA_TOOLKIT_DIR, 'bin', 'nvcc');
  const cudaCompiler = options.cudaCompiler ?? (existsSync(defaultNvcc) ? defaultNvcc : undefined);
  return withBuildLock(buildDir, options.lockTimeoutMillis ?? 15 * 60_000, async () => {
    const configureArgs = ['-S', join(repositoryRoot, 'kernels'), '-B', buildDir, '-DCMAKE_BUILD_TYPE=Release'];
    if (cudaCompiler !== undefined) configureArgs.push(`-DCMAKE_CUDA_COMPILER=${cudaCompiler}`);
    const stampFile = join(buildDir, 'warpwatch-configure.json');
    const stamp = JSON.stringify(configureArgs);
    const configured = existsSync(join(buildDir, 'CMakeCache.txt')) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;
    if (!configured) {
      rmSync(buildDir, { recursive: true, force: true }); // a different compiler needs a fresh cache
      const generator = (await hasNinja()) ? ['-G', 'Ninja'] : [];
      onProgress(`warpwatch: configuring kernels in ${buildDir}`);
      const { code, tail } = await runStreaming('cmake', [...configureArgs, ...generator], onProgress);
      if (code !== 0) throw new KernelsError('WW_ERR_KERNELS_BUILD_FAILED', `cmake configure of kernels/ failed (exit ${code}):\n${tail.join('\n')}`);
      writeFileSync(stampFile, stamp);
    }
    const targetArgs = options.targets === undefined || options.targets.length === 0 ? [] : ['--target', ...options.targets];
    const { code, tail } = await runStreaming('cmake', ['--build', buildDir, '--parallel', ...targetArgs], onProgress);
    if (code !== 0) throw new KernelsError('WW_ERR_KERNELS_BUILD_FAILED', `building kernels/ failed (exit ${code}):\n${tail.join('\n')}`);
    return { binDir: buildDir, hasCuda: existsSync(join(buildDir, 'warpwatch-matpow-cuda')) };
  });
}
