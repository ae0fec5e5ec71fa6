import { describe, expect, it } from 'vitest';
import type { DemoResults, DemoRun } from './demo-results.ts';
import { renderDemoReport } from './html-report.ts';
import { histogramBins, renderBarChart, renderLineChart } from './svg-chart.ts';
import { SUMMARY_COLUMNS } from './summary-columns.ts';

function run(workload: DemoRun['workload'], variant: string, n: number, loss: number): DemoRun {
  return {
    workload,
    variant,
    stream: `demo/${workload}-${variant}`,
    n,
    launches: 1,
    groups: 64,
    units: 64 * n,
    lossPredicted: loss,
    lossPredictedLow: loss - 0.01,
    lossPredictedHigh: loss + 0.01,
    lossCounts: loss * 1.001,
    lossMeasured: loss * 1.01,
    workloadLossPredicted: loss,
    workloadLossMeasured: loss * 1.01,
    etaPredictedCounts: 0.001,
    etaCountsMeasured: 0.01,
    etaPredictedMeasured: 0.011,
    lossQuantiles: undefined,
    fit: undefined,
    histogram: [
      [3, 10],
      [5, 20],
      [900, 2],
    ],
    sweep: [1, 2, 4].map((k) => ({ n: k, expectedLoss: 1 + k / (workload === 'matpow' ? 10 : 5), workloadLoss: 1 + k / 10 })),
    seconds: 0.1,
    groupsRemeasured: 0,
    groupsDisturbed: 0,
  };
}

const results: DemoResults = {
  version: 1,
  createdAt: '2025-01-01T00:00:00.000Z',
  durationMillis: 12_345,
  transport: 'in-process',
  influx: false,
  machine: { cpu: 'Test <CPU> & co', cores: 2, os: 'linux', node: '20' },
  settings: { quick: true, job: 'demo-x', groupSizes: [4, 8], launches: 1, matpowUnitsPerLaunch: 256, escapeUnitsPerLaunch: 512, seed: 1 },
  buildMillis: 0,
  runs: [run('matpow', 'pois(30)', 4, 1.2), run('matpow', 'pois(30)', 8, 1.3), run('escape', 'plain', 4, 2), run('escape', 'sorted', 4, 2), run('escape', 'plain', 8, 2.5), run('escape', 'sorted', 8, 2.5)],
  notes: ['a <note>'],
};

