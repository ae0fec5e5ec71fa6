import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { expectedMaximum, sampleMaximumPmf, workloadLoss } from './sample-maximum.ts';
import { bruteForceLoss } from '../testing/brute-force.ts';

describe('sample maximum', () => {
  it('pmf is F(a)^n − F(a−)^n (hand values for W uniform on {0, 1, 2}, n = 2)', () => {
    const dist = CategoricalDistribution.fromCounts({ 0: 1, 1: 1, 2: 1 });
    const { probabilities } = sampleMaximumPmf(dist, 2);
    expect(probabilities[0]).toBeCloseTo(1 / 9, 15);
    expect(probabilities[1]).toBeCloseTo(4 / 9 - 1 / 9, 15);
    expect(probabilities[2]).toBeCloseTo(1 - 4 / 9, 15);
  });
  it('E[max] matches enumeration', () => {
    const dist = CategoricalDistribution.fromCounts({ 0: 5, 3: 2, 4: 1, 11: 1 });
    for (let n = 1; n <= 6; n++) {
      expect(expectedMaximum(dist, n)).toBeCloseTo(bruteForceLoss(dist, n).expectedMaximum, 12);
    }
  });
  it('keeps relative precision for a maximum that is almost surely the top value', () => {
    // P(max < 1) = 0.5^1024 ≈ 5.6e-309: both terms stay accurate, nothing cancels.
    const dist = CategoricalDistribution.fromCounts({ 0: 1, 1: 1 });
    const { probabilities } = sampleMaximumPmf(dist, 1024);
    expect(probabilities[1]).toBe(1);
    // 0.5^1024 = 2^−1024 is a subnormal double, exactly representable: require it to a relative
    // 1e-12 (a result of 0, or one that lost its digits, fails).
    const expected = 2 ** -1024;
    expect(expected).toBeGreaterThan(0);
    expect(Math.abs((probabilities[0] as number) / expected - 1)).toBeLessThan(1e-12);
  });
  it('workload loss is E[max]/E[W], and 1 for a distribution without work', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1, 3: 1 });
    // n = 2: E[max] = 1/4·1 + 3/4·3 = 2.5; E[W] = 2.
    expect(workloadLoss(dist, 2)).toBeCloseTo(1.25, 15);
    expect(workloadLoss(CategoricalDistribution.fromCounts({ 0: 4 }), 32)).toBe(1);
  });
  it('rejects bad group sizes', () => {
    const dist = CategoricalDistribution.fromCounts({ 1: 1 });
    expect(() => sampleMaximumPmf(dist, 0)).toThrow(/group size n must be an integer 1\.\.1024, got 0/);
    expect(() => workloadLoss(dist, 4096)).toThrow(/got 4096/);
  });
});
