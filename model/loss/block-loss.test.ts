// blockLoss: two levels (lanes in warps, warps in blocks) from block-contiguous runs, checked
// against hand-computed fractions, an exact enumeration of i.i.d. lanes, and the coverage of its
// interval by Monte Carlo with a fixed seed.
import { describe, expect, it } from 'vitest';
import { blockLoss } from './block-loss.ts';
import { createSeededRandom } from '../distributions/random.ts';

describe('blockLoss', () => {
  it('gives the exact warp-level, warps-in-block and block-level ratios (hand-computed fractions)', () => {
    // One block, two warps of 2 lanes: warp times 4 and 1, block time 4, work 8.
    const one = blockLoss([[4, 2, 1, 1]], 2);
    expect(one).toMatchObject({ blocks: 1, warps: 2, warpSize: 2 });
    expect(one.warpLoss.value).toBeCloseTo((2 * 4 + 2 * 1) / 8, 14);
    expect(one.warpInBlockLoss.value).toBeCloseTo((2 * 4) / (4 + 1), 14);
    expect(one.blockLoss.value).toBeCloseTo((2 * 2 * 4) / 8, 14);
    expect(Number.isNaN(one.blockLoss.standardError)).toBe(true); // one block: no spread

    // Blocks of 2 and 4 warps: t = (3, 3) T = 3 and t = (1, 2, 5, 5) T = 5; Σw = 12 + 23 = 35.
    const two = blockLoss([[3, 3, 3, 3], [1, 0, 2, 0, 5, 5, 5, 5]], 2);
    expect(two.warps).toBe(6);
    expect(two.warpLoss.value).toBeCloseTo(38 / 35, 14);
    expect(two.warpInBlockLoss.value).toBeCloseTo(26 / 19, 14);
    expect(two.blockLoss.value).toBeCloseTo(52 / 35, 14);
    // Ratio estimator over the 2 blocks: a = (12, 40), b = (12, 23), residuals ∓204/35 → SE = 408/1225.
    expect(two.blockLoss.standardError).toBeCloseTo(408 / 1225, 14);
    expect(two.blockLoss.low).toBeCloseTo(52 / 35 - 1.959963984540054 * (408 / 1225), 5); // z to the accuracy of the normal quantile approximation
    // The aggregate identity block = warp × warps-in-block.
    expect(two.warpLoss.value * two.warpInBlockLoss.value).toBeCloseTo(two.blockLoss.value, 14);
  });

  it('is 1 at the block level when every warp of a block takes equally long, whatever the spread between blocks', () => {
    const result = blockLoss([[2, 2, 2, 2], [9, 9, 9, 9], [5, 5, 5, 5]], 2);
    expect(result.warpInBlockLoss.value).toBe(1);
    expect(result.blockLoss.value).toBe(1);
    expect(result.warpInBlockLoss.standardError).toBe(0);
  });

  it('matches the exact enumeration for i.i.d. lanes (counts 1 or 2 with probability 1/2, n = 2, K = 2) within 4 SE, and its 95 % interval covers it', () => {
    // Warp time t = max of 2 lanes: P(t = 2) = 3/4, E[t] = 7/4. Block time T = max of 2 warp times:
    // P(T = 2) = 1 − (1/4)² = 15/16, E[T] = 31/16. Work per block E[Σw] = 4 · 3/2 = 6.
    // warps-in-block → 2·E[T] / (2·E[t]) = 31/28; warp → 2·2·E[t] / 6 = 7/6; block → 2·2·E[T] / 6 = 31/24.
    const exact = { warpInBlock: 31 / 28, warp: 7 / 6, block: 31 / 24 };
    const random = createSeededRandom(20251125);
    const draw = (): number[][] => Array.from({ length: 4000 }, () => Array.from({ length: 4 }, () => (random.nextFloat() < 0.5 ? 1 : 2)));
    const result = blockLoss(draw(), 2);
    expect(Math.abs(result.warpInBlockLoss.value - exact.warpInBlock)).toBeLessThan(4 * result.warpInBlockLoss.standardError);
    expect(Math.abs(result.warpLoss.value - exact.warp)).toBeLessThan(4 * result.warpLoss.standardError);
    expect(Math.abs(result.blockLoss.value - exact.block)).toBeLessThan(4 * result.blockLoss.standardError);
    // Coverage over 400 replications of 200 blocks: 95 % ± 4 binomial SD (√(0.95·0.05/400) = 1.1 %).
    let covered = 0;
    const replications = 400;
    for (let k = 0; k < replications; k++) {
      const blocks = Array.from({ length: 200 }, () => Array.from({ length: 4 }, () => (random.nextFloat() < 0.5 ? 1 : 2)));
      const r = blockLoss(blocks, 2).blockLoss;
      if (r.low <= exact.block && exact.block <= r.high) covered += 1;
    }
    expect(Math.abs(covered / replications - 0.95)).toBeLessThan(4 * Math.sqrt((0.95 * 0.05) / replications));
  });

  it('rejects bad input with one clear error', () => {
    expect(() => blockLoss([], 2)).toThrow(expect.objectContaining({ code: 'WW_ERR_MODEL_INVALID_ARGUMENT' }));
    expect(() => blockLoss([[1, 2, 3]], 2)).toThrow(/not a multiple of the warp size 2/);
    expect(() => blockLoss([[1, -1]], 2)).toThrow(/finite and non-negative/);
    expect(() => blockLoss([[1, 1]], 0)).toThrow(expect.objectContaining({ code: 'WW_ERR_MODEL_GROUP_SIZE' }));
    expect(() => blockLoss([[]], 2)).toThrow(/block 0 is empty/);
  });
});
