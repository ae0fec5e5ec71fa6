// advise --frames with block runs (issue 16 item 5): GroupSamples with selection `block` give the
// two-level loss (lanes in warps, warps in blocks; docs/model.md §11a); values by hand.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
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
});
