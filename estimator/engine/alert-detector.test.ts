import { describe, expect, it } from 'vitest';
import { alertOptionsOf, createAlertState, evaluateAlerts, evaluateStale, type AlertOptions } from './alert-detector.ts';
import { testEngineOptions } from '../testing/test-support.ts';
import type { WindowResult } from './window-result.ts';

const identity = { stream: 'j/k', job: 'j', kernel: 'k', device: 'd', groupSize: 32, source: 'cpu' as const, deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'h', labels: {} };

function windowResult(index: number, lossMeasured: number, lossPredicted: number): WindowResult {
  return {
    identity, startMillis: index * 1000, endMillis: (index + 1) * 1000, launches: 1, groups: 100, units: 3200,
    lossPredicted, lossPredictedLow: lossPredicted, lossPredictedHigh: lossPredicted, lossPredictedStandardError: 0,
    lossCounts: lossPredicted, lossMeasured, workloadLossPredicted: undefined, workloadLossMeasured: undefined,
    etaPredictedCounts: 0, etaCountsMeasured: undefined, etaPredictedMeasured: Math.abs((lossPredicted - lossMeasured) / lossPredicted),
    lossQ50: undefined, lossQ90: undefined, lossQ99: undefined, quantileMethod: undefined, binningErrorBound: 0, sweep: [], fit: undefined, histogram: [],
  };
}

const options: AlertOptions = alertOptionsOf(testEngineOptions().alerts);

describe('alert-detector', () => {
  describe('evaluateAlerts', () => {
    it('raises rising_imbalance on a 20 % step of loss_measured with old and new level and the change start', () => {
      const state = createAlertState();
      const wiggle = [0, 0.004, -0.004, 0.002, -0.002, 0.003, -0.003, 0.001];
      for (let i = 0; i < 20; i += 1) expect(evaluateAlerts(state, windowResult(i, 1.5 + (wiggle[i % 8] ?? 0), 1.45), options)).toEqual([]);
      const alerts = evaluateAlerts(state, windowResult(20, 1.8, 1.45), options);
      const rising = alerts.find((a) => a.kind === 'rising_imbalance');
      expect(rising?.series).toBe('loss_measured');
      expect(rising?.oldLevel).toBeCloseTo(1.5, 2);
      expect(rising?.newLevel).toBeCloseTo(1.8, 12);
      expect(rising?.evidence.changeStartMillis).toBe(20_000);
      // The ratio measured/predicted moved from ≈1.034 to ≈1.241: drift too.
      const drift = alerts.find((a) => a.kind === 'drift');
      expect(drift?.oldLevel).toBeCloseTo(1.5 / 1.45, 2);
      expect(drift?.newLevel).toBeCloseTo(1.8 / 1.45, 10);
    });

    it('holds the measurement to the locality-aware prediction where it exists: quiet on a steady escape-like stream, alerts on a real change', () => {
      // Neighbouring lanes alike: the independent-lanes model says 4.17, the layout loses 1.70 and so does the measurement.
      const withLocality = (i: number, measured: number): WindowResult => ({ ...windowResult(i, measured, 4.17), lossLocality: 1.7, etaDrift: Math.abs((1.7 - measured) / 1.7) });
      const wiggle = [0, 0.004, -0.004, 0.002, -0.002, 0.003, -0.003, 0.001];
      const threshold = { ...options, driftThreshold: 0.25 };
      const state = createAlertState();
      for (let i = 0; i < 40; i += 1) expect(evaluateAlerts(state, withLocality(i, 1.71 + (wiggle[i % 8] ?? 0)), threshold)).toEqual([]);
      // The same stream judged against the independent-lanes prediction would alert at once (η ≈ 0.59 > 0.25).
      expect(evaluateAlerts(createAlertState(), windowResult(0, 1.71, 4.17), threshold).map((a) => a.kind)).toEqual(['drift']);
      // A real change: the measurement leaves the locality-aware prediction (1.70 → 2.3, η 0.35).
      const alerts = evaluateAlerts(state, withLocality(40, 2.3), threshold);
      const drift = alerts.filter((a) => a.kind === 'drift');
      expect(drift.length).toBeGreaterThan(0);
      expect(drift.map((a) => a.message).join(' ')).toMatch(/loss_locality/);
    });

    it('applies the loss threshold once and re-arms below 98 % of it', () => {
      const state = createAlertState();
      const withThreshold = { ...options, lossMeasuredThreshold: 2 };
      const kinds = [1.9, 2.1, 2.2, 1.97, 2.1, 1.9, 2.05].map((loss, i) => evaluateAlerts(state, windowResult(i, loss, loss), withThreshold).length);
      expect(kinds).toEqual([0, 1, 0, 0, 0, 0, 1]);
    });
  });

  describe('evaluateStale', () => {
    it('raises one stale alert after the silence limit, until the stream reports again', () => {
      const state = createAlertState();
      const stale = { ...options, staleAfterMillis: 5_000 };
      expect(evaluateStale(state, identity, 4_000, 0, stale)).toBeUndefined();
      const alert = evaluateStale(state, identity, 6_000, 0, stale);
      expect(alert?.kind).toBe('stale');
      expect(alert?.newLevel).toBe(6);
      expect(evaluateStale(state, identity, 9_000, 0, stale)).toBeUndefined();
      state.staleRaised = false;
      expect(evaluateStale(state, identity, 9_000, 0, stale)?.kind).toBe('stale');
      expect(evaluateStale(createAlertState(), identity, 1e9, 0, options)).toBeUndefined();
    });
  });
});
