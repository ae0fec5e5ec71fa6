// `warpwatch analyze` and `compare` on counts-only frames (protocol/SPEC.md, "Counts-only frames
// (no clock)"): the measured values come from clocked launch summaries only, and are absent ("not
// measured") without any. Expected values by hand from the lane counts of
// protocol/testing/launch-summaries.ts (n = 4):
//   counts-only launch: groups [1,1,1,5], [2,2,2,2] → H_counts 2.5 and 1 (Σ 3.5)
//   clocked launch:     groups [3,1,1,1], [1,1,1,1] → H_counts 2 and 1 (Σ 3), measured Σ 2.8,
//                       ΣC_SIMT 400, ΣC_MIMD 320
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { CLOCKED_GROUPS, CLOCKED_SUMS, COUNTS_ONLY_GROUPS, groupSamplesFromLanes, launchSummaryFromLanes, syntheticDevice } from '../../protocol/testing/launch-summaries.ts';
import { compareRuns } from '../compare/compare-runs.ts';
import { runCli } from '../testing/run-cli.ts';
import { analyzeFrames } from '../../analysis/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-analyze-counts-only-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function summary(launchId: bigint, groups: readonly (readonly number[])[], clocked: boolean): LaunchSummaryFrame {
  return launchSummaryFromLanes(launchId, groups, { clocks: clocked ? CLOCKED_SUMS : undefined });
}

function write(name: string, frames: readonly (LaunchSummaryFrame | GroupSamplesFrame)[]): string {
  const file = join(directory, name);
  writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
  return file;
}

/** Two counts-only launches, each a LaunchSummary and GroupSamples of every group (every clock 0). */
const countsOnlyFrames = [summary(1n, COUNTS_ONLY_GROUPS, false), groupSamplesFromLanes(1n, COUNTS_ONLY_GROUPS, false), summary(2n, COUNTS_ONLY_GROUPS, false), groupSamplesFromLanes(2n, COUNTS_ONLY_GROUPS, false)];

describe('analyze on counts-only frames', () => {
  it('a counts-only stream: lossMeasured, workloadLossMeasured and the η built on them absent; the counts-based values as usual', () => {
    const [a] = analyzeFrames(countsOnlyFrames);
    expect(a!.groups).toBe(4);
    expect(a!.clockedGroups).toBe(0);
    expect(a!.lossCounts).toBeCloseTo(1.75, 12);
    expect(a!.lossMeasured).toBeUndefined();
    expect(a!.workloadLossMeasured).toBeUndefined();
    expect(a!.etaCountsMeasured).toBeUndefined();
    expect(a!.etaPredictedMeasured).toBeUndefined();
    expect(a!.sampledGroups).toBe(4);
  });

  it('a clocked stream: lossMeasured = Σ measured H / groups, workload loss ΣC_SIMT/ΣC_MIMD', () => {
    const [a] = analyzeFrames([summary(1n, CLOCKED_GROUPS, true), summary(2n, CLOCKED_GROUPS, true)]);
    expect(a!.lossMeasured).toBeCloseTo(1.4, 12);
    expect(a!.workloadLossMeasured).toBeCloseTo(1.25, 12);
    expect(a!.etaCountsMeasured).toBeCloseTo(Math.abs((1.5 - 1.4) / 1.5), 12);
  });

  it('both in one stream: the measured values from the clocked summaries only', () => {
    const [a] = analyzeFrames([summary(1n, COUNTS_ONLY_GROUPS, false), summary(2n, CLOCKED_GROUPS, true)]);
    expect(a!.groups).toBe(4);
    expect(a!.clockedGroups).toBe(2);
    expect(a!.lossCounts).toBeCloseTo(6.5 / 4, 12);
    expect(a!.lossMeasured).toBeCloseTo(1.4, 12);
    expect(a!.workloadLossMeasured).toBeCloseTo(1.25, 12);
  });

  it('an empty frame file is nothing to analyse: exit 2 with the same sentence from analyze and advise --frames', async () => {
    const empty = write('empty.wwf', []);
    const analyzed = await runCli('analyze', empty);
    const advised = await runCli('advise', '--frames', empty);
    expect([analyzed.status, advised.status]).toEqual([2, 2]);
    for (const run of [analyzed, advised]) expect(run.stderr).toMatch(/holds no LaunchSummary frame \(0 frames in all\)/);
    expect(analyzed.stdout).toContain('0 frame(s), no launch summaries');
  });

  it('names a GPU simulator as one (Numba\'s names itself numba-cuda-simulator), and the CPU backend as the lockstep backend', async () => {
    const withDevice = (name: string) => countsOnlyFrames.map((frame) => ({ ...frame, device: syntheticDevice(name) }));
    const simulated = await runCli('analyze', write('simulator.wwf', withDevice('numba-cuda-simulator')));
    expect(simulated.stdout).toContain('device=numba-cuda-simulator  (a GPU simulator on the CPU: counts only, neither a GPU nor a lockstep measurement)');
    expect(simulated.stdout).not.toContain('lockstep backend');
    const backend = await runCli('analyze', write('backend.wwf', withDevice('AMD EPYC 9654')));
    expect(backend.stdout).toContain('(CPU lockstep backend: CPU SIMD lanes, not a GPU measurement)');
  });

  it('the text says "not measured", the JSON leaves the fields out; --divergence fit says the samples have no clocks', async () => {
    const file = write('counts-only.wwf', countsOnlyFrames);
    const text = await runCli('analyze', file, '--divergence', 'fit');
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('lossMeasured not measured (no clocks: counts-only frames)');
    expect(text.stdout).toContain('measured not measured (no clocks: counts-only frames)');
    expect(text.stdout).toContain('η(counts, measured) not measured');
    expect(text.stdout).toContain('the sampled groups have no clocks (counts-only frames)');
    expect(text.stdout).not.toMatch(/lossMeasured 0\.0000|measured 1\.0000/);
    const json = await runCli('analyze', file, '--json');
    const stream = (JSON.parse(json.stdout) as { streams: Record<string, unknown>[] }).streams[0]!;
    expect(stream).not.toHaveProperty('lossMeasured');
    expect(stream).not.toHaveProperty('workloadLossMeasured');
    expect(stream.lossCounts).toBeCloseTo(1.75, 12);
  });
});

describe('compare on counts-only frames', () => {
  it('leaves loss measured out of the values and says which run did not measure it', async () => {
    const clocked = [summary(1n, CLOCKED_GROUPS, true), summary(2n, CLOCKED_GROUPS, true)];
    const comparison = compareRuns(countsOnlyFrames, clocked);
    const [stream] = comparison.streams;
    expect(stream!.notMeasured).toEqual(['A']);
    expect(stream!.values.map((v) => v.quantity)).not.toContain('lossMeasured');
    expect(stream!.values.find((v) => v.quantity === 'lossCounts')).toMatchObject({ a: 1.75, b: 1.5 });
    const both = compareRuns(clocked, clocked).streams[0]!;
    expect(both.notMeasured).toBeUndefined();
    expect(both.values.find((v) => v.quantity === 'lossMeasured')).toMatchObject({ a: 1.4, b: 1.4 });
    const text = await runCli('compare', write('a.wwf', countsOnlyFrames), write('b.wwf', clocked));
    expect(text.stdout).toContain('loss measured     not measured in A (no clocks: counts-only frames)');
  });
});
