import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, createSeededRandom, expectedLoss, parseDistributionSpec } from '../../model/index.ts';
import { modelFitter } from '../estimator-service.ts';
import { observationFromFrame } from './frame-observation.ts';
import { streamIdentityOf } from './launch-observation.ts';
import { FIELDS, MEASUREMENTS } from '../../contracts/index.ts';
import { windowPoints } from './series-points.ts';
import { createWindowAccumulation, recordLaunchInWindow, recordSamplesInWindow } from './stream-state.ts';
import { syntheticLaunchSummary } from './synthetic-launch.ts';
import { testEngineOptions } from '../testing/test-support.ts';
import { computeWindowResult, createWindowModelCache, relativeError } from './window-result.ts';

const histogramOptions = testEngineOptions().window.histogram;

function windowOf(spec: string, groups: number, seed: number) {
  const distribution = CategoricalDistribution.fromFamily(parseDistributionSpec(spec));
  const frame = syntheticLaunchSummary({
    job: 'j', kernel: 'k', deviceName: 'd', groupSize: 8, source: 'cpu', launchId: BigInt(seed), frameSequence: 0, endMillis: 1_000,
    groups, distribution, random: createSeededRandom(seed), measuredOverhead: 0, measuredNoise: 0,
  });
  const observation = observationFromFrame(frame);
  const window = createWindowAccumulation(0, 10_000);
  recordLaunchInWindow(window, observation, histogramOptions);
  return { window, identity: streamIdentityOf(observation), truth: expectedLoss(distribution, 8) };
}

