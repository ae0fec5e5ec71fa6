/**
 * Host CPU cost of the recorder per launch on the CPU path: the C++ program
 * kernels/tests/recorder-bench.cpp (BasicRecorder over FakeRuntime, no GPU) run as a child
 * process in three modes, in the same run:
 *  - `runtime-only` (baseline): the runtime calls a recorded launch needs (clear, copy, host
 *    function) and the fake kernel, without the recorder;
 *  - `record-all`: every launch recorded, frames built and handed to a null sink;
 *  - `sample-100`: launch sampling, one launch in 100 recorded;
 *  - `aggregate-10ms`: every launch recorded, the launches of each 10 ms written as one frame;
 * and the same three with `-inline`: a runtime that runs every operation and host function at
 * once on the launching thread, so what the launching thread pays is the recorder's own work.
 * Each program run reports, per launch, the CPU time of the launching thread inside
 * beginLaunch + endLaunch (runtime-only: inside the same runtime calls) and the CPU time of the
 * whole process (encoder, writer and fake-stream threads included), and of the threads named
 * ww-encoder and ww-writer per recorded launch (/proc, 10 ms ticks); the metrics are the medians
 * over the runs. The cases' times are wall times of whole child runs (their CPU time is not
 * visible to this process); the per-launch numbers are in `metrics`.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureKernelsBuilt } from '../kernels/index.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

interface ProgramReport {
  readonly mode: string;
  readonly launches: number;
  readonly recorded: number;
  readonly callerCpuNsPerLaunch: number;
  readonly processCpuNsPerLaunch: number;
  readonly processCpuNsPerRecordedLaunch: number;
  readonly frameLaunches: number;
  readonly encoderCpuNsPerRecordedLaunch: number;
  readonly writerCpuNsPerRecordedLaunch: number;
  readonly wallNsPerLaunch: number;
  readonly samplesPerRecordedLaunch: number;
  readonly clockPairNs: number;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export async function run(ctx: BenchContext): Promise<BenchResult> {
  ctx.log('  building warpwatch-recorder-bench (kernels/, CMake)');
  const { binDir } = await ensureKernelsBuilt({ targets: ['warpwatch-recorder-bench'] });
  const program = join(binDir, 'warpwatch-recorder-bench');
  const launches = ctx.quick ? 2000 : 10000;
  const reports = new Map<string, ProgramReport[]>();
  const runProgram = (mode: string): void => {
    const result = spawnSync(program, [mode, String(launches)], { encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`${program} ${mode} exited ${result.status}: ${result.stderr}`);
    const report = JSON.parse(result.stdout.trim()) as ProgramReport;
    reports.set(mode, [...(reports.get(mode) ?? []), report]);
  };
  const options = { runs: ctx.quick ? 3 : 7, minRuns: 3, warmupRuns: 1, maxTotalMillis: 60_000, basis: 'wall' as const, parameters: { launches } };
  for (const suffix of ['', '-inline']) {
    const baseline = `runtime-only${suffix} (baseline)`;
    await ctx.measure(baseline, () => runProgram(`runtime-only${suffix}`), options);
    await ctx.measure(`record-all${suffix}`, () => runProgram(`record-all${suffix}`), { ...options, baseline });
    await ctx.measure(`sample-100${suffix}`, () => runProgram(`sample-100${suffix}`), { ...options, baseline });
    await ctx.measure(`aggregate-10ms${suffix}`, () => runProgram(`aggregate-10ms${suffix}`), { ...options, baseline });
  }

  const metrics: Record<string, number> = {};
  for (const [mode, list] of reports) {
    const key = mode.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
    metrics[`${key}.callerCpuNsPerLaunch`] = median(list.map((r) => r.callerCpuNsPerLaunch));
    metrics[`${key}.processCpuNsPerLaunch`] = median(list.map((r) => r.processCpuNsPerLaunch));
    metrics[`${key}.processCpuNsPerRecordedLaunch`] = median(list.map((r) => r.processCpuNsPerRecordedLaunch));
    metrics[`${key}.encoderCpuNsPerRecordedLaunch`] = median(list.map((r) => r.encoderCpuNsPerRecordedLaunch));
    metrics[`${key}.writerCpuNsPerRecordedLaunch`] = median(list.map((r) => r.writerCpuNsPerRecordedLaunch));
    metrics[`${key}.recordedPerRun`] = median(list.map((r) => r.recorded));
    metrics[`${key}.summaryFramesPerRun`] = median(list.map((r) => r.frameLaunches));
    metrics[`${key}.runs`] = list.length;
  }
  for (const suffix of ['', 'Inline']) {
    const base = metrics[`runtimeOnly${suffix}.processCpuNsPerLaunch`] ?? Number.NaN;
    metrics[`recordAll${suffix}.processCpuRatioToRuntimeOnly`] = (metrics[`recordAll${suffix}.processCpuNsPerLaunch`] ?? Number.NaN) / base;
    metrics[`sample100${suffix}.processCpuRatioToRuntimeOnly`] = (metrics[`sample100${suffix}.processCpuNsPerLaunch`] ?? Number.NaN) / base;
    metrics[`aggregate10ms${suffix}.processCpuRatioToRuntimeOnly`] = (metrics[`aggregate10ms${suffix}.processCpuNsPerLaunch`] ?? Number.NaN) / base;
  }
  ctx.log(`  per launch (medians, ns): ${JSON.stringify(metrics)}`);
  return {
    metrics,
    notes: [
      `${launches} launches per program run; each launch 64 groups of 32 lanes, 8 sampled groups (stride 8), frames to a null sink`,
      'FakeRuntime: each runtime call is a std::function handed to a stream worker thread (mutex + condition variable), so the runtime-only baseline is thread hand-offs, not CUDA; on a GPU the same calls cost what cudaMemsetAsync/cudaMemcpyAsync/cudaLaunchHostFunc cost',
      'processCpu includes the bench loop waiting for the encoder (5 us sleeps) after each launch, in record-all and sample-100 only (aggregate-10ms: no wait)',
      'ww-encoder / ww-writer CPU comes from /proc in 10 ms ticks: 0 where the threads used less than a tick in the run (sample-100, aggregate-10ms)',
      'aggregate-10ms: the fake kernel overwrites the totals with one prepared launch instead of adding, so its frames are valid but not the sum of the launches (the unit tests check sums); the cost is what is measured',
      'case times are wall times of whole child runs; ratios use wall time',
    ],
  };
}
