import { describe, expect, it } from 'vitest';
import { syntheticLaunchSummary } from '../../estimator/index.ts';
import { CategoricalDistribution, createSeededRandom, expectedLoss, parseDistributionSpec, workloadLoss } from '../../model/index.ts';
import { encodeFrame, histogramToCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { demoEstimatorConfig } from './demo-estimator.ts';
import type { DemoRunPlan } from './demo-plan.ts';
import { demoRunOf } from './demo-run-result.ts';
import { createInProcessTransport } from './in-process-transport.ts';

const plan: DemoRunPlan = { workload: 'matpow', variant: 'pois(8)', n: 8, groupsPerLaunch: 200, launches: 3, kernel: 'k', seed: 1, args: [] };

function launches(count: number, startMillis: number): LaunchSummaryFrame[] {
  const random = createSeededRandom(42);
  const distribution = CategoricalDistribution.fromFamily(parseDistributionSpec('pois(8)'));
  return Array.from({ length: count }, (_, i) =>
    syntheticLaunchSummary({
      job: 'demo-test',
      kernel: 'k',
      deviceName: 'cpu: test',
      groupSize: 8,
      source: 'cpu',
      launchId: BigInt(i),
      frameSequence: 0,
      endMillis: startMillis + i * 10,
      groups: 200,
      distribution,
      random,
      measuredOverhead: 0.03,
      measuredNoise: 0.01,
    }),
  );
}

const report = { workload: 'matpow', backend: 'cpu' as const, n: 8, launches: 3, groups: 600, lossCounts: 0, lossMeasured: 0, framesWritten: 3, framesDropped: 0, seconds: 0.5 };

describe('in-process-transport', () => {
  it('turns frames into one window whose quantities match an independent computation from the frames', async () => {
    const frames = launches(3, Date.UTC(2025, 0, 1, 12));
    const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job: 'demo-test' }), undefined);
    for (const frame of frames) await transport.deliver(encodeFrame(frame), 'demo-test/k');
    const ref = { stream: 'demo-test/k', groupSize: 8, groups: 600 };
    transport.endRun(ref);
    const [records] = await transport.collect([ref], 1_000);
    await transport.close();
    expect(records).toHaveLength(1);
    const run = demoRunOf(plan, records ?? [], report);

    // Independent: the frames' own sums and the model on the frames' merged histogram.
    const counts = new Map<number, number>();
    for (const frame of frames) for (const [value, count] of histogramToCounts(frame.histogram)) counts.set(value, (counts.get(value) ?? 0) + count);
    const distribution = CategoricalDistribution.fromCounts(counts);
    const groups = frames.reduce((s, f) => s + f.groupsCounted, 0);
    expect(run.groups).toBe(600);
    expect(run.units).toBe(600 * 8);
    expect(run.launches).toBe(3);
    expect(run.lossCounts).toBeCloseTo(frames.reduce((s, f) => s + f.sumCountsLoss, 0) / groups, 12);
    expect(run.lossMeasured).toBeCloseTo(frames.reduce((s, f) => s + f.sumMeasuredLoss, 0) / groups, 12);
    const simt = frames.reduce((s, f) => s + Number(f.sumSimtClocks), 0);
    const mimd = frames.reduce((s, f) => s + Number(f.sumMimdClocks), 0);
    expect(run.workloadLossMeasured).toBeCloseTo(simt / mimd, 12);
    expect(run.lossPredicted).toBeCloseTo(expectedLoss(distribution, 8, { method: 'exact' }), 9);
    expect(run.workloadLossPredicted).toBeCloseTo(workloadLoss(distribution, 8), 12);
    expect(run.lossPredictedLow).toBeLessThanOrEqual(run.lossPredicted);
    expect(run.lossPredictedHigh).toBeGreaterThanOrEqual(run.lossPredicted);
    expect(run.etaPredictedCounts).toBeCloseTo(Math.abs((run.lossPredicted - run.lossCounts) / run.lossPredicted), 15);
    expect(run.histogram.reduce((s, [, c]) => s + c, 0)).toBe(4800);
    expect(run.sweep.map((row) => row.n)).toEqual(Array.from({ length: 32 }, (_, i) => i + 1));
    expect(run.sweep[7]?.expectedLoss).toBeCloseTo(run.lossPredicted, 12);
  });

  it('fails with WW_ERR_DEMO_NO_RESULT when the groups of a run do not add up', async () => {
    const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job: 'demo-test' }), undefined);
    for (const frame of launches(2, Date.UTC(2025, 0, 1, 12))) await transport.deliver(encodeFrame(frame), 'demo-test/k');
    await expect(transport.collect([{ stream: 'demo-test/k', groupSize: 8, groups: 600 }], 1_000)).rejects.toMatchObject({
      code: 'WW_ERR_DEMO_NO_RESULT',
      message: expect.stringMatching(/400 groups .* expected 600/) as unknown,
    });
  });
});

describe('demoRunOf', () => {
  it('combines two windows of a run weighted by their groups (a run across midnight UTC)', async () => {
    const midnight = Date.UTC(2025, 0, 2);
    const frames = launches(3, midnight - 10);
    const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job: 'demo-test' }), undefined);
    for (const frame of frames) await transport.deliver(encodeFrame(frame), 'demo-test/k');
    const [records] = await transport.collect([{ stream: 'demo-test/k', groupSize: 8, groups: 600 }], 1_000);
    expect(records).toHaveLength(2);
    const run = demoRunOf(plan, records ?? [], report);
    expect(run.groups).toBe(600);
    expect(run.lossCounts).toBeCloseTo(frames.reduce((s, f) => s + f.sumCountsLoss, 0) / 600, 12);
    // The prediction is made from the whole stream (cumulative basis): all three launches.
    expect(run.histogram.reduce((s, [, c]) => s + c, 0)).toBe(4800);
  });
});
