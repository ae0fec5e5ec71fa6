/**
 * Benchmark of the CLI's start: wall time of `warpwatch --version` and of a small
 * `warpwatch model` call, run as child processes the way a user runs them, through the compiled
 * JavaScript in dist/ (bin/build.mjs) and through the transpile-at-start path (tsx, forced with
 * WARPWATCH_FROM_SOURCE=1), in the same run. A bare `node -e 0` is the floor: no CLI can start
 * faster than Node itself.
 *
 * Wall time, not CPU time: the work happens in child processes, whose CPU time this process
 * does not see. Target: the compiled `--version` at most 150 ms (median, wall).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchContext, BenchResult } from './bench-context.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'bin', 'warpwatch.mjs');

/** Runs node with args; throws with its stderr when it fails (a bench of a failing command measures nothing). */
function runNode(args: readonly string[], env: Readonly<Record<string, string>> = {}): void {
  const result = spawnSync(process.execPath, [...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  ctx.log('  compiling the CLI (node bin/build.mjs)');
  execFileSync(process.execPath, [join(root, 'bin', 'build.mjs')], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const options = { runs: 25, minRuns: 10, warmupRuns: 2, maxTotalMillis: 20_000, basis: 'wall' as const };
  const model = ['model', '--dist', 'geo(0.5)', '--n', '4'];
  await ctx.measure('node -e 0 (floor)', () => runNode(['-e', '0']), options);
  await ctx.measure('--version, compiled', () => runNode([cli, '--version']), { ...options, baseline: 'node -e 0 (floor)' });
  await ctx.measure('--version, from source (tsx)', () => runNode([cli, '--version'], { WARPWATCH_FROM_SOURCE: '1' }), { ...options, baseline: '--version, compiled' });
  await ctx.measure('model --n 4, compiled', () => runNode([cli, ...model]), { ...options, baseline: 'node -e 0 (floor)' });
  await ctx.measure('model --n 4, from source (tsx)', () => runNode([cli, ...model], { WARPWATCH_FROM_SOURCE: '1' }), { ...options, baseline: 'model --n 4, compiled' });
  ctx.targetMaxMillis('--version, compiled', 150, '`warpwatch --version` from the compiled CLI starts within 150 ms', 'wall');
  ctx.targetMinSpeedup('--version, compiled', '--version, from source (tsx)', 1.5, 'the compiled CLI starts faster than transpiling at start', 'wall');
  return { notes: ['wall time of child processes (their CPU time is not visible to the bench process); ratios and targets use wall time'] };
}
