import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  DIVERGENCE_ARCHITECTURES,
  divergenceArchitecture,
  divergenceObservationOf,
  divergencePatternBounds,
  fitDivergenceCost,
  predictDivergenceCycles,
  type LoopSpec,
} from '../../model/index.ts';
import { clockUnitOfCsv, parseDivergenceCsv } from '../divergence-csv.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { formatQuantity, parseIntegerListOption, parseNumberOption } from './numeric-options.ts';

interface StackFlags {
  physicalEntries?: string;
  spillChunk?: string;
}

function stackOptions(flags: StackFlags): { physicalEntries: number; spillChunkEntries: number } {
  const physicalEntries = flags.physicalEntries === undefined ? 16 : parseNumberOption('--physical-entries', flags.physicalEntries, { min: 1, max: 1 << 20, integer: true });
  const spillChunkEntries = flags.spillChunk === undefined ? 4 : parseNumberOption('--spill-chunk', flags.spillChunk, { min: 1, max: physicalEntries, integer: true });
  return { physicalEntries, spillChunkEntries };
}

/** The flags of `warpwatch divergence fit` that apply in some combinations only (an error elsewhere). */
export const DIVERGENCE_FIT_FLAG_RULES: readonly FlagRule<{ readonly json: boolean }>[] = [
  { flag: '--residuals', applies: (c) => !c.json, only: 'the text output', instead: () => '--json always lists every residual' },
];

/** The flags of `warpwatch divergence predict` that apply in some combinations only. */
export const DIVERGENCE_PREDICT_FLAG_RULES: readonly FlagRule<{ readonly loop: string; readonly delta: boolean; readonly spill: boolean }>[] = [
  { flag: '--inner-bounds', applies: (c) => c.loop === 'nested', only: '--loop nested', instead: (c) => `the loop is ${c.loop}` },
  { flag: '--arch', applies: (c) => !(c.delta && c.spill), only: 'costs not given by both --delta and --spill', instead: () => 'both are given: the preset would set nothing' },
];

