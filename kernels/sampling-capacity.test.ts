import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames, type Frame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from './index.ts';
import { groupStats, splitmix64 } from './sampling-statistics.ts';

// A launch that selects more groups than its sample buffer holds (--sample-rate 1, 8192 groups,
// 4096 slots). Keeping the groups that claim a slot first would keep, on sorted escape (groups in
// order of estimated work), the cheapest half: a biased sample. The backends thin the rate instead
// (fitSamplingStride, launch-totals.hpp): hash selection at the smallest stride whose mean count
// μ has μ + 8√μ ≤ 4096 (μ ≤ 3615 → stride ⌈8192 / 3615⌉ = 3), recorded in the frame.
//
// Reference: the launch's own tally of all groups (LaunchSummary sumCountsLoss / groupsCounted).
// Tolerance: 5 standard errors of a simple random sample of m of the G groups,
// sd(H)·√((1 − m/G)/m), with sd(H) taken from the kept groups.

const SIDE = 512;
const N = 32;
const GROUPS = (SIDE * SIDE) / N;
const BASE_ARGS = ['--width', String(SIDE), '--height', String(SIDE), '--n', String(N), '--remeasure', '0', '--sample-rate', '1'];

let binDir = '';
let scratch = '';

beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: [workloadBinaryName('escape', 'cpu')] }));
  scratch = mkdtempSync(join(tmpdir(), 'ww-capacity-'));
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

describe('sampling when the selected groups exceed the sample capacity (sorted escape 512×512, n = 32, rate 1, 4096 slots)', () => {
  it('thins by hash to stride 3: exactly the groups splitmix64(launchId ^ g) mod 3 = 0, none dropped, mean H within 5 SE of all groups', async () => {
    const frames = await escapeFrames('sorted.bin', ['--sorted']);
    const [summary] = summaryFrames(frames);
    const samples = sampleFrames(frames);
    const kept = samples.flatMap((f) => f.groups.map((g) => groupStats(g.laneCounts).loss));
    const m = kept.length;
    const mean = kept.reduce((a, h) => a + h, 0) / m;
    const sd = Math.sqrt(kept.reduce((a, h) => a + (h - mean) ** 2, 0) / (m - 1));
    const se = sd * Math.sqrt((1 - m / GROUPS) / m);
    const all = (summary?.sumCountsLoss ?? 0) / (summary?.groupsCounted ?? 1);
    // Sorted escape is far from uniform across group indices: the first half alone is off by many SE
    // (what first-come kept before), so the check below can fail.
    const firstHalf = samples.flatMap((f) => f.groups.filter((g) => g.groupIndex < GROUPS / 2).map((g) => groupStats(g.laneCounts).loss));
    const firstHalfMean = firstHalf.reduce((a, h) => a + h, 0) / firstHalf.length;
    expect(Math.abs(firstHalfMean - all)).toBeGreaterThan(10 * se);
    expect(Math.abs(mean - all), `kept ${mean} on ${m} groups, all ${all}, SE ${se}`).toBeLessThan(5 * se);
    expect(summary).toMatchObject({ groupCount: GROUPS, groupsCounted: GROUPS, droppedSamples: 0 });
    for (const f of samples) expect({ selection: f.selection, samplingStride: f.samplingStride }).toEqual({ selection: 'hash', samplingStride: 3 });
    const launchId = summary?.launchId ?? 0n;
    const indices = samples.flatMap((f) => f.groups.map((g) => g.groupIndex)).sort((a, b) => a - b);
    const expected = Array.from({ length: GROUPS }, (_, g) => g).filter((g) => splitmix64(launchId ^ BigInt(g)) % 3n === 0n);
    expect(indices).toEqual(expected);
    expect(indices.length).toBeLessThanOrEqual(4096);
  }, 300_000);

  it('stride selection is thinned to ⌈8192 / 4096⌉ = 2: every other group, exactly 4096 kept', async () => {
    const frames = await escapeFrames('stride.bin', ['--sorted', '--selection', 'stride']);
    const [summary] = summaryFrames(frames);
    expect(summary?.droppedSamples).toBe(0);
    const samples = sampleFrames(frames);
    for (const f of samples) expect({ selection: f.selection, samplingStride: f.samplingStride }).toEqual({ selection: 'stride', samplingStride: 2 });
    const indices = samples.flatMap((f) => f.groups.map((g) => g.groupIndex)).sort((a, b) => a - b);
    expect(indices).toEqual(Array.from({ length: GROUPS / 2 }, (_, i) => 2 * i));
  }, 300_000);

  it('a launch whose selection fits keeps the requested rate (2048 groups at rate 1: every group, stride 1)', async () => {
    const frames = await escapeFrames('fits.bin', ['--width', '256', '--height', '256']);
    const samples = sampleFrames(frames);
    expect(samples.every((f) => f.samplingStride === 1)).toBe(true);
    expect(samples.flatMap((f) => f.groups)).toHaveLength(2048);
  }, 300_000);
});

