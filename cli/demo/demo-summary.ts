import { agreementOf } from '../report/agreement.ts';
import { alignColumns } from '../report/align-columns.ts';
import type { DemoResults, DemoRun } from '../report/demo-results.ts';
import { demoHeadlines, ESCAPE_BUMP, etaLocalityMeasured, fixedOrNa, percentOrNa, PREDICTIONS_DIFFER, SUMMARY_COLUMNS, type WorkloadHeadline } from '../report/summary-columns.ts';

/**
 * The demo's terminal summary: headlines first (idle lane time and what to change), one aligned
 * row per workload run (docs/model.md §2c quantities), then agreement statistics (median and largest η per pair of quantities).
 */

const fixed = fixedOrNa;
const percent = (value: number): string => percentOrNa(value);

/**
 * Formats the summary: first one headline per workload variant (how much of the lane time its
 * warps idle, and advise's top recommendation), then the table (columns shared with the HTML
 * report, cli/report/summary-columns.ts), then the agreement lines.
 *
 * @param headlines the headlines (computed from results.runs when omitted; pass them to reuse
 *   the advise work done for the HTML report).
 * @example process.stdout.write(formatDemoSummary(results).join('\n') + '\n');
 */
export function formatDemoSummary(results: DemoResults, headlines: readonly WorkloadHeadline[] = demoHeadlines(results.runs)): string[] {
  const columns = SUMMARY_COLUMNS.filter((c) => !c.htmlOnly);
  const header = columns.map((c) => c.header);
  const rows = results.runs.map((r) => columns.map((c) => c.cell(r)));
  const headlineLines = headlines.flatMap((h) => [h.text, `  what to change: ${h.topRecommendation}`]);
  // The escape independent-lanes bump (docs/demo.md "What to expect").
  const bump = results.runs.some((r) => r.workload === 'escape') ? [ESCAPE_BUMP] : [];
  const lines = [...headlineLines, '', ...alignColumns([header, ...rows], columns.filter((c) => c.text).length), '', PREDICTIONS_DIFFER, ...bump];
  const describe = (label: string, eta: (run: DemoRun) => number, runs: readonly DemoRun[]): string => {
    const a = agreementOf(runs, eta);
    const where = a.worst === undefined ? '' : ` (${a.worst.workload} ${a.worst.variant} n=${a.worst.n})`;
    return `  ${label}: median ${percent(a.median)}, max ${percent(a.max)}${where}`;
  };
  const matpow = results.runs.filter((r) => r.workload === 'matpow');
  lines.push('', 'agreement (relative error η = |(a−b)/a|):');
  if (matpow.length > 0) {
    lines.push(describe('matpow   loss_predicted vs loss_counts  ', (r) => r.etaPredictedCounts, matpow));
    lines.push(describe('matpow   loss_counts vs loss_measured   ', (r) => r.etaCountsMeasured, matpow));
  }
  const escape = results.runs.filter((r) => r.workload === 'escape');
  if (escape.length > 0) {
    if (escape.some((r) => r.lossLocality !== undefined)) lines.push(describe('escape   loss_locality vs loss_measured ', etaLocalityMeasured, escape));
    lines.push(describe('escape   loss_counts vs loss_measured   ', (r) => r.etaCountsMeasured, escape));
    lines.push(describe('escape   loss_predicted vs loss_counts  ', (r) => r.etaPredictedCounts, escape));
    lines.push('  (escape lanes are neighbouring pixels, not independent draws: the independent-lanes loss_predicted is a reference there, not the prediction.)');
    const iccs = escape.map((r) => r.sampled?.countIcc).filter((v): v is number => v !== undefined);
    const matpowIccs = matpow.map((r) => r.sampled?.countIcc).filter((v): v is number => v !== undefined);
    if (iccs.length > 0 && matpowIccs.length > 0) {
      const range = (values: readonly number[]): string => `${fixed(Math.min(...values), 3)}..${fixed(Math.max(...values), 3)}`;
      lines.push(`  ICC(counts) of sampled groups, the correlation of iteration counts within a group: escape ${range(iccs)}, matpow ${range(matpowIccs)} (independent lanes: ≈ 0).`);
    }
    for (const n of [...new Set(escape.map((r) => r.n))]) {
      const plain = escape.find((r) => r.variant === 'plain' && r.n === n);
      const sorted = escape.find((r) => r.variant === 'sorted' && r.n === n);
      if (plain !== undefined && sorted !== undefined) {
        lines.push(`  escape n=${n}: sorting changes measured loss ${fixed(plain.lossMeasured, 3)} → ${fixed(sorted.lossMeasured, 3)}, workload loss ${fixed(plain.workloadLossMeasured, 3)} → ${fixed(sorted.workloadLossMeasured, 3)}`);
      }
    }
  }
  return lines;
}