function runFit(file: string, flags: StackFlags & { json?: boolean; intercept?: boolean; residuals?: boolean }): void {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read divergence CSV '${file}': ${(error as Error).message}`);
  }
  const options = stackOptions(flags);
  const measurements = parseDivergenceCsv(text);
  const unit = clockUnitOfCsv(text);
  const observations = measurements.map((m) => divergenceObservationOf(m, options));
  const fit = fitDivergenceCost(observations, { intercept: flags.intercept === true });
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ file, clockUnit: unit, ...fit }, null, 2)}\n`);
    return;
  }
  const se = (name: string): string => (fit.standardErrors?.[name] === undefined ? '' : ` ± ${formatQuantity(fit.standardErrors[name])}`);
  const lines = [
    `divergence fit of ${file}: ${fit.observations} measurements, clock in ${unit}${unit === 'ns' ? ' (CPU backend: CPU SIMD lanes, not a GPU)' : ''}`,
    `  T (${unit} per issued iteration) = ${formatQuantity(fit.iterationCycles)}${se('iterationCycles')}`,
    `  δ (${unit} per diverging exit)   = ${formatQuantity(fit.deltaCycles)}${se('deltaCycles')}`,
    `  spill+reload (${unit} per chunk) = ${fit.spillCycles === undefined ? 'not identifiable (no measurement spilled)' : formatQuantity(fit.spillCycles) + se('spillCycles')}`,
  ];
  if (flags.intercept === true) lines.push(`  overhead (${unit} per loop nest) = ${formatQuantity(fit.overheadCycles)}${se('overheadCycles')}`);
  lines.push(`  R² = ${fit.rSquared.toFixed(6)}, RMSE = ${formatQuantity(fit.rmseCycles)} ${unit}`);
  if (flags.residuals === true) {
    lines.push(`  residuals (measured − fitted, ${unit}):`);
    for (const r of fit.residuals) lines.push(`    ${r.label.padEnd(16)} ${formatQuantity(r.measuredCycles).padStart(12)} ${formatQuantity(r.residualCycles).padStart(10)}`);
  } else if (fit.residuals.length > 0) {
    const worst = fit.residuals.reduce((a, b) => (Math.abs(b.residualCycles) > Math.abs(a.residualCycles) ? b : a));
    lines.push(`  residuals: ${fit.residuals.length}, largest ${formatQuantity(worst.residualCycles)} ${unit} (${worst.label}); --residuals lists them`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

interface PredictFlags extends StackFlags {
  bounds?: string;
  k?: string;
  loop?: string;
  innerBounds?: string;
  arch: string;
  delta?: string;
  spill?: string;
  iterationCycles?: string;
  json?: boolean;
}

function runPredict(flags: PredictFlags): void {
  if ((flags.bounds === undefined) === (flags.k === undefined)) throw new UsageError('divergence predict needs exactly one of --bounds LIST or --k K');
  const loop = flags.loop ?? 'single';
  if (loop !== 'single' && loop !== 'nested') throw new UsageError(`--loop must be single or nested, got '${loop}'`);
  const bounds =
    flags.bounds !== undefined ? parseIntegerListOption('--bounds', flags.bounds) : divergencePatternBounds(parseNumberOption('--k', flags.k as string, { min: 0, max: 31, integer: true }));
  const inner = flags.innerBounds === undefined ? bounds : parseIntegerListOption('--inner-bounds', flags.innerBounds);
  if (inner.length !== bounds.length) throw new UsageError(`--inner-bounds must list ${bounds.length} lanes like --bounds, got ${inner.length}`);
  const arch = divergenceArchitecture(flags.arch);
  const parameters = {
    deltaCycles: flags.delta === undefined ? arch.deltaCycles : parseNumberOption('--delta', flags.delta, { min: 0 }),
    spillCycles: flags.spill === undefined ? arch.spillCycles : parseNumberOption('--spill', flags.spill, { min: 0 }),
    iterationCycles: flags.iterationCycles === undefined ? undefined : parseNumberOption('--iteration-cycles', flags.iterationCycles, { min: 0 }),
  };
  const spec: LoopSpec = loop === 'nested' ? { bounds, body: [{ bounds: inner }] } : { bounds };
  const prediction = predictDivergenceCycles(spec, parameters, stackOptions(flags));
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ architecture: arch.name, loop, lanes: bounds.length, parameters, ...prediction }, null, 2)}\n`);
    return;
  }
  const t = prediction.trace;
  process.stdout.write(
    [
      `divergence prediction (${arch.name}: δ=${formatQuantity(parameters.deltaCycles)}, spill=${formatQuantity(parameters.spillCycles)} cycles; ${loop} loop, ${bounds.length} lanes)`,
      `  stack: ${t.pushes} pushes, ${t.pops} pops, max depth ${t.maxDepth}, ${t.spills} spills, ${t.reloads} reloads`,
      `  diverging exits ${t.divergingExits}, issued iterations ${t.issuedIterations}`,
      `  divergence cycles ${formatQuantity(prediction.divergenceCycles)} + spill cycles ${formatQuantity(prediction.spillCycles)}` +
        (prediction.totalCycles === undefined ? ' (give --iteration-cycles T for the total)' : ` + base ${formatQuantity(prediction.baseCycles)} = ${formatQuantity(prediction.totalCycles)} cycles`),
    ].join('\n') + '\n',
  );
}

/**
 * Registers `warpwatch divergence fit|predict` (docs/model.md §4).
 *
 * @example registerDivergenceCommand(program)
 */
export function registerDivergenceCommand(program: Command): void {
  const divergence = program
    .command('divergence')
    .description('Divergence-management cost: reconvergence-stack emulation, cycle prediction and least-squares fit (docs/model.md §4).');
  divergence
    .command('fit')
    .description('Fit T, δ and the spill cost from a divergence micro-benchmark CSV (columns pattern,loop,k,bounds,cycles; see docs/related-models.md).')
    .argument('<file>', 'CSV written by the kernels divergence workload')
    .option('--intercept', 'also fit a constant overhead per measurement')
    .option('--physical-entries <n>', 'on-chip stack entries before spilling (default 16)')
    .option('--spill-chunk <n>', 'entries per spill/reload (default 4)')
    .option('--residuals', 'list every measurement with its residual (text output; --json always has them)')
    .option('--json', 'print JSON (with every residual and the clock unit)')
    .action((file: string, flags: StackFlags & { json?: boolean; intercept?: boolean; residuals?: boolean }, command: Command) => {
      rejectFlagsThatDoNotApply(command, { json: flags.json === true }, DIVERGENCE_FIT_FLAG_RULES);
      runFit(file, flags);
    });
  divergence
    .command('predict')
    .description('Emulate the reconvergence stack for per-lane loop bounds and predict the extra cycles.')
    .option('--bounds <list>', 'lane trip counts, e.g. 32,32,31,30')
    .option('--k <k>', 'use the micro-benchmark pattern (32,…,32,31,…,32−k)')
    .option('--loop <kind>', 'single or nested (inner loop with --inner-bounds, default the same bounds)', 'single')
    .option('--inner-bounds <list>', 'inner-loop trip counts; with --loop nested only')
    .option('--arch <name>', `parameter preset: ${Object.keys(DIVERGENCE_ARCHITECTURES).join('|')} (an error when --delta and --spill both override it)`, 'generic')
    .option('--delta <cycles>', 'override δ, cycles per diverging exit')
    .option('--spill <cycles>', 'override the spill+reload cost per chunk')
    .option('--iteration-cycles <cycles>', 'T, cycles per issued iteration (for a total)')
    .option('--physical-entries <n>', 'on-chip stack entries before spilling (default 16)')
    .option('--spill-chunk <n>', 'entries per spill/reload (default 4)')
    .option('--json', 'print JSON')
    .action((flags: PredictFlags, command: Command) => {
      rejectFlagsThatDoNotApply(command, { loop: flags.loop ?? 'single', delta: flags.delta !== undefined, spill: flags.spill !== undefined }, DIVERGENCE_PREDICT_FLAG_RULES);
      runPredict(flags);
    });
}
