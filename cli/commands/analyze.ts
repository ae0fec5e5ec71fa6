import type { Command } from 'commander';
import { analyzeFrames, DIVERGENCE_OFF_NOTE, divergenceSettingsOf, observedDistributionOf, type DivergenceSettings, type StreamAnalysis } from '../../analysis/index.ts';
import { parseStreamName } from '../../contracts/index.ts';
import { writeCountsFile } from '../counts-file.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, frameFileJson, readFrameFile, type FrameFileRead } from '../frame-file.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { formatQuantity, parseNumberOption } from './numeric-options.ts';

const NOT_MEASURED = 'not measured';

function formatAnalysis(a: StreamAnalysis): string {
  const pct = (x: number | undefined): string => (x === undefined ? NOT_MEASURED : `${(100 * x).toFixed(2)}%`);
  const fixed4 = (x: number | undefined): string => (x === undefined ? `${NOT_MEASURED} (no clocks: counts-only frames)` : x.toFixed(4));
  // A simulator (Numba's CUDA simulator names itself so) runs lanes one by one on the CPU: not the lockstep backend.
  const cpuNote =
    a.source !== 'cpu'
      ? ''
      : /simulator/i.test(a.device)
        ? `  (a GPU simulator on the CPU: counts only, neither a GPU nor a lockstep measurement)`
        : '  (CPU lockstep backend: CPU SIMD lanes, not a GPU measurement)';
  return [
    `${a.stream}  source=${a.source} n=${a.n} device=${a.device}${cpuNote}`,
    `  launches ${a.launches}, groups ${a.groups}, mean count ${a.meanCount.toFixed(3)}, sampled groups ${a.sampledGroups}${a.droppedSamples ? ` (+${a.droppedSamples} dropped)` : ''}${a.countIcc === null ? '' : `, ICC(counts) ${a.countIcc.toFixed(3)}`}`,
    `  lossPredicted ${a.lossPredicted.toFixed(4)}   lossCounts ${a.lossCounts.toFixed(4)}   lossMeasured ${fixed4(a.lossMeasured)}`,
    `  workloadLoss predicted ${a.workloadLossPredicted.toFixed(4)}   counts ${a.workloadLossCounts.toFixed(4)}   measured ${fixed4(a.workloadLossMeasured)}`,
    `  η(predicted, counts) ${pct(a.etaPredictedCounts)}   η(counts, measured) ${pct(a.etaCountsMeasured)}   η(predicted, measured) ${pct(a.etaPredictedMeasured)}`,
    ...formatDivergence(a),
  ].join('\n');
}

