import { describe, expect, it } from 'vitest';
import { createCusumState, DEFAULT_CUSUM_OPTIONS, updateCusum } from './change-detector.ts';
import { evaluateDetector } from './detector-evaluation.ts';

describe('change-detector', () => {
  describe('updateCusum', () => {
    it('stays silent during warm-up and alarms on a clear step, reporting old and new level', () => {
      const state = createCusumState();
      const options = { ...DEFAULT_CUSUM_OPTIONS, warmupWindows: 4 };
      for (const value of [1.0, 1.02, 0.98, 1.0]) expect(updateCusum(state, value, options).alarm).toBeUndefined();
      expect(state.baselineMean).toBeCloseTo(1.0, 12);
      // σ = sample sd of the warm-up = 0.01633 (floor 0.01); a step to 1.3 is ≈ 18σ.
      const { alarm } = updateCusum(state, 1.3, options);
      expect(alarm).toBeDefined();
      expect(alarm?.oldLevel).toBeCloseTo(1.0, 12);
      expect(alarm?.newLevel).toBeCloseTo(1.3, 12);
      expect(alarm?.windowsSinceChange).toBe(1);
      // Re-baselined at the new level: staying there raises nothing.
      expect(updateCusum(state, 1.3, options).alarm).toBeUndefined();
    });
    it('watches decreases only in both-directions mode', () => {
      const options = { ...DEFAULT_CUSUM_OPTIONS, warmupWindows: 2, minRelativeSigma: 0.01 };
      const up = createCusumState();
      const both = createCusumState();
      for (const value of [1, 1]) {
        updateCusum(up, value, options);
        updateCusum(both, value, { ...options, direction: 'both' });
      }
      expect(updateCusum(up, 0.5, options).alarm).toBeUndefined();
      expect(updateCusum(both, 0.5, { ...options, direction: 'both' }).alarm?.direction).toBe('down');
    });
    it('rejects non-finite input', () => {
      expect(() => updateCusum(createCusumState(), Number.NaN, DEFAULT_CUSUM_OPTIONS)).toThrow(RangeError);
    });
  });

  describe('evaluateDetector (defaults, seeded synthetic series)', () => {
    it('meets the targets at 2 % window noise: ≤ 1 false alarm per 10^4 stationary windows, a 20 % step found within 3 windows', () => {
      const figures = evaluateDetector({ options: DEFAULT_CUSUM_OPTIONS, noiseCv: 0.02, seed: 7, stationaryWindows: 50_000, trials: 200 });
      expect(figures.falseAlarmsPer10kWindows).toBeLessThanOrEqual(1);
      const step20 = figures.steps.find((s) => s.relativeStep === 0.2);
      expect(step20?.detectedWithin3).toBeGreaterThanOrEqual(0.99);
      const step5 = figures.steps.find((s) => s.relativeStep === 0.05);
      expect(step5?.medianDelayWindows).toBeLessThanOrEqual(10);
      // A slow drift of +0.2 %/window is found before the level has moved by 10 %.
      expect(figures.drift.medianRelativeChangeAtDetection).toBeLessThan(0.1);
    });
  });
});
