import { describe, expect, it } from 'vitest';
import type { DemoResults, DemoRun } from './demo-results.ts';
import { renderDemoReport } from './html-report.ts';
import { renderBarChart, renderLineChart } from './svg-chart.ts';

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

    it('has one table row per run', () => {
      const table = html.slice(html.indexOf('<table id="results">'), html.indexOf('</table>'));
      expect(table.match(/<tr>/g)).toHaveLength(1 + results.runs.length);
    });
  });

  describe('svg charts', () => {
    it('refuses empty input', () => {
      expect(() => renderLineChart({ title: 't', xLabel: 'x', yLabel: 'y', series: [{ name: 's', points: [[1, Number.NaN]] }] })).toThrow(/no finite points/);
      expect(() => renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['s'], groups: [] })).toThrow(/no bars/);
      expect(() => renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['s'], groups: [{ label: 'a', values: [-1] }] })).toThrow(/finite and >= 0, got -1/);
    });

    it('counts drawn items in data-items', () => {
      const svg = renderBarChart({ title: 't', xLabel: 'x', yLabel: 'y', seriesNames: ['a', 'b'], groups: [{ label: 'g', values: [1, 2] }] });
      expect(svg).toMatch(/data-items="2"/);
      expect(svg.match(/class="ww-bar"/g)).toHaveLength(2);
    });
  });
});
