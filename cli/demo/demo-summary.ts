import { agreementOf } from '../report/agreement.ts';
import type { DemoResults, DemoRun } from '../report/demo-results.ts';

/**
 * The demo's terminal summary: one aligned row per workload run (docs/model.md §2c quantities),
 * then agreement statistics (median and largest η per pair of quantities).
 */

function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

function percent(value: number): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(2)}%` : 'n/a';
}

/**
 * Lays out rows as aligned columns: the first `leftColumns` columns left-aligned, the rest
 * right-aligned (numbers), two spaces between columns.
 *
 * @example alignColumns([['a', '1'], ['bb', '10']], 1) // ['a    1', 'bb  10']
 */
export function alignColumns(rows: readonly (readonly string[])[], leftColumns: number): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat((widths[i] ?? 0) - [...cell].length);
        return i < leftColumns ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd(),
  );
}

/**
 * Formats the summary table and the agreement lines.
 *
 * @example process.stdout.write(formatDemoSummary(results).join('\n') + '\n');
 */
export function formatDemoSummary(results: DemoResults): string[] {
  const header = [
    'workload',
    'variant',
    'n',
    'groups',
    'loss_predicted',
    'loss_counts',
    'loss_measured',
    'η(pred,counts)',
    'η(counts,meas)',
    'η(pred,meas)',
    'workload_loss_pred',
    'workload_loss_meas',
    'ICC(counts)',
  ];
  const rows = results.runs.map((r) => [
    r.workload,
    r.variant,
    String(r.n),
    String(r.groups),
    fixed(r.lossPredicted, 4),
    fixed(r.lossCounts, 4),
    fixed(r.lossMeasured, 4),
    percent(r.etaPredictedCounts),
    percent(r.etaCountsMeasured),
    percent(r.etaPredictedMeasured),
    fixed(r.workloadLossPredicted, 4),
    fixed(r.workloadLossMeasured, 4),
    r.sampled?.countIcc === undefined ? '–' : fixed(r.sampled.countIcc, 3),
  ]);
  const lines = alignColumns([header, ...rows], 2);
  const describe = (label: string, eta: (run: DemoRun) => number, runs: readonly DemoRun[]): string => {
    const a = agreementOf(runs, eta);
    const where = a.worst === undefined ? '' : ` (${a.worst.workload} ${a.worst.variant} n=${a.worst.n})`;
    return `  ${label}: median ${percent(a.median)}, max ${percent(a.max)}${where}`;
  };
  const matpow = results.runs.filter((r) => r.workload === 'matpow');
  lines.push('', 'agreement (η = |(a−b)/a|):');
  if (matpow.length > 0) {
    lines.push(describe('matpow   loss_predicted vs loss_counts  ', (r) => r.etaPredictedCounts, matpow));
    lines.push(describe('matpow   loss_counts vs loss_measured   ', (r) => r.etaCountsMeasured, matpow));
  }
  const escape = results.runs.filter((r) => r.workload === 'escape');
  if (escape.length > 0) {
    lines.push(describe('escape   loss_predicted vs loss_counts  ', (r) => r.etaPredictedCounts, escape));
    lines.push(describe('escape   loss_counts vs loss_measured   ', (r) => r.etaCountsMeasured, escape));
    lines.push('  (escape lanes are neighbouring pixels, not independent draws: a loss_predicted vs loss_counts gap is expected there.)');
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