function formatDivergence(a: StreamAnalysis): string[] {
  const d = a.divergence;
  if (d === null && a.divergenceNote === DIVERGENCE_OFF_NOTE) return []; // not asked for
  const note = a.divergenceNote === null ? [] : [`  note: ${a.divergenceNote}`];
  if (d === null) return [`  divergence-extended prediction: none`, ...note];
  const q = formatQuantity;
  const unit = d.clockHz === 1e9 ? 'ns' : `ticks of ${q(d.clockHz)} Hz`;
  const se = (name: string): string => (d.fit?.standardErrors?.[name] === undefined ? '' : ` ± ${q(d.fit.standardErrors[name])}`);
  const costs =
    d.fit === undefined
      ? `${d.architecture === undefined ? 'given' : `preset ${d.architecture}:`} δ ${q(d.deltaCycles)}, spill ${q(d.spillCycles)} per chunk; T ${q(d.iterationCycles)} and a constant ${q(d.overheadCycles)} per group fitted from the clocks`
      : [
          `T ${q(d.fit.rawIterationCycles)}${se('iterationCycles')}`,
          `δ ${q(d.fit.rawDeltaCycles)}${se('deltaCycles')}`,
          d.fit.rawSpillCycles === undefined ? 'spill not identifiable (no sampled group spilled)' : `spill ${q(d.fit.rawSpillCycles)}${se('spillCycles')} per chunk`,
          `constant ${q(d.fit.rawOverheadCycles)}${se('overheadCycles')} per group`,
          `R² ${d.fit.rSquared.toFixed(3)}`,
        ].join(', ') + (d.fit.clampedToZero.length === 0 ? '' : `; negative ${d.fit.clampedToZero.join(', ')} fixed at 0, then T ${q(d.iterationCycles)}`);
  const termError =
    d.fit === undefined
      ? ''
      : d.fit.clampedToZero.length > 0
        ? ` (unconstrained fit: ${d.fit.rawDivergenceTerm.toFixed(4)}${d.divergenceTermStandardError === undefined ? '' : ` ± ${d.divergenceTermStandardError.toFixed(4)}`})`
        : d.divergenceTermStandardError === undefined
          ? ''
          : ` ± ${d.divergenceTermStandardError.toFixed(4)}`;
  const fraction = d.gapExplainedFraction === null ? 'n/a (no gap)' : `${(100 * d.gapExplainedFraction).toFixed(1)}%`;
  const fractionError =
    d.divergenceTermStandardError === undefined || d.measuredGap === 0 ? '' : ` ± ${((100 * d.divergenceTermStandardError) / Math.abs(d.measuredGap)).toFixed(1)}%`;
  const gap = `the sampled gap measured − counts = ${d.measuredGap.toFixed(4)} (${d.lossMeasured.toFixed(4)} − ${d.lossCounts.toFixed(4)})`;
  // A δ within 2 standard errors of 0 is not identifiable: its share of the gap would be a
  // ratio of noise (e.g. "explains −1023 % ± 3814 %"), so none is claimed.
  const identifiable = d.fit === undefined || d.fit.deltaSignificant;
  const lines = [
    `  divergence (${d.mode === 'fit' ? 'fitted' : 'fixed costs'} on ${d.groups} sampled groups, ${unit}): ${costs}`,
    identifiable
      ? `  lossExtended ${(a.lossExtended ?? Number.NaN).toFixed(4)} = lossCounts + divergence term ${d.divergenceTerm.toFixed(4)}${termError}; explains ${fraction}${fractionError} of ${gap}`
      : `  divergence term not identifiable on these data (δ within 2 standard errors of 0): no share of ${gap} is attributed to it`,
  ];
  if (identifiable && d.fit !== undefined && !d.fit.deltaSignificant) lines.push('  δ is not significantly different from 0 (|δ| < 2 standard errors): on these data the divergence term is noise');
  else if (d.fit !== undefined && d.fit.rawDeltaCycles < 0) lines.push('  δ is significantly negative: a diverging exit shortens the group here, which the divergence model does not describe');
  return [...lines, ...note];
}

/** ` (N damaged stretch(es), B byte(s) skipped)` after the frame count of a damaged file; empty otherwise. */
function damageNote(read: FrameFileRead): string {
  return read.damaged.length === 0 ? '' : ` (${read.damaged.length} damaged stretch(es), ${read.damagedBytes} byte(s) skipped)`;
}

/** The flags of `warpwatch analyze` that apply in some combinations only (an error elsewhere). */
export const ANALYZE_FLAG_RULES: readonly FlagRule<{ readonly delta: boolean; readonly spill: boolean }>[] = [
  { flag: '--divergence-arch', applies: (c) => !(c.delta && c.spill), only: 'costs not given by both --delta and --spill', instead: () => 'both are given: the preset would set nothing' },
];

/**
 * Registers `warpwatch analyze FILE [--json]`: decodes a frame file and prints, per stream, the
 * model's loss on the observed counts next to the counts-based and measured loss.
 *
 * @example warpwatch analyze frames.bin --json
 */
