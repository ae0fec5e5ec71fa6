import { describe, expect, it } from 'vitest';
import { summarizeSampledGroups } from '../../model/index.ts';
import { createAlertState } from './alert-detector.ts';
import { decodeStreamCheckpoint, encodeStreamCheckpoint } from './checkpoint-codec.ts';
import { streamIdentityOf, type SamplesObservation } from './launch-observation.ts';
import { createStreamState, recordObservation } from './stream-state.ts';
import { testEngineOptions } from '../testing/test-support.ts';

/** A stream without a dedupe base record (its checkpoint carries every identity). */
const NO_BASE = { epoch: '0', total: 0 };

const options = testEngineOptions().window;

function samples(sequence: number, eventTimeMillis: number): SamplesObservation {
  return {
    kind: 'samples',
    job: 'j',
    kernel: 'k',
    device: 'cpu',
    groupSize: 4,
    source: 'cpu',
    launchId: 7n,
    frameSequence: sequence,
    eventTimeMillis,
    groups: Array.from({ length: 8 }, (_, g) => {
      const laneCounts = [g, g + 1, 2 * g, 3];
      return { laneCounts, laneFinishTicks: laneCounts.map((w) => 4 * w), durationTicks: 4 * Math.max(...laneCounts) + 2 * (new Set(laneCounts).size - 1) + 1 };
    }),
  };
}

describe('checkpoint codec', () => {
  it('round-trips the sampled groups of open windows', () => {
    const first = samples(0, 10_500);
    const state = createStreamState(streamIdentityOf(first));
    recordObservation(state, first, options, 0);
    const text = encodeStreamCheckpoint({ state, alerts: createAlertState(), appliedOffset: '5', dedupeBase: NO_BASE });
    const restored = decodeStreamCheckpoint(text, state.key, 0).state;
    const [window] = [...restored.windows.values()];
    expect(window?.sampleFrames).toBe(1);
    expect(summarizeSampledGroups(window!.samples!, 4)).toEqual(summarizeSampledGroups([...state.windows.values()][0]!.samples!, 4));
    // The restored state keeps de-duplicating and accumulating.
    expect(recordObservation(restored, first, options, 0).status).toBe('duplicate');
    expect(recordObservation(restored, samples(1, 10_600), options, 0).status).toBe('recorded');
    expect([...restored.windows.values()][0]?.samples?.groups).toBe(16);
  });

  it('reads checkpoints written before GroupSamples were processed (no samples in the windows)', () => {
    const first = samples(0, 20_100);
    const state = createStreamState(streamIdentityOf(first));
    recordObservation(state, first, options, 0);
    const json = JSON.parse(encodeStreamCheckpoint({ state, alerts: createAlertState(), appliedOffset: '1', dedupeBase: NO_BASE })) as { windows: Record<string, unknown>[] };
    for (const window of json.windows) {
      delete window.samples;
      delete window.sampleFrames;
    }
    const restored = decodeStreamCheckpoint(JSON.stringify(json), state.key, 0).state;
    const [window] = [...restored.windows.values()];
    expect(window?.samples).toBeUndefined();
    expect(window?.sampleFrames).toBe(0);
    expect(recordObservation(restored, samples(1, 20_200), options, 0).status).toBe('recorded');
    expect(window?.samples?.groups).toBe(8);
  });

  it('reads checkpoints written before the clock sums had one name (sumSimtCycles, sumSimtTicks)', () => {
    const first = samples(0, 30_100);
    const state = createStreamState(streamIdentityOf(first));
    recordObservation(state, first, options, 0);
    const original = [...state.windows.values()][0]!;
    expect(original.samples?.sumSimtClocks).toBeGreaterThan(0);
    const json = JSON.parse(encodeStreamCheckpoint({ state, alerts: createAlertState(), appliedOffset: '1', dedupeBase: NO_BASE })) as { windows: Record<string, unknown>[] };
    for (const window of json.windows) {
      window.sumSimtCycles = window.sumSimtClocks;
      window.sumMimdCycles = window.sumMimdClocks;
      delete window.sumSimtClocks;
      delete window.sumMimdClocks;
      const sampled = window.samples as Record<string, unknown>;
      sampled.sumSimtTicks = sampled.sumSimtClocks;
      sampled.sumMimdTicks = sampled.sumMimdClocks;
      delete sampled.sumSimtClocks;
      delete sampled.sumMimdClocks;
    }
    const [window] = [...decodeStreamCheckpoint(JSON.stringify(json), state.key, 0).state.windows.values()];
    expect(window?.sumSimtClocks).toBe(original.sumSimtClocks);
    expect(window?.sumMimdClocks).toBe(original.sumMimdClocks);
    expect(window?.samples?.sumSimtClocks).toBe(original.samples?.sumSimtClocks);
    expect(window?.samples?.sumMimdClocks).toBe(original.samples?.sumMimdClocks);
    expect(window).not.toHaveProperty('sumSimtCycles');
    expect(window?.samples).not.toHaveProperty('sumSimtTicks');
    expect(summarizeSampledGroups(window!.samples!, 4)?.laneIdleFraction).toBeCloseTo(summarizeSampledGroups(original.samples!, 4)?.laneIdleFraction as number, 15);
  });
  it('restores dedupe identities of a version 2 checkpoint (decimal text), small and large, so their frames stay duplicates', () => {
    const launchIds = [0n, 7n, (1n << 21n) - 1n, 1n << 21n, (1n << 53n) + 1n, (1n << 64n) - 1n];
    const frames = launchIds.flatMap((launchId, k) => [0, 0xffffffff].map((frameSequence) => ({ ...samples(0, 30_000 + k), launchId, frameSequence })));
    const state = createStreamState(streamIdentityOf(frames[0]!));
    const json = JSON.parse(encodeStreamCheckpoint({ state, alerts: createAlertState(), appliedOffset: '1', dedupeBase: NO_BASE })) as { v: number; dedupe: string | string[] };
    // What version 2 wrote: launchId · 2^32 + frameSequence in decimal, oldest first.
    json.v = 2;
    json.dedupe = frames.map((frame) => ((frame.launchId << 32n) | BigInt(frame.frameSequence)).toString());
    const restored = decodeStreamCheckpoint(JSON.stringify(json), state.key, 0).state;
    for (const frame of frames) expect(recordObservation(restored, frame, options, 0).status).toBe('duplicate');
    expect(recordObservation(restored, { ...frames[0]!, frameSequence: 1 }, options, 0).status).toBe('recorded');
    // Written again as version 3 and read back: the same identities (plus the new frame), in the same order.
    const again = decodeStreamCheckpoint(encodeStreamCheckpoint({ state: restored, alerts: createAlertState(), appliedOffset: '2', dedupeBase: NO_BASE }), state.key, 0).state;
    expect([...again.dedupe.entries()]).toEqual([...frames.map((f): [bigint, number] => [f.launchId, f.frameSequence]), [0n, 1]]);
  });
});
