/**
 * Measures matpow on the CPU lockstep backend for the five families of model.md §2d at
 * n = 4, 8, 16, 32, and compares the model with what the groups counted and measured:
 *
 *   lossFamily    E[X_W(n)] of the model on the family itself (truncated at 1e-6)
 *   lossPredicted E[X_W(n)] of the model on the observed counts (μ_A)
 *   lossCounts    mean H from counts over the groups (μ_S)
 *   lossMeasured  mean measured C_SIMT/C_MIMD (μ_M), with the steady clock and the thread CPU clock
 *
 * Writes bench/results/cpu-matpow.json and prints a Markdown table (docs/kernels.md).
 * CPU SIMD lanes, not GPU threads: never report these as GPU numbers.
 *
 *   npx tsx kernels/measure-cpu-matpow.ts [--quick]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CategoricalDistribution, expectedLoss, parseDistributionSpec, workloadLoss } from '../model/index.ts';
import { decodeFrames, histogramToCounts, type LaunchSummaryFrame } from '../protocol/index.ts';
import { ensureKernelsBuilt, runWorkload } from './index.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FAMILIES = ['binom(60,0.5)', 'pois(30)', 'geo(0.05)', 'nbinom(5,0.3)', 'unif(1,60)'];
const GROUP_SIZES = [4, 8, 16, 32];
const CLOCKS = ['steady', 'thread'] as const;

function machineInfo(): Record<string, string | number | boolean | null> {
  let commit: string | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    // not a git checkout
  }
  return {
    os: `${os.type()} ${os.release()}`,
    arch: process.arch,
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cpuCount: os.cpus().length,
    loadAverage1m: Number((os.loadavg()[0] ?? 0).toFixed(2)),
    date: new Date().toISOString(),
    gitCommit: commit,
  };
}

const eta = (a: number, b: number): number => Math.abs((a - b) / a);

/** One (distribution, n) measurement. */
interface MeasurementRow {
  readonly dist: string;
  readonly n: number;
  readonly groups: number;
  readonly lossFamily: number;
  readonly lossPredicted: number;
  readonly lossCounts: number;
  readonly lossMeasuredSteady: number;
  readonly lossMeasuredThread: number;
  readonly workloadLossPredicted: number;
  readonly workloadLossCounts: number;
  readonly workloadLossMeasuredSteady: number;
  readonly workloadLossMeasuredThread: number;
  readonly etaPredictedCounts: number;
  readonly etaCountsMeasuredSteady: number;
  readonly etaCountsMeasuredThread: number;
  readonly etaPredictedMeasuredSteady: number;
  readonly etaPredictedMeasuredThread: number;
  readonly groupsRemeasuredSteady: number;
  readonly groupsDisturbedSteady: number;
  readonly secondsSteady: number;
  readonly secondsThread: number;
}

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const { binDir } = await ensureKernelsBuilt({ onProgress: (line) => process.stderr.write(`  [build] ${line}\n`) });
  const scratch = mkdtempSync(join(os.tmpdir(), 'ww-cpu-matpow-'));
  const rows: MeasurementRow[] = [];
  const loadBefore = os.loadavg()[0] ?? 0;
  for (const spec of FAMILIES) {
    const family = CategoricalDistribution.fromFamily(parseDistributionSpec(spec));
    for (const n of GROUP_SIZES) {
      const groups = quick ? 64 : Math.max(1024, 16384 / n);
      const measured: Record<string, { lossMeasured: number; workloadLossMeasured: number; remeasured: number; disturbed: number; seconds: number }> = {};
      let summary: LaunchSummaryFrame | undefined;
      for (const clock of CLOCKS) {
        const out = join(scratch, `${n}-${clock}.bin`);
        // Same seed for both clocks: identical counts, only the clock differs.
        const report = await runWorkload({
          binDir,
          workload: 'matpow',
          backend: 'cpu',
          args: ['--dist', spec, '--n', String(n), '--groups', String(groups), '--seed', '1', '--clock', clock, '--sample-rate', '0', '--job', 'bench', '--out', out],
        });
        summary = decodeFrames(new Uint8Array(readFileSync(out))).find((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
        if (summary === undefined) throw new Error(`no launch summary in ${out}`);
        measured[clock] = {
          lossMeasured: summary.sumMeasuredLoss / summary.groupsCounted,
          workloadLossMeasured: Number(summary.sumSimtClocks) / Number(summary.sumMimdClocks),
          remeasured: report.groupsRemeasured ?? 0,
          disturbed: report.groupsDisturbed ?? 0,
          seconds: report.seconds,
        };
      }
      if (summary === undefined) continue;
      const observed = CategoricalDistribution.fromCounts(histogramToCounts(summary.histogram));
      const lossPredicted = expectedLoss(observed, n);
      const lossCounts = summary.sumCountsLoss / summary.groupsCounted;
      const steady = measured.steady!;
      const thread = measured.thread!;
      const row: MeasurementRow = {
        dist: spec,
        n,
        groups: summary.groupsCounted,
        lossFamily: expectedLoss(family, n),
        lossPredicted,
        lossCounts,
        lossMeasuredSteady: steady.lossMeasured,
        lossMeasuredThread: thread.lossMeasured,
        workloadLossPredicted: workloadLoss(observed, n),
        workloadLossCounts: (n * summary.sumMaxCounts) / summary.sumCounts,
        workloadLossMeasuredSteady: steady.workloadLossMeasured,
        workloadLossMeasuredThread: thread.workloadLossMeasured,
        etaPredictedCounts: eta(lossPredicted, lossCounts),
        etaCountsMeasuredSteady: eta(lossCounts, steady.lossMeasured),
        etaCountsMeasuredThread: eta(lossCounts, thread.lossMeasured),
        etaPredictedMeasuredSteady: eta(lossPredicted, steady.lossMeasured),
        etaPredictedMeasuredThread: eta(lossPredicted, thread.lossMeasured),
        groupsRemeasuredSteady: steady.remeasured,
        groupsDisturbedSteady: steady.disturbed,
        secondsSteady: steady.seconds,
        secondsThread: thread.seconds,
      };
      rows.push(row);
      process.stderr.write(`${spec} n=${n}: predicted ${lossPredicted.toFixed(4)} counts ${lossCounts.toFixed(4)} measured(steady) ${steady.lossMeasured.toFixed(4)} measured(thread) ${thread.lossMeasured.toFixed(4)}\n`);
    }
  }
  rmSync(scratch, { recursive: true, force: true });
  const max = (key: keyof MeasurementRow): number => Math.max(...rows.map((r) => Number(r[key])));
  const mean = (key: keyof MeasurementRow): number => rows.reduce((s, r) => s + Number(r[key]), 0) / rows.length;
  const result = {
    name: 'cpu-matpow',
    description: 'matpow on the CPU lockstep backend (SSE lanes at -O2 -march=x86-64-v2): CPU SIMD lanes, NOT a GPU measurement',
    machine: { ...machineInfo(), loadAverage1mAtStart: Number(loadBefore.toFixed(2)) },
    parameters: { seed: 1, groupsPerRun: 'max(1024, 16384 / n)', quick, groupSizes: GROUP_SIZES, families: FAMILIES },
    summary: {
      maxEtaPredictedCounts: max('etaPredictedCounts'),
      meanEtaPredictedCounts: mean('etaPredictedCounts'),
      maxEtaCountsMeasuredSteady: max('etaCountsMeasuredSteady'),
      meanEtaCountsMeasuredSteady: mean('etaCountsMeasuredSteady'),
      maxEtaCountsMeasuredThread: max('etaCountsMeasuredThread'),
      meanEtaCountsMeasuredThread: mean('etaCountsMeasuredThread'),
      maxEtaPredictedMeasuredThread: max('etaPredictedMeasuredThread'),
    },
    rows,
  };
  if (!quick) writeFileSync(join(root, 'bench', 'results', 'cpu-matpow.json'), `${JSON.stringify(result, null, 2)}\n`);
  const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
  const lines = [
    '| dist | n | groups | model on family | lossPredicted | lossCounts | lossMeasured (steady) | lossMeasured (thread) | η(pred, counts) | η(counts, steady) | η(counts, thread) |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.dist} | ${r.n} | ${r.groups} | ${r.lossFamily.toFixed(4)} | ${r.lossPredicted.toFixed(4)} | ${r.lossCounts.toFixed(4)} | ${r.lossMeasuredSteady.toFixed(4)} | ${r.lossMeasuredThread.toFixed(4)} | ${pct(r.etaPredictedCounts)} | ${pct(r.etaCountsMeasuredSteady)} | ${pct(r.etaCountsMeasuredThread)} |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n\nsummary: ${JSON.stringify(result.summary)}\n`);
}

await main();
