import { describe, expect, it } from 'vitest';
import type { DemoRun } from '../report/demo-results.ts';
import { agreementOf } from '../report/agreement.ts';
import { alignColumns } from './demo-summary.ts';

describe('demo-summary', () => {
  describe('alignColumns', () => {
    it('left-aligns text columns and right-aligns number columns', () => {
      expect(alignColumns([['a', 'x', '1'], ['bbb', 'yy', '10.5']], 2)).toEqual(['a    x      1', 'bbb  yy  10.5']);
    });

    it('counts η and other non-ASCII characters as one column each', () => {
      expect(alignColumns([['η(a,b)', '1'], ['n', '22']], 1)).toEqual(['η(a,b)   1', 'n       22']);
    });
  });

  describe('agreementOf', () => {
    const run = (eta: number, n: number): DemoRun => ({ etaPredictedCounts: eta, n, variant: 'v', workload: 'matpow' }) as unknown as DemoRun;

    it('gives the median and the run with the largest error', () => {
      const a = agreementOf([run(0.03, 1), run(0.01, 2), run(0.02, 4), run(0.5, 8)], (r) => r.etaPredictedCounts);
      expect(a.median).toBeCloseTo(0.025, 12);
      expect(a.max).toBe(0.5);
      expect(a.worst?.n).toBe(8);
    });

    it('leaves out non-finite values', () => {
      const a = agreementOf([run(Number.NaN, 1), run(0.2, 2)], (r) => r.etaPredictedCounts);
      expect(a).toMatchObject({ median: 0.2, max: 0.2, count: 1 });
    });
  });
});