describe('html-report', () => {
  describe('renderDemoReport', () => {
    const html = renderDemoReport(results);

    it('draws one histogram and one loss chart per workload variant, the sweep and the sorting chart', () => {
      const charts = html.match(/<svg [^>]*class="ww-chart"[^>]*>/g) ?? [];
      expect(charts).toHaveLength(3 + 3 + 1 + 1);
      for (const chart of charts) expect(Number(/data-items="(\d+)"/.exec(chart)?.[1])).toBeGreaterThan(0);
    });

    it('draws escape plain and sorted, which share a distribution, as one sweep series', () => {
      const sweep = html.slice(html.indexOf('Granularity sweep: predicted loss'));
      expect(sweep).toContain('escape (plain = sorted)');
    });

    it('is self-contained and escapes text', () => {
      expect(html).not.toMatch(/<script|\ssrc=|\shref=|@import|url\(/);
      expect(html).toContain('Test &lt;CPU&gt; &amp; co');
      expect(html).toContain('<li>a &lt;note&gt;</li>');
      expect(html).toMatch(/not GPU numbers/);
    });

    it('has one table row per run, with the shared columns, inside its own scroll box', () => {
      const table = html.slice(html.indexOf('<table id="results">'), html.indexOf('</table>'));
      expect(table.match(/<tr>/g)).toHaveLength(1 + results.runs.length);
      expect(table.match(/<th[ >]/g)).toHaveLength(SUMMARY_COLUMNS.length);
      expect(html).toContain('<div class="table-scroll" id="results-box"><table id="results">');
    });

    it('leads with one headline per workload variant: idle share of lane time = 1 − 1/workload_loss_meas', () => {
      const answer = html.indexOf('<h2 id="answer">');
      expect(answer).toBeGreaterThan(0);
      expect(answer).toBeLessThan(html.indexOf('<h2', answer + 1));
      expect(html.indexOf('<h2')).toBe(answer);
      const headlines = html.match(/<li class="headline">.*?<\/li>/g) ?? [];
      expect(headlines).toHaveLength(3);
      // matpow pois(30) at n = 8: workload_loss_meas = 1.3 × 1.01 = 1.313; idle = 0.313/1.313 = 23.8%.
      expect(headlines[0]).toContain('pois(30)</strong>, n = 8: warps idle <strong class="idle">23.8%</strong> of lane time');
      // escape at n = 8: 2.5 × 1.01 = 2.525; idle = 1.525/2.525 = 60.4%.
      expect(headlines[1]).toContain('escape plain</strong>, n = 8: warps idle <strong class="idle">60.4%</strong>');
      for (const headline of headlines) expect(headline).toMatch(/What to change: \S/);
      expect(html).toMatch(/<h2>What to change<\/h2>[\s\S]*<section id="what-to-change"><h3>matpow pois\(30\), n = 8<\/h3><ul><li>/);
    });

    it('labels loss axes with what the number means', () => {
      expect(html.match(/>loss ×, 1 = no idle lanes</g)?.length).toBe(3 + 1 + 1);
      expect(html).not.toContain('E[X_W(n)]</text>');
    });
  });

  describe('svg charts', () => {
    it('refuses empty input', () => {
      expect(() => renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ name: 's', points: [[1, Number.NaN]] }] })).toThrow(/no finite points/);
      expect(() => renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['s'], groups: [] })).toThrow(/no bars/);
      expect(() => renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['s'], groups: [{ label: 'a', values: [-1] }] })).toThrow(/finite and >= 0, got -1/);
    });

    it('draws marker-only series as rings after every line, so a coinciding line cannot hide them', () => {
      const svg = renderLineChart({
        title: 't',
        xLabel: 'x',
        yLabel: 'y',
        series: [
          { name: 'counts', points: [[1, 1], [2, 2]], markersOnly: true },
          { name: 'measured', points: [[1, 1], [2, 2]] },
        ],
      });
      const lastLine = svg.lastIndexOf('<path class="ww-series"');
      const firstRing = svg.indexOf('data-series="counts"');
      expect(firstRing).toBeGreaterThan(lastLine);
      expect(svg.lastIndexOf('data-series="measured"')).toBeLessThan(firstRing);
      expect(svg.match(/data-series="counts" cx="[\d.]+" cy="[\d.]+" r="5" fill="none"/g)).toHaveLength(2);
    });

    it('starts a loss axis at its floor 1 where nice ticks would go below it', () => {
      const series = [{ name: 's', points: [[8, 1.105], [32, 4.17]] as [number, number][] }];
      const ticks = (svg: string): number[] => [...svg.matchAll(/text-anchor="end">([\d.]+)</g)].map((m) => Number(m[1]));
      // Without a floor: domain 1.105 − 0.245 = 0.86 made nice goes to 0.5.
      expect(Math.min(...ticks(renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series })))).toBe(0.5);
      expect(Math.min(...ticks(renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series, yFloor: 1 })))).toBe(1);
    });

    it('widens the legend column to the longest name', () => {
      const name = 'escape (plain = sorted) and more';
      const svg = renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', widthPixels: 700, series: [{ name, points: [[1, 1], [2, 2]] }] });
      const x = Number(/<text class="ww-legend" x="([\d.]+)"/.exec(svg)?.[1]);
      // 7 px per character at font size 11 is wider than any glyph of system-ui digits and lowercase letters.
      expect(x + name.length * 7).toBeLessThanOrEqual(700);
    });

    it('labels only every k-th histogram bar, k such that the labels have room', () => {
      const groups = histogramBins(Array.from({ length: 240 }, (_, i) => [i + 1, 1] as const), 60);
      const svg = renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['s'], groups, widthPixels: 520 });
      const xs = [...svg.matchAll(/<text class="ww-xtick" x="([\d.]+)"/g)].map((m) => Number(m[1]));
      expect(xs.length).toBeGreaterThan(2);
      // '121–124' is 7 characters: at 10 px about 6 px each, 42 px; the label centres are at least that far apart.
      for (let i = 1; i < xs.length; i += 1) expect((xs[i] ?? 0) - (xs[i - 1] ?? 0)).toBeGreaterThanOrEqual(7 * 6.5);
    });

    it('bins a histogram into equal-width bins, empty ones included', () => {
      expect(histogramBins([[1, 2], [4, 1]], 60)).toEqual([
        { label: '1', values: [2] },
        { label: '2', values: [0] },
        { label: '3', values: [0] },
        { label: '4', values: [1] },
      ]);
      // 1..10 in at most 4 bins: width ceil(10/4) = 3: 1–3, 4–6, 7–9, 10–12.
      expect(histogramBins([[1, 1], [2, 1], [10, 5]], 4)).toEqual([
        { label: '1–3', values: [2] },
        { label: '4–6', values: [0] },
        { label: '7–9', values: [0] },
        { label: '10–12', values: [5] },
      ]);
    });

    it('counts drawn items in data-items', () => {
      const svg = renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['a', 'b'], groups: [{ label: 'g', values: [1, 2] }] });
      expect(svg).toMatch(/data-items="2"/);
      expect(svg.match(/class="ww-bar"/g)).toHaveLength(2);
    });
  });
});
