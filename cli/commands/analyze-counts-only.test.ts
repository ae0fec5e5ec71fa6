// `warpwatch analyze` and `compare` on counts-only frames (protocol/SPEC.md, "Counts-only frames
// (no clock)"): the measured values come from clocked launch summaries only, and are absent ("not
// measured") without any. Expected values by hand from the lane counts (n = 4):
//   counts-only launch: groups [1,1,1,5], [2,2,2,2] → H_counts 2.5 and 1 (Σ 3.5)
//   clocked launch:     groups [3,1,1,1], [1,1,1,1] → H_counts 2 and 1 (Σ 3), measured Σ 2.8,
//                       ΣC_SIMT 400, ΣC_MIMD 320
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { compareRuns } from '../compare/compare-runs.ts';
import { runCli } from '../testing/run-cli.ts';
import { analyzeFrames } from '../../analysis/index.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-analyze-counts-only-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const identity = {
  job: 'py',
  kernel: 'k',
  source: 'cpu' as const,
  groupSize: 4,
  sync: true,
  device: { name: 'sim', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
};
const COUNTS_ONLY_GROUPS = [[1, 1, 1, 5], [2, 2, 2, 2]];
const CLOCKED_GROUPS = [[3, 1, 1, 1], [1, 1, 1, 1]];

function summary(launchId: bigint, groups: number[][], clocked: boolean): LaunchSummaryFrame {
  const lanes = groups.flat();
  return {
    ...identity,
    type: 'launch-summary',
    launchId,
    frameSequence: 0,
    groupCount: groups.length,
    groupsCounted: groups.length,
    sumSimtClocks: clocked ? 400n : 0n,
    sumMimdClocks: clocked ? 320n : 0n,
    sumMeasuredLoss: clocked ? 2.8 : 0,
    sumCountsLoss: groups.reduce((s, g) => s + (4 * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0),
    sumMaxCounts: groups.reduce((s, g) => s + Math.max(...g), 0),
    sumCounts: lanes.reduce((a, b) => a + b, 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(lanes),
  };
}

/** GroupSamples of a counts-only launch: every clock 0. */
function countsOnlySamples(launchId: bigint, groups: number[][]): GroupSamplesFrame {
  return {
    ...identity,
    type: 'group-samples',
    launchId,
    frameSequence: 1,
    groupCount: groups.length,
    selection: 'hash',
    samplingStride: 1,
    groups: groups.map((laneCounts, g) => ({ groupIndex: g, startClock: 0n, endClock: 0n, laneCounts, laneFinishClocks: laneCounts.map(() => 0n) })),
  };
}

function write(name: string, frames: readonly (LaunchSummaryFrame | GroupSamplesFrame)[]): string {
  const file = join(directory, name);
  writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
  return file;
}

const countsOnlyFrames = [summary(1n, COUNTS_ONLY_GROUPS, false), countsOnlySamples(1n, COUNTS_ONLY_GROUPS), summary(2n, COUNTS_ONLY_GROUPS, false), countsOnlySamples(2n, COUNTS_ONLY_GROUPS)];

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
