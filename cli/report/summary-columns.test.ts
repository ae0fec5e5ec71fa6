import { describe, expect, it } from 'vitest';
import { idleLaneShare } from '../../model/index.ts';
import { sampledRunsKey, type DemoRun } from './demo-results.ts';
import { demoHeadlines, SUMMARY_COLUMNS } from './summary-columns.ts';

describe('summary-columns', () => {
  describe('idleLaneShare', () => {
    it('is the idle share of the lane-time lockstep holds, counted lane by lane', () => {
      // Groups of 4 lanes with counts [1,1,1,5] and [2,2,2,2]: lockstep holds 4·5 + 4·2 = 28
      // lane-steps, the work is 8 + 8 = 16, so 12 lane-steps (12/28) are idle; ΣC_SIMT/ΣC_MIMD = 28/16.
      const groups = [
        [1, 1, 1, 5],
        [2, 2, 2, 2],
      ];
      let held = 0;
      let idle = 0;
      for (const group of groups) {
        const max = Math.max(...group);
        for (const lane of group) {
          held += max;
          idle += max - lane;
        }
      }
      expect(idle / held).toBe(12 / 28);
      expect(idleLaneShare(28 / 16)).toBeCloseTo(12 / 28, 15);
    });

    it('is 0 without idle lanes and NaN for impossible losses', () => {
      expect(idleLaneShare(1)).toBe(0);
      expect(idleLaneShare(0.9)).toBeNaN();
      expect(idleLaneShare(Number.NaN)).toBeNaN();
    });
  });

  describe('demoHeadlines', () => {
    const run = (variant: string, n: number, workloadLossMeasured: number, histogram: [number, number][]): DemoRun =>
      ({
        workload: 'matpow',
        variant,
        stream: `demo/${variant}`,
        n,
        launches: 1,
        units: 64 * n,
        lossCounts: Number.NaN,
        lossMeasured: workloadLossMeasured,
        workloadLossMeasured,
        histogram,
      }) as unknown as DemoRun;

    it('describes the largest n of each variant, with advise\'s top recommendation', () => {
      // Counts 1 and 9, equally often: at n = 2, a random pair is mixed half of the time
      // (loss 2·9/10 = 1.8), else balanced (1): expected loss 1.4 > 1.05, so advise proposes a change.
      const histogram: [number, number][] = [
        [1, 64],
        [9, 64],
      ];
      const headlines = demoHeadlines([run('a', 2, 1.25, histogram), run('a', 4, 2, histogram), run('b', 2, 1, [[3, 128]])]);
      expect(headlines.map((h) => [h.variant, h.run.n])).toEqual([
        ['a', 4],
        ['b', 2],
      ]);
      expect(headlines[0]?.text).toBe('matpow a, n = 4: warps idle 50.0% of lane time: lanes are held 2.000× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)');
      expect(headlines[0]?.topRecommendation).toMatch(/^sorting each launch's 256 units by their work/);
      // One value only: nothing idles, nothing to change.
      expect(headlines[1]?.text).toContain('warps idle 0.0% of lane time');
      expect(headlines[1]?.topRecommendation).toMatch(/^the work is balanced \(predicted loss 1\.00×\)/);
    });

    it('says first that lanes already have similar work when the counts lose far less than random grouping', () => {
      const correlated = { ...run('c', 2, 1.05, [[1, 64], [9, 64]]), lossCounts: 1.05, sampled: { groups: 10, countIcc: 0.9, laneIdleFraction: 0 } } as DemoRun;
      const [headline] = demoHeadlines([correlated]);
      // E[X] at n = 2 for counts 1 and 9 equally often: ½·1 + ½·1.8 = 1.4.
      expect(headline?.topRecommendation).toMatch(/^lanes of a group already have similar work \(loss_counts 1\.05× vs 1\.40× if work were assigned at random, ICC\(counts\) 0\.90\)/);
    });
  });

  describe('demoHeadlines on the runs\' sampled groups (the analysis of advise --frames)', () => {
    // 10 sampled runs of 4 lanes, each [1, 1, 1, 9], one launch: the layout loses 4·9/12 = 3 per
    // group; tiles of 2 give [1,1] → 1 and [1,9] → 2·9/10 = 1.8, mean 1.4. Random grouping of
    // the same counts (¾ ones, ¼ nines) would lose far less: the layout's figure leads.
    const runs = Array.from({ length: 10 }, () => [1, 1, 1, 9]);
    const run = (workload: DemoRun['workload'], variant: string): DemoRun =>
      ({ workload, variant, stream: `demo/${variant}`, n: 4, launches: 1, units: 40, lossCounts: 3, lossMeasured: 3, workloadLossMeasured: 3, histogram: [[1, 30], [9, 10]] }) as unknown as DemoRun;

    it('starts from the layout\'s own loss and leads with its best option', () => {
      const plain = run('escape', 'plain');
      const [headline] = demoHeadlines([plain], new Map([[sampledRunsKey(plain.stream, 4), [runs]]]));
      expect(headline?.advice?.headline.basis).toBe('layout');
      expect(headline?.advice?.headline.expectedLoss).toBeCloseTo(3, 12);
      // Run-time overhead Σ n·max / Σ w: 4·9/12 = 3 now; tiles of 2: (2·1 + 2·9)/12 = 5/3.
      expect(headline?.topRecommendation).toMatch(/^tiles of 2 lanes cut the run-time overhead of this layout from 3\.00 to 1\.67 \(mean per-group loss 3\.00 → 1\.40; /);
    });

    it('never recommends sorting to a run that already sorts (escape --sorted)', () => {
      // Counts 1 and 9 equally often at n = 4, no runs: sorting is advise's best option for a plain run.
      const histogram: [number, number][] = [[1, 128], [9, 128]];
      const plain = { ...run('escape', 'plain'), histogram, units: 256, lossCounts: Number.NaN } as DemoRun;
      const sorted = { ...plain, variant: 'sorted', stream: 'demo/sorted' } as DemoRun;
      const [forPlain, forSorted] = demoHeadlines([plain, sorted]);
      expect(forPlain?.advice?.options[0]?.kind).toBe('sorting');
      expect(forSorted?.advice?.options.map((o) => o.kind)).not.toContain('sorting');
      expect(forSorted?.topRecommendation).not.toMatch(/sorting/);
    });
  });

  it('has each header once', () => {
    const headers = SUMMARY_COLUMNS.map((c) => c.header);
    expect(new Set(headers).size).toBe(headers.length);
  });
});
