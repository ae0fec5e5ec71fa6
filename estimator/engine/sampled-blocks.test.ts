/**
 * Block runs from GroupSamples frames with selection `block` (docs/model.md §11a): the
 * estimator's frame observation gathers complete blocks in group order, and model/'s
 * sampled-group accumulation gives the two-level ratios from them.
 */
import { describe, expect, it } from 'vitest';
import { createSampledGroups, recordSampledBlock, summarizeSampledGroups } from '../../model/index.ts';
import type { GroupSamplesFrame } from '../../protocol/index.ts';
import { SAMPLE_BLOCK_SAMPLES } from '../../protocol/sample-frames.ts';
import { samplesObservationFromFrame } from './frame-observation.ts';

describe('block runs from frames (two levels, docs/model.md §11a)', () => {
  const frameOf = (groups: { groupIndex: number; laneCounts: number[] }[], groupCount: number, groupsPerBlock: number): GroupSamplesFrame => ({
    ...SAMPLE_BLOCK_SAMPLES,
    groupSize: 2,
    groupCount,
    selection: 'block',
    groupsPerBlock,
    groups: groups.map((g) => ({ ...g, startClock: 0n, endClock: 10n, laneFinishClocks: g.laneCounts.map((w) => BigInt(w)) })),
  });

  it('takes complete blocks only, groups in index order, and gives the exact ratios (hand-computed fractions)', () => {
    // n = 2, 2 groups per block. Block 0: groups 1 then 0 (out of order) → units [4, 2, 1, 1]; block 1: [3, 3, 3, 3];
    // block 2 lacks group 5 (left out); block 3 is the last, shorter block of a launch of 7 groups (1 group: complete).
    const frame = frameOf(
      [
        { groupIndex: 1, laneCounts: [1, 1] },
        { groupIndex: 0, laneCounts: [4, 2] },
        { groupIndex: 2, laneCounts: [3, 3] },
        { groupIndex: 3, laneCounts: [3, 3] },
        { groupIndex: 4, laneCounts: [9, 0] },
        { groupIndex: 6, laneCounts: [0, 2] },
      ],
      7,
      2,
    );
    const observation = samplesObservationFromFrame(frame);
    expect(observation.blocks).toEqual([[4, 2, 1, 1], [3, 3, 3, 3], [0, 2]]);
    expect(samplesObservationFromFrame({ ...frame, selection: 'hash', groupsPerBlock: undefined }).blocks).toBeUndefined();
    const samples = createSampledGroups();
    for (const block of observation.blocks ?? []) recordSampledBlock(samples, block, 2);
    const blocks = summarizeSampledGroups({ ...samples, groups: 1 }, 2)?.blocks;
    // Per block (w, Σt, K·T): (8, 5, 8), (12, 6, 6), (2, 2, 2).
    expect(blocks).toMatchObject({ blocks: 3, warps: 5 });
    expect(blocks?.warpLoss.value).toBeCloseTo((2 * (5 + 6 + 2)) / 22, 14);
    expect(blocks?.warpInBlockLoss.value).toBeCloseTo((8 + 6 + 2) / (5 + 6 + 2), 14);
    expect(blocks?.blockLoss.value).toBeCloseTo((2 * (8 + 6 + 2)) / 22, 14);
  });
});
