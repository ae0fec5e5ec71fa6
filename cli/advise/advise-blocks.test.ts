// advise --frames with block runs: GroupSamples with selection `block` give the
// two-level loss (lanes in warps, warps in blocks; docs/model.md §11a); values by hand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { decodeFrames, encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-blocks-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const identity = {
  job: 'blk',
  kernel: 'k',
  frameSequence: 0,
  source: 'cpu' as const,
  groupSize: 2,
  sync: true,
  device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
};

describe('advise --frames with block runs', () => {
  it('prints the warp level, the warps-in-block factor and the block-level loss (hand-computed fractions)', async () => {
    // n = 2, blocks of 2 warps: block 0 = warps [4, 2], [1, 1] (t = 4, 1; T = 4; Σw = 8), block 1 = [3, 3], [3, 3] (t = 3, 3; T = 3; Σw = 12).
    const groups = [[4, 2], [1, 1], [3, 3], [3, 3]];
    const lanes = groups.flat();
    const summary: LaunchSummaryFrame = {
      ...identity,
      type: 'launch-summary',
      launchId: 1n,
      groupCount: 4,
      groupsCounted: 4,
      sumSimtClocks: 1000n,
      sumMimdClocks: 900n,
      sumMeasuredLoss: 4,
      sumCountsLoss: groups.reduce((s, g) => s + (2 * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0),
      sumMaxCounts: 11,
      sumCounts: 20,
      droppedSamples: 0,
      histogram: histogramOfCounts(lanes),
    };
    const samples: GroupSamplesFrame = {
      ...identity,
      type: 'group-samples',
      launchId: 1n,
      frameSequence: 1,
      groupCount: 4,
      selection: 'block',
      groupsPerBlock: 2,
      samplingStride: 1,
      groups: groups.map((laneCounts, g) => ({ groupIndex: g, startClock: 0n, endClock: 100n, laneCounts, laneFinishClocks: laneCounts.map(() => 50n) })),
    };
    const file = join(directory, 'frames.wwf');
    writeFileSync(file, Buffer.concat([encodeFrame(summary), encodeFrame(samples)]));

    const json = await runCli('advise', '--frames', file, '--json');
    expect(json.status, json.stderr).toBe(0);
    const advice = JSON.parse(json.stdout) as { blockLevel: { blocks: number; warpsPerBlock: number; warpLoss: number; warpInBlockLoss: number; blockLoss: number } };
    expect(advice.blockLevel).toMatchObject({ blocks: 2, warpsPerBlock: 2 });
    expect(advice.blockLevel.warpLoss).toBeCloseTo((2 * (4 + 1 + 3 + 3)) / 20, 12); // 22/20
    expect(advice.blockLevel.warpInBlockLoss).toBeCloseTo((2 * 4 + 2 * 3) / (4 + 1 + 3 + 3), 12); // 14/11
    expect(advice.blockLevel.blockLoss).toBeCloseTo((2 * 2 * 4 + 2 * 2 * 3) / 20, 12); // 28/20
    const text = await runCli('advise', '--frames', file);
    expect(text.stdout).toMatch(/two levels from 2 sampled blocks/);
    expect(text.stdout).toMatch(/block level \(product\)\s+1\.4000/);
  });

  it('end to end: warpwatch run escape --selection block, then advise --frames gives the two levels of the recorded blocks', async () => {
    const file = join(directory, 'escape-blocks.wwf');
    const run = await runCli('run', 'escape', '--backend', 'cpu', '--n', '8', '--width', '128', '--height', '64', '--max-iter', '64', '--selection', 'block', '--block-groups', '4', '--sample-rate', '0.5', '--out', file);
    expect(run.status, run.stderr).toBe(0);
    const samples = decodeFrames(new Uint8Array(readFileSync(file))).filter((f): f is GroupSamplesFrame => f.type === 'group-samples');
    expect(samples.length).toBeGreaterThan(0);
    expect(samples.every((f) => f.selection === 'block' && f.groupsPerBlock === 4)).toBe(true);
    // The blocks, straight from the frames: 4 consecutive groups of 8 lanes each (1024 groups: every block complete).
    const byBlock = new Map<number, { index: number; counts: readonly number[] }[]>();
    for (const f of samples) for (const g of f.groups) byBlock.set(Math.floor(g.groupIndex / 4), [...(byBlock.get(Math.floor(g.groupIndex / 4)) ?? []), { index: g.groupIndex, counts: g.laneCounts }]);
    let knt = 0, nt = 0, t = 0, kt = 0, w = 0;
    for (const members of byBlock.values()) {
      expect(members).toHaveLength(4);
      const warpTimes = members.map((m) => Math.max(...m.counts));
      const slowest = Math.max(...warpTimes);
      knt += 4 * 8 * slowest;
      kt += 4 * slowest;
      nt += 8 * warpTimes.reduce((a, b) => a + b, 0);
      t += warpTimes.reduce((a, b) => a + b, 0);
      w += members.reduce((a, m) => a + m.counts.reduce((x, y) => x + y, 0), 0);
    }
    const json = await runCli('advise', '--frames', file, '--json');
    expect(json.status, json.stderr).toBe(0);
    const advice = JSON.parse(json.stdout) as { blockLevel: { blocks: number; warpLoss: number; warpInBlockLoss: number; blockLoss: number } };
    expect(advice.blockLevel.blocks).toBe(byBlock.size);
    expect(advice.blockLevel.blockLoss).toBeCloseTo(knt / w, 12);
    expect(advice.blockLevel.warpLoss).toBeCloseTo(nt / w, 12);
    expect(advice.blockLevel.warpInBlockLoss).toBeCloseTo(kt / t, 12);
  }, 600_000);
});

