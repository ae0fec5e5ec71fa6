// advise --frames with GroupSamples: the locality-aware loss of the kernel's
// own layout leads when it differs from the independent-lanes figure, which is shown as "if
// work were assigned to lanes at random"; values checked against hand computation.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-locality-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const identity = {
  job: 'img',
  kernel: 'k',
  frameSequence: 0,
  source: 'cpu' as const,
  groupSize: 4,
  sync: true,
  device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 0n,
  endUnixNanos: 1n,
};

/** One launch of 4-lane groups as a LaunchSummary and a GroupSamples frame with every group sampled. */
function writeFrames(groups: readonly number[][], name: string): string {
  const lanes = groups.flat();
  const summary: LaunchSummaryFrame = {
    ...identity,
    type: 'launch-summary',
    launchId: 1n,
    groupCount: groups.length,
    groupsCounted: groups.length,
    sumSimtClocks: 1000n,
    sumMimdClocks: 900n,
    sumMeasuredLoss: groups.length,
    sumCountsLoss: groups.reduce((s, g) => s + (4 * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0),
    sumMaxCounts: groups.reduce((s, g) => s + Math.max(...g), 0),
    sumCounts: lanes.reduce((a, b) => a + b, 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(lanes),
  };
  const samples: GroupSamplesFrame = {
    ...identity,
    type: 'group-samples',
    launchId: 1n,
    frameSequence: 1,
    groupCount: groups.length,
    selection: 'hash',
    samplingStride: 1,
    groups: groups.map((laneCounts, g) => ({ groupIndex: g, startClock: 0n, endClock: 100n, laneCounts, laneFinishClocks: laneCounts.map(() => 50n) })),
  };
  const file = join(directory, name);
  writeFileSync(file, Buffer.concat([encodeFrame(summary), encodeFrame(samples)]));
  return file;
}

describe('advise --frames with sampled groups (contiguous runs)', () => {
  it('leads with the layout loss, and names the independent-lanes figure "if work were assigned at random"', async () => {
    // 40 groups of 4 lanes: neighbouring lanes alike (each group uniform, plus one lane +1), groups alternate 2 and 20.
    const groups = Array.from({ length: 40 }, (_, g) => {
      const level = g % 2 === 0 ? 2 : 20;
      return [level, level, level, level + 1];
    });
    const file = writeFrames(groups, 'frames.wwf');

    const json = await runCli('advise', '--frames', file, '--json');
    expect(json.status, json.stderr).toBe(0);
    const advice = JSON.parse(json.stdout) as {
      locality: { n: number; expectedLoss: number; workloadLoss: number; independentLoss: number }[];
      recommendation: string[];
      current: { expectedLoss: number; workloadLoss: number };
      now: { workloadLoss: number; idleLaneShare: number };
      headline: unknown;
    };
    // By hand: a group [l, l, l, l+1] loses 4(l+1)/(4l+1): 12/9 for l = 2, 84/81 for l = 20; mean of the two.
    const layout4 = (12 / 9 + 84 / 81) / 2;
    expect(advice.locality.find((row) => row.n === 4)?.expectedLoss).toBeCloseTo(layout4, 12);
    // n = 2: halves [l, l] (1) and [l, l+1] (2(l+1)/(2l+1)).
    expect(advice.locality.find((row) => row.n === 2)?.expectedLoss).toBeCloseTo((1 + 6 / 5 + 1 + 42 / 41) / 4, 12);
    expect(advice.headline).toEqual({ basis: 'layout', expectedLoss: advice.locality.find((row) => row.n === 4)?.expectedLoss, low: expect.any(Number), high: expect.any(Number), ifRandom: advice.current.expectedLoss });
    // Run-time overhead of the layout: Σ n·max / Σ w = 20·(12 + 84) / 20·(9 + 81) = 96/90; idle lane time 1 − 90/96.
    expect(advice.locality.find((row) => row.n === 4)?.workloadLoss).toBeCloseTo(96 / 90, 12);
    expect(advice.now).toEqual({ workloadLoss: expect.closeTo(96 / 90, 12), idleLaneShare: expect.closeTo(6 / 96, 12) });
    expect(advice.recommendation[0]).toMatch(
      new RegExp(
        `^in this kernel's layout groups of 4 lanes run 1\\.07× as long as a machine that never idles \\(run-time overhead ΣC_SIMT/ΣC_MIMD; idle lane time 6\\.3%; ` +
          `mean per-group loss ${layout4.toFixed(2)}×, locality-aware, from 40 sampled groups, 95% interval .*\\); if work were assigned to lanes at random: ${advice.current.workloadLoss.toFixed(2)}× \\(mean per-group loss ${advice.current.expectedLoss.toFixed(2)}×\\)`,
      ),
    );
    const text = await runCli('advise', '--frames', file);
    expect(text.stdout).toMatch(/locality-aware loss of the kernel's own layout/);

    // --html shows the observed loss and the ICC beside the model, and the layout loss table.
    const page = join(directory, 'advice.html');
    const html = await runCli('advise', '--frames', file, '--html', page);
    expect(html.status, html.stderr).toBe(0);
    const content = readFileSync(page, 'utf8');
    const observed = content.slice(content.indexOf('<table id="observed">'), content.indexOf('</table>', content.indexOf('<table id="observed">')));
    // loss_counts by hand: the frame's Σ counts-loss over 40 groups (half 12/9, half 84/81).
    expect(observed).toContain(`<td>observed loss_counts (mean H of the measured groups' counts)</td><td class="num">${layout4.toFixed(4)}</td>`);
    expect(observed).toMatch(/ICC\(counts\) of sampled groups[^<]*<\/td><td class="num">0\.\d{3}<\/td>/);
    expect(observed).toContain(`<td class="num">${advice.current.expectedLoss.toFixed(4)}</td>`);
    const locality = content.slice(content.indexOf('<table id="locality">'), content.indexOf('</table>', content.indexOf('<table id="locality">')));
    expect(locality).toContain(`<tr><td>4 ← now</td><td class="num">${layout4.toFixed(4)}</td>`);
  });

  it('keeps the independent-lanes figure as the headline when the layout loses what random assignment would', async () => {
    // 400 groups of i.i.d. lanes on 1..10 (a fixed LCG): the layout is random assignment.
    let state = 12345;
    const next = (): number => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return 1 + Math.floor((state / 2147483648) * 10);
    };
    const groups = Array.from({ length: 400 }, () => [next(), next(), next(), next()]);
    const json = await runCli('advise', '--frames', writeFrames(groups, 'iid.wwf'), '--json');
    expect(json.status, json.stderr).toBe(0);
    const advice = JSON.parse(json.stdout) as { locality: { n: number; low: number; high: number }[]; headline: { basis: string; expectedLoss: number }; current: { expectedLoss: number }; recommendation: string[] };
    const layout = advice.locality.find((row) => row.n === 4)!;
    expect(layout.low).toBeLessThanOrEqual(advice.current.expectedLoss);
    expect(layout.high).toBeGreaterThanOrEqual(advice.current.expectedLoss);
    expect(advice.headline).toEqual({ basis: 'independent-lanes', expectedLoss: advice.current.expectedLoss, low: null, high: null, ifRandom: advice.current.expectedLoss });
    expect(advice.recommendation[0]).toMatch(/^groups of 4 lanes are predicted to run \d\.\d\d× as long as a machine that never idles/);
  });
});

describe('advise --trace: the what-ifs on the trace\'s units', () => {
  it('give every row a 95 % interval (batches of the trace as the independent runs), not n/a', async () => {
    // 4096 units in blocks of 16 alike units (levels 1..50 from a fixed sequence, one jittered unit per block).
    const trace: number[] = [];
    for (let block = 0; block < 256; block++) {
      const level = 1 + ((block * 37) % 50);
      for (let i = 0; i < 16; i++) trace.push(level + (i === block % 16 ? 3 : 0));
    }
    const file = join(directory, 'trace.csv');
    writeFileSync(file, `${trace.join('\n')}\n`);
    const json = await runCli('advise', '--trace', file, '--n', '32', '--json');
    expect(json.status, json.stderr).toBe(0);
    const advice = JSON.parse(json.stdout) as { onRuns: { sorting: { exact: number; estimated: number; low: number; high: number }; binning: { low: number; high: number }[] } };
    for (const figures of [advice.onRuns.sorting, ...advice.onRuns.binning]) {
      expect(Number.isFinite(figures.low) && Number.isFinite(figures.high), JSON.stringify(figures)).toBe(true);
      expect(figures.low).toBeLessThanOrEqual(figures.high);
    }
    // Sorting by exact work orders the whole trace: groups of 32 from 256 blocks of alike units,
    // computed here: sort, cut into 128 groups, mean of 32·max/Σ.
    const sorted = [...trace].sort((a, b) => a - b);
    let sum = 0;
    for (let g = 0; g < 128; g++) {
      const group = sorted.slice(g * 32, (g + 1) * 32);
      sum += (32 * Math.max(...group)) / group.reduce((a, b) => a + b, 0);
    }
    expect(advice.onRuns.sorting.exact).toBeCloseTo(sum / 128, 12);
    const text = await runCli('advise', '--trace', file, '--n', '32');
    expect(text.stdout).not.toContain('n/a–n/a');
  });
});
