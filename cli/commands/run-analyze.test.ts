import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { groupLoss } from '../../model/index.ts';
import { decodeFrames, encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';
import { analyzeFrames } from '../../analysis/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ww-run-analyze-'));

const identity = {
  job: 'job',
  kernel: 'k',
  frameSequence: 0,
  source: 'cpu' as const,
  groupSize: 4,
  sync: true,
  device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
};

/** A LaunchSummary of the given groups (counts per lane), with measured H given per group. */
function summaryOf(launchId: bigint, groups: number[][], measuredLoss: number[], simt: bigint, mimd: bigint): LaunchSummaryFrame {
  return {
    ...identity,
    type: 'launch-summary',
    launchId,
    groupCount: groups.length,
    groupsCounted: groups.length,
    sumSimtClocks: simt,
    sumMimdClocks: mimd,
    sumMeasuredLoss: measuredLoss.reduce((a, b) => a + b, 0),
    sumCountsLoss: groups.reduce((s, g) => s + groupLoss(g), 0),
    sumMaxCounts: groups.reduce((s, g) => s + Math.max(...g), 0),
    sumCounts: groups.reduce((s, g) => s + g.reduce((a, b) => a + b, 0), 0),
    droppedSamples: 1,
    histogram: histogramOfCounts(groups.flat()),
  };
}

/** E[n·max/Σ] for n i.i.d. draws from the empirical distribution of `values`, by enumeration. */
function bruteForceExpectedLoss(values: number[], n: number): number {
  const weights = new Map<number, number>();
  for (const v of values) weights.set(v, (weights.get(v) ?? 0) + 1 / values.length);
  const support = [...weights.entries()];
  let expectation = 0;
  const visit = (chosen: number[], probability: number): void => {
    if (chosen.length === n) {
      expectation += probability * groupLoss(chosen);
      return;
    }
    for (const [value, p] of support) visit([...chosen, value], probability * p);
  };
  visit([], 1);
  return expectation;
}

describe('analyzeFrames', () => {
  const groupsA = [
    [1, 2, 3, 4],
    [2, 2, 2, 2],
  ];
  const groupsB = [[0, 0, 0, 8]];
  const frames = [
    summaryOf(1n, groupsA, [1.7, 1.1], 1000n, 800n),
    summaryOf(2n, groupsB, [4.2], 400n, 100n),
    {
      ...identity,
      type: 'group-samples',
      launchId: 2n,
      groupCount: 1,
      selection: 'stride',
      samplingStride: 1,
      groups: [{ groupIndex: 0, startClock: 0n, endClock: 100n, laneCounts: [0, 0, 0, 8], laneFinishClocks: [0n, 0n, 0n, 100n] }],
    } satisfies GroupSamplesFrame,
  ];

  it('aggregates launches of a stream and compares model, counts and clocks', () => {
    const [stream, ...rest] = analyzeFrames(frames);
    expect(rest).toHaveLength(0);
    expect(stream).toMatchObject({ stream: 'job/k', n: 4, launches: 2, groups: 3, sampledGroups: 1, droppedSamples: 2 });
    // H from counts: 4·4/10, 1, 4·8/8.
    expect(stream?.lossCounts).toBeCloseTo((1.6 + 1 + 4) / 3, 12);
    expect(stream?.lossMeasured).toBeCloseTo((1.7 + 1.1 + 4.2) / 3, 12);
    expect(stream?.workloadLossMeasured).toBeCloseTo(1400 / 900, 12);
    expect(stream?.workloadLossCounts).toBeCloseTo((4 * (4 + 2 + 8)) / (10 + 8 + 8), 12);
    const predicted = bruteForceExpectedLoss([...groupsA.flat(), ...groupsB.flat()], 4);
    expect(stream?.lossPredicted).toBeCloseTo(predicted, 8);
    expect(stream?.etaPredictedCounts).toBeCloseTo(Math.abs((predicted - (1.6 + 1 + 4) / 3) / predicted), 8);
    expect(stream?.countIcc).toBeNull(); // one sampled group: no correlation to estimate
  });

  it('keeps streams with different group sizes apart', () => {
    const other = { ...summaryOf(3n, [[5, 5]], [1], 10n, 10n), groupSize: 2 };
    expect(analyzeFrames([...frames, other]).map((s) => s.n)).toEqual([2, 4]);
  });
});