export function registerAnalyzeCommand(program: Command): void {
  program
    .command('analyze')
    .description('Decode a frame file and compare predicted, counts-based and measured loss per stream')
    .argument('<file>', 'frame file written by `warpwatch run` or a recorder')
    .option('--json', 'print { "streams": [ ... ] } as JSON')
    .option('--divergence <mode>', 'divergence-extended prediction: fit (costs fitted from the GroupSamples clocks) or off (default)')
    .option('--divergence-arch <name>', 'fixed divergence costs from a preset: kepler, maxwell or generic (T still fitted from the clocks; an error when --delta and --spill both give them)')
    .option('--delta <ticks>', 'fixed δ, clock ticks per diverging exit (overrides the preset)')
    .option('--spill <ticks>', 'fixed spill+reload cost, clock ticks per chunk (overrides the preset)')
    .option('--stream <id>', 'analyse only this stream (job/kernel, split at the first /)')
    .option('--export-counts <file>', 'also write the observed count distribution of the (one) analysed stream as a --counts CSV (value,count)')
    .option(ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP)
    .addHelpText(
      'after',
      '\nA damaged frame file is read like the collector reads a stream: each damaged stretch is skipped up to the next valid frame\n' +
        'and said on stderr with its offset and exact length (and under "input" in --json); the exit code is then 1\n' +
        '(WW_ERR_FRAME_FILE_DAMAGED) unless --accept-damage is given. A cut-off last frame is a warning only.',
    )
    .action((file: string, flags: { json?: boolean; divergence?: string; divergenceArch?: string; delta?: string; spill?: string; stream?: string; exportCounts?: string; acceptDamage?: boolean }, command: Command) => {
      rejectFlagsThatDoNotApply(command, { delta: flags.delta !== undefined, spill: flags.spill !== undefined }, ANALYZE_FLAG_RULES);
      if (flags.stream !== undefined) parseStreamName('--stream', flags.stream); // the identity rule of contracts/ (WW_ERR_STREAM_IDENTITY)
      let settings: DivergenceSettings;
      try {
        // The divergence fit is printed only on request (--divergence fit, or fixed costs):
        // on most data it is a second-order correction whose numbers need reading with care.
        const fixedCosts = flags.divergenceArch !== undefined || flags.delta !== undefined || flags.spill !== undefined;
        settings = divergenceSettingsOf({
          mode: flags.divergence ?? (fixedCosts ? undefined : 'off'),
          architecture: flags.divergenceArch,
          deltaCycles: flags.delta === undefined ? undefined : parseNumberOption('--delta', flags.delta, { min: 0 }),
          spillCycles: flags.spill === undefined ? undefined : parseNumberOption('--spill', flags.spill, { min: 0 }),
        });
      } catch (error) {
        if (error instanceof RangeError) throw new UsageError(error.message, { cause: error });
        throw error;
      }
      const read = readFrameFile(file);
      const frames = read.frames;
      const all = analyzeFrames(frames, { divergence: settings });
      const streams = all.filter((s) => flags.stream === undefined || s.stream === flags.stream);
      if (flags.stream !== undefined && streams.length === 0) {
        // Say which streams the file holds, as --export-counts does.
        const held = [...new Set(all.map((s) => s.stream))].sort();
        throw new UsageError(`--stream ${flags.stream}: no launch summaries of that stream in '${file}'; it holds ${held.length === 0 ? 'none' : held.join(', ')}`);
      }
      if (flags.exportCounts !== undefined) {
        const only = streams[0];
        if (only === undefined || streams.length > 1) {
          const names = streams.map((s) => `${s.stream} (n=${s.n}, ${s.source})`).join(', ');
          throw new UsageError(`--export-counts writes one stream's counts; '${file}' has ${streams.length === 0 ? 'none' : `${streams.length}: ${names}`}${streams.length > 1 ? ' (pick one with --stream job/kernel)' : ''}`);
        }
        writeCountsFile(flags.exportCounts, observedDistributionOf(frames, only));
      }
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify({ file, frames: frames.length, input: frameFileJson(read), streams }, null, 2)}\n`);
      } else if (streams.length === 0) {
        process.stdout.write(`${file}: ${frames.length} frame(s)${damageNote(read)}, no launch summaries\n`);
      } else {
        process.stdout.write(`${file}: ${frames.length} frame(s)${damageNote(read)}, ${streams.length} stream(s)\n${streams.map(formatAnalysis).join('\n')}\n`);
      }
      failOnFrameFileDamage([read], flags.acceptDamage === true);
      // Nothing to analyse is a failed request, as in advise --frames and compare (exit 2), after the report.
      if (all.length === 0) throw new UsageError(`'${file}' holds no LaunchSummary frame (${frames.length} frames in all): nothing to analyse`);
    });
}
