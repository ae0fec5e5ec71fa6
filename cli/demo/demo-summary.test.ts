import { describe, expect, it } from 'vitest';
import type { DemoRun } from '../report/demo-results.ts';
import { agreementOf } from '../report/agreement.ts';
import { SUMMARY_COLUMNS } from '../report/summary-columns.ts';
import { alignColumns } from '../report/align-columns.ts';
import { formatDemoSummary } from './demo-summary.ts';

describe('demo-summary', () => {
  describe('alignColumns', () => {
    it('left-aligns text columns and right-aligns number columns', () => {
      expect(alignColumns([['a', 'x', '1'], ['bbb', 'yy', '10.5']], 2)).toEqual(['a    x      1', 'bbb  yy  10.5']);
    });

    it('counts η and other non-ASCII characters as one column each', () => {
      expect(alignColumns([['η(a,b)', '1'], ['n', '22']], 1)).toEqual(['η(a,b)   1', 'n       22']);
    });
  });

  describe('formatDemoSummary', () => {
    it('leads with the headline, then the shared columns without the report-only ones', () => {
      const run = { workload: 'matpow', variant: 'pois(3)', stream: 'demo/m', n: 4, groups: 2, launches: 1, units: 8, lossMeasured: 1.5, lossCounts: 1.5, lossPredicted: 1.5,
        lossPredictedLow: 1.4, lossPredictedHigh: 1.6, workloadLossMeasured: 1.6, etaCountsMeasured: 0, etaPredictedCounts: 0, histogram: [[1, 4], [3, 4]] } as unknown as DemoRun;
      const lines = formatDemoSummary({ runs: [run] } as never);
      // 1 − 1/1.6 = 0.375.
      expect(lines[0]).toBe('matpow pois(3), n = 4: warps idle 37.5% of lane time: lanes are held 1.600× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)');
      expect(lines[1]).toMatch(/^ {2}what to change: /);
      const header = lines.find((line) => line.startsWith('workload'));
      const terminalHeaders = SUMMARY_COLUMNS.filter((c) => !c.htmlOnly).map((c) => c.header);
      expect(header?.split(/\s{2,}/)).toEqual(terminalHeaders);
      expect(terminalHeaders.length).toBeLessThanOrEqual(9);
      expect(header).not.toContain('95% interval');
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