describe('warpwatch analyze', () => {
  it('prints the streams as JSON', async () => {
    const file = join(dir, 'frames.bin');
    const bytes = [summaryOf(1n, [[1, 2, 3, 4]], [1.5], 10n, 9n)].map((f) => encodeFrame(f));
    writeFileSync(file, Buffer.concat(bytes));
    const result = await runCli('analyze', file, '--json');
    expect(result.status).toBe(0);
    const parsed = JSON.parse(result.stdout) as { streams: { stream: string; n: number; groups: number; lossCounts: number }[] };
    expect(parsed.streams).toHaveLength(1);
    expect(parsed.streams[0]).toMatchObject({ stream: 'job/k', n: 4, groups: 1, lossCounts: 1.6 });
  });

  it('analyses the file of a killed job: the whole frames, with a warning and the length of the cut-off last frame', async () => {
    const file = join(dir, 'killed.bin');
    const whole = [summaryOf(1n, [[1, 2, 3, 4]], [1.5], 10n, 9n), summaryOf(2n, [[2, 2, 2, 6]], [1.4], 10n, 9n)].map((f) => encodeFrame(f));
    const cut = encodeFrame(summaryOf(3n, [[9, 9, 9, 9]], [1], 10n, 9n)).subarray(0, 37);
    writeFileSync(file, Buffer.concat([...whole, cut]));
    const result = await runCli('analyze', file, '--json');
    expect(result.status, result.stderr).toBe(0);
    expect(result.stderr).toBe(`warpwatch: ${file}: the last 37 byte(s) are a frame cut off (a writer stopped mid-frame); using the 2 whole frame(s) before them\n`);
    const parsed = JSON.parse(result.stdout) as { frames: number };
    expect(parsed.frames).toBe(2);
  });

  it('--export-counts writes the observed distribution in the --counts format; advise --counts reads the same distribution back', async () => {
    const file = join(dir, 'export.bin');
    const groups = [[[1, 2, 3, 4]], [[2, 2, 2, 6]]];
    writeFileSync(file, Buffer.concat(groups.map((g, i) => encodeFrame(summaryOf(BigInt(i + 1), g, [1.5], 10n, 9n)))));
    const exported = join(dir, 'export.csv');
    const result = await runCli('analyze', file, '--json', '--export-counts', exported);
    expect(result.status, result.stderr).toBe(0);
    // Tallied by hand from the two groups' lanes: 1 once, 2 four times, 3, 4 and 6 once.
    expect(readFileSync(exported, 'utf8')).toBe('value,count\n1,1\n2,4\n3,1\n4,1\n6,1\n');
    const advised = await runCli('advise', '--counts', exported, '--n', '4', '--json');
    expect(advised.status, advised.stderr).toBe(0);
    const expected = bruteForceExpectedLoss(groups.flat(2), 4);
    expect((JSON.parse(advised.stdout) as { current: { expectedLoss: number } }).current.expectedLoss).toBeCloseTo(expected, 10);
  });

  it('--export-counts needs exactly one stream: names them and points to --stream, which selects one', async () => {
    const file = join(dir, 'two-streams.bin');
    const other = { ...summaryOf(2n, [[5, 5, 5, 7]], [1.1], 10n, 9n), kernel: 'other' };
    writeFileSync(file, Buffer.concat([encodeFrame(summaryOf(1n, [[1, 2, 3, 4]], [1.5], 10n, 9n)), encodeFrame(other)]));
    const exported = join(dir, 'two.csv');
    const refused = await runCli('analyze', file, '--export-counts', exported);
    expect(refused.status).toBe(2);
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/--export-counts writes one stream's counts; .* has 2: job\/k \(n=4, cpu\), job\/other \(n=4, cpu\) \(pick one with --stream job\/kernel\)/);
    const picked = await runCli('analyze', file, '--stream', 'job/other', '--export-counts', exported);
    expect(picked.status, picked.stderr).toBe(0);
    expect(readFileSync(exported, 'utf8')).toBe('value,count\n5,3\n7,1\n');
    for (const [stream, message] of [['noslash', /^warpwatch: WW_ERR_STREAM_IDENTITY: --stream must be '<job>\/<kernel>' \(no '\/' found\), got 'noslash'\n$/], ['job/missing', /--stream job\/missing: no launch summaries of that stream in '.*'; it holds job\/k, job\/other\n$/]] as const) {
      const bad = await runCli('analyze', file, '--stream', stream);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(message);
    }
  });

  it('rejects a file that is not frames with exit code 2', async () => {
    const file = join(dir, 'garbage.bin');
    writeFileSync(file, 'not frames at all, definitely not');
    const result = await runCli('analyze', file);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/not a valid frame file/);
  });
});

describe('warpwatch run', () => {
  it.each([
    [['run', 'bogus', '--out', 'x'], /workload must be one of matpow, escape, divergence, relax, banded/],
    [['run', 'matpow', '--backend', 'gpu', '--out', 'x'], /--backend must be one of cpu, cuda/],
    [['run', 'matpow', '--dist', 'pois(30)'], /--out FILE/],
    [['run', 'matpow', '--n', '33', '--out', 'x'], /^warpwatch: WW_ERR_STREAM_IDENTITY: --n must be an integer 1..32, got '33'\n$/],
    [['run', 'matpow', '--sorted', '--out', 'x'], /--sorted applies to the escape and banded workloads only/],
    [['run', 'matpow', '--dist', 'pois(', '--out', 'x'], /pois/],
  ])('rejects %j with exit code 2', async (args, message) => {
    const result = await runCli(...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('runs escape on the CPU backend and analyze reads its frames', async () => {
    const file = join(dir, 'escape.bin');
    // Default selection (hash) at 1/8: about 64 of the 512 groups, Binomial(512, 1/8) (sd 7.5).
    const run = await runCli('run', 'escape', '--backend', 'cpu', '--n', '8', '--width', '64', '--height', '64', '--max-iter', '64', '--sample-rate', '0.125', '--out', file, '--json');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { groups: number; lossCounts: number };
    expect(report.groups).toBe(512);
    const analyze = await runCli('analyze', file, '--json');
    expect(analyze.status).toBe(0);
    const { streams } = JSON.parse(analyze.stdout) as { streams: { stream: string; groups: number; lossCounts: number; source: string; sampledGroups: number; countIcc: number | null }[] };
    const samples = decodeFrames(new Uint8Array(readFileSync(file))).flatMap((f) => (f.type === 'group-samples' ? f.groups : []));
    expect(samples.length).toBeGreaterThan(30); // 64 ± 4.5 sd
    expect(samples.length).toBeLessThan(98);
    expect(streams[0]).toMatchObject({ stream: 'local/escape', groups: 512, source: 'cpu', sampledGroups: samples.length });
    // Neighbouring pixels: counts within a group are strongly correlated (all 512 groups: ICC 0.82).
    expect(streams[0]?.countIcc).toBeGreaterThan(0.2);
    expect(streams[0]?.lossCounts).toBeCloseTo(report.lossCounts, 5);
  }, 900_000);
});