describe('window-result', () => {
  describe('model cache (docs/estimator.md, Performance)', () => {
    it('returns the same result, bit for bit, as without the cache, for repeated and new bases, linearised, bootstrap, exact and Monte Carlo', () => {
      const base = testEngineOptions().compute;
      const settings = [
        { ...base, bootstrapReplicates: 32, fitter: modelFitter },
        { ...base, standardErrorMethod: 'bootstrap' as const, bootstrapReplicates: 8, quantileExactWorkLimit: 0, quantileSamples: 300 },
      ];
      for (const compute of settings) {
        const cache = createWindowModelCache(4, 1_000);
        // Bases repeat (seeds 1, 2, 1, 3, 2, …) and windows differ in start (the seeded parts).
        const seeds = [1, 2, 1, 3, 2, 4, 5, 6, 1, 2, 7, 1];
        seeds.forEach((seed, i) => {
          const spec = seed % 2 === 0 ? 'pois(4)' : 'nbinom(3,0.2)';
          const { window, identity } = windowOf(spec, 40, seed);
          const moved = { ...window, startMillis: i * 10_000, endMillis: (i + 1) * 10_000 };
          const plain = computeWindowResult(identity, moved, moved.histogram, compute);
          const cached = computeWindowResult(identity, moved, moved.histogram, compute, cache);
          expect(JSON.stringify(cached)).toBe(JSON.stringify(plain));
        });
        expect(cache.hits).toBeGreaterThan(0);
        expect(cache.entries.size).toBeLessThanOrEqual(4);
        expect(cache.support).toBeLessThanOrEqual(1_000);
      }
    });

    it('keeps at most its number of bases and histogram entries, and no basis too large for its share', () => {
      const compute = { ...testEngineOptions().compute, quantiles: false, sweepGroupSizes: [] };
      const cache = createWindowModelCache(100, 64 * 20);
      for (let seed = 1; seed <= 30; seed += 1) {
        const { window, identity } = windowOf('pois(6)', 40, seed);
        computeWindowResult(identity, window, window.histogram, compute, cache);
      }
      expect(cache.support).toBeLessThanOrEqual(64 * 20);
      expect([...cache.entries.values()].reduce((sum, model) => sum + model.support, 0)).toBe(cache.support);
      for (const model of cache.entries.values()) expect(model.support).toBeLessThanOrEqual(20);
      expect(() => createWindowModelCache(0, 10)).toThrow(RangeError);
    });
  });

  describe('computeWindowResult', () => {
    it('gives a Poisson-bootstrap interval that covers the true E[X] in most windows (coverage of a nominal 95 % interval)', () => {
      const compute = { ...testEngineOptions().compute, bootstrapReplicates: 40, quantiles: false, sweepGroupSizes: [] };
      let covered = 0;
      const trials = 40;
      for (let t = 0; t < trials; t += 1) {
        const { window, identity, truth } = windowOf('nbinom(3,0.2)', 200, 1000 + t);
        const result = computeWindowResult(identity, window, window.histogram, compute);
        if ((result.lossPredictedLow ?? Infinity) <= truth && truth <= (result.lossPredictedHigh ?? -Infinity)) covered += 1;
      }
      // Binomial(40, 0.95): ≥ 33 with probability > 0.99; a badly mis-sized interval fails.
      expect(covered).toBeGreaterThanOrEqual(33);
    });

    it('gives a linearised standard error that matches a 4,000-replicate Poisson bootstrap, and uses it by default (auto)', () => {
      // The last two: wide supports (about 150 and 400 values at 300 groups of n lanes).
      for (const [spec, seed] of [['cat(2:5,11:3,30:2)', 3], ['cat(1:50,2:30,100:1)', 4], ['binom(9,0.4)', 5], ['cat(0:3,1:4,5:1)', 6], ['geo(0.05)', 7], ['nbinom(0.5,0.005)', 8]] as const) {
        const { window, identity } = windowOf(spec, 300, seed);
        const base = { ...testEngineOptions().compute, quantiles: false, sweepGroupSizes: [] };
        const linearised = computeWindowResult(identity, window, window.histogram, { ...base, bootstrapReplicates: 32, standardErrorMethod: 'linearised' });
        const bootstrap = computeWindowResult(identity, window, window.histogram, { ...base, bootstrapReplicates: 4_000, standardErrorMethod: 'bootstrap' });
        expect(linearised.standardErrorMethod).toBe('linearised');
        expect(bootstrap.standardErrorMethod).toBe('bootstrap');
        // 4,000 replicates estimate the SE to ~1.1 % (1/√(2·3999)); the linearisation adds a few %.
        expect(linearised.lossPredictedStandardError! / bootstrap.lossPredictedStandardError!).toBeGreaterThan(0.94);
        expect(linearised.lossPredictedStandardError! / bootstrap.lossPredictedStandardError!).toBeLessThan(1.06);
        const auto = computeWindowResult(identity, window, window.histogram, { ...base, bootstrapReplicates: 32 });
        expect(auto.standardErrorMethod).toBe('linearised');
        expect(computeWindowResult(identity, window, window.histogram, { ...base, bootstrapReplicates: 0 }).standardErrorMethod).toBe('none');
      }
    });

    it('gives a linearised interval that covers the true E[X] in most windows (coverage of a nominal 95 % interval)', () => {
      const compute = { ...testEngineOptions().compute, bootstrapReplicates: 32, standardErrorMethod: 'linearised' as const, quantiles: false, sweepGroupSizes: [] };
      let covered = 0;
      const trials = 40;
      for (let t = 0; t < trials; t += 1) {
        const { window, identity, truth } = windowOf('cat(1:5,4:3,12:1)', 200, 2000 + t);
        const result = computeWindowResult(identity, window, window.histogram, compute);
        if ((result.lossPredictedLow ?? Infinity) <= truth && truth <= (result.lossPredictedHigh ?? -Infinity)) covered += 1;
      }
      // Binomial(40, 0.95): ≥ 33 with probability > 0.99; a badly mis-sized interval fails.
      expect(covered).toBeGreaterThanOrEqual(33);
    });

    it('reports the best parametric fit by AIC: the generating family where it is identifiable, with its parameters', () => {
      // Over-dispersed (variance/mean = 1/p = 5) and under-dispersed (1 − p = 0.5) data: no
      // other family comes near, so the family is determined. (Poisson data are not used: a
      // binomial or negative binomial with a second parameter fits a Poisson sample's chance
      // dispersion and can win AIC by a fraction; seed 5 of pois(20) gives binom by 0.4.)
      const compute = { ...testEngineOptions().compute, fitter: modelFitter };
      const over = windowOf('nbinom(3,0.2)', 2000, 5);
      const overFit = computeWindowResult(over.identity, over.window, over.window.histogram, compute).fit;
      expect(overFit?.family).toBe('nbinom');
      // 16,000 lanes: r̂ within 7 %, p̂ within 6 % of the generating values.
      expect(Math.abs((overFit?.parameters.r as number) - 3)).toBeLessThan(0.2);
      expect(Math.abs((overFit?.parameters.p as number) - 0.2)).toBeLessThan(0.012);
      expect(Number.isFinite(overFit?.aic)).toBe(true);

      const under = windowOf('binom(20,0.5)', 2000, 6);
      const underFit = computeWindowResult(under.identity, under.window, under.window.histogram, compute).fit;
      expect(underFit?.family).toBe('binom');
      let lanes = 0;
      let sum = 0;
      for (const [x, c] of under.window.histogram.counts) {
        lanes += c;
        sum += c * x;
      }
      // The binomial MLE matches the sample mean: trials·p = x̄.
      expect((underFit?.parameters.trials as number) * (underFit?.parameters.p as number)).toBeCloseTo(sum / lanes, 6);
    });

    it('computes quantiles ordered q50 ≤ q90 ≤ q99 within [1, n] and a sweep with loss 1 at n = 1', () => {
      const { window, identity } = windowOf('geo(0.1)', 500, 9);
      const result = computeWindowResult(identity, window, window.histogram, testEngineOptions().compute);
      expect(result.lossQ50).toBeGreaterThanOrEqual(1);
      expect(result.lossQ50).toBeLessThanOrEqual(result.lossQ90 ?? 0);
      expect(result.lossQ90).toBeLessThanOrEqual(result.lossQ99 ?? 0);
      expect(result.lossQ99).toBeLessThanOrEqual(8);
      expect(result.sweep[0]?.groupSize).toBe(1);
      expect(result.sweep[0]?.lossPredicted).toBeCloseTo(1, 12);
      expect(result.sweep[0]?.workloadLossPredicted).toBeCloseTo(1, 12);
    });

    it('leaves predictions undefined for an empty window', () => {
      const window = createWindowAccumulation(0, 1000);
      const result = computeWindowResult({ stream: 'a/b', job: 'a', kernel: 'b', device: 'd', groupSize: 4, source: 'cpu', deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'h', labels: {} }, window, window.histogram, testEngineOptions().compute);
      expect(result.lossPredicted).toBeUndefined();
      expect(result.lossCounts).toBeUndefined();
    });
  });

  describe('relativeError', () => {
    it('is |(a − b)/a| and undefined without a reference', () => {
      expect(relativeError(2, 1.5)).toBeCloseTo(0.25, 15);
      expect(relativeError(undefined, 1)).toBeUndefined();
      expect(relativeError(0, 1)).toBeUndefined();
    });
  });

  describe('block runs (model.md §11a)', () => {
    it('reports loss_block with its interval, loss_warp_in_block and loss_block_warps from the window\'s block runs, and writes them to warpwatch_window', () => {
      const { window, identity } = windowOf('pois(5)', 100, 3);
      // n = 8 (the window's stream), blocks of 2 warps. Per block (Σw, Σt, K·T): A (16+8, 4+1, 2·4), B (8·3·2, 3+3, 2·3).
      const a = [...Array<number>(8).fill(2).map((w, i) => (i === 0 ? 4 : w)), ...Array<number>(8).fill(1)];
      const b = Array<number>(16).fill(3);
      const blockA = { w: a.reduce((x, y) => x + y, 0), t: 4 + 1, kt: 8 };
      const blockB = { w: 48, t: 6, kt: 6 };
      recordSamplesInWindow(window, { ...observationFromFrame(syntheticLaunchSummary({ job: 'j', kernel: 'k', deviceName: 'd', groupSize: 8, source: 'cpu', launchId: 9n, frameSequence: 1, endMillis: 1_000, groups: 1, distribution: CategoricalDistribution.fromCounts({ 1: 1 }), random: createSeededRandom(1), measuredOverhead: 0, measuredNoise: 0 })), kind: 'samples', groups: [a.slice(0, 8), a.slice(8), b.slice(0, 8), b.slice(8)].map((laneCounts) => ({ laneCounts, laneFinishTicks: laneCounts, durationTicks: Math.max(...laneCounts) })), blocks: [a, b] });
      const compute = { ...testEngineOptions().compute, bootstrapReplicates: 0, quantiles: false, sweepGroupSizes: [] };
      const result = computeWindowResult(identity, window, window.histogram, compute);
      expect(result.lossBlock).toBeCloseTo((8 * (blockA.kt + blockB.kt)) / (blockA.w + blockB.w), 12);
      expect(result.lossWarpInBlock).toBeCloseTo((blockA.kt + blockB.kt) / (blockA.t + blockB.t), 12);
      expect(result.lossBlockWarps).toBeCloseTo((8 * (blockA.t + blockB.t)) / (blockA.w + blockB.w), 12);
      expect(result.lossBlockLow).toBeLessThan(result.lossBlock ?? 0);
      expect(result.lossBlockHigh).toBeGreaterThan(result.lossBlock ?? 0);
      const [point] = windowPoints(result, { includeHistogram: false }).filter((p) => p.measurement === MEASUREMENTS.window);
      expect(point?.fields).toMatchObject({
        [FIELDS.window.lossBlock]: result.lossBlock,
        [FIELDS.window.lossBlockLow]: result.lossBlockLow,
        [FIELDS.window.lossBlockHigh]: result.lossBlockHigh,
        [FIELDS.window.lossWarpInBlock]: result.lossWarpInBlock,
        [FIELDS.window.lossBlockWarps]: result.lossBlockWarps,
      });
    });
  });
});
