import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { DEFAULT_CUDA_TOOLKIT_DIR } from './build.ts';

// examples/ built the way a user builds them: kernels/ installed into a
// temporary prefix, examples/ configured with find_package(warpwatch CONFIG) against it. The
// CPU twins run and `warpwatch analyze` reads their frames; the CUDA programs are compiled with
// nvcc (kernels/install-nvcc.sh; compile only, no GPU) whenever nvcc exists — required when CI is set.

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
let scratch = '';
let build = '';
let cmakeOutput = '';

function mustRun(command: string, args: readonly string[]): { stdout: string; stderr: string } {
  const result = spawnSync(command, args, { encoding: 'utf8', cwd: ROOT, timeout: 900_000 });
  expect(result.status, `${command} ${args.join(' ')}\n${result.stdout}${result.stderr}`).toBe(0);
  return { stdout: result.stdout, stderr: result.stderr };
}

function findNvcc(): string | undefined {
  const candidates = [process.env.CUDACXX, join(DEFAULT_CUDA_TOOLKIT_DIR, 'bin', 'nvcc')];
  for (const c of candidates) if (c !== undefined && c !== '' && existsSync(c)) return c;
  const onPath = spawnSync('sh', ['-c', 'command -v nvcc'], { encoding: 'utf8' });
  return onPath.status === 0 && onPath.stdout.trim() !== '' ? onPath.stdout.trim() : undefined;
}
const nvcc = findNvcc();

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'ww-examples-'));
  const prefix = join(scratch, 'prefix');
  mustRun('cmake', ['-S', join(ROOT, 'kernels'), '-B', join(scratch, 'kernels-build'), `-DCMAKE_INSTALL_PREFIX=${prefix}`, '-DWARPWATCH_BUILD_WORKLOADS=OFF', '-DWARPWATCH_BUILD_TESTS=OFF']);
  mustRun('cmake', ['--install', join(scratch, 'kernels-build')]);
  build = join(scratch, 'examples-build');
  // One architecture keeps the nvcc compile short (about 20 s for both programs on 2 cores).
  const cuda = nvcc === undefined ? [] : [`-DCMAKE_CUDA_COMPILER=${nvcc}`, '-DCMAKE_CUDA_ARCHITECTURES=80-real'];
  cmakeOutput = mustRun('cmake', ['-S', join(ROOT, 'examples'), '-B', build, `-DCMAKE_PREFIX_PATH=${prefix}`, ...cuda]).stdout;
  mustRun('cmake', ['--build', build, '--parallel', '2']);
}, 900_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function analyze(file: string): { stream: string; groups: number; launches: number; lossPredicted: number; lossCounts: number; sampledGroups: number; countIcc: number | null } {
  const { stdout } = mustRun(process.execPath, [join(ROOT, 'bin', 'warpwatch.mjs'), 'analyze', file, '--json']);
  const { streams } = JSON.parse(stdout) as { streams: ReturnType<typeof analyze>[] };
  expect(streams).toHaveLength(1);
  return streams[0] as ReturnType<typeof analyze>;
}

describe('examples/ against an installed warpwatch', () => {
  it('compiles the CUDA programs with nvcc when nvcc exists (required in CI)', () => {
    if (nvcc === undefined) {
      expect(process.env.CI ?? '', 'CI must have nvcc (kernels/install-nvcc.sh)').toBe('');
      expect(cmakeOutput).toMatch(/no CUDA compiler; CPU twins only/);
      return;
    }
    expect(cmakeOutput).toMatch(/CUDA programs enabled/);
    expect(existsSync(join(build, 'spmv-cuda'))).toBe(true);
    expect(existsSync(join(build, 'bfs-cuda'))).toBe(true);
  });

  it('spmv-cpu: one launch of 2048 groups; analyze agrees with the program; i.i.d. row lengths, so the model matches loss_counts', () => {
    const file = join(scratch, 'spmv.wwf');
    const { stderr } = mustRun(join(build, 'spmv-cpu'), ['--out', file, '--size', '65536', '--sample-rate', '1']);
    const report = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { rows: number; nonzeros: number; groups: number; lossCounts: number };
    expect(report).toMatchObject({ rows: 65536, groups: 2048 });
    const frames = decodeFrames(new Uint8Array(readFileSync(file)));
    const [summary] = frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
    expect(summary?.sumCounts).toBe(report.nonzeros);
    const samples = frames.filter((f): f is GroupSamplesFrame => f.type === 'group-samples').flatMap((f) => f.groups);
    expect(samples).toHaveLength(2048);
    // Every row length lies in the generator's range 4..512.
    for (const g of samples) for (const w of g.laneCounts) expect(w >= 4 && w <= 512, `row length ${w}`).toBe(true);
    const h = samples.map((g) => (32 * Math.max(...g.laneCounts)) / g.laneCounts.reduce((a, b) => a + b, 0));
    const mean = h.reduce((a, b) => a + b, 0) / h.length;
    const sd = Math.sqrt(h.reduce((a, x) => a + (x - mean) ** 2, 0) / (h.length - 1));
    const stream = analyze(file);
    expect(stream).toMatchObject({ stream: 'examples/spmv-csr-scalar', groups: 2048, launches: 1, sampledGroups: 2048 });
    expect(stream.lossCounts).toBeCloseTo(mean, 9);
    expect(stream.lossCounts).toBeCloseTo(report.lossCounts, 5);
    // Rows are independent draws: the model on the observed lengths predicts the mean H within
    // the sampling error of 2048 groups (5 SE; the model's own error on 65536 draws is smaller).
    expect(Math.abs(stream.lossPredicted - stream.lossCounts), `sd ${sd}`).toBeLessThan((5 * sd) / Math.sqrt(h.length));
    expect(Math.abs(stream.countIcc ?? 1)).toBeLessThan(0.05); // ANOVA ICC of independent lanes, SE ≈ √(2/(2048·32·31)) ≈ 0.001
  }, 300_000);

  it('bfs-cpu: one launch per level, groups = ⌈frontier/32⌉; analyze agrees with the program', () => {
    const file = join(scratch, 'bfs.wwf');
    const { stderr } = mustRun(join(build, 'bfs-cpu'), ['--out', file, '--size', '65536']);
    const report = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { vertices: number; reached: number; levels: number; groups: number; lossCounts: number };
    const summaries = decodeFrames(new Uint8Array(readFileSync(file))).filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
    expect(summaries).toHaveLength(report.levels);
    expect(summaries[0]?.groupCount).toBe(1); // level 0: the source vertex alone
    expect(summaries.reduce((a, s) => a + s.groupCount, 0)).toBe(report.groups);
    // Frontiers partition the reached vertices: Σ_levels frontier ≤ 32·groups, > 32·(groups − levels).
    expect(report.reached).toBeLessThanOrEqual(32 * report.groups);
    expect(report.reached).toBeGreaterThan(32 * (report.groups - report.levels));
    expect(report.reached).toBeLessThanOrEqual(report.vertices);
    const stream = analyze(file);
    expect(stream).toMatchObject({ stream: 'examples/bfs-level', groups: report.groups, launches: report.levels });
    expect(stream.lossCounts).toBeCloseTo(report.lossCounts, 5);
  }, 300_000);

  it('rejects a bad flag with exit code 2 and one line', () => {
    const result = spawnSync(join(build, 'spmv-cpu'), ['--out', join(scratch, 'x.wwf'), '--selection', 'random'], { encoding: 'utf8' });
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/--selection must be hash or stride, got 'random'/);
  });
});
