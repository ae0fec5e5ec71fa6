import { describe, expect, it } from 'vitest';
import { groupLoss } from './group-loss.ts';

describe('groupLoss', () => {
  it('is n·max/Σ', () => {
    expect(groupLoss([1, 1, 4, 2])).toBe(2);
    expect(groupLoss(new Uint32Array([5, 5, 5]))).toBe(1);
    expect(groupLoss([0, 0, 0, 9])).toBe(4);
  });
  it('is 1 for an all-zero group (no work, no loss)', () => {
    expect(groupLoss([0, 0, 0])).toBe(1);
  });
  it('rejects empty groups, groups over 1024 lanes and bad counts', () => {
    expect(() => groupLoss([])).toThrow(/a group needs 1\.\.1024 counts, got 0/);
    expect(() => groupLoss(new Array(1025).fill(1))).toThrow(/got 1025/);
    expect(() => groupLoss([1, -1])).toThrow(/group counts must be finite and non-negative, got -1 at lane 1/);
    expect(() => groupLoss([1, Number.NaN])).toThrow(/got NaN at lane 1/);
  });
});
