import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { exactExpectedLoss } from './exact-loss.ts';
import { fastExpectedLoss } from './fast-loss.ts';
import { conditionalLosses, lossStandardError } from './loss-influence.ts';

/** E[n·max/sum | W_1 = v] by enumerating every (n − 1)-tuple of the others (all-zero groups: 1). */
function enumeratedConditional(dist: CategoricalDistribution, n: number, v: number): number {
  const values = dist.values;
  const probabilities = dist.probabilities;
  let expectation = 0;
  const visit = (depth: number, probability: number, max: number, sum: number): void => {
    if (depth === n - 1) {
      expectation += probability * (sum === 0 ? 1 : (n * max) / sum);
      return;
    }
    for (let k = 0; k < values.length; k++) visit(depth + 1, probability * probabilities[k]!, Math.max(max, values[k]!), sum + values[k]!);
  };
  visit(0, 1, v, v);
  return expectation;
}

const small: [string, CategoricalDistribution, number][] = [
  ['two values, n = 2', CategoricalDistribution.fromCounts({ 1: 1, 3: 1 }), 2],
  ['three values, n = 5', CategoricalDistribution.fromPmf(new Map([[2, 5], [11, 3], [30, 2]])), 5],
  ['a zero value, n = 4', CategoricalDistribution.fromPmf(new Map([[0, 3], [1, 4], [5, 1]])), 4],
  ['zero-heavy, n = 6', CategoricalDistribution.fromPmf(new Map([[0, 90], [7, 9], [400, 1]])), 6],
  ['spread values, n = 3', CategoricalDistribution.fromPmf(new Map([[1, 1], [2, 1], [3, 1], [50, 1], [1000, 1]])), 3],
];

describe('conditionalLosses', () => {
  it('gives the hand-computed values for W ∈ {1, 3} equally likely, n = 2', () => {
    // h(1) = ½·1 + ½·(2·3/4) = 1.25, h(3) = ½·(2·3/4) + ½·1 = 1.25.
    const h = conditionalLosses(CategoricalDistribution.fromCounts({ 1: 1, 3: 1 }), 2);
    expect(h[0]).toBeCloseTo(1.25, 6);
    expect(h[1]).toBeCloseTo(1.25, 6);
  });

  it.each(small)('%s: every h_j within 1e-6 of enumeration', (_name, dist, n) => {
    const h = conditionalLosses(dist, n);
    dist.values.forEach((v, j) => {
      const expected = enumeratedConditional(dist, n, v);
      expect(Math.abs(h[j]! - expected) / expected).toBeLessThan(1e-6);
    });
  });

  it('averages to the expected loss of the fast method (Σ f_j·h_j = E[X]) on wide supports at n = 32', () => {
    for (const dist of [
      CategoricalDistribution.fromFamily({ family: 'geo', p: 0.004 }),
      CategoricalDistribution.fromFamily({ family: 'pois', lambda: 30 }),
      CategoricalDistribution.fromFamily({ family: 'nbinom', r: 0.3, p: 0.01 }),
    ]) {
      const h = conditionalLosses(dist, 32);
      const mean = dist.probabilities.reduce((sum, p, j) => sum + p * h[j]!, 0);
      const fast = fastExpectedLoss(dist, 32).expectedLoss;
      expect(Math.abs(mean - fast) / fast).toBeLessThan(1e-6);
      for (const value of h) expect(value).toBeGreaterThanOrEqual(1 - 1e-9);
    }
  });

  it('is 1 for a single value or n = 1', () => {
    expect([...conditionalLosses(CategoricalDistribution.fromCounts({ 7: 1 }), 32)]).toEqual([1]);
    expect([...conditionalLosses(CategoricalDistribution.fromCounts({ 1: 1, 4: 2 }), 1)]).toEqual([1, 1]);
  });
});

describe('lossStandardError', () => {
  // Not the first case: at f = (½, ½) the loss is stationary (μ = 1 + f(1 − f)), so its SE is 0.
  it.each(small.slice(1))('%s: matches the delta method with exact derivatives (central differences of the exact loss)', (_name, dist, n) => {
    // c_j = total·f_j; ∂μ/∂c_j by central differences of the exact method on the re-normalised weights.
    const total = 1_000;
    const weights = dist.probabilities.map((p) => p * total);
    let variance = 0;
    weights.forEach((c, j) => {
      const step = 1e-4 * total;
      const at = (delta: number): number =>
        exactExpectedLoss(CategoricalDistribution.fromPmf(new Map(dist.values.map((v, k) => [v, weights[k]! + (k === j ? delta : 0)]))), n);
      const derivative = (at(step) - at(-step)) / (2 * step);
      variance += c * derivative * derivative;
    });
    const expected = Math.sqrt(variance);
    expect(Math.abs(lossStandardError(dist, n, total) - expected) / expected).toBeLessThan(1e-5);
  });

  it('shrinks as 1/√total and is 0 for one value', () => {
    const dist = CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 });
    expect(lossStandardError(dist, 32, 400) / lossStandardError(dist, 32, 1_600)).toBeCloseTo(2, 12);
    expect(lossStandardError(CategoricalDistribution.fromCounts({ 3: 1 }), 32, 100)).toBe(0);
  });
});
