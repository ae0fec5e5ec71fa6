import { agreementOf } from './agreement.ts';
import type { DemoResults, DemoRun } from './demo-results.ts';
import { REPORT_STYLE } from './report-style.ts';
import { demoHeadlines, ESCAPE_BUMP, etaLocalityMeasured, HELD_AS_LONG, percentOrNa, PREDICTIONS_DIFFER, SUMMARY_COLUMNS, type WorkloadHeadline } from './summary-columns.ts';
import { escapeXml, histogramBins, LOSS_AXIS_LABEL, renderBarChart, renderLineChart } from './svg-chart.ts';


const percent = (value: number): string => percentOrNa(value);

function variantsOf(runs: readonly DemoRun[], workload: DemoRun['workload']): string[] {
  return [...new Set(runs.filter((r) => r.workload === workload).map((r) => r.variant))];
}

function resultsTable(runs: readonly DemoRun[]): string {
  // The same columns as the terminal summary (summary-columns.ts), plus the report-only ones.
  // Headers may break after '_' and ',' (wbr) so the numbers, not the names, set the column widths.
  const header = SUMMARY_COLUMNS.map((c) => `<th${c.text ? ' class="text"' : ''}>${escapeXml(c.header).replace(/([_,])/g, '$1<wbr>')}</th>`).join('');
  const rows = runs.map((r) => `<tr>${SUMMARY_COLUMNS.map((c) => `<td${c.text ? ' class="text"' : ''}>${escapeXml(c.cell(r))}</td>`).join('')}</tr>`).join('\n');
  // A scroll box of its own: a narrow window scrolls the table, never the page.
  return `<div class="table-scroll" id="results-box"><table id="results"><thead><tr>${header}</tr></thead><tbody>${rows}</tbody></table></div>`;
}

function headlineSection(headlines: readonly WorkloadHeadline[]): string {
  const items = headlines
    .map(
      (h) =>
        `<li class="headline"><strong>${escapeXml(`${h.workload} ${h.variant}`)}</strong>, n = ${h.run.n}: warps idle <strong class="idle">${escapeXml(percentOrNa(h.idleShare, 1))}</strong> of lane time ` +
        `: ${escapeXml(HELD_AS_LONG(h.run.workloadLossMeasured))}.<br><span class="todo">What to change: ${escapeXml(h.topRecommendation)}</span></li>`,
    )
    .join('');
  return `<ul id="headlines">${items}</ul>`;
}

function whatToChangeSection(headlines: readonly WorkloadHeadline[]): string {
  const blocks = headlines
    .map((h) => {
      const sentences = h.advice?.recommendation ?? [h.topRecommendation];
      return `<h3>${escapeXml(`${h.workload} ${h.variant}`)}, n = ${h.run.n}</h3><ul>${sentences.map((s) => `<li>${escapeXml(s)}</li>`).join('')}</ul>`;
    })
    .join('\n');
  return `<section id="what-to-change">${blocks}</section>`;
}

function histogramChart(run: DemoRun): string {
  const total = run.histogram.reduce((sum, [, count]) => sum + count, 0) || 1;
  // Wide supports (escape reaches hundreds of iterations) are shown in at most 60 equal-width bins.
  const groups = histogramBins(
    run.histogram.map(([value, count]) => [value, count / total] as const),
    60,
  );
  return renderBarChart({
    title: `${run.workload} ${run.variant}: iteration counts`,
    xLabel: 'iterations per unit',
    yLabel: 'fraction of units',
    seriesNames: ['observed'],
    groups,
    widthPixels: 520,
    heightPixels: 240,
    maxXLabels: 16,
  });
}

