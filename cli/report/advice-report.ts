import type { Advice } from '../advise/advice.ts';
import { REPORT_STYLE } from './report-style.ts';
import { escapeXml, renderBarChart, renderLineChart } from './svg-chart.ts';

function fixed(value: number, digits = 4): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function distributionChart(advice: Advice): string {
  const pmf = advice.distribution.pmf;
  const low = pmf[0]?.[0] ?? 0;
  const high = pmf[pmf.length - 1]?.[0] ?? 0;
  const binWidth = Math.max(1, Math.ceil((high - low + 1) / 60));
  const bins = new Map<number, number>();
  for (const [value, probability] of pmf) {
    const start = low + Math.floor((value - low) / binWidth) * binWidth;
    bins.set(start, (bins.get(start) ?? 0) + probability);
  }
  return renderBarChart({
    title: 'Iteration-count distribution',
    xLabel: 'iterations per unit',
    yLabel: 'probability',
    seriesNames: ['observed'],
    groups: [...bins].map(([start, p]) => ({ label: binWidth === 1 ? `${start}` : `${start}–${start + binWidth - 1}`, values: [p] })),
    widthPixels: 620,
    heightPixels: 260,
    maxXLabels: binWidth === 1 ? 16 : 8,
  });
}

function granularityChart(advice: Advice): string {
  return renderLineChart({
    title: 'Predicted loss per group size',
    xLabel: 'group size n (lanes in lockstep)',
    yLabel: 'loss',
    xScale: 'log2',
    widthPixels: 620,
    heightPixels: 300,
    series: [
      { name: 'E[X] (mean H)', points: advice.granularity.map((r) => [r.n, r.expectedLoss] as const) },
      { name: 'E[max]/E[W]', points: advice.granularity.map((r) => [r.n, r.workloadLoss] as const), dashed: true },
    ],
  });
}

function policyChart(advice: Advice): string {
  return renderBarChart({
    title: `Load balancing at n = ${advice.groupSize}`,
    xLabel: 'policy',
    yLabel: 'predicted loss',
    seriesNames: ['E[X] (mean H)', 'E[max]/E[W]'],
    groups: [
      { label: 'as now', values: [advice.current.expectedLoss, advice.current.workloadLoss] },
      { label: 'sorted', values: [advice.sorting.expectedLoss, advice.sorting.workloadLoss] },
      ...advice.binning.map((b) => ({ label: `${b.k} bins`, values: [b.expectedLoss, b.workloadLoss] })),
    ],
    widthPixels: 620,
    heightPixels: 260,
  });
}

/**
 * Renders `warpwatch advise --html` as one self-contained page (inline CSS and SVG, no
 * scripts, no network), in the style of the demo report.
 *
 * @example writeFileSync('advice.html', renderAdviceReport(advice))
 */
export function renderAdviceReport(advice: Advice): string {
  const d = advice.distribution;
  const fits = advice.fits
    .slice(0, 5)
    .map((f) => `<tr><td>${escapeXml(f.family)}</td><td>${escapeXml(f.spec)}</td><td>${f.logLikelihood.toFixed(1)}</td><td>${f.aic.toFixed(1)}</td></tr>`)
    .join('');
  const binRows = advice.binning
    .map(
      (b) =>
        `<tr><td>binned, k = ${b.k}</td><td>${b.bins.map((bin) => `[${bin.low}..${bin.high}] ${(100 * bin.probability).toFixed(0)}%`).join(' ')}</td><td>${fixed(b.expectedLoss)}</td><td>${fixed(b.workloadLoss)}</td></tr>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>warpwatch advise</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${REPORT_STYLE}</style></head>
<body>
<h1>warpwatch advise</h1>
<p class="note">Source: ${escapeXml(advice.source)}<br>Distribution: ${escapeXml(d.description)}, variance ${Number(d.variance.toPrecision(6))}.
Group size now: ${advice.groupSize}; units per launch: ${advice.unitsPerLaunch}. Predictions of the model (docs/model.md §2d), which treats the lanes of a group as independent draws.</p>
<h2>Recommendation</h2>
<ul id="recommendation">${advice.recommendation.map((s) => `<li>${escapeXml(s)}</li>`).join('')}</ul>
<div class="grid"><figure>${distributionChart(advice)}</figure><figure>${granularityChart(advice)}</figure><figure>${policyChart(advice)}</figure></div>
<h2>Load balancing at n = ${advice.groupSize}</h2>
<table><thead><tr><th>policy</th><th>detail</th><th>expected loss</th><th>workload loss</th></tr></thead><tbody>
<tr><td>as now</td><td>random grouping</td><td>${fixed(advice.current.expectedLoss)}</td><td>${fixed(advice.current.workloadLoss)}</td></tr>
<tr><td>sorted by work</td><td>${advice.sorting.mixedGroups} of ${advice.sorting.groups} groups mix values</td><td>${fixed(advice.sorting.expectedLoss)}</td><td>${fixed(advice.sorting.workloadLoss)}</td></tr>
${binRows}</tbody></table>
<h2>Parametric fits</h2>
<table><thead><tr><th>family</th><th>fit</th><th>log-likelihood</th><th>AIC</th></tr></thead><tbody>${fits}</tbody></table>
</body></html>
`;
}
