import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, createSeededRandom, fitParametric, parseDistributionSpec } from '../../model/index.ts';
import { MEASUREMENTS, TAGS } from '../../contracts/index.ts';
import { loadEstimatorConfig } from '../config.ts';
import { EstimatorConfigError } from '../errors.ts';
import { observationFromFrame } from './frame-observation.ts';
import { streamIdentityOf } from './launch-observation.ts';
import { sweepCadence, windowPoints, type SeriesPoint } from './series-points.ts';
import { createWindowAccumulation, recordLaunchInWindow } from './stream-state.ts';
import { syntheticLaunchSummary } from './synthetic-launch.ts';
import { generateLaunches, testEngineOptions } from '../testing/test-support.ts';
import { createEstimatorEngine } from './estimator-engine.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { computeWindowResult, type WindowResult } from './window-result.ts';
import type { StreamIdentity } from '../../contracts/index.ts';

const WINDOW_MILLIS = 1_000;

/** One computed window of stream j/k (the same basis for every stream: only tags and start differ). */
function baseResult(): WindowResult {
  const distribution = CategoricalDistribution.fromFamily(parseDistributionSpec('pois(4)'));
  const frame = syntheticLaunchSummary({
    job: 'j', kernel: 'k', deviceName: 'd', groupSize: 8, source: 'cpu', launchId: 1n, frameSequence: 0, endMillis: 500,
    groups: 64, distribution, random: createSeededRandom(7), measuredOverhead: 0, measuredNoise: 0,
  });
  const observation = observationFromFrame(frame);
  const window = createWindowAccumulation(0, WINDOW_MILLIS);
  recordLaunchInWindow(window, observation, testEngineOptions().window.histogram);
  const compute = { ...testEngineOptions().compute, quantiles: false };
  return computeWindowResult(streamIdentityOf(observation), window, window.histogram, compute);
}

function identityOf(base: StreamIdentity, index: number): StreamIdentity {
  return { ...base, job: `job${index}`, stream: `job${index}/k` };
}

const isSweep = (p: SeriesPoint): boolean => p.measurement === MEASUREMENTS.sweep;

