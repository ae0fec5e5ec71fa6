import { alignColumns } from '../report/align-columns.ts';
import type { Advice } from '../../analysis/index.ts';

function fixed(value: number, digits = 4): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/**
 * The human output of `warpwatch advise`: the distribution, the granularity table, sorting
 * and binning at the current group size, the best fits, and the recommendation.
 *
 * @example process.stdout.write(formatAdviceText(advice).join('\n') + '\n');
 */
export function formatAdviceText(advice: Advice): string[] {
  const d = advice.distribution;
  const lines: string[] = [
    `source:       ${advice.source}`,
    `distribution: ${d.description}; variance ${Number(d.variance.toPrecision(6))}${d.totalWeight > 1 ? `; ${d.totalWeight} units observed` : ''}`,
    `group size now: n = ${advice.groupSize}; units per launch: ${advice.unitsPerLaunch}`,
    '',
    `granularity (docs/model.md §2d): predicted loss per group size${advice.locality === null ? '' : ', if work were assigned to lanes at random (independent lanes)'}`,
  ];
  const marks = (n: number): string => (n === advice.groupSize ? '  ← now' : '');
  lines.push(
    ...alignColumns(
      [
        ['n', 'expected loss E[X]', 'workload loss E[max]/E[W]', ''],
        ...advice.granularity.map((row) => [String(row.n), fixed(row.expectedLoss), fixed(row.workloadLoss), marks(row.n)]),
      ],
      0,
    ),
  );
  if (advice.locality !== null) {
    lines.push('', "locality-aware loss of the kernel's own layout (docs/model.md §11; the sampled groups as contiguous runs):");
    lines.push(
      ...alignColumns(
        [
          ['n', 'layout loss', '95% interval', 'if random, these units (§2)', ''],
          ...advice.locality.map((row) => [String(row.n), fixed(row.expectedLoss), `${fixed(row.low)}–${fixed(row.high)}`, fixed(row.independentLoss), marks(row.n)]),
        ],
        0,
      ),
    );
  }
  if (advice.blockLevel) {
    const b = advice.blockLevel;
    lines.push(
      '',
      `two levels from ${b.blocks} sampled blocks (docs/model.md §11a; a block holds its SM resources until its slowest warp ends):`,
      ...alignColumns(
        [
          ['level', 'loss', ''],
          [`lanes in warps (n = ${advice.groupSize})`, fixed(b.warpLoss), 'lane time held by warps / lane work'],
          [`warps in blocks (${Number.isInteger(b.warpsPerBlock) ? b.warpsPerBlock : fixed(b.warpsPerBlock, 1)} warps per block)`, fixed(b.warpInBlockLoss), 'block time / mean warp time'],
          ['block level (product)', fixed(b.blockLoss), `95% interval ${fixed(b.low)}–${fixed(b.high)}`],
        ],
        0,
      ),
    );
  }
  lines.push('', `load balancing at n = ${advice.groupSize}:`);
  const o = advice.onRuns;
  const randomRow = [
    o === null ? 'as now (random grouping)' : 'if work were assigned at random',
    fixed(advice.current.expectedLoss),
    fixed(advice.current.workloadLoss),
    [
      advice.current.observedLossCounts === null ? '' : `observed loss_counts ${fixed(advice.current.observedLossCounts)}`,
      advice.current.observedCountIcc === null ? '' : `ICC(counts) ${advice.current.observedCountIcc.toFixed(2)}`,
    ]
      .filter((part) => part !== '')
      .join(', '),
  ];
  const policyRows: string[][] =
    o === null
      ? [
          ['policy', 'expected loss', 'workload loss', 'detail'],
          randomRow,
          ['sorted by work', fixed(advice.sorting.expectedLoss), fixed(advice.sorting.workloadLoss), `${advice.sorting.mixedGroups} of ${advice.sorting.groups} groups mix values`],
          ...advice.binning.map((b) => [
            b.bins.length === b.k ? `binned, k = ${b.k}` : `binned, k = ${b.k} (${b.bins.length} bins formed)`,
            fixed(b.expectedLoss),
            fixed(b.workloadLoss),
            b.bins.map((bin) => `[${bin.low}..${bin.high}] ${(100 * bin.probability).toFixed(0)}%`).join(' '),
          ]),
        ]
      : [
          ['policy', 'expected loss', 'workload loss', `detail (on ${o.units} units of ${o.runs} run${o.runs === 1 ? '' : 's'}, docs/model.md §11b)`],
          ...(o.layoutLoss === null ? [] : [['as now (this layout)', fixed(o.layoutLoss), '', 'locality-aware']]),
          randomRow,
          ['sorted by pre-pass estimate', fixed(o.sorting.estimated), fixed(o.sorting.workloadLoss), `95% interval ${fixed(o.sorting.low)}–${fixed(o.sorting.high)}; one unit in ${o.stride} computed`],
          ['sorted by exact work', fixed(o.sorting.exact), '', 'the ideal estimate'],
          ...o.binning.map((b) => [`binned, k = ${b.k}, by pre-pass estimate`, fixed(b.estimated), fixed(b.workloadLoss), `95% interval ${fixed(b.low)}–${fixed(b.high)}; by exact work ${fixed(b.exact)}`]),
        ];
  lines.push(...alignColumns(policyRows, 1).map((line) => `  ${line}`));
  if (advice.fits.length > 0) {
    lines.push('', 'parametric fits (best first):');
    lines.push(
      ...alignColumns(
        [['family', 'fit', 'log-likelihood', 'AIC'], ...advice.fits.slice(0, 5).map((f) => [f.family, f.spec, f.logLikelihood.toFixed(1), f.aic.toFixed(1)])],
        2,
      ).map((line) => `  ${line}`),
    );
  }
  lines.push('', 'recommendation:', ...advice.recommendation.map((sentence) => `  - ${sentence}`));
  return lines;
}
