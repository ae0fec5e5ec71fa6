import { describe, expect, it } from 'vitest';
import { binomialHead, binomialPmf } from './binomial-pmf.ts';

/** C(n, x)·p^x·q^(n−x) by exact products of ratios (small n only). */
function directPmf(x: number, trials: number, p: number): number {
  let choose = 1;
  for (let i = 1; i <= x; i++) choose = (choose * (trials - x + i)) / i;
  return choose * p ** x * (1 - p) ** (trials - x);
}

describe('binomialPmf', () => {
  it('matches the direct product for small trial counts to 1e-13 (relative)', () => {
    for (const trials of [1, 2, 7, 16, 40, 60]) {
      for (const p of [0.01, 0.3, 0.5, 0.97]) {
        for (let x = 0; x <= trials; x++) {
          const exact = directPmf(x, trials, p);
          expect(Math.abs(binomialPmf(x, trials, p, 1 - p) - exact)).toBeLessThanOrEqual(1e-13 * exact + 1e-300);
        }
      }
    }
    expect(binomialPmf(-1, 5, 0.5, 0.5)).toBe(0);
    expect(binomialPmf(6, 5, 0.5, 0.5)).toBe(0);
  });

  it('sums to 1 over ±12σ for 2^30 trials (no loss of precision for huge launches)', () => {
    const trials = 2 ** 30;
    const p = 0.3;
    const mean = trials * p;
    const sd = Math.sqrt(trials * p * (1 - p));
    let sum = 0;
    for (let x = Math.ceil(mean - 12 * sd); x <= mean + 12 * sd; x++) sum += binomialPmf(x, trials, p, 1 - p);
    expect(Math.abs(sum - 1)).toBeLessThan(1e-9);
  });
});

describe('binomialHead', () => {
  it('returns P(0..count−1) and their sum, also when P(0) underflows', () => {
    const out = new Float64Array(8);
    const sum = binomialHead(20, 0.25, 0.75, 8, out);
    let expected = 0;
    for (let d = 0; d < 8; d++) {
      expect(out[d]).toBeCloseTo(directPmf(d, 20, 0.25), 14);
      expected += directPmf(d, 20, 0.25);
    }
    expect(sum).toBeCloseTo(expected, 14);
    // 10^6 trials, p = 0.9999: P(0) = 10^-4000000 underflows to 0
    binomialHead(1_000_000, 0.9999, 0.0001, 3, out);
    expect(out[0]).toBe(0);
    expect(binomialHead(3, 1, 0, 5, out)).toBe(1);
    expect(out[3]).toBe(1);
  });
});
