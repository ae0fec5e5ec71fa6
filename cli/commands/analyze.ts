import type { Command } from 'commander';
import { CategoricalDistribution, createSampledGroups, expectedLoss, recordSampledGroup, summarizeSampledGroups, workloadLoss } from '../../model/index.ts';
import { histogramToCounts, streamIdOf, type Frame, type GroupSample, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { sampledGroupInputOf } from '../../estimator/index.ts';
import { parseStreamName } from '../../contracts/index.ts';
import { writeCountsFile } from '../counts-file.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, frameFileJson, readFrameFile, type FrameFileRead } from '../frame-file.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { analyzeDivergence, DIVERGENCE_OFF_NOTE, divergenceSettingsOf, type DivergenceAnalysis, type DivergenceSettings } from './analyze-divergence.ts';
import { formatQuantity, parseNumberOption } from './numeric-options.ts';

/** What `warpwatch analyze` reports for one stream (docs/model.md §2c names). */
export interface StreamAnalysis {
  /** `<job>/<kernel>`. */
  readonly stream: string;
  readonly source: 'cuda' | 'cpu';
  readonly device: string;
  /** Lanes per group. */
  readonly n: number;
  readonly launches: number;
  /** Groups aggregated over all launches. */
  readonly groups: number;
  /** μ_A: E[X_W(n)] of the model on the observed count distribution (histogram). */
  readonly lossPredicted: number;
  /** μ_S: mean over groups of H from counts. */
  readonly lossCounts: number;
  /**
   * μ_M: mean over the clocked groups of measured C_SIMT/C_MIMD; absent when no launch summary of
   * the stream was clocked (counts-only frames, protocol/SPEC.md: not measured).
   */
  readonly lossMeasured?: number;
  /** E[max]/E[W] of the model on the observed distribution. */
  readonly workloadLossPredicted: number;
  /** n·Σmax/Σw over the observed groups. */
  readonly workloadLossCounts: number;
  /** ΣC_SIMT/ΣC_MIMD over the clocked groups (1 when ΣC_MIMD = 0); absent without clocked summaries. */
  readonly workloadLossMeasured?: number;
  /** Groups of the clocked launch summaries (the others are counts-only: protocol/SPEC.md). */
  readonly clockedGroups: number;
  /** η(a, b) = |(a − b)/a| between the three loss means. */
  readonly etaPredictedCounts: number;
  /** Absent with lossMeasured. */
  readonly etaCountsMeasured?: number;
  readonly etaPredictedMeasured?: number;
  /** Mean iterations per lane. */
  readonly meanCount: number;
  /** Sampled groups in GroupSamples frames, and sampled groups the device could not store. */
  readonly sampledGroups: number;
  readonly droppedSamples: number;
  /**
   * Intra-group correlation of iteration counts over the sampled groups (one-way ANOVA ICC, the
   * estimator's computation): ≈ 0 for independent lanes, > 0 when a group's lanes get similar
   * work (why lossCounts sits below lossPredicted); null without samples or variation.
   */
  readonly countIcc: number | null;
  /**
   * Divergence-extended prediction of lossMeasured (docs/model.md §4): lossCounts + divergenceTerm,
   * the term estimated on the sampled groups; null when not computed (see divergenceNote).
   */
  readonly lossExtended: number | null;
  /** Mean divergence term n·(δ·D + s·spills)/(T·Σw) over the sampled groups; null when not computed. */
  readonly divergenceTerm: number | null;
  /**
   * Share of the sampled groups' gap (lossMeasured − lossCounts) the divergence term explains;
   * null when not computed or when that gap is exactly 0.
   */
  readonly gapExplainedFraction: number | null;
  /** Details: costs used, fit, sampled-group losses; null when not computed. */
  readonly divergence: DivergenceAnalysis | null;
  /** Why the term is missing, or a caveat about it (CPU data); null when there is nothing to say. */
  readonly divergenceNote: string | null;
}

/** Options of {@link analyzeFrames}. */
export interface AnalyzeOptions {
  /** How to obtain the divergence costs; default `{ mode: 'fit' }` (fitted from the GroupSamples clocks). */
  readonly divergence?: DivergenceSettings;
}

const CPU_DIVERGENCE_NOTE =
  'CPU lockstep backend: no reconvergence stack, every group-iteration costs the same, so divergence management should explain little of the gap here';

const relativeError = (a: number, b: number): number => (a === 0 ? (b === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs((a - b) / a));

/**
 * Aggregates decoded frames per stream (and group size and source) and compares the model's
 * prediction on the observed counts with the counts-based and the clock-based loss; where the
 * stream has GroupSamples, adds the divergence-extended prediction (see analyze-divergence.ts).
 *
 * @throws RangeError (from model/) when a histogram cannot form a distribution.
 * @example analyzeFrames(decodeFrames(bytes)).map((s) => [s.lossPredicted, s.lossExtended])
 */
export function analyzeFrames(frames: readonly Frame[], options: AnalyzeOptions = {}): StreamAnalysis[] {
  const divergenceSettings = options.divergence ?? { mode: 'fit' };
  const byKey = new Map<string, { summaries: LaunchSummaryFrame[]; sampledGroups: number; samples: GroupSample[] }>();
  const keyOf = (f: Frame): string => `${streamIdOf(f)}\u0000${f.groupSize}\u0000${f.source}`;
  for (const frame of frames) {
    const entry = byKey.get(keyOf(frame)) ?? { summaries: [], sampledGroups: 0, samples: [] };
    if (frame.type === 'launch-summary') entry.summaries.push(frame);
    else {
      entry.sampledGroups += frame.groups.length;
      for (const group of frame.groups) entry.samples.push(group);
    }
    byKey.set(keyOf(frame), entry);
  }
  const analyses: StreamAnalysis[] = [];
  for (const { summaries, sampledGroups, samples } of byKey.values()) {
    const first = summaries[0];
    if (first === undefined) continue; // samples without their summary carry no totals
    const n = first.groupSize;
    const counts = new Map<number, number>();
    let groups = 0, sumCountsLoss = 0, sumMeasuredLoss = 0, sumMax = 0, sumCounts = 0, droppedSamples = 0;
    let sumSimt = 0n, sumMimd = 0n, clockedGroups = 0;
    for (const s of summaries) {
      for (const [value, count] of histogramToCounts(s.histogram)) counts.set(value, (counts.get(value) ?? 0) + count);
      groups += s.groupsCounted;
      sumCountsLoss += s.sumCountsLoss;
      sumMeasuredLoss += s.sumMeasuredLoss;
      sumMax += s.sumMaxCounts;
      sumCounts += s.sumCounts;
      sumSimt += s.sumSimtClocks;
      sumMimd += s.sumMimdClocks;
      if (!isCountsOnlySummary(s)) clockedGroups += s.groupsCounted;
      droppedSamples += s.droppedSamples;
    }
    if (groups === 0) continue;
    const distribution = CategoricalDistribution.fromCounts(counts);
    // An all-zero workload has no distribution to speak of: H = 1 by convention (docs/model.md §1).
    const allZero = distribution.values.length === 1 && distribution.values[0] === 0;
    const lossPredicted = allZero ? 1 : expectedLoss(distribution, n);
    const workloadLossPredicted = allZero ? 1 : workloadLoss(distribution, n);
    const lossCounts = sumCountsLoss / groups;
    // Measured values from the clocked summaries only: a counts-only one adds 0 to every clock sum.
    const measured = clockedGroups > 0;
    const lossMeasured = sumMeasuredLoss / clockedGroups;
    const clockedSamples = samples.filter((group) => !isCountsOnlySample(group));
    const outcome =
      clockedSamples.length === 0 && samples.length > 0 && divergenceSettings.mode !== 'off'
        ? { note: 'the sampled groups have no clocks (counts-only frames): the divergence term needs clocked samples' }
        : analyzeDivergence(clockedSamples, first.device.clockHz, divergenceSettings);
    const sampledAccumulation = createSampledGroups();
    for (const group of samples) recordSampledGroup(sampledAccumulation, sampledGroupInputOf(group));
    const countIcc = summarizeSampledGroups(sampledAccumulation, n)?.countIcc ?? null;
    const divergence = 'analysis' in outcome ? outcome.analysis : null;
    const presetOnCpu = divergence?.architecture !== undefined && first.source === 'cpu';
    const divergenceNote =
      'note' in outcome
        ? outcome.note
        : first.source === 'cpu'
          ? `${CPU_DIVERGENCE_NOTE}${presetOnCpu ? `; the ${String(divergence?.architecture)} preset is in GPU cycles but these clocks are ns, so its numbers mean nothing here` : ''}`
          : null;
    analyses.push({
      stream: streamIdOf(first),
      source: first.source,
      device: first.device.name,
      n,
      launches: summaries.length,
      groups,
      lossPredicted,
      lossCounts,
      ...(measured ? { lossMeasured } : {}),
      workloadLossPredicted,
      workloadLossCounts: sumCounts === 0 ? 1 : (n * sumMax) / sumCounts,
      ...(measured ? { workloadLossMeasured: sumMimd === 0n ? 1 : Number(sumSimt) / Number(sumMimd) } : {}),
      clockedGroups,
      etaPredictedCounts: relativeError(lossPredicted, lossCounts),
      ...(measured ? { etaCountsMeasured: relativeError(lossCounts, lossMeasured), etaPredictedMeasured: relativeError(lossPredicted, lossMeasured) } : {}),
      meanCount: sumCounts / (groups * n),
      sampledGroups,
      droppedSamples,
      countIcc,
      lossExtended: divergence === null ? null : lossCounts + divergence.divergenceTerm,
      divergenceTerm: divergence?.divergenceTerm ?? null,
      gapExplainedFraction: divergence?.gapExplainedFraction ?? null,
      divergence,
      divergenceNote,
    });
  }
  return analyses.sort((a, b) => a.stream.localeCompare(b.stream) || a.n - b.n);
}

/**
 * The observed iteration-count distribution of one analysed stream: the sum of the histograms of
 * its LaunchSummary frames (the distribution `lossPredicted` is computed on), as `--export-counts`
 * writes it.
 *
 * @throws RangeError (from model/) when the histograms hold no counts.
 * @example writeCountsFile('observed.csv', observedDistributionOf(frames, analyzeFrames(frames)[0]))
 */
export function observedDistributionOf(frames: readonly Frame[], stream: Pick<StreamAnalysis, 'stream' | 'n' | 'source'>): CategoricalDistribution {
  const counts = new Map<number, number>();
  for (const frame of frames) {
    if (frame.type !== 'launch-summary' || streamIdOf(frame) !== stream.stream || frame.groupSize !== stream.n || frame.source !== stream.source) continue;
    for (const [value, count] of histogramToCounts(frame.histogram)) counts.set(value, (counts.get(value) ?? 0) + count);
  }
  return CategoricalDistribution.fromCounts(counts);
}

/**
 * Whether a LaunchSummary carries the counts-only mark (protocol/SPEC.md, "Counts-only frames
 * (no clock)"): groups counted, every clock sum and sumMeasuredLoss 0.
 *
 * @example isCountsOnlySummary({ groupsCounted: 4, sumSimtClocks: 0n, sumMimdClocks: 0n, sumMeasuredLoss: 0 }) // true
 */
export function isCountsOnlySummary(s: Pick<LaunchSummaryFrame, 'groupsCounted' | 'sumSimtClocks' | 'sumMimdClocks' | 'sumMeasuredLoss'>): boolean {
  return s.groupsCounted > 0 && s.sumSimtClocks === 0n && s.sumMimdClocks === 0n && s.sumMeasuredLoss === 0;
}

/** Whether a sampled group carries the counts-only mark: start, end and every lane finish clock 0. */
function isCountsOnlySample(group: GroupSample): boolean {
  return group.startClock === 0n && group.endClock === 0n && group.laneFinishClocks.every((clock) => clock === 0n);
}

const NOT_MEASURED = 'not measured';

function formatAnalysis(a: StreamAnalysis): string {
  const pct = (x: number | undefined): string => (x === undefined ? NOT_MEASURED : `${(100 * x).toFixed(2)}%`);
  const fixed4 = (x: number | undefined): string => (x === undefined ? `${NOT_MEASURED} (no clocks: counts-only frames)` : x.toFixed(4));
  const cpuNote = a.source === 'cpu' ? '  (CPU lockstep backend: CPU SIMD lanes, not a GPU measurement)' : '';
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
    });
}
