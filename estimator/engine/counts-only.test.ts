// Counts-only frames (protocol/SPEC.md, "Counts-only frames (no clock)"): a launch without clocks
// adds nothing to a window's measured values. Expected values are computed by hand from the lane
// counts of protocol/testing/launch-summaries.ts (n = 4):
//   counts-only launch: groups [1,1,1,5] and [2,2,2,2] → H_counts 4·5/8 = 2.5 and 1 (Σ 3.5)
//   clocked launch:     groups [3,1,1,1] and [1,1,1,1] → H_counts 4·3/6 = 2 and 1 (Σ 3),
//                       measured H 1.6 and 1.2 (Σ 2.8), ΣC_SIMT 400, ΣC_MIMD 320
import { describe, expect, it } from 'vitest';
import type { LaunchSummaryFrame } from '../../protocol/index.ts';
import { CLOCKED_GROUPS, CLOCKED_SUMS, COUNTS_ONLY_GROUPS, groupSamplesFromLanes, laneFrameIdentity, launchSummaryFromLanes } from '../../protocol/testing/launch-summaries.ts';
import { FIELDS } from '../../contracts/index.ts';
import { createAlertState, evaluateAlerts, alertOptionsOf } from './alert-detector.ts';
import { decodeStreamCheckpoint, encodeStreamCheckpoint } from './checkpoint-codec.ts';
import { observationFromFrame, samplesObservationFromFrame } from './frame-observation.ts';
import { distributionRecord } from './records.ts';
import { isCountsOnly, streamIdentityOf } from './launch-observation.ts';
import { windowPoints } from './series-points.ts';
import { closeWindowsThrough, createStreamState, mergeWindowAccumulations, recordObservation, type WindowAccumulation } from './stream-state.ts';
import { testEngineOptions } from '../testing/test-support.ts';
import { computeWindowResult } from './window-result.ts';

/** A stream without a dedupe base record (its checkpoint carries every identity). */
const NO_BASE = { epoch: '0', total: 0 };

const options = testEngineOptions();
const identity = laneFrameIdentity({ startUnixNanos: 1_000_000_000n, endUnixNanos: 1_000_000_000n });

function summary(launchId: bigint, groups: readonly (readonly number[])[], clocked: boolean, groupCount = groups.length): LaunchSummaryFrame {
  return launchSummaryFromLanes(launchId, groups, { identity, clocks: clocked ? CLOCKED_SUMS : undefined, groupCount });
}

/** The stream's one window [0, 10 s) after recording the frames, closed. */
function windowOf(frames: readonly LaunchSummaryFrame[]): { window: WindowAccumulation; state: ReturnType<typeof createStreamState> } {
  const state = createStreamState(streamIdentityOf(observationFromFrame(frames[0]!)));
  for (const frame of frames) expect(recordObservation(state, observationFromFrame(frame), options.window, 0).status).toBe('recorded');
  const [window] = closeWindowsThrough(state, Number.POSITIVE_INFINITY);
  return { window: window!, state };
}

function resultOf(window: WindowAccumulation) {
  return computeWindowResult(streamIdentityOf(observationFromFrame(summary(1n, CLOCKED_GROUPS, true))), window, window.histogram, options.compute);
}

