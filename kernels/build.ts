import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KernelsError } from './errors.ts';

/** The repository root (kernels/.. ). */
const repositoryRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where `ensureKernelsBuilt` builds by default (gitignored). */
export const DEFAULT_KERNELS_BUILD_DIR = join(repositoryRoot, '.cache', 'warpwatch', 'kernels-build');

/**
 * Where the CLI (`warpwatch demo`, `run`, `advise --workload`) builds its workload programs, tests
 * off (gitignored): a directory of its own, so that it and the test build never reconfigure each other.
 */
export const DEFAULT_WORKLOADS_BUILD_DIR = join(repositoryRoot, '.cache', 'warpwatch', 'workloads-build');

/** Where kernels/install-nvcc.sh puts the CUDA toolkit from NVIDIA's wheels (a link to it). */
export const DEFAULT_CUDA_TOOLKIT_DIR = join(repositoryRoot, '.cache', 'warpwatch', 'cuda');

/** What a build produced. */
export interface KernelsBuild {
  /** Directory holding warpwatch-<workload>-cpu (and -cuda when built) and the test runner. */
  readonly binDir: string;
  /** Whether an nvcc was found, so the CUDA workload targets exist (built when asked for, or with no target list). */
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
  /**
   * true (default): configure with the GoogleTest tests (needs GTest) and warnings as errors (-Werror),
   * as `npm test` and CI build. false: the workload programs only, tests off, GTest never looked
   * for, in {@link DEFAULT_WORKLOADS_BUILD_DIR} by default: what the CLI builds for users.
   */
  readonly tests?: boolean;
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
        reject(new KernelsError('WW_ERR_KERNELS_TOOL_MISSING', `${command} was not found on PATH; install cmake >= 3.20 and a C++17 compiler (and libgtest-dev for npm test)`, { cause: error }));
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

/** Whether the configured build found a CUDA compiler (CMakeCache.txt's CMAKE_CUDA_COMPILER, set by check_language). */
function cudaConfigured(buildDir: string): boolean {
  const cache = readFileSync(join(buildDir, 'CMakeCache.txt'), 'utf8');
  const match = /^CMAKE_CUDA_COMPILER(?::[A-Z]+)?=(.*)$/m.exec(cache);
  return match !== null && match[1] !== undefined && match[1].trim() !== '' && !match[1].endsWith('NOTFOUND');
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
  const tests = options.tests ?? true;
  const buildDir = options.buildDir ?? (tests ? DEFAULT_KERNELS_BUILD_DIR : DEFAULT_WORKLOADS_BUILD_DIR);
  const onProgress = options.onProgress ?? (() => undefined);
  const defaultNvcc = join(DEFAULT_CUDA_TOOLKIT_DIR, 'bin', 'nvcc');
  const cudaCompiler = options.cudaCompiler ?? (existsSync(defaultNvcc) ? defaultNvcc : undefined);
  return withBuildLock(buildDir, options.lockTimeoutMillis ?? 15 * 60_000, async () => {
    const configureArgs = ['-S', join(repositoryRoot, 'kernels'), '-B', buildDir, '-DCMAKE_BUILD_TYPE=Release'];
    configureArgs.push(tests ? '-DWARPWATCH_WARNINGS_AS_ERRORS=ON' : '-DWARPWATCH_BUILD_TESTS=OFF');
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
    const hasCuda = cudaConfigured(buildDir);
    const cudaTargets = (options.targets ?? []).filter((target) => target.endsWith('-cuda'));
    if (!hasCuda && cudaTargets.length > 0) {
      throw new KernelsError('WW_ERR_KERNELS_NO_CUDA', `the CUDA workloads (${cudaTargets.join(', ')}) cannot be built: no nvcc was found; run kernels/install-nvcc.sh, or use --backend cpu`);
    }
    const targetArgs = options.targets === undefined || options.targets.length === 0 ? [] : ['--target', ...options.targets];
    const { code, tail } = await runStreaming('cmake', ['--build', buildDir, '--parallel', ...targetArgs], onProgress);
    if (code !== 0) throw new KernelsError('WW_ERR_KERNELS_BUILD_FAILED', `building kernels/ failed (exit ${code}):\n${tail.join('\n')}`);
    return { binDir: buildDir, hasCuda };
  });
}