function lossByGroupSizeChart(runs: readonly DemoRun[], workload: DemoRun['workload'], variant: string): string {
  const selected = runs.filter((r) => r.workload === workload && r.variant === variant).sort((a, b) => a.n - b.n);
  return renderLineChart({
    title: `${workload} ${variant}: predicted vs measured`,
    xLabel: 'group size n',
    yLabel: LOSS_AXIS_LABEL,
    yFloor: 1,
    xScale: 'log2',
    widthPixels: 520,
    heightPixels: 260,
    series: [
      // loss_counts and loss_measured often coincide: the measured line is solid with small dots,
      // the counts are hollow rings drawn on top (renderLineChart draws marker-only series last).
      { name: 'loss_locality', points: selected.flatMap((r) => (r.lossLocality === undefined ? [] : [[r.n, r.lossLocality.value] as const])), dashed: true },
      { name: 'independent lanes (reference)', points: selected.map((r) => [r.n, r.lossPredicted] as const), dashed: true },
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
    yLabel: LOSS_AXIS_LABEL,
    yFloor: 1,
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
    yLabel: LOSS_AXIS_LABEL,
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
      ['loss_locality vs loss_measured', etaLocalityMeasured],
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
 * It leads with the answer: per workload variant, the share of lane time its warps idle
 * (1 − 1/measured ΣC_SIMT/ΣC_MIMD) and advise's top recommendation; then the summary table (the
 * terminal summary's columns, summary-columns.ts, in its own scroll box), the charts, and a
 * "What to change" section with advise's full recommendation per workload variant.
 *
 * @param headlines computed from results.runs when omitted (pass them to reuse the advise work).
 * @throws RangeError when a chart has nothing to draw (empty results).
 * @example writeFileSync('report.html', renderDemoReport(results))
 */
export function renderDemoReport(results: DemoResults, headlines: readonly WorkloadHeadline[] = demoHeadlines(results.runs)): string {
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
<h2 id="answer">How much the warps idle</h2>
${headlineSection(headlines)}
<p class="note">CPU lockstep backend (below). Idle lane time = 1 − 1/(ΣC_SIMT/ΣC_MIMD): the share of the lane-time held by lockstep groups in which lanes
waited for the slowest lane of their group (docs/demo.md). The recommendation is warpwatch advise's best option on the run's
observed iteration counts, which assumes work is assigned to lanes at random (see "What to change").</p>
<p class="note">Created ${escapeXml(results.createdAt)} in ${(results.durationMillis / 1000).toFixed(1)} s on ${escapeXml(results.machine.cpu)}
(${results.machine.cores} cores, ${escapeXml(results.machine.os)}, Node ${escapeXml(results.machine.node)}); transport: ${results.transport};
${results.settings.launches} launch(es) per run of ${results.settings.matpowUnitsPerLaunch} matpow / ${results.settings.escapeUnitsPerLaunch} escape units each${results.settings.quick ? ' (quick mode)' : ''}, seed ${results.settings.seed}, job ${escapeXml(results.settings.job)}.</p>
<p class="note"><strong>These measurements come from the CPU lockstep backend</strong>: groups of n CPU lanes executing in lockstep,
timed with a steady clock. They show the lockstep loss on this CPU, not GPU numbers.</p>
<h2>Summary</h2>
<p>Every loss is a ratio ≥ 1 (1 = no idle lanes): loss_measured is the mean per-group H from clocks; loss_counts is the
mean per-group H from the actual counts; loss_locality is the locality-aware prediction from the sampled groups (each a
contiguous run of n neighbouring units, docs/model.md §11), with its 95% interval; "indep. lanes (ref.)" is loss_predicted,
the model's E[X_W(n)] on the observed distribution if work were assigned to lanes at random, a labelled reference with its
95% interval; workload_loss_meas is ΣC_SIMT/ΣC_MIMD from clocks, and idle lane time = 1 − 1/workload_loss_meas.
η is the relative error |(a−b)/a|.</p>
${resultsTable(runs)}
<h3>Agreement</h3>
${agreementList(runs)}
<p class="note" id="predictions-differ">${escapeXml(PREDICTIONS_DIFFER)}</p>
${runs.some((r) => r.workload === 'escape') ? `<p class="note" id="escape-bump">${escapeXml(ESCAPE_BUMP)}</p>` : ''}
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
<h2>What to change</h2>
<p class="note">warpwatch advise on each workload variant's observed iteration counts at its largest group size (docs/advise.md).</p>
${whatToChangeSection(headlines)}
${results.notes.length > 0 ? `<h2>Notes</h2><ul>${results.notes.map((n) => `<li>${escapeXml(n)}</li>`).join('')}</ul>` : ''}
</body></html>
`;
}
