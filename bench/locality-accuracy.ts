/**
 * Accuracy of the locality-aware prediction (docs/model.md §11): trained only
 * on the GroupSamples of a run at n = 32 (hash-sampled groups of 32 lanes as contiguous runs),
 * predict the loss at n′ = 4, 8, 16 and compare with the loss_counts of runs made at those n,
 * for the correlated workloads escape plain and sorted, relax (a solver on a 2-D field whose
 * convergence varies smoothly in space) and banded plain and sorted (a CSR row loop with banded
 * row lengths; sorted: rows in order of length):
 * limit 5 %; and for matpow (independent lanes) against the independent-lanes model: limit 1 %.
 * CPU backend: CPU SIMD lanes, not a GPU. Every run uses the workload's default size and
 * seed 1, so for escape, relax and banded the runs at every n hold the same units (the same
 * image, field or matrix); matpow draws its counts. The n = 32 run is sampled three ways
 * (`trainings` below): rate 0.4 in one launch and the default rate 1/64 pooled over 8
 * launches are held to the limits; 1/64 in one launch is recorded to show the sampling error.
 * Then every warp is recorded (held: with complete data the trace method has no error of its
 * own), and random subsets of 128 and 1,024 of those warps (300 draws each, fixed seed) give
 * the distribution of the error and the interval's coverage at those sample sizes.
 *
 *   npx tsx bench/locality-accuracy.ts            # prints one line per case; exit 1 when a held case misses
 *
 * Not a timing benchmark: it writes bench/results/locality-accuracy.json with machine info.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from '../kernels/index.ts';
import { localityLoss, mulberry32 } from '../model/index.ts';
import { decodeFrames, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { machineInfo } from './machine-info.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-locality-'));
type Workload = 'escape' | 'matpow' | 'relax' | 'banded';
const WORKLOADS: readonly Workload[] = ['escape', 'relax', 'banded', 'matpow'];
const { binDir } = await ensureKernelsBuilt({ targets: WORKLOADS.map((w) => workloadBinaryName(w, 'cpu')) });

async function framesOf(workload: Workload, args: readonly string[], name: string) {
  const out = join(directory, `${name}.wwf`);
  await runWorkload({ binDir, workload, backend: 'cpu', args: [...args, '--out', out] });
  return decodeFrames(new Uint8Array(readFileSync(out)));
}
const countsLoss = (frames: ReturnType<typeof decodeFrames>): number => {
  const summaries = frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
  return summaries.reduce((s, f) => s + f.sumCountsLoss, 0) / summaries.reduce((s, f) => s + f.groupsCounted, 0);
};

const cases: Record<string, unknown>[] = [];
const samplingMonteCarlo: Record<string, unknown>[] = [];
/** Monte Carlo draws per sample size, and the sample sizes (runs): one launch at 1/64, 8 launches. */
const MONTE_CARLO_DRAWS = 300;
const MONTE_CARLO_RUNS = [128, 1024];