describe('sweep cadence (docs/estimator.md, Sizing: InfluxDB)', () => {
  it('writes the sweep for one window in ⌈interval / window⌉, every window when the window is at least the interval or the interval is 0', () => {
    expect(sweepCadence(1_000, 10_000).everyWindows).toBe(10);
    expect(sweepCadence(3_000, 10_000).everyWindows).toBe(4);
    expect(sweepCadence(10_000, 10_000).everyWindows).toBe(1);
    expect(sweepCadence(60_000, 10_000).everyWindows).toBe(1);
    expect(sweepCadence(1_000, 0).everyWindows).toBe(1);
    expect(sweepCadence(1_000, 10_000).windowMillis).toBe(1_000);
  });

  it('gives each stream exactly one sweep window in every ten, ten apart, with the same points as without the cadence, and nothing else changed', () => {
    const base = baseResult();
    const cadence = sweepCadence(WINDOW_MILLIS, 10_000);
    const windows = 30;
    const phases = new Array<number>(10).fill(0);
    for (let s = 0; s < 300; s += 1) {
      const identity = identityOf(base.identity, s);
      const sweepWindows: number[] = [];
      for (let w = 0; w < windows; w += 1) {
        const result = { ...base, identity, startMillis: w * WINDOW_MILLIS, endMillis: (w + 1) * WINDOW_MILLIS };
        const every = windowPoints(result, { includeHistogram: true });
        const cadenced = windowPoints(result, { includeHistogram: true, sweep: cadence });
        expect(cadenced.filter((p) => !isSweep(p))).toEqual(every.filter((p) => !isSweep(p)));
        const sweep = cadenced.filter(isSweep);
        if (sweep.length > 0) {
          sweepWindows.push(w);
          expect(sweep).toEqual(every.filter(isSweep));
          expect(sweep.map((p) => p.tags[TAGS.groupSize])).toEqual(['1', '2', '4', '8', '16', '32']);
        }
      }
      expect(sweepWindows).toHaveLength(3);
      expect(sweepWindows[1]! - sweepWindows[0]!).toBe(10);
      expect(sweepWindows[2]! - sweepWindows[1]!).toBe(10);
      phases[sweepWindows[0]!]! += 1;
    }
    // Spread over the windows: 300 streams, 10 phases, 30 expected in each (binomial sd ≈ 5.2).
    for (const count of phases) {
      expect(count).toBeGreaterThanOrEqual(10);
      expect(count).toBeLessThanOrEqual(50);
    }
  });

  it('keeps a stream’s phase across identity objects with the same tags (a restarted estimator rewrites the same points)', () => {
    const base = baseResult();
    const cadence = sweepCadence(WINDOW_MILLIS, 5_000);
    const due = (identity: StreamIdentity): number[] =>
      Array.from({ length: 10 }, (_, w) => w).filter((w) =>
        windowPoints({ ...base, identity, startMillis: w * WINDOW_MILLIS, endMillis: (w + 1) * WINDOW_MILLIS }, { includeHistogram: false, sweep: cadence }).some(isSweep),
      );
    for (let s = 0; s < 20; s += 1) {
      const first = due(identityOf(base.identity, s));
      expect(first).toHaveLength(2);
      expect(due(identityOf(base.identity, s))).toEqual(first);
    }
  });

  it('writes every window’s sweep without a cadence, and with everyWindows 1', () => {
    const base = baseResult();
    for (const sweep of [undefined, sweepCadence(WINDOW_MILLIS, 0)]) {
      for (let w = 0; w < 5; w += 1) {
        const points = windowPoints({ ...base, startMillis: w * WINDOW_MILLIS, endMillis: (w + 1) * WINDOW_MILLIS }, { includeHistogram: false, sweep });
        expect(points.filter(isSweep)).toHaveLength(6);
      }
    }
  });

  it('reads WARPWATCH_SWEEP_INTERVAL_MILLIS, 10 s by default, and rejects a value out of range with its code', () => {
    expect(loadEstimatorConfig({ env: {} }).compute.sweepIntervalMillis).toBe(10_000);
    expect(loadEstimatorConfig({ env: { WARPWATCH_SWEEP_INTERVAL_MILLIS: '0' } }).compute.sweepIntervalMillis).toBe(0);
    for (const value of ['-1', 'often', '86400001']) {
      let caught: unknown;
      try {
        loadEstimatorConfig({ env: { WARPWATCH_SWEEP_INTERVAL_MILLIS: value } });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(EstimatorConfigError);
      expect((caught as EstimatorConfigError).code).toBe('WW_ERR_ESTIMATOR_CONFIG');
      expect((caught as Error).message).toContain('WARPWATCH_SWEEP_INTERVAL_MILLIS');
    }
  });

  it('the engine writes each stream’s sweep every ⌈WARPWATCH_SWEEP_INTERVAL_MILLIS / window⌉-th window, and every window point', () => {
    const launches = generateLaunches({ streams: 8, launchesPerStream: 40, launchIntervalMillis: 300, startMillis: 1_700_000_000_000, groups: 32, groupSize: 8, seed: 5 });
    const points: SeriesPoint[] = [];
    const base = testEngineOptions();
    const engine = createEstimatorEngine(
      testEngineOptions({ compute: { ...base.compute, sweepIntervalMillis: 3_000 } }),
      { writePoints: (p) => points.push(...p), publishDistribution: () => {}, publishAlert: () => {} },
      { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
    );
    launches.forEach((l, i) => engine.handleMessage(0, String(i), encodeFrame(l.frame), 1_800_000_000_000));
    engine.closeAll();
    for (let s = 0; s < 8; s += 1) {
      const stream = `job${s}/k`;
      const windows = points.filter((p) => p.measurement === MEASUREMENTS.window && p.tags[TAGS.stream] === stream).map((p) => p.timestampMillis);
      const sweeps = points.filter((p) => isSweep(p) && p.tags[TAGS.stream] === stream).map((p) => p.timestampMillis);
      expect(windows).toHaveLength(Math.ceil((39 * 300 + 1) / 1_000));
      const sweepWindows = [...new Set(sweeps)];
      // 12 windows, one in three: 4 sweep windows of 6 points, 3 s apart, all of them window starts.
      expect(sweepWindows).toHaveLength(4);
      expect(sweeps).toHaveLength(4 * 6);
      for (let i = 1; i < sweepWindows.length; i += 1) expect(sweepWindows[i]! - sweepWindows[i - 1]!).toBe(3_000);
      for (const t of sweepWindows) expect(windows).toContain(t);
    }
  });

  it('computes quantiles, fit and sweep on the sweep windows only, with the numbers of a close that computes them every window; the other fields of every window unchanged', () => {
    const launches = generateLaunches({ streams: 6, launchesPerStream: 40, launchIntervalMillis: 300, startMillis: 1_700_000_000_000, groups: 32, groupSize: 8, seed: 9 });
    const base = testEngineOptions();
    const run = (sweepIntervalMillis: number): { points: SeriesPoint[]; results: WindowResult[] } => {
      const points: SeriesPoint[] = [];
      const results: WindowResult[] = [];
      const engine = createEstimatorEngine(
        testEngineOptions({ compute: { ...base.compute, sweepIntervalMillis, fit: true }, fitter: (d, sampleSize) => fitParametric(d, { sampleSize }) }),
        { writePoints: (p) => points.push(...p), publishDistribution: () => {}, publishAlert: () => {}, recordWindow: (r) => results.push(r) },
        { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
      );
      launches.forEach((l, i) => engine.handleMessage(0, String(i), encodeFrame(l.frame), 1_800_000_000_000));
      engine.closeAll();
      return { points, results };
    };
    const every = run(0);
    const cadenced = run(3_000);
    expect(cadenced.results).toHaveLength(every.results.length);
    const heavy = ['lossQ50', 'lossQ90', 'lossQ99', 'quantileMethod', 'sweep', 'fit'] as const;
    let sweepWindows = 0;
    cadenced.results.forEach((result, i) => {
      const full = every.results[i]!;
      expect(result.identity.stream).toBe(full.identity.stream);
      expect(result.startMillis).toBe(full.startMillis);
      const { lossQ50: _a, lossQ90: _b, lossQ99: _c, quantileMethod: _d, sweep: _e, fit: _f, ...rest } = result;
      const { lossQ50: _g, lossQ90: _h, lossQ99: _i, quantileMethod: _j, sweep: _k, fit: _l, ...fullRest } = full;
      expect(rest).toEqual(fullRest);
      const isSweepWindow = cadenced.points.some((p) => isSweep(p) && p.tags[TAGS.stream] === result.identity.stream && p.timestampMillis === result.startMillis);
      if (isSweepWindow) {
        sweepWindows += 1;
        for (const field of heavy) expect(result[field]).toEqual(full[field]);
        expect(result.fit).toBeDefined();
        expect(result.lossQ99).toBeDefined();
      } else {
        expect(result.lossQ50).toBeUndefined();
        expect(result.lossQ99).toBeUndefined();
        expect(result.fit).toBeUndefined();
        expect(result.sweep).toEqual([]);
        const fitPoints = cadenced.points.filter((p) => p.measurement === MEASUREMENTS.fit && p.tags[TAGS.stream] === result.identity.stream && p.timestampMillis === result.startMillis);
        expect(fitPoints).toEqual([]);
      }
    });
    // 6 streams × 12 windows, one in three a sweep window.
    expect(sweepWindows).toBe(6 * 4);
  });
});

