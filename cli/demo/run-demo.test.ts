import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CPU_WORKLOAD_TARGETS, ensureKernelsBuilt, streamWorkloadFrames, WorkloadError } from '../../kernels/index.ts';
import { CategoricalDistribution, exactLossDistribution } from '../../model/index.ts';
import { sampledRunsKey, type DemoResults, type DemoRun } from '../report/demo-results.ts';
import { demoHeadlines } from '../report/summary-columns.ts';
import { demoEstimatorConfig } from './demo-estimator.ts';
import { DEMO_DEFAULTS, DEMO_SAMPLE_RATE, resolveDemoSettings } from './demo-plan.ts';
import { createInProcessTransport } from './in-process-transport.ts';
import { DemoError } from './errors.ts';
import { runDemo } from './run-demo.ts';

// A small real demo: the CPU programs of kernels/ (built here if needed) stream frames into
// the estimator engine in process. Expected values come from the programs' own C++ tally
// and from the model's exact loss distribution (docs/model.md §2a), not from the code under test.
let binDir = '';
let results: DemoResults;

beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: CPU_WORKLOAD_TARGETS }));
  const job = 'demo-test';
  const settings = resolveDemoSettings({
    quick: true,
    job,
    groupSizes: [8],
    families: ['pois(30)', 'geo(0.1)'],
    // Enough groups that the demo's sampling (hash, 1 in 4, Binomial counts) always yields hundreds.
    matpowUnitsPerLaunch: 16384,
    escapeUnitsPerLaunch: 65536,
    launches: 2,
  });
  const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job }), undefined);
  try {
    results = await runDemo({ settings, binDir, transport, influx: false, buildMillis: 0, startedAtMillis: Date.now() });
  } finally {
    await transport.close();
  }
}, 900_000);

function runOf(workload: DemoRun['workload'], variant: string): DemoRun {
  const run = results.runs.find((r) => r.workload === workload && r.variant === variant);
  if (run === undefined) throw new Error(`no run ${workload} ${variant}`);
  return run;
}

describe('runDemo (real CPU workloads, in-process estimator)', () => {
  it('runs every planned workload once with all its groups', () => {
    expect(results.runs.map((r) => `${r.workload} ${r.variant} ${r.n}`)).toEqual([
      'matpow pois(30) 8',
      'matpow geo(0.1) 8',
      'escape plain 8',
      'escape sorted 8',
    ]);
    expect(runOf('matpow', 'pois(30)').groups).toBe(2 * (16384 / 8));
    expect(runOf('escape', 'plain').groups).toBe(2 * (65536 / 8));
    expect(results.transport).toBe('in-process');
    expect(results.notes.join(' ')).toMatch(/not GPU numbers/);
  });

  it('predicts the count-based loss of matpow within 5 standard errors (lanes are i.i.d. draws)', () => {
    for (const variant of ['pois(30)', 'geo(0.1)']) {
      const run = runOf('matpow', variant);
      const exact = exactLossDistribution(CategoricalDistribution.fromCounts(run.histogram), run.n);
      const variance = exact.outcomes.reduce((sum, o) => sum + o.probability * (o.value - exact.mean) ** 2, 0);
      const standardError = Math.sqrt(variance / run.groups);
      expect(Math.abs(run.lossCounts - exact.mean), `${variant}: counts ${run.lossCounts} vs exact ${exact.mean} ± ${standardError}`).toBeLessThan(5 * standardError);
      expect(run.lossPredicted).toBeCloseTo(exact.mean, 8);
    }
  });

  it('reports the sampled groups: ICC ≈ 0 for matpow (independent lanes), clearly > 0 for escape (neighbouring pixels)', () => {
    // The demo's sampling: hash, 1 in 4, so Binomial(groups, 1/4) sampled groups. matpow: 2 × 2048
    // groups → 1024 ± 27.7 (5 sd: 886..1162); escape: 2 × 8192 → 4096 ± 55.4 (5 sd: 3819..4373).
    expect(DEMO_SAMPLE_RATE).toBe(0.25);
    for (const variant of ['pois(30)', 'geo(0.1)']) {
      const run = runOf('matpow', variant);
      expect(run.sampled?.groups).toBeGreaterThan(885);
      expect(run.sampled?.groups).toBeLessThan(1163);
      // ANOVA ICC of independent lanes: mean ≈ −1/(n·g) and SE ≈ √(2/(g·n·(n−1))) ≈ 0.034 at g ≥ 25
      // sampled groups in the richest window (of two), n = 8: 0.3 is > 8 SE.
      expect(Math.abs(run.sampled?.countIcc ?? 1)).toBeLessThan(0.3);
    }
    const plain = runOf('escape', 'plain');
    expect(plain.sampled?.groups).toBeGreaterThan(3818);
    expect(plain.sampled?.groups).toBeLessThan(4374);
    // All groups of this image: ICC 0.95 (neighbouring pixels); a random sample of > 80 groups is far above 0.3.
    expect(plain.sampled?.countIcc).toBeGreaterThan(0.3);
    // The idle share is 1 − 1/(workload loss) of the sampled groups: between 0 and 1.
    expect(plain.sampled?.laneIdleFraction).toBeGreaterThan(0);
    expect(plain.sampled?.laneIdleFraction).toBeLessThan(1);
  });

  it('gives escape plain and sorted the same distribution but a smaller loss when sorted', () => {
    const plain = runOf('escape', 'plain');
    const sorted = runOf('escape', 'sorted');
    expect(sorted.histogram).toEqual(plain.histogram);
    expect(sorted.lossPredicted).toBeCloseTo(plain.lossPredicted, 12);
    expect(sorted.lossCounts).toBeLessThan(plain.lossCounts);
  });

  it('agrees with the programs own tallies of loss_counts and loss_measured', async () => {
    // The same run again, frames discarded: its report (6 decimals) is an independent tally in C++.
    const run = runOf('matpow', 'pois(30)');
    const again = await streamWorkloadFrames({
      binDir,
      workload: 'matpow',
      args: ['--dist', 'pois(30)', '--n', '8', '--groups', '2048', '--launches', '2', '--seed', '1', '--job', 'x'],
      onFrame: () => undefined,
    });
    expect(again.report.groups).toBe(run.groups);
    expect(run.lossCounts).toBeCloseTo(again.report.lossCounts, 5);
  });
});

