import type { Advice } from '../../analysis/index.ts';
import { idleLaneShare } from '../../model/index.ts';
import { REPORT_STYLE } from './report-style.ts';
import { percentOrNa } from './summary-columns.ts';
import { escapeXml, histogramBins, LOSS_AXIS_LABEL, renderBarChart, renderLineChart } from './svg-chart.ts';

function fixed(value: number, digits = 4): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** Observed (loss_counts, ICC of sampled groups) beside the model's prediction at the current n. */
function observedTable(advice: Advice): string {
  const c = advice.current;
  const layout = advice.locality?.find((row) => row.n === advice.groupSize);
  const rows = [
    `<tr><td>model, independent lanes (if work were assigned at random)</td><td class="num">${fixed(c.expectedLoss)}</td><td class="num">${percentOrNa(idleLaneShare(c.workloadLoss), 1)}</td><td></td></tr>`,
    c.observedLossCounts === null ? '' : `<tr><td>observed loss_counts (mean H of the measured groups' counts)</td><td class="num">${fixed(c.observedLossCounts)}</td><td></td><td></td></tr>`,
    layout === undefined ? '' : `<tr><td>layout loss, locality-aware (docs/model.md §11)</td><td class="num">${fixed(layout.expectedLoss)}</td><td></td><td>95% interval ${fixed(layout.low)}–${fixed(layout.high)}</td></tr>`,
    `<tr><td>ICC(counts) of sampled groups (≈ 0: independent lanes)</td><td class="num">${c.observedCountIcc === null ? '–' : c.observedCountIcc.toFixed(3)}</td><td></td><td></td></tr>`,
  ].join('');
  return `<div class="table-scroll"><table id="observed"><thead><tr><th>at n = ${advice.groupSize}</th><th class="num">loss ×</th><th class="num">idle lane time</th><th>detail</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

/** The locality-aware loss of the kernel's layout per group size, beside the independent-lanes figure. */
function localityTable(advice: Advice): string {
  if (advice.locality === null) return '';
  const rows = advice.locality
    .map(
      (row) =>
        `<tr><td>${row.n}${row.n === advice.groupSize ? ' ← now' : ''}</td><td class="num">${fixed(row.expectedLoss)}</td><td class="num">${fixed(row.low)}–${fixed(row.high)}</td><td class="num">${fixed(row.independentLoss)}</td><td class="num">${fixed(row.sortedLoss)}</td></tr>`,
    )
    .join('');
  return (
    `<h2>Layout (locality-aware) loss</h2><p class="note">The sampled groups as contiguous runs of the kernel's own layout (docs/model.md §11).</p>` +
    `<div class="table-scroll"><table id="locality"><thead><tr><th>n</th><th class="num">layout loss</th><th class="num">95% interval</th><th class="num">if random, these units</th><th class="num">sorted, these units</th></tr></thead><tbody>${rows}</tbody></table></div>`
  );
}

/** Sorting and binning on the runs' units (docs/model.md §11b), when the source had runs or a trace. */
function onRunsTable(advice: Advice): string {
  const o = advice.onRuns;
  if (o === null) return '';
  const row = (policy: string, estimated: string, interval: string, exact: string): string =>
    `<tr><td>${policy}</td><td class="num">${estimated}</td><td class="num">${interval}</td><td class="num">${exact}</td></tr>`;
  return (
    `<h2>What-ifs on the observed units at n = ${advice.groupSize}</h2><p class="note">On ${o.units} units of ${o.runs} run${o.runs === 1 ? '' : 's'}, within each launch (docs/model.md §11b): ` +
    `ordered by a coarse pre-pass estimate (one unit in ${o.stride} computed, the rest interpolated) and by their exact work, then cut into groups of ${advice.groupSize}.` +
    `${o.layoutLoss === null ? '' : ` The layout loses ${fixed(o.layoutLoss)} now.`}</p>` +
    `<div class="table-scroll"><table id="on-runs"><thead><tr><th>policy</th><th class="num">by pre-pass estimate</th><th class="num">95% interval</th><th class="num">by exact work</th></tr></thead><tbody>` +
    row('sorted', fixed(o.sorting.estimated), `${fixed(o.sorting.low)}–${fixed(o.sorting.high)}`, fixed(o.sorting.exact)) +
    o.binning.map((b) => row(`binned, k = ${b.k}`, fixed(b.estimated), `${fixed(b.low)}–${fixed(b.high)}`, fixed(b.exact))).join('') +
    `</tbody></table></div>`
  );
}

function distributionChart(advice: Advice): string {
  return renderBarChart({
    title: 'Iteration-count distribution',
    xLabel: 'iterations per unit',
    yLabel: 'probability',
    seriesNames: ['observed'],
    groups: histogramBins(advice.distribution.pmf, 60),
    widthPixels: 620,
    heightPixels: 260,
    maxXLabels: 16,
  });
}

function granularityChart(advice: Advice): string {
  return renderLineChart({
    title: 'Predicted loss per group size',
    xLabel: 'group size n (lanes in lockstep)',
    yLabel: LOSS_AXIS_LABEL,
    yFloor: 1,
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
    yLabel: LOSS_AXIS_LABEL,
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
 * scripts, no network), in the style of the demo report: the recommendation, the observed
 * loss_counts and ICC(counts) beside the model's figure (and the locality-aware layout loss per
 * group size when the source had sampled groups), the charts, load balancing and the fits.
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
<h2>Observed beside the model</h2>
${observedTable(advice)}
${localityTable(advice)}
${onRunsTable(advice)}
<div class="grid"><figure>${distributionChart(advice)}</figure><figure>${granularityChart(advice)}</figure><figure>${policyChart(advice)}</figure></div>
<h2>Load balancing at n = ${advice.groupSize}${advice.onRuns === null ? '' : ', if work were assigned at random (docs/model.md §2d)'}</h2>
<div class="table-scroll"><table><thead><tr><th>policy</th><th>detail</th><th>expected loss</th><th>workload loss</th></tr></thead><tbody>
<tr><td>${advice.onRuns === null ? 'as now' : 'random assignment'}</td><td>random grouping</td><td>${fixed(advice.current.expectedLoss)}</td><td>${fixed(advice.current.workloadLoss)}</td></tr>
<tr><td>sorted by work</td><td>${advice.sorting.mixedGroups} of ${advice.sorting.groups} groups mix values</td><td>${fixed(advice.sorting.expectedLoss)}</td><td>${fixed(advice.sorting.workloadLoss)}</td></tr>
${binRows}</tbody></table></div>
<h2>Parametric fits</h2>
<div class="table-scroll"><table><thead><tr><th>family</th><th>fit</th><th>log-likelihood</th><th>AIC</th></tr></thead><tbody>${fits}</tbody></table></div>
</body></html>
`;
}
