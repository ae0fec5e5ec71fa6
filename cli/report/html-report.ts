import { agreementOf } from './agreement.ts';
import type { DemoResults, DemoRun } from './demo-results.ts';
import { REPORT_STYLE } from './report-style.ts';
import { escapeXml, renderBarChart, renderLineChart } from './svg-chart.ts';


function fixed(value: number, digits = 4): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function percent(value: number): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(2)}%` : 'n/a';
}

function variantsOf(runs: readonly DemoRun[], workload: DemoRun['workload']): string[] {
  return [...new Set(runs.filter((r) => r.workload === workload).map((r) => r.variant))];
}

function resultsTable(runs: readonly DemoRun[]): string {
  const header = [
    'workload',
    'variant',
    'n',
    'groups',
    'loss_predicted',
    '95% interval',
    'loss_counts',
    'loss_measured',
    'η(pred,counts)',
    'η(counts,meas)',
    'η(pred,meas)',
    'workload_loss_pred',
    'workload_loss_meas',
    'ICC(counts)',
  ];
  const rows = runs
    .map(
      (r) =>
        `<tr><td>${r.workload}</td><td>${escapeXml(r.variant)}</td><td>${r.n}</td><td>${r.groups}</td>` +
        `<td>${fixed(r.lossPredicted)}</td><td>${fixed(r.lossPredictedLow, 3)}–${fixed(r.lossPredictedHigh, 3)}</td>` +
        `<td>${fixed(r.lossCounts)}</td><td>${fixed(r.lossMeasured)}</td>` +
        `<td>${percent(r.etaPredictedCounts)}</td><td>${percent(r.etaCountsMeasured)}</td><td>${percent(r.etaPredictedMeasured)}</td>` +
        `<td>${fixed(r.workloadLossPredicted)}</td><td>${fixed(r.workloadLossMeasured)}</td>` +
        `<td>${r.sampled?.countIcc === undefined ? '–' : fixed(r.sampled.countIcc, 3)}</td></tr>`,
    )
    .join('\n');
  return `<table id="results"><thead><tr>${header.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table>`;
}

function histogramChart(run: DemoRun): string {
  const total = run.histogram.reduce((sum, [, count]) => sum + count, 0) || 1;
  // Wide supports (escape reaches hundreds of iterations) are shown in at most 60 equal-width bins.
  const sorted = [...run.histogram].sort((a, b) => a[0] - b[0]);
  const low = sorted[0]?.[0] ?? 0;
  const high = sorted[sorted.length - 1]?.[0] ?? 0;
  const binWidth = Math.max(1, Math.ceil((high - low + 1) / 60));
  const bins = new Map<number, number>();
  for (const [value, count] of sorted) {
    const start = low + Math.floor((value - low) / binWidth) * binWidth;
    bins.set(start, (bins.get(start) ?? 0) + count / total);
  }
  const groups = [...bins.entries()].map(([start, p]) => ({ label: binWidth === 1 ? `${start}` : `${start}–${start + binWidth - 1}`, values: [p] }));
  return renderBarChart({
    title: `${run.workload} ${run.variant}: iteration counts`,
    xLabel: 'iterations per unit',
    yLabel: 'fraction of units',
    seriesNames: ['observed'],
    groups,
    widthPixels: 520,
    heightPixels: 240,
    maxXLabels: binWidth === 1 ? 16 : 8,
  });
}

function lossByGroupSizeChart(runs: readonly DemoRun[], workload: DemoRun['workload'], variant: string): string {
  const selected = runs.filter((r) => r.workload === workload && r.variant === variant).sort((a, b) => a.n - b.n);
  return renderLineChart({
    title: `${workload} ${variant}: predicted vs measured`,
    xLabel: 'group size n',
    yLabel: 'expected loss E[X]',
    xScale: 'log2',
    widthPixels: 520,
    heightPixels: 260,
    series: [
      { name: 'loss_predicted', points: selected.map((r) => [r.n, r.lossPredicted] as const), dashed: true },
      { name: 'loss_counts', points: selected.map((r) => [r.n, r.lossCounts] as const), markersOnly: true },
      { name: 'loss_measured', points: selected.map((r) => [r.n, r.lossMeasured] as const) },
    ],
  });
}

function sweepChart(runs: readonly DemoRun[]): string {
  // Sorting regroups the same units, so escape plain and sorted share one distribution and one
  // i.i.d. sweep: identical sweeps are drawn once, under the joined names.
  const bySweep = new Map<string, { names: string[]; points: (readonly [number, number])[] }>();
  for (const id of [...new Set(runs.map((r) => `${r.workload} ${r.variant}`))]) {
    const run = runs.filter((r) => `${r.workload} ${r.variant}` === id).sort((a, b) => b.n - a.n)[0];
    // Short legend names (the legend column is ~20 characters wide): the spec for matpow.
    const name = run?.workload === 'matpow' ? run.variant : id;
    const points = (run?.sweep ?? []).map((p) => [p.n, p.expectedLoss] as const);
    const key = points.map(([n, loss]) => `${n}:${loss.toPrecision(9)}`).join(',');
    const entry = bySweep.get(key);
    if (entry === undefined) bySweep.set(key, { names: [name], points });
    else entry.names.push(name);
  }
  const series = [...bySweep.values()].map((entry) => ({
    name: entry.names.length > 1 && entry.names.every((n) => n.startsWith('escape ')) ? 'escape (plain = sorted)' : entry.names.join(' = '),
    points: entry.points,
  }));
  return renderLineChart({
    title: 'Granularity sweep: predicted loss for each group size',
    xLabel: 'group size n (lanes in lockstep)',
    yLabel: 'E[X_W(n)]',
    xScale: 'log2',
    widthPixels: 760,
    heightPixels: 340,
    series,
  });
}

function sortingChart(runs: readonly DemoRun[]): string | undefined {
  const plain = runs.filter((r) => r.workload === 'escape' && r.variant === 'plain');
  const sorted = runs.filter((r) => r.workload === 'escape' && r.variant === 'sorted');
  const sizes = [...new Set(plain.map((r) => r.n))].filter((n) => sorted.some((r) => r.n === n)).sort((a, b) => a - b);
  if (sizes.length === 0) return undefined;
  return renderBarChart({
    title: 'escape: effect of sorting units by estimated work',
    xLabel: 'group size n',
    yLabel: 'loss (mean H)',
    seriesNames: ['plain measured', 'sorted measured', 'plain counts', 'sorted counts'],
    groups: sizes.map((n) => {
      const p = plain.find((r) => r.n === n);
      const s = sorted.find((r) => r.n === n);
      return { label: `n=${n}`, values: [p?.lossMeasured ?? 0, s?.lossMeasured ?? 0, p?.lossCounts ?? 0, s?.lossCounts ?? 0] };
    }),
    widthPixels: 760,
    heightPixels: 300,
  });
}

function agreementList(runs: readonly DemoRun[]): string {
  const items: string[] = [];
  for (const workload of ['matpow', 'escape'] as const) {
    const selected = runs.filter((r) => r.workload === workload);
    if (selected.length === 0) continue;
    for (const [label, eta] of [
      ['loss_predicted vs loss_counts', (r: DemoRun) => r.etaPredictedCounts],
      ['loss_counts vs loss_measured', (r: DemoRun) => r.etaCountsMeasured],
      ['loss_predicted vs loss_measured', (r: DemoRun) => r.etaPredictedMeasured],
    ] as const) {
      const a = agreementOf(selected, eta);
      const where = a.worst === undefined ? '' : ` (${escapeXml(`${a.worst.variant} n=${a.worst.n}`)})`;
      items.push(`<li>${workload}, ${label}: median η ${percent(a.median)}, largest ${percent(a.max)}${where}</li>`);
    }
  }
  return `<ul id="agreement">${items.join('')}</ul>`;
}

/**
 * Renders the demo's self-contained HTML report: inline CSS and inline SVG charts only, no
 * scripts and no network, so the file opens anywhere. Every chart is an
 * `<svg class="ww-chart" data-items=N>` (N = drawn points or bars) so a browser test can check it rendered.
 *
 * @throws RangeError when a chart has nothing to draw (empty results).
 * @example writeFileSync('report.html', renderDemoReport(results))
 */
export function renderDemoReport(results: DemoResults): string {
  const runs = results.runs;
  const firstOf = (workload: DemoRun['workload'], variant: string): DemoRun | undefined =>
    runs.filter((r) => r.workload === workload && r.variant === variant).sort((a, b) => b.n - a.n)[0];
  const histograms = [...variantsOf(runs, 'matpow').map((v) => firstOf('matpow', v)), ...variantsOf(runs, 'escape').map((v) => firstOf('escape', v))]
    .filter((r): r is DemoRun => r !== undefined)
    .map((r) => `<figure>${histogramChart(r)}</figure>`)
    .join('\n');
  const lossCharts = [...variantsOf(runs, 'matpow').map((v) => ['matpow', v] as const), ...variantsOf(runs, 'escape').map((v) => ['escape', v] as const)]
    .map(([w, v]) => `<figure>${lossByGroupSizeChart(runs, w, v)}</figure>`)
    .join('\n');
  const sorting = sortingChart(runs);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>warpwatch demo report</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${REPORT_STYLE}</style></head>
<body>
<h1>warpwatch demo report</h1>
<p class="note">Created ${escapeXml(results.createdAt)} in ${(results.durationMillis / 1000).toFixed(1)} s on ${escapeXml(results.machine.cpu)}
(${results.machine.cores} cores, ${escapeXml(results.machine.os)}, Node ${escapeXml(results.machine.node)}); transport: ${results.transport};
${results.settings.launches} launch(es) per run of ${results.settings.matpowUnitsPerLaunch} matpow / ${results.settings.escapeUnitsPerLaunch} escape units each${results.settings.quick ? ' (quick mode)' : ''}, seed ${results.settings.seed}, job ${escapeXml(results.settings.job)}.</p>
<p class="note"><strong>These measurements come from the CPU lockstep backend</strong>: groups of n CPU lanes executing in lockstep,
timed with a steady clock. They show the lockstep loss on this CPU, not GPU numbers.</p>
<h2>Summary</h2>
<p>loss_predicted is the model's E[X_W(n)] on the observed distribution; loss_counts is the mean per-group H from the
actual counts; loss_measured is the mean per-group H from clocks. η is the relative error |(a−b)/a|.</p>
${resultsTable(runs)}
<h3>Agreement</h3>
${agreementList(runs)}
<p class="note">matpow draws every unit's count independently, which is the model's assumption: loss_predicted should match
loss_counts within sampling error. escape's units are neighbouring pixels, so the lanes of a group are correlated and
loss_predicted (independent lanes) overstates the loss: that gap is a finding, not an error (docs/model.md §2c).
loss_counts vs loss_measured shows what the iteration counts leave out on this CPU (timer and loop overheads).</p>
<h2>Iteration-count distributions</h2>
<div class="grid">${histograms}</div>
<h2>Predicted vs measured loss per group size</h2>
<div class="grid">${lossCharts}</div>
<h2>Granularity sweep</h2>
<figure>${sweepChart(runs)}<figcaption>Smaller groups idle fewer lanes; the cost of mapping one unit across several lanes is the kernel designer's to weigh.</figcaption></figure>
${sorting ? `<h2>Load balancing by sorting</h2><figure>${sorting}<figcaption>Sorting units by an estimate of their work before grouping puts similar units in one group.</figcaption></figure>` : ''}
${results.notes.length > 0 ? `<h2>Notes</h2><ul>${results.notes.map((n) => `<li>${escapeXml(n)}</li>`).join('')}</ul>` : ''}
</body></html>
`;
}
