// Sorting / binning what-ifs on runs' units and the locality-aware loss of one trace
// (docs/model.md §11b, §11c): expectations computed by hand as exact fractions.
import { describe, expect, it } from 'vitest';
import { coarseEstimate, runPolicyLoss, traceLocalityLoss } from './run-policies.ts';

describe('coarseEstimate', () => {
  it('computes the middle unit of each block and interpolates linearly between them', () => {
    expect(coarseEstimate([0, 4, 8, 8, 4, 0, 0, 0], 4)).toEqual([8, 8, 8, 6, 4, 2, 0, 0]);
    expect(coarseEstimate([5, 1, 7], 1)).toEqual([5, 1, 7]);
    // A short last block: [1, 2, 3, 4 | 5, 6] → computed units 2 (3) and 5 (6): unit 3 = 3 + (6 − 3)/3, unit 4 = 3 + 2(6 − 3)/3.
    expect(coarseEstimate([1, 2, 3, 4, 5, 6], 4)).toEqual([3, 3, 3, 4, 5, 6]);
  });
  it('rejects a stride below 1 and an empty run', () => {
    expect(() => coarseEstimate([1], 0)).toThrow(/WW_ERR_MODEL_INVALID_ARGUMENT|stride/);
    expect(() => coarseEstimate([], 4)).toThrow(/at least one unit/);
  });
});

describe('runPolicyLoss', () => {
  it('sorts within each launch by the exact counts and by the pre-pass estimate', () => {
    // One launch, two runs of 4. Exact sort: [1,1,1,1][9,9,9,9] → 1.
    // Stride 2: run [1,9,1,9] computes units 1 and 3 (9, 9) → estimate [9,9,9,9];
    // run [9,1,9,1] → [1,1,1,1]. Order by estimate (ties in unit order): 9,1,9,1 | 1,9,1,9
    // → groups of 2: [9,1] [9,1] [1,9] [1,9]: each H = 2·9/10 = 9/5.
    const result = runPolicyLoss([[[1, 9, 1, 9], [9, 1, 9, 1]]], 2, { kind: 'sorting' }, { stride: 2 });
    expect(result.exact).toBe(1);
    expect(result.estimated.value).toBeCloseTo(9 / 5, 14);
    expect(result.groups).toBe(4);
  });
  it('sorts within a launch, not across launches', () => {
    // Launch 1 holds [1, 9], launch 2 holds [9, 1]: within each launch a group of 2 is [1, 9] → 9/5;
    // pooled across launches it would be [1,1][9,9] → 1.
    expect(runPolicyLoss([[[1, 9]], [[9, 1]]], 2, { kind: 'sorting' }).exact).toBeCloseTo(9 / 5, 14);
  });
  it('bins by equal unit shares, keeping unit order within a class', () => {
    // Units 4,1,3,2,8,6,7,5, k = 2: threshold the 4th smallest (4): class 0 = {4,1,3,2}, class 1 = {8,6,7,5};
    // in unit order, groups of 2: [4,1] [3,2] [8,6] [7,5] → (8/5 + 6/5 + 16/14 + 14/12)/4.
    const result = runPolicyLoss([[[4, 1, 3, 2], [8, 6, 7, 5]]], 2, { kind: 'binning', bins: 2 }, { stride: 1 });
    expect(result.exact).toBeCloseTo((8 / 5 + 6 / 5 + 16 / 14 + 14 / 12) / 4, 14);
    expect(result.estimated.value).toBeCloseTo(result.exact, 14);
  });
  it('gives a delete-a-group jackknife interval over runs', () => {
    // Three runs of 2 units, n = 2, stride 1 (estimate = counts), one launch: sorted [1,1,2,3,5,5].
    // Groups [1,1] [2,3] [5,5] → (1 + 6/5 + 1)/3 = 16/15. Leaving out run r:
    //   r0 = [1,2]: units 3,1,5,5 → [1,3][5,5] → (6/4 + 1)/2 = 5/4
    //   r1 = [3,1]: units 1,2,5,5 → [1,2][5,5] → (4/3 + 1)/2 = 7/6
    //   r2 = [5,5]: units 1,2,3,1 → [1,1][2,3] → (1 + 6/5)/2 = 11/10
    const result = runPolicyLoss([[[1, 2], [3, 1], [5, 5]]], 2, { kind: 'sorting' }, { stride: 1 });
    expect(result.estimated.value).toBeCloseTo(16 / 15, 14);
    const reps = [5 / 4, 7 / 6, 11 / 10];
    const mean = (5 / 4 + 7 / 6 + 11 / 10) / 3;
    const se = Math.sqrt((2 / 3) * reps.reduce((s, x) => s + (x - mean) ** 2, 0));
    expect(result.estimated.standardError).toBeCloseTo(se, 14);
    expect(result.estimated.high - result.estimated.value).toBeCloseTo(1.959963984540054 * se, 6); // z from the normal-quantile approximation (~1e-7)
  });
  it('rejects too few units and bad counts', () => {
    expect(() => runPolicyLoss([[[1]]], 2, { kind: 'sorting' })).toThrow(/fewer than one group/);
    expect(() => runPolicyLoss([[[1, -1]]], 1, { kind: 'sorting' })).toThrow(/non-negative/);
  });
});

describe('traceLocalityLoss', () => {
  const trace = [1, 3, 2, 2, 5, 1, 4, 4];
  it('cuts the trace into consecutive groups of every n′ that divides its length (brute force by hand)', () => {
    const result = traceLocalityLoss(trace, [1, 2, 3, 4, 8]);
    expect(result.skippedGroupSizes).toEqual([3]);
    const loss = (n: number): number => result.rows.find((row) => row.groupSize === n)!.lossContiguous.value;
    expect(loss(1)).toBe(1);
    // [1,3] 3/2, [2,2] 1, [5,1] 5/3, [4,4] 1
    expect(loss(2)).toBeCloseTo((3 / 2 + 1 + 5 / 3 + 1) / 4, 14);
    // [1,3,2,2] 12/8, [5,1,4,4] 20/14
    expect(loss(4)).toBeCloseTo(41 / 28, 14);
    expect(loss(8)).toBeCloseTo(40 / 22, 14);
  });
  it('takes batches of consecutive groups as the runs of the interval (here one group per batch)', () => {
    const row = traceLocalityLoss(trace, [2]).rows[0]!;
    const a = [3 / 2, 1, 5 / 3, 1];
    const v = 31 / 24;
    // Ratio estimator over 4 runs of one group each: SE² = R/(R−1)·Σ(a − v)²/R².
    const se = Math.sqrt((4 / 3) * a.reduce((s, x) => s + (x - v) ** 2, 0)) / 4;
    expect(row.lossContiguous.standardError).toBeCloseTo(se, 14);
    // 1 group: no interval.
    expect(Number.isNaN(traceLocalityLoss(trace, [8]).rows[0]!.lossContiguous.standardError)).toBe(true);
  });
  it('forms at most 30 batches: 64 groups → 4 batches of 3 and 26 of 2', () => {
    // Alternating groups [1,1] and [1,3]: per-group H 1 and 3/2; every batch of 2 holds one of each.
    const long = Array.from({ length: 64 }, (_, g) => (g % 2 === 0 ? [1, 1] : [1, 3])).flat();
    const row = traceLocalityLoss(long, [2]).rows[0]!;
    expect(row.lossContiguous.value).toBeCloseTo(5 / 4, 14);
    expect(row.groups).toBe(64);
  });
});
