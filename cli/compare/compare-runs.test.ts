import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../model/index.ts';
import { decodeFrames, encodeFrame, histogramOfCounts, type Frame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';
import type { ComparedValue, RunComparison } from './compare-runs.ts';

const dir = mkdtempSync(join(tmpdir(), 'ww-compare-'));
const N = 4;
const TICKS_PER_ITERATION = 10;

const identity = {
  job: 'job',
  kernel: 'k',
  frameSequence: 0,
  source: 'cpu' as const,
  groupSize: N,
  sync: true,
  device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
};

interface Group {
  counts: number[];
  /** Per-lane finish offsets and group duration, ticks: w·10 plus a per-group overhead on the slowest lane. */
  finish: number[];
  duration: number;
}

/** Groups of N lanes with counts uniform on lo..hi; the group's end waits `overhead` ticks more. */
function groupsOf(random: () => number, count: number, lo: number, hi: number): Group[] {
  return Array.from({ length: count }, () => {
    const counts = Array.from({ length: N }, () => lo + Math.floor(random() * (hi - lo + 1)));
    const finish = counts.map((w) => w * TICKS_PER_ITERATION);
    const overhead = Math.floor(random() * 20);
    return { counts, finish, duration: Math.max(...finish) + overhead };
  });
}

/** Plain arithmetic: H from counts n·max/Σ and measured H = n·duration/Σ finish. */
const countsLoss = (g: Group): number => (N * Math.max(...g.counts)) / g.counts.reduce((a, b) => a + b, 0);
const measuredLoss = (g: Group): number => (N * g.duration) / g.finish.reduce((a, b) => a + b, 0);
const meanIterations = (g: Group): number => g.counts.reduce((a, b) => a + b, 0) / N;

function summaryOf(launchId: bigint, groups: Group[]): LaunchSummaryFrame {
  return {
    ...identity,
    type: 'launch-summary',
    launchId,
    groupCount: groups.length,
    groupsCounted: groups.length,
    sumSimtClocks: BigInt(groups.reduce((s, g) => s + N * g.duration, 0)),
    sumMimdClocks: BigInt(groups.reduce((s, g) => s + g.finish.reduce((a, b) => a + b, 0), 0)),
    sumMeasuredLoss: groups.reduce((s, g) => s + measuredLoss(g), 0),
    sumCountsLoss: groups.reduce((s, g) => s + countsLoss(g), 0),
    sumMaxCounts: groups.reduce((s, g) => s + Math.max(...g.counts), 0),
    sumCounts: groups.reduce((s, g) => s + g.counts.reduce((a, b) => a + b, 0), 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(groups.flatMap((g) => g.counts)),
  };
}

function samplesOf(launchId: bigint, groups: Group[]): GroupSamplesFrame {
  return {
    ...identity,
    type: 'group-samples',
    launchId,
    groupCount: groups.length,
    selection: 'stride',
    samplingStride: 1,
    groups: groups.map((g, i) => ({
      groupIndex: i,
      startClock: 1000n,
      endClock: 1000n + BigInt(g.duration),
      laneCounts: g.counts,
      laneFinishClocks: g.finish.map((f) => 1000n + BigInt(f)),
    })),
  };
}

function write(name: string, frames: Frame[]): string {
  const file = join(dir, name);
  writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
  return file;
}

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const sampleVariance = (xs: number[]): number => xs.reduce((s, x) => s + (x - mean(xs)) ** 2, 0) / (xs.length - 1);

/** Independent expectation with launches of equal size: mean of launch means, SE = sd(launch means)/√L. */
function launchEstimate(launches: Group[][], f: (g: Group) => number): { value: number; se: number } {
  const means = launches.map((groups) => mean(groups.map(f)));
  return { value: mean(means), se: Math.sqrt(sampleVariance(means) / means.length) };
}

async function compare(a: string, b: string): Promise<RunComparison> {
  const result = await runCli('compare', a, b, '--json');
  expect(result.status, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as RunComparison;
}

const valueOf = (c: RunComparison, q: ComparedValue['quantity']): ComparedValue => {
  const v = c.streams[0]?.values.find((x) => x.quantity === q);
  if (v === undefined) throw new Error(`no ${q}`);
  return v;
};

describe('warpwatch compare (launches as units)', () => {
  const LAUNCHES = 8;
  const launchesOf = (seed: number, lo: number, hi: number): Group[][] => {
    const random = mulberry32(seed);
    return Array.from({ length: LAUNCHES }, () => groupsOf(random, 64, lo, hi));
  };
  const runA = launchesOf(1, 1, 10);
  const runSame = launchesOf(2, 1, 10); // same workload, another seed
  const runChanged = launchesOf(3, 5, 10); // a real change: less spread, more work per lane
  const fileOf = (name: string, launches: Group[][]): string => write(name, launches.map((groups, i) => summaryOf(BigInt(i + 1), groups)));
  const fileA = fileOf('a.wwf', runA);
  const fileSame = fileOf('same.wwf', runSame);
  const fileChanged = fileOf('changed.wwf', runChanged);
  const quantities: [ComparedValue['quantity'], (g: Group) => number][] = [
    ['lossMeasured', measuredLoss],
    ['lossCounts', countsLoss],
    ['meanCount', meanIterations],
  ];

  it('a real change is beyond noise; values, SEs and z match the launch means computed by hand', async () => {
    const c = await compare(fileA, fileChanged);
    expect(c.streams).toHaveLength(1);
    expect(c.streams[0]).toMatchObject({ stream: 'job/k', n: N, launchesA: LAUNCHES, launchesB: LAUNCHES, basisA: 'launches', basisB: 'launches' });
    for (const [quantity, f] of quantities) {
      const a = launchEstimate(runA, f);
      const b = launchEstimate(runChanged, f);
      const v = valueOf(c, quantity);
      expect(v.a).toBeCloseTo(a.value, 10);
      expect(v.b).toBeCloseTo(b.value, 10);
      expect(v.standardErrorA).toBeCloseTo(a.se, 10);
      expect(v.standardErrorB).toBeCloseTo(b.se, 10);
      const z = (b.value - a.value) / Math.hypot(a.se, b.se);
      expect(v.z).toBeCloseTo(z, 8);
      expect(v.difference).toBeCloseTo(b.value - a.value, 10);
      expect(v.ratio).toBeCloseTo(b.value / a.value, 10);
      expect(Math.abs(z), quantity).toBeGreaterThan(3);
      expect(v.verdict, quantity).toBe('beyond noise');
    }
    expect(valueOf(c, 'groups')).toMatchObject({ a: 8 * 64, b: 8 * 64, difference: 0, ratio: 1, verdict: 'unknown' });
  });

  it('another seed of the same workload is within noise', async () => {
    const c = await compare(fileA, fileSame);
    for (const [quantity, f] of quantities) {
      const a = launchEstimate(runA, f);
      const b = launchEstimate(runSame, f);
      const z = (b.value - a.value) / Math.hypot(a.se, b.se);
      expect(Math.abs(z), quantity).toBeLessThanOrEqual(3);
      expect(valueOf(c, quantity).z).toBeCloseTo(z, 8);
      expect(valueOf(c, quantity).verdict, quantity).toBe('within noise');
    }
  });

  it('prints a side-by-side table with the verdicts', async () => {
    const result = await runCli('compare', fileA, fileChanged);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^A = .*a\.wwf, B = .*changed\.wwf; beyond noise: \|z\| > 3/);
    expect(result.stdout).toMatch(/job\/k n=4 {2}\(A: 8 launch\(es\), SE over launches; B: 8 launch\(es\), SE over launches\)/);
    expect(result.stdout).toMatch(/loss from counts .* beyond noise \(z −\d+\.\d\)/);
    expect(result.stdout).toMatch(/mean iterations .* beyond noise \(z \+\d+\.\d\)/);
  });
});

describe('warpwatch compare (one launch: sampled groups as units)', () => {
  const GROUPS = 400;
  const runOf = (seed: number, lo: number, hi: number): Group[] => groupsOf(mulberry32(seed), GROUPS, lo, hi);
  const fileOf = (name: string, groups: Group[]): string => write(name, [summaryOf(1n, groups), samplesOf(1n, groups)]);
  const runA = runOf(11, 1, 10);
  const runSame = runOf(12, 1, 10);
  const runChanged = runOf(13, 5, 10);

  /** Independent expectation: mean over groups, SE = sd(per-group values)/√groups. */
  const groupEstimate = (groups: Group[], f: (g: Group) => number): { value: number; se: number } => {
    const values = groups.map(f);
    return { value: mean(values), se: Math.sqrt(sampleVariance(values) / values.length) };
  };

  it('a real change is beyond noise, another seed within; SEs match the per-group values computed by hand', async () => {
    const changed = await compare(fileOf('one-a.wwf', runA), fileOf('one-changed.wwf', runChanged));
    const same = await compare(fileOf('one-a.wwf', runA), fileOf('one-same.wwf', runSame));
    expect(changed.streams[0]).toMatchObject({ basisA: 'sampled groups', basisB: 'sampled groups' });
    for (const [quantity, f] of [['lossMeasured', measuredLoss], ['meanCount', meanIterations]] as const) {
      const a = groupEstimate(runA, f);
      for (const [comparison, run, verdict] of [[changed, runChanged, 'beyond noise'], [same, runSame, 'within noise']] as const) {
        const b = groupEstimate(run, f);
        const v = valueOf(comparison, quantity);
        expect(v.a).toBeCloseTo(a.value, 10);
        expect(v.standardErrorA).toBeCloseTo(a.se, 10);
        expect(v.standardErrorB).toBeCloseTo(b.se, 10);
        const z = (b.value - a.value) / Math.hypot(a.se, b.se);
        expect(v.z).toBeCloseTo(z, 8);
        expect(Math.abs(z) > 3 ? 'beyond noise' : 'within noise', quantity).toBe(verdict);
        expect(v.verdict, `${quantity} ${verdict}`).toBe(verdict);
      }
    }
  });

  it('without samples and with one launch the noise is unknown, and streams in one run only are listed', async () => {
    const random = mulberry32(21);
    const a = write('bare-a.wwf', [summaryOf(1n, groupsOf(random, 16, 1, 10))]);
    const b = write('bare-b.wwf', [summaryOf(1n, groupsOf(random, 16, 1, 10)), { ...summaryOf(1n, groupsOf(random, 4, 1, 3)), kernel: 'extra' }]);
    const c = await compare(a, b);
    expect(c.streams[0]).toMatchObject({ basisA: 'none', basisB: 'none' });
    expect(c.streams[0]?.values.every((v) => v.verdict === 'unknown')).toBe(true);
    expect(c.onlyInB).toEqual(['job/extra n=4']);
    const text = await runCli('compare', a, b);
    expect(text.stdout).toMatch(/loss measured .* noise unknown/);
    expect(text.stdout).toMatch(/only in B: job\/extra n=4/);
  });

  it('compares nothing when the runs are at different n, and says so, also to a user who paired them', async () => {
    const random = mulberry32(37);
    const a = write('n4.wwf', Array.from({ length: 3 }, (_, i) => ({ ...summaryOf(BigInt(i + 1), groupsOf(random, 32, 1, 10)), kernel: 'escape' })));
    const b = write('n8.wwf', Array.from({ length: 3 }, (_, i) => ({ ...summaryOf(BigInt(i + 1), groupsOf(random, 32, 1, 10)), kernel: 'escape', groupSize: 8, groupCount: 16, groupsCounted: 16 })));
    for (const args of [[], ['--pair', 'job/escape=job/escape']]) {
      const nothing = await runCli('compare', a, b, ...args);
      expect(nothing.status).toBe(2);
      expect(nothing.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(nothing.stderr).toMatch(/WW_ERR_COMPARE_NOTHING: .*the streams differ in n \(job\/escape at n = 4 in .*n4\.wwf, job\/escape at n = 8 in .*n8\.wwf\) and runs are compared at the same n only/);
      expect(nothing.stderr).not.toMatch(/pair them/);
      if (args.length > 0) expect(nothing.stderr).toMatch(/--pair matches names, not n/);
    }
  });

  it('compares nothing when the stream ids differ: exit 2 with WW_ERR_COMPARE_NOTHING and the --pair to try', async () => {
    const random = mulberry32(31);
    const plain = Array.from({ length: 4 }, () => groupsOf(random, 32, 1, 10));
    const sorted = Array.from({ length: 4 }, () => groupsOf(random, 32, 4, 6));
    const a = write('escape.wwf', plain.map((groups, i) => ({ ...summaryOf(BigInt(i + 1), groups), kernel: 'escape' })));
    const b = write('escape-sorted.wwf', sorted.map((groups, i) => ({ ...summaryOf(BigInt(i + 1), groups), kernel: 'escape-sorted' })));
    const nothing = await runCli('compare', a, b);
    expect(nothing.status).toBe(2);
    expect(nothing.stdout).toMatch(/only in A: job\/escape n=4\nonly in B: job\/escape-sorted n=4/);
    expect(nothing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(nothing.stderr).toMatch(/^warpwatch: WW_ERR_COMPARE_NOTHING: nothing was compared: .*; pair them, e.g\. --pair job\/escape=job\/escape-sorted$/m);
    expect((await runCli('compare', a, b, '--json')).status).toBe(2);

    const paired = await runCli('compare', a, b, '--pair', 'job/escape=job/escape-sorted', '--json');
    expect(paired.status, paired.stderr).toBe(0);
    const c = JSON.parse(paired.stdout) as RunComparison;
    expect(c.streams).toHaveLength(1);
    expect(c.streams[0]).toMatchObject({ stream: 'job/escape', streamB: 'job/escape-sorted', n: N });
    expect(c.onlyInA).toEqual([]);
    expect(c.onlyInB).toEqual([]);
    // By hand: launch means of the per-group counts loss in each run.
    const v = valueOf(c, 'lossCounts');
    expect(v.a).toBeCloseTo(launchEstimate(plain, countsLoss).value, 10);
    expect(v.b).toBeCloseTo(launchEstimate(sorted, countsLoss).value, 10);
    const text = await runCli('compare', a, b, '--pair', 'job/escape=job/escape-sorted');
    expect(text.stdout).toMatch(/^A job\/escape ↔ B job\/escape-sorted n=4 /m);
    expect((await runCli('compare', a, b, '--pair', 'job/escape')).stderr).toMatch(/--pair must be A_STREAM=B_STREAM/);
  });

  it('calls a change against two zero standard errors beyond noise without a z (not ±∞)', async () => {
    // Every launch the same groups: each run's launch means do not vary, so both SEs are 0.
    const random = mulberry32(41);
    const groupsA = groupsOf(random, 16, 1, 10);
    const groupsB = groupsOf(random, 16, 1, 10);
    const a = write('constant-a.wwf', [1n, 2n, 3n].map((id) => summaryOf(id, groupsA)));
    const b = write('constant-b.wwf', [1n, 2n, 3n].map((id) => summaryOf(id, groupsB)));
    const c = await compare(a, b);
    const v = valueOf(c, 'lossCounts');
    expect(v.standardErrorA).toBeLessThan(1e-12);
    expect(v.standardErrorB).toBeLessThan(1e-12);
    expect(v.difference).not.toBe(0);
    expect(v.z).toBeNull();
    expect(v.verdict).toBe('beyond noise');
    const text = await runCli('compare', a, b);
    expect(text.stdout).toMatch(/loss from counts .* beyond noise \(both standard errors are 0\)/);
    expect(text.stdout).not.toContain('∞');
    // The same run twice: no difference, within noise.
    expect(valueOf(await compare(a, a), 'lossCounts')).toMatchObject({ z: null, verdict: 'within noise' });
  });

  it('rejects a missing file with one WW_ERR_USAGE line', async () => {
    const result = await runCli('compare', join(dir, 'nope.wwf'), join(dir, 'nope2.wwf'));
    expect(result.status).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/cannot read frame file/);
  });
});

describe('warpwatch compare on CPU-backend runs', () => {
  it('matpow: another seed is within noise, another distribution beyond it (counts-based quantities, launch means by hand)', async () => {
    const runOf = async (name: string, dist: string, seed: string): Promise<string> => {
      const file = join(dir, name);
      const run = await runCli('run', 'matpow', '--backend', 'cpu', '--dist', dist, '--n', '8', '--groups', '128', '--launches', '6', '--seed', seed, '--out', file);
      expect(run.status, run.stderr).toBe(0);
      return file;
    };
    const a = await runOf('cpu-a.wwf', 'pois(30)', '1');
    const same = await runOf('cpu-same.wwf', 'pois(30)', '2');
    const changed = await runOf('cpu-changed.wwf', 'geo(0.05)', '3');
    /** Per-launch means from the decoded LaunchSummary frames, then mean and SE over the 6 launches. */
    const byHand = (file: string, y: (f: LaunchSummaryFrame) => number): { value: number; se: number } => {
      const summaries = decodeFrames(new Uint8Array(readFileSync(file))).filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
      expect(summaries).toHaveLength(6);
      expect(new Set(summaries.map((f) => f.groupsCounted)).size).toBe(1); // equal launches: the ratio is the mean of launch means
      const means = summaries.map(y);
      return { value: mean(means), se: Math.sqrt(sampleVariance(means) / means.length) };
    };
    const quantities = [
      ['lossCounts', (f: LaunchSummaryFrame) => f.sumCountsLoss / f.groupsCounted],
      ['meanCount', (f: LaunchSummaryFrame) => f.sumCounts / (f.groupsCounted * 8)],
    ] as const;
    for (const [b, verdict] of [[same, 'within noise'], [changed, 'beyond noise']] as const) {
      const c = await compare(a, b);
      expect(c.streams[0]).toMatchObject({ stream: 'local/matpow', n: 8, basisA: 'launches', basisB: 'launches' });
      for (const [quantity, y] of quantities) {
        const x = byHand(a, y);
        const z = (byHand(b, y).value - x.value) / Math.hypot(x.se, byHand(b, y).se);
        expect(valueOf(c, quantity).z).toBeCloseTo(z, 8);
        expect(Math.abs(z) > 3 ? 'beyond noise' : 'within noise', `${quantity} ${b}`).toBe(verdict);
        expect(valueOf(c, quantity).verdict, `${quantity} ${b}`).toBe(verdict);
      }
    }
  }, 900_000);
});