/** m of the items drawn without replacement (partial Fisher–Yates on a copy). */
function drawWithoutReplacement<T>(items: readonly T[], m: number, random: () => number): T[] {
  const pool = [...items];
  for (let i = 0; i < m; i += 1) {
    const j = i + Math.floor(random() * (pool.length - i));
    [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
  }
  return pool.slice(0, m);
}

let failed = 0;
const variants: { name: string; workload: Workload; args: string[]; limit: number; against: 'measured' | 'independent' }[] = [
  { name: 'escape plain', workload: 'escape', args: [], limit: 0.05, against: 'measured' },
  { name: 'escape sorted', workload: 'escape', args: ['--sorted'], limit: 0.05, against: 'measured' },
  { name: 'relax plain', workload: 'relax', args: [], limit: 0.05, against: 'measured' },
  { name: 'banded plain', workload: 'banded', args: [], limit: 0.05, against: 'measured' },
  { name: 'banded sorted', workload: 'banded', args: ['--sorted'], limit: 0.05, against: 'measured' },
  { name: 'matpow pois(30)', workload: 'matpow', args: ['--dist', 'pois(30)', '--groups', '4096'], limit: 0.01, against: 'independent' },
];
// How the n = 32 run is sampled. Held: the case counts towards the exit code. The one-launch
// run at the probe's default rate (1/64: about 128 runs) is recorded to show the sampling
// error, not held: its interval is wider than ±5 % for escape at n′ = 16, so a miss there
// would be chance, not the method (the hash draws a new subset per launch id, so runs differ).
const trainings: { label: string; rate: string; launches: number; held: boolean }[] = [
  { label: 'rate 0.4, 1 launch', rate: '0.4', launches: 1, held: true },
  { label: 'rate 1/64, 8 launches pooled', rate: '0.015625', launches: 8, held: true },
  { label: 'rate 1/64, 1 launch', rate: '0.015625', launches: 1, held: false },
];
for (const v of variants) {
  // The runs measured at n′ (loss_counts over all their groups), shared by every training.
  const measuredAt = new Map<number, number>();
  for (const n of [4, 8, 16]) measuredAt.set(n, countsLoss(await framesOf(v.workload, [...v.args, '--n', String(n)], `${v.name}-${n}`)));
  for (const t of trainings) {
    // n = 32, groups sampled by hash; a launch's samples stay below the 4,096-slot capacity
    // (rate 0.4 on 8,192 groups is thinned to 1 in 3 by fitSamplingStride, still by hash).
    const trained = await framesOf(v.workload, [...v.args, '--n', '32', '--sample-rate', t.rate, '--launches', String(t.launches), '--selection', 'hash'], `${v.name}-32`);
    const runs = trained.filter((f): f is GroupSamplesFrame => f.type === 'group-samples').flatMap((f) => f.groups.map((g) => g.laneCounts));
    const prediction = localityLoss(runs, [4, 8, 16]);
    for (const row of prediction.rows) {
      const measured = measuredAt.get(row.groupSize) ?? Number.NaN;
      const reference = v.against === 'measured' ? measured : row.lossIndependent;
      const error = row.lossContiguous.value / reference - 1;
      const pass = Math.abs(error) <= v.limit;
      if (!pass && t.held) failed += 1;
      // Does the interval (runs as the independent units) hold the measured value? How many runs
      // would bring its half-width to the limit (half-width ∝ 1/√runs)? And how far off would the
      // independent-lanes model of §2 be: the error this prediction removes.
      const intervalHoldsMeasured = row.lossContiguous.low <= measured && measured <= row.lossContiguous.high;
      const halfWidth = (row.lossContiguous.high - row.lossContiguous.low) / 2 / row.lossContiguous.value;
      const runsForLimit = Math.ceil(runs.length * (halfWidth / v.limit) ** 2);
      const independentError = row.lossIndependent / measured - 1;
      cases.push({
        case: v.name,
        training: t.label,
        held: t.held,
        n: row.groupSize,
        runs: runs.length,
        predicted: row.lossContiguous.value,
        low: row.lossContiguous.low,
        high: row.lossContiguous.high,
        independent: row.lossIndependent,
        measuredCounts: measured,
        reference: v.against,
        error,
        limit: v.limit,
        pass,
        intervalHoldsMeasured,
        relativeHalfWidth: halfWidth,
        runsForLimit,
        independentError,
      });
      process.stdout.write(
        `${pass ? 'PASS' : 'FAIL'}${t.held ? '' : ' (not held)'}  ${v.name} n'=${row.groupSize} [${t.label}]: predicted ${row.lossContiguous.value.toFixed(4)} ` +
          `[${row.lossContiguous.low.toFixed(4)}, ${row.lossContiguous.high.toFixed(4)}] from ${runs.length} runs at n=32; ` +
          `independent-lanes ${row.lossIndependent.toFixed(4)}; loss_counts measured at n=${row.groupSize} ${measured.toFixed(4)}${intervalHoldsMeasured ? ' (in the interval)' : ' (outside the interval)'}; ` +
          `error vs ${v.against} ${(100 * error).toFixed(2)} % (limit ${100 * v.limit} %)\n`,
      );
    }
  }
  // Sampling error by Monte Carlo: every warp of the n = 32 run recorded (stride 1, a capacity
  // that holds them all), then random subsets of m warps (as the hash selection draws them:
  // kernels.md "Group sampling") give the distribution of the prediction's error at m runs.
  // All warps together: the trace method's own error (no sampling), held to the limit.
  const everyWarp = await framesOf(v.workload, [...v.args, '--n', '32', '--sample-rate', '1', '--selection', 'stride', '--sample-capacity', '65536'], `${v.name}-32-all`);
  const population = everyWarp.filter((f): f is GroupSamplesFrame => f.type === 'group-samples').flatMap((f) => f.groups.map((g) => g.laneCounts));
  const whole = localityLoss(population, [4, 8, 16]);
  for (const row of whole.rows) {
    const measured = measuredAt.get(row.groupSize) ?? Number.NaN;
    const error = row.lossContiguous.value / (v.against === 'measured' ? measured : row.lossIndependent) - 1;
    const pass = Math.abs(error) <= v.limit;
    if (!pass) failed += 1;
    cases.push({ case: v.name, training: 'every warp (stride 1)', held: true, n: row.groupSize, runs: population.length, predicted: row.lossContiguous.value, low: row.lossContiguous.low, high: row.lossContiguous.high, independent: row.lossIndependent, measuredCounts: measured, reference: v.against, error, limit: v.limit, pass });
    process.stdout.write(`${pass ? 'PASS' : 'FAIL'}  ${v.name} n'=${row.groupSize} [every warp, ${population.length} runs]: predicted ${row.lossContiguous.value.toFixed(4)}; error vs ${v.against} ${(100 * error).toFixed(3)} %\n`);
  }
  const random = mulberry32(0x16_06);
  for (const m of MONTE_CARLO_RUNS) {
    const errors = new Map<number, number[]>();
    const covered = new Map<number, number>();
    for (let draw = 0; draw < MONTE_CARLO_DRAWS; draw += 1) {
      for (const row of localityLoss(drawWithoutReplacement(population, m, random), [4, 8, 16]).rows) {
        const reference = v.against === 'measured' ? (measuredAt.get(row.groupSize) ?? Number.NaN) : row.lossIndependent;
        errors.set(row.groupSize, [...(errors.get(row.groupSize) ?? []), row.lossContiguous.value / reference - 1]);
        if (row.lossContiguous.low <= reference && reference <= row.lossContiguous.high) covered.set(row.groupSize, (covered.get(row.groupSize) ?? 0) + 1);
      }
    }
    for (const [n, list] of errors) {
      const absolute = list.map(Math.abs).sort((a, b) => a - b);
      const withinLimit = absolute.filter((e) => e <= v.limit).length / absolute.length;
      const p95 = absolute[Math.ceil(0.95 * absolute.length) - 1] ?? Number.NaN;
      const coverage = (covered.get(n) ?? 0) / absolute.length;
      samplingMonteCarlo.push({ case: v.name, n, runs: m, draws: MONTE_CARLO_DRAWS, reference: v.against, limit: v.limit, withinLimit, p95AbsError: p95, maxAbsError: absolute[absolute.length - 1], intervalCoverage: coverage });
      process.stdout.write(
        `      ${v.name} n'=${n}, ${m} random runs of ${population.length} (${MONTE_CARLO_DRAWS} draws): within ${100 * v.limit} % in ${(100 * withinLimit).toFixed(1)} % of draws, ` +
          `95th percentile |error| ${(100 * p95).toFixed(2)} %, 95 % interval held the reference in ${(100 * coverage).toFixed(1)} %\n`,
      );
    }
  }
}
writeFileSync(join('bench', 'results', 'locality-accuracy.json'), `${JSON.stringify({ bench: 'locality-accuracy', machine: machineInfo(), cases, samplingMonteCarlo }, null, 2)}\n`);
rmSync(directory, { recursive: true, force: true });
process.exitCode = failed === 0 ? 0 : 1;
