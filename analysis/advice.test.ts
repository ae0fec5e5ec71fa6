import { describe, expect, it } from 'vitest';
import { binnedGroupingLoss, CategoricalDistribution, expectedLoss, parseDistributionSpec, workloadLoss } from '../model/index.ts';
import { BALANCED_LOSS, computeAdvice } from './advice.ts';

const geo = CategoricalDistribution.fromFamily(parseDistributionSpec('geo(0.05)'));

describe('advice', () => {
  describe('computeAdvice', () => {
    const advice = computeAdvice({ distribution: geo, source: 'dist:geo(0.05)', groupSize: 32, unitsPerLaunch: 1 << 16, binCounts: [4, 2, 4] });

    it('predicts the loss of every group size 1..32 with the model', () => {
      expect(advice.granularity).toHaveLength(32);
      for (const n of [1, 2, 7, 32]) {
        expect(advice.granularity[n - 1]?.expectedLoss).toBeCloseTo(expectedLoss(geo, n, { method: 'exact' }), 9);
        expect(advice.granularity[n - 1]?.workloadLoss).toBeCloseTo(workloadLoss(geo, n), 12);
      }
      expect(advice.current.expectedLoss).toBe(advice.granularity[31]?.expectedLoss);
    });

    it('reports progress within the sorting step: groups walked, under the sorting step index', () => {
      const calls: [string, number, number][] = [];
      computeAdvice({ distribution: geo, source: 'dist:geo(0.05)', groupSize: 32, unitsPerLaunch: 4096, binCounts: [2], onProgress: (step, index, steps) => calls.push([step, index, steps]) });
      expect(calls.filter(([step]) => !step.startsWith('sorting (')).map(([step, index]) => [step, index])).toEqual([
        ['granularity', 1],
        ['sorting', 2],
        ['binning k = 2', 3],
        ['fit', 4],
      ]);
      const within = calls.filter(([step]) => step.startsWith('sorting ('));
      expect(within.length).toBeGreaterThan(1);
      const done = within.map(([step]) => Number(/^sorting \((\d+) of 128 groups\)$/.exec(step)?.[1]));
      expect(done.every((d, i) => Number.isInteger(d) && d <= 128 && (i === 0 || d > done[i - 1]!))).toBe(true);
      expect(within.every(([, index, steps]) => index === 2 && steps === 4)).toBe(true);
    });

    it('evaluates each distinct bin count once, ascending', () => {
      expect(advice.binning.map((b) => b.k)).toEqual([2, 4]);
      for (const b of advice.binning) expect(b.bins.reduce((s, bin) => s + bin.probability, 0)).toBeCloseTo(1, 12);
    });

    it('suggests the largest tile that removes at least half of the excess run-time overhead', () => {
      // Run-time overhead of independent lanes at m: E[m·max]/E[m·w̄] = E[max of m]/mean (model/loss/sample-maximum.ts, not advise).
      const overhead = (m: number): number => workloadLoss(geo, m);
      const halfway = 1 + (overhead(32) - 1) / 2;
      const expected = [16, 8, 4, 2].find((m) => overhead(m) <= halfway);
      const tiles = advice.options.find((o) => o.kind === 'tiles');
      expect(tiles?.parameter).toBe(expected);
      expect(tiles?.sentence).toContain(
        `tiles of ${expected} lanes cut the predicted run-time overhead from ${overhead(32).toFixed(2)} to ${overhead(expected ?? 1).toFixed(2)} (mean per-group loss ${expectedLoss(geo, 32).toFixed(2)} → ${expectedLoss(geo, expected ?? 1).toFixed(2)})`,
      );
    });

    it('ranks the options by run-time overhead and recommends the best one first, with idle lane time 1 − 1/overhead', () => {
      const overheads = advice.options.map((o) => o.workloadLoss);
      expect(overheads).toEqual([...overheads].sort((a, b) => a - b));
      for (const option of advice.options) expect(option.idleLaneShare).toBeCloseTo(1 - 1 / option.workloadLoss, 12);
      const now = workloadLoss(geo, 32);
      expect(advice.now.workloadLoss).toBeCloseTo(now, 12);
      expect(advice.recommendation[0]).toBe(
        `groups of 32 lanes are predicted to run ${now.toFixed(2)}× as long as a machine that never idles (run-time overhead ΣC_SIMT/ΣC_MIMD; idle lane time ${(100 * (1 - 1 / now)).toFixed(1)}%; mean per-group loss ${expectedLoss(geo, 32).toFixed(2)}×).`,
      );
      const best = advice.options[0];
      expect(advice.recommendation[1]).toBe(`best: ${best?.sentence} — idle lane time ${(100 * (1 - 1 / now)).toFixed(1)}% → ${(100 * (1 - 1 / (best?.workloadLoss ?? 1))).toFixed(1)}%.`);
      expect(advice.recommendation.at(-1)).toMatch(/^the counts look like geo\(0\.05\)/);
    });

    it('reports the best parametric fit first, by AIC', () => {
      const aics = advice.fits.map((f) => f.aic);
      expect(aics).toEqual([...aics].sort((a, b) => a - b));
      expect(advice.fits[0]?.family).toBe('geo');
    });
  });

  it('ranks by run-time overhead where the per-group mean would rank the other way (power law)', () => {
    // Counts k = 1..1000 with weight ∝ 1/k²: binning into 8 classes has the lower mean per-group
    // loss, tiles of 8 lanes the lower run-time overhead; a user pays the run time.
    const counts: [number, number][] = [];
    for (let k = 1; k <= 1000; k++) counts.push([k, Math.round(1e6 / (k * k))]);
    const powerLaw = CategoricalDistribution.fromCounts(counts);
    const advice = computeAdvice({ distribution: powerLaw, source: 't', groupSize: 32, unitsPerLaunch: 65536, binCounts: [8] });
    // The figures from the model directly, not from advise.
    const tilesOverhead = workloadLoss(powerLaw, 8);
    const binned = binnedGroupingLoss(powerLaw, 32, 8, { units: 65536 });
    expect(binned.expectedLoss).toBeLessThan(expectedLoss(powerLaw, 8));
    expect(tilesOverhead).toBeLessThan(binned.workloadLoss);
    const kinds = advice.options.map((o) => o.kind);
    expect(kinds.indexOf('tiles')).toBeLessThan(kinds.indexOf('binning'));
    expect(advice.options.find((o) => o.kind === 'tiles')?.workloadLoss).toBeCloseTo(tilesOverhead, 12);
    expect(advice.options.find((o) => o.kind === 'binning')?.workloadLoss).toBeCloseTo(binned.workloadLoss, 12);
  });

  it('calls near-constant work balanced and proposes nothing', () => {
    const flat = CategoricalDistribution.fromCounts({ 100: 90, 101: 10 });
    const advice = computeAdvice({ distribution: flat, source: 't', groupSize: 32, unitsPerLaunch: 4096, binCounts: [2] });
    expect(advice.current.expectedLoss).toBeLessThan(BALANCED_LOSS);
    expect(advice.recommendation[0]).toMatch(/^the work is balanced: groups of 32 lanes/);
    expect(advice.recommendation.some((s) => s.startsWith('best:'))).toBe(false);
  });

  it('notes when the observed loss_counts differs from the prediction by more than 10 %', () => {
    const base = { distribution: geo, source: 't', groupSize: 8, unitsPerLaunch: 4096, binCounts: [2] };
    const predicted = expectedLoss(geo, 8);
    const far = computeAdvice({ ...base, observedLossCounts: 0.8 * predicted });
    expect(far.current.observedLossCounts).toBe(0.8 * predicted);
    expect(far.recommendation.find((s) => s.startsWith('note:'))).toContain(`lost ${(0.8 * predicted).toFixed(2)}× by their counts, not the ${predicted.toFixed(2)}× predicted`);
    const near = computeAdvice({ ...base, observedLossCounts: 0.95 * predicted });
    expect(near.recommendation.some((s) => s.startsWith('note:'))).toBe(false);
    expect(computeAdvice(base).current.observedLossCounts).toBeNull();
    // With sampled groups: the correlation is named in the note, or noted on its own when clearly > 0.
    expect(computeAdvice({ ...base, observedLossCounts: 0.8 * predicted, observedCountIcc: 0.41 }).recommendation.find((s) => s.startsWith('note:'))).toContain('correlation of counts in sampled groups: 0.41');
    expect(computeAdvice({ ...base, observedLossCounts: 0.95 * predicted, observedCountIcc: 0.35 }).recommendation.find((s) => s.startsWith('note:'))).toContain('intra-group correlation of counts of 0.35');
    expect(computeAdvice({ ...base, observedLossCounts: 0.95 * predicted, observedCountIcc: 0.02 }).recommendation.some((s) => s.startsWith('note:'))).toBe(false);
    expect(computeAdvice(base).current.observedCountIcc).toBeNull();
  });

  it('rejects a group size outside 1..32 and too few units per launch', () => {
    expect(() => computeAdvice({ distribution: geo, source: 't', groupSize: 33, unitsPerLaunch: 4096, binCounts: [2] })).toThrow(/group size must be an integer 1\.\.32, got 33/);
    expect(() => computeAdvice({ distribution: geo, source: 't', groupSize: 32, unitsPerLaunch: 16, binCounts: [2] })).toThrow(/units per launch must be an integer >= the group size 32, got 16/);
  });
});