describe('block runs (--selection block): whole blocks of consecutive groups, hash-selected by block', () => {
  it('escape 512×512, n = 32, 8 groups per block at rate 1/4: exactly the blocks splitmix64(launchId ^ b) mod 4 = 0, each complete and in order', async () => {
    const frames = await escapeFrames('blocks.bin', ['--selection', 'block', '--block-groups', '8', '--sample-rate', '0.25', '--launches', '2']);
    const summaries = summaryFrames(frames);
    expect(summaries).toHaveLength(2);
    for (const summary of summaries) {
      const ofLaunch = sampleFrames(frames).filter((f) => f.launchId === summary.launchId);
      for (const f of ofLaunch) expect({ selection: f.selection, groupsPerBlock: f.groupsPerBlock, samplingStride: f.samplingStride }).toEqual({ selection: 'block', groupsPerBlock: 8, samplingStride: 4 });
      const indices = ofLaunch.flatMap((f) => f.groups.map((g) => g.groupIndex)).sort((a, b) => a - b);
      const blocks = Array.from({ length: GROUPS / 8 }, (_, b) => b).filter((b) => splitmix64(summary.launchId ^ BigInt(b)) % 4n === 0n);
      expect(indices).toEqual(blocks.flatMap((b) => Array.from({ length: 8 }, (_, k) => 8 * b + k)));
      expect(summary.droppedSamples).toBe(0);
    }
  }, 300_000);

  it('rate 1 on sorted escape is thinned by block (1024 blocks of 8 into 4096 slots = 512 blocks: μ + 8√μ ≤ 512 → stride 3); block-mean H within 5 SE of all groups', async () => {
    const frames = await escapeFrames('blocks-sorted.bin', ['--sorted', '--selection', 'block', '--block-groups', '8']);
    const [summary] = summaryFrames(frames);
    const samples = sampleFrames(frames);
    expect(summary?.droppedSamples).toBe(0);
    for (const f of samples) expect({ selection: f.selection, samplingStride: f.samplingStride }).toEqual({ selection: 'block', samplingStride: 3 });
    // The block is the sampling unit: SE from the spread of block means of H.
    const byBlock = new Map<number, number[]>();
    for (const f of samples) for (const g of f.groups) byBlock.set(Math.floor(g.groupIndex / 8), [...(byBlock.get(Math.floor(g.groupIndex / 8)) ?? []), groupStats(g.laneCounts).loss]);
    const blockMeans = [...byBlock.values()].map((hs) => hs.reduce((a, h) => a + h, 0) / hs.length);
    const m = blockMeans.length;
    const mean = blockMeans.reduce((a, h) => a + h, 0) / m;
    const sd = Math.sqrt(blockMeans.reduce((a, h) => a + (h - mean) ** 2, 0) / (m - 1));
    const se = sd * Math.sqrt((1 - m / (GROUPS / 8)) / m);
    const all = (summary?.sumCountsLoss ?? 0) / (summary?.groupsCounted ?? 1);
    expect(Math.abs(mean - all), `kept ${mean} on ${m} blocks, all ${all}, SE ${se}`).toBeLessThan(5 * se);
  }, 300_000);

  it('rejects --block-groups outside 1..65535 as a usage error', async () => {
    await expect(escapeFrames('bad-block.bin', ['--selection', 'block', '--block-groups', '0'])).rejects.toMatchObject({ code: 'WW_ERR_KERNELS_WORKLOAD_USAGE', message: expect.stringMatching(/--block-groups/) });
  });
});