describe('counts-only frames in the estimator', () => {
  it('tells the mark apart: groups counted, every clock sum and the measured-loss sum 0', () => {
    expect(isCountsOnly(observationFromFrame(summary(1n, COUNTS_ONLY_GROUPS, false)))).toBe(true);
    expect(isCountsOnly(observationFromFrame(summary(1n, CLOCKED_GROUPS, true)))).toBe(false);
    expect(isCountsOnly({ groups: 0, sumLossMeasured: 0, sumSimtClocks: 0, sumMimdClocks: 0 })).toBe(false);
  });

  it('a counts-only stream: no loss_measured, no measured workload loss, no η or alert input built on them; the counts-based values as usual', () => {
    const { window, state } = windowOf([summary(1n, COUNTS_ONLY_GROUPS, false), summary(2n, COUNTS_ONLY_GROUPS, false)]);
    const result = resultOf(window);
    expect(result.groups).toBe(4);
    expect(result.lossCounts).toBeCloseTo(3.5 / 2, 12);
    expect(result.lossPredicted).toBeGreaterThan(1);
    expect(result.lossMeasured).toBeUndefined();
    expect(result.workloadLossMeasured).toBeUndefined();
    expect(result.etaCountsMeasured).toBeUndefined();
    expect(result.etaPredictedMeasured).toBeUndefined();
    expect(result.etaDrift).toBeUndefined();
    expect(result.etaPredictedCounts).toBeDefined();
    // The InfluxDB point simply lacks the measured fields.
    const fields = windowPoints(result, { includeHistogram: false })[0]!.fields;
    for (const name of [FIELDS.window.lossMeasured, FIELDS.window.workloadLossMeasured, FIELDS.window.etaCountsMeasured, FIELDS.window.etaPredictedMeasured, FIELDS.window.etaDrift]) {
      expect(fields).not.toHaveProperty(name);
    }
    expect(fields[FIELDS.window.lossCounts]).toBeCloseTo(1.75, 12);
    // The distribution record says null (not measured).
    const record = distributionRecord(state, window.histogram, result, { current: options.window.current, basis: 'window' });
    expect(record.predictions.lossMeasured).toBeNull();
    expect(record.predictions.workloadLossMeasured).toBeNull();
    // The detectors see no measured value: their measured-loss and drift state stay as fresh.
    const alerts = createAlertState();
    for (let k = 0; k < 5; k += 1) evaluateAlerts(alerts, result, alertOptionsOf({ ...options.alerts, lossMeasuredThreshold: 0.5 }));
    expect(alerts.lossMeasured).toEqual(createAlertState().lossMeasured);
    expect(alerts.drift).toEqual(createAlertState().drift);
  });

  it('a clocked stream: loss_measured = Σ measured H / groups, workload loss ΣC_SIMT/ΣC_MIMD', () => {
    const { window } = windowOf([summary(1n, CLOCKED_GROUPS, true), summary(2n, CLOCKED_GROUPS, true)]);
    const result = resultOf(window);
    expect(result.lossMeasured).toBeCloseTo(5.6 / 4, 12);
    expect(result.workloadLossMeasured).toBeCloseTo(800 / 640, 12);
    expect(result.lossCounts).toBeCloseTo(6 / 4, 12);
    expect(result.etaCountsMeasured).toBeCloseTo(Math.abs((1.5 - 1.4) / 1.5), 12);
  });

  it('both in one window: the measured values from the clocked launches only, the counts-based ones from all (sampling weights included)', () => {
    // The counts-only launch stands for 3× its groups (groupCount 6 of 2 counted): weight 3.
    const frames = [summary(1n, COUNTS_ONLY_GROUPS, false, 6), summary(2n, CLOCKED_GROUPS, true)];
    const { window } = windowOf(frames);
    const result = resultOf(window);
    expect(result.groups).toBe(8);
    expect(result.lossCounts).toBeCloseTo((3.5 * 3 + 3) / 8, 12);
    expect(result.lossMeasured).toBeCloseTo(2.8 / 2, 12);
    expect(result.workloadLossMeasured).toBeCloseTo(400 / 320, 12);
    expect(result.etaCountsMeasured).toBeCloseTo(Math.abs((1.6875 - 1.4) / 1.6875), 12);
    // Merging the two launches' partial windows gives the same (the clocked-group sum merges).
    const a = windowOf([frames[0]!]).window;
    const b = windowOf([frames[1]!]).window;
    expect(resultOf(mergeWindowAccumulations(a, b, options.window.histogram)).lossMeasured).toBeCloseTo(1.4, 12);
  });

  it('checkpoints keep the clocked-group sum; a checkpoint written before it loads with all its groups clocked', () => {
    const state = createStreamState(streamIdentityOf(observationFromFrame(summary(1n, CLOCKED_GROUPS, true))));
    recordObservation(state, observationFromFrame(summary(1n, COUNTS_ONLY_GROUPS, false)), options.window, 0);
    recordObservation(state, observationFromFrame(summary(2n, CLOCKED_GROUPS, true)), options.window, 0);
    const text = encodeStreamCheckpoint({ state, alerts: createAlertState(), appliedOffset: '2', dedupeBase: NO_BASE });
    const restored = decodeStreamCheckpoint(text, state.key, 0).state;
    expect([...restored.windows.values()][0]!.clockedGroups).toBe(2);
    expect(resultOf([...restored.windows.values()][0]!).lossMeasured).toBeCloseTo(1.4, 12);
    // The older format: no clockedGroups in the window (every launch then counted as clocked).
    const json = JSON.parse(text) as { windows: Record<string, unknown>[] };
    for (const window of json.windows) delete window.clockedGroups;
    const old = [...decodeStreamCheckpoint(JSON.stringify(json), state.key, 0).state.windows.values()][0]!;
    expect(old.clockedGroups).toBe(4);
    expect(resultOf(old).lossMeasured).toBeCloseTo(2.8 / 4, 12);
  });

  it('GroupSamples of a counts-only launch (every clock 0): counts used, no measured loss or divergence fit from them', () => {
    const samples = (groups: readonly (readonly number[])[], clocked: boolean, launchId: bigint) => groupSamplesFromLanes(launchId, groups, clocked, identity);
    const state = createStreamState(streamIdentityOf(observationFromFrame(summary(1n, COUNTS_ONLY_GROUPS, false))));
    recordObservation(state, samplesObservationFromFrame(samples(COUNTS_ONLY_GROUPS, false, 1n)), options.window, 0);
    let window = [...state.windows.values()][0]!;
    const countsOnly = resultOf(window).sampled!;
    expect(countsOnly.groups).toBe(2);
    expect(countsOnly.lossCounts).toBeCloseTo(3.5 / 2, 12);
    expect(countsOnly.lossMeasured).toBeUndefined();
    expect(countsOnly.laneIdleFraction).toBeUndefined();
    expect(distributionRecord(state, window.histogram, resultOf(window), { current: options.window.current, basis: 'window' }).sampled?.lossMeasured).toBeNull();
    // Clocked samples in the same window: measured H of [3,1,1,1] = 4·30/60 = 2, of [1,1,1,1] = 1.
    recordObservation(state, samplesObservationFromFrame(samples(CLOCKED_GROUPS, true, 2n)), options.window, 0);
    window = [...state.windows.values()][0]!;
    const mixed = resultOf(window).sampled!;
    expect(mixed.groups).toBe(4);
    expect(mixed.lossMeasured).toBeCloseTo(1.5, 12);
    expect(mixed.lossCounts).toBeCloseTo(6.5 / 4, 12);
  });
});