describe('runDemo: a workload program that fails', () => {
  it('is the demo\'s WW_ERR_DEMO_WORKLOAD (the kernels\' typed WorkloadError as its cause), with the program\'s message', async () => {
    const job = 'demo-missing-program';
    const settings = resolveDemoSettings({ quick: true, job, groupSizes: [8], families: ['pois(30)'], launches: 1 });
    const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job }), undefined);
    const emptyDir = mkdtempSync(join(tmpdir(), 'ww-demo-no-programs-'));
    try {
      const error = await runDemo({ settings, binDir: emptyDir, transport, influx: false, buildMillis: 0, startedAtMillis: Date.now() }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DemoError);
      expect(error).toMatchObject({ code: 'WW_ERR_DEMO_WORKLOAD', message: `${join(emptyDir, 'warpwatch-matpow-cpu')} does not exist: the kernels build did not produce the CPU matpow program` });
      expect((error as Error).cause).toBeInstanceOf(WorkloadError);
    } finally {
      await transport.close();
    }
  });
});

describe('runDemo: the locality-aware prediction of escape at the demo\'s group sizes', () => {
  let escape: DemoResults;
  const sampledRuns = new Map<string, number[][][]>();
  beforeAll(async () => {
    // The full demo's sizes and launches, escape only (no matpow family).
    const job = 'demo-locality-test';
    const settings = resolveDemoSettings({ quick: false, job, families: [] });
    expect(settings.groupSizes).toEqual(DEMO_DEFAULTS.full.groupSizes);
    const transport = createInProcessTransport(demoEstimatorConfig({}, { influx: false, job }), undefined);
    try {
      escape = await runDemo({ settings, binDir, transport, influx: false, buildMillis: 0, startedAtMillis: Date.now(), sampledRuns });
    } finally {
      await transport.close();
    }
  }, 900_000);

  it('is within 10 % of the loss measured from clocks at every n, where the independent-lanes reference is not', () => {
    expect(escape.runs.map((r) => `${r.variant} ${r.n}`)).toEqual(['plain 4', 'plain 8', 'plain 16', 'plain 32', 'sorted 4', 'sorted 8', 'sorted 16', 'sorted 32']);
    for (const run of escape.runs) {
      const locality = run.lossLocality;
      expect(locality, `${run.variant} n=${run.n}`).toBeDefined();
      if (locality === undefined) continue;
      // loss_measured comes from the programs' steady clocks over every group; the prediction
      // from the counts of the sampled runs only.
      expect(Math.abs(locality.value - run.lossMeasured) / run.lossMeasured, `${run.variant} n=${run.n}: ${locality.value} vs measured ${run.lossMeasured}`).toBeLessThan(0.1);
      expect(locality.low).toBeLessThanOrEqual(locality.value);
      expect(locality.high).toBeGreaterThanOrEqual(locality.value);
      expect(locality.high - locality.low).toBeGreaterThan(0);
      // The reference assumes random grouping: at n ≥ 8 it is more than twice the measurement.
      if (run.n >= 8) expect(run.lossPredicted).toBeGreaterThan(2 * run.lossMeasured);
    }
  });

  it('advises from the runs\' sampled groups, and never tells the sorted run to sort', () => {
    const headlines = demoHeadlines(escape.runs, sampledRuns);
    expect(headlines.map((h) => `${h.variant} ${h.run.n}`)).toEqual(['plain 32', 'sorted 32']);
    for (const h of headlines) {
      const runs = sampledRuns.get(sampledRunsKey(h.run.stream, h.run.n)) ?? [];
      expect(runs.flat().length).toBe(h.run.sampled?.groups);
      // The layout's own loss leads (random grouping: 4.17×) and the options are on its units.
      expect(h.advice?.headline.basis).toBe('layout');
      expect(h.advice?.onRuns?.runs).toBe(h.run.sampled?.groups);
    }
    const sorted = headlines[1];
    expect(sorted?.advice?.options.map((o) => o.kind)).not.toContain('sorting');
    expect(sorted?.topRecommendation).not.toMatch(/^sorting/);
  });
});
