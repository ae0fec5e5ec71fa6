import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames, type Frame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from './index.ts';
import { groupStats, idealSelection, sampleStatistics, splitmix64, type GroupStats } from './sampling-statistics.ts';

// Group sampling on a row-major 2-D workload: escape over a 256×256 image,
// n = 32 (8 groups per image row, 2048 groups), sampling rate 1/64. The reference is the whole
// population: a run with --sample-rate 1 records every group's lane counts. The default
// selection (hash) must behave like an independent random 1-in-64 draw of the groups; stride
// picks group 0 of every 8th row (the image's left edge) in every launch: aliasing.
//
// Tolerances come from a fixed-seed Monte Carlo of the ideal selection (each group of each
// launch taken independently with probability 1/64) over the same population, computed here
// (kernels/sampling-statistics.ts: its own ANOVA ICC and splitmix64, not the estimator's).

const SIDE = 256;
const N = 32;
const STRIDE = 64;
const LAUNCHES = 32;
const BASE_ARGS = ['--width', String(SIDE), '--height', String(SIDE), '--n', String(N), '--remeasure', '0'];

let binDir = '';
let scratch = '';

beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: [workloadBinaryName('escape', 'cpu')] }));
  scratch = mkdtempSync(join(tmpdir(), 'ww-selection-'));
}, 900_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function escapeFrames(name: string, args: readonly string[]): Promise<Frame[]> {
  const out = join(scratch, name);
  await runWorkload({ binDir, workload: 'escape', backend: 'cpu', args: [...BASE_ARGS, ...args, '--out', out] });
  return decodeFrames(new Uint8Array(readFileSync(out)));
}
const sampleFrames = (frames: readonly Frame[]): GroupSamplesFrame[] => frames.filter((f): f is GroupSamplesFrame => f.type === 'group-samples');
const summaryFrames = (frames: readonly Frame[]): LaunchSummaryFrame[] => frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');

describe('group sampling on a row-major 2-D workload (escape 256×256, n = 32, rate 1/64)', () => {
  let population: GroupStats[] = [];
  let populationValues = { lossCounts: 0, icc: 0 };
  let band = { lossCounts: { mean: 0, sd: 0 }, icc: { mean: 0, sd: 0 } };

  beforeAll(async () => {
    const frames = await escapeFrames('all.bin', ['--sample-rate', '1']);
    const [summary] = summaryFrames(frames);
    const groups = sampleFrames(frames).flatMap((f) => f.groups);
    population = [];
    for (const g of groups) population[g.groupIndex] = groupStats(g.laneCounts);
    populationValues = sampleStatistics(population, N);
    // Every group present once; the sampled H agree with the launch's own tally of all groups.
    expect(groups).toHaveLength((SIDE * SIDE) / N);
    expect(population.filter((g) => g !== undefined)).toHaveLength((SIDE * SIDE) / N);
    expect(populationValues.lossCounts).toBeCloseTo((summary?.sumCountsLoss ?? 0) / (summary?.groupsCounted ?? 1), 9);
    band = idealSelection(population, N, STRIDE, LAUNCHES, 2000, 20240514);
  }, 300_000);

  it('the ideal 1-in-64 draw has the sampling error the analytic formula gives (check of the Monte Carlo and of the helpers)', () => {
    // splitmix64 from state 0 gives 0xe220a8397b1dcdaf (the published first output of SplitMix64).
    expect(splitmix64(0n)).toBe(0xe220a8397b1dcdafn);
    // Two groups of identical lanes with different levels: all variance between groups, ICC 1.
    expect(sampleStatistics([groupStats([1, 1]), groupStats([5, 5])], 2)).toEqual({ lossCounts: 1, icc: 1 });
    // Pooled over L launches, about L·G/64 groups: SE(mean H) ≈ sd(H)·√((1 − 1/64)/(L·G/64)).
    const mean = populationValues.lossCounts;
    const sdH = Math.sqrt(population.reduce((a, g) => a + (g.loss - mean) ** 2, 0) / (population.length - 1));
    const analytic = sdH * Math.sqrt((1 - 1 / STRIDE) / ((LAUNCHES * population.length) / STRIDE));
    expect(band.lossCounts.sd / analytic).toBeGreaterThan(0.9);
    expect(band.lossCounts.sd / analytic).toBeLessThan(1.1);
    expect(Math.abs(band.lossCounts.mean - mean)).toBeLessThan(0.2 * analytic);
    // This image has strongly correlated neighbours: the all-groups ICC is far from 0.
    expect(populationValues.icc).toBeGreaterThan(0.5);
  });

  it('selects by hash by default, exactly the groups splitmix64(launchId ^ g) mod 64 = 0, with ICC and loss_counts within 5 SD of all groups', async () => {
    const frames = await escapeFrames('default.bin', ['--launches', String(LAUNCHES)]);
    const samples = sampleFrames(frames);
    const launchIds = new Set(summaryFrames(frames).map((s) => s.launchId));
    expect(launchIds.size).toBe(LAUNCHES);
    const chosen: GroupStats[] = [];
    for (const launchId of launchIds) {
      const ofLaunch = samples.filter((f) => f.launchId === launchId);
      for (const f of ofLaunch) expect({ selection: f.selection, samplingStride: f.samplingStride }).toEqual({ selection: 'hash', samplingStride: STRIDE });
      const indices = ofLaunch.flatMap((f) => f.groups.map((g) => g.groupIndex)).sort((a, b) => a - b);
      const expected = population.map((_, g) => g).filter((g) => splitmix64(launchId ^ BigInt(g)) % BigInt(STRIDE) === 0n);
      expect(indices).toEqual(expected);
      for (const f of ofLaunch) for (const g of f.groups) chosen.push(groupStats(g.laneCounts));
    }
    const sampled = sampleStatistics(chosen, N);
    const message = `sampled ${JSON.stringify(sampled)} on ${chosen.length} groups; all groups ${JSON.stringify(populationValues)}; MC ${JSON.stringify(band)}`;
    expect(Math.abs(sampled.lossCounts - populationValues.lossCounts), message).toBeLessThan(5 * band.lossCounts.sd);
    expect(Math.abs(sampled.icc - populationValues.icc), message).toBeLessThan(5 * band.icc.sd);
  });

  it('stride (still available) aliases with the rows: the same left-edge groups every launch, ICC far outside the sampling error', async () => {
    const frames = await escapeFrames('stride.bin', ['--launches', String(LAUNCHES), '--selection', 'stride']);
    const samples = sampleFrames(frames);
    const indices = [...new Set(samples.flatMap((f) => f.groups.map((g) => g.groupIndex)))].sort((a, b) => a - b);
    // Group g covers row ⌊g/8⌋, columns 32·(g mod 8)..+31: every 64th group is column 0..31 of every 8th row.
    expect(indices).toEqual(Array.from({ length: (SIDE * SIDE) / N / STRIDE }, (_, i) => i * STRIDE));
    expect(samples.every((f) => f.selection === 'stride')).toBe(true);
    const sampled = sampleStatistics(samples.flatMap((f) => f.groups.map((g) => groupStats(g.laneCounts))), N);
    expect(Math.abs(sampled.icc - populationValues.icc)).toBeGreaterThan(5 * band.icc.sd);
  });

  it('rejects an unknown selection as a usage error', async () => {
    await expect(escapeFrames('bad.bin', ['--selection', 'random'])).rejects.toMatchObject({ code: 'WW_ERR_KERNELS_WORKLOAD_USAGE', message: expect.stringMatching(/--selection must be hash or stride/) });
  });
});
