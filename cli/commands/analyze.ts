import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { CategoricalDistribution, expectedLoss, workloadLoss } from '../../model/index.ts';
import { FrameError, decodeFrames, histogramToCounts, streamIdOf, type Frame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { UsageError } from '../usage-error.ts';

/** What `warpwatch analyze` reports for one stream (model.md §2c names). */
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
  /** μ_M: mean over groups of measured C_SIMT/C_MIMD. */
  readonly lossMeasured: number;
  /** E[max]/E[W] of the model on the observed distribution. */
  readonly workloadLossPredicted: number;
  /** n·Σmax/Σw over the observed groups. */
  readonly workloadLossCounts: number;
  /** ΣC_SIMT/ΣC_MIMD over the observed groups (clocks). */
  readonly workloadLossMeasured: number;
  /** η(a, b) = |(a − b)/a| between the three loss means. */
  readonly etaPredictedCounts: number;
  readonly etaCountsMeasured: number;
  readonly etaPredictedMeasured: number;
  /** Mean iterations per lane. */
  readonly meanCount: number;
  /** Sampled groups in GroupSamples frames, and sampled groups the device could not store. */
  readonly sampledGroups: number;
  readonly droppedSamples: number;
}

const relativeError = (a: number, b: number): number => (a === 0 ? (b === 0 ? 0 : Number.POSITIVE_INFINITY) : Math.abs((a - b) / a));

/**
 * Aggregates decoded frames per stream (and group size and source) and compares the model's
 * prediction on the observed counts with the counts-based and the clock-based loss.
 *
 * @throws RangeError (from model/) when a histogram cannot form a distribution.
 * @example analyzeFrames(decodeFrames(bytes)).map((s) => s.lossPredicted)
 */
export function analyzeFrames(frames: readonly Frame[]): StreamAnalysis[] {
  const byKey = new Map<string, { summaries: LaunchSummaryFrame[]; sampledGroups: number }>();
  const keyOf = (f: Frame): string => `${streamIdOf(f)}\u0000${f.groupSize}\u0000${f.source}`;
  for (const frame of frames) {
    const entry = byKey.get(keyOf(frame)) ?? { summaries: [], sampledGroups: 0 };
    if (frame.type === 'launch-summary') entry.summaries.push(frame);
    else entry.sampledGroups += frame.groups.length;
    byKey.set(keyOf(frame), entry);
  }
  const analyses: StreamAnalysis[] = [];
  for (const { summaries, sampledGroups } of byKey.values()) {
    const first = summaries[0];
    if (first === undefined) continue; // samples without their summary carry no totals
    const n = first.groupSize;
    const counts = new Map<number, number>();
    let groups = 0, sumCountsLoss = 0, sumMeasuredLoss = 0, sumMax = 0, sumCounts = 0, droppedSamples = 0;
    let sumSimt = 0n, sumMimd = 0n;
    for (const s of summaries) {
      for (const [value, count] of histogramToCounts(s.histogram)) counts.set(value, (counts.get(value) ?? 0) + count);
      groups += s.groupsCounted;
      sumCountsLoss += s.sumCountsLoss;
      sumMeasuredLoss += s.sumMeasuredLoss;
      sumMax += s.sumMaxCounts;
      sumCounts += s.sumCounts;
      sumSimt += s.sumSimtClocks;
      sumMimd += s.sumMimdClocks;
      droppedSamples += s.droppedSamples;
    }
    if (groups === 0) continue;
    const distribution = CategoricalDistribution.fromCounts(counts);
    // An all-zero workload has no distribution to speak of: H = 1 by convention (model.md §1).
    const allZero = distribution.values.length === 1 && distribution.values[0] === 0;
    const lossPredicted = allZero ? 1 : expectedLoss(distribution, n);
    const workloadLossPredicted = allZero ? 1 : workloadLoss(distribution, n);
    const lossCounts = sumCountsLoss / groups;
    const lossMeasured = sumMeasuredLoss / groups;
    analyses.push({
      stream: streamIdOf(first),
      source: first.source,
      device: first.device.name,
      n,
      launches: summaries.length,
      groups,
      lossPredicted,
      lossCounts,
      lossMeasured,
      workloadLossPredicted,
      workloadLossCounts: sumCounts === 0 ? 1 : (n * sumMax) / sumCounts,
      workloadLossMeasured: sumMimd === 0n ? 1 : Number(sumSimt) / Number(sumMimd),
      etaPredictedCounts: relativeError(lossPredicted, lossCounts),
      etaCountsMeasured: relativeError(lossCounts, lossMeasured),
      etaPredictedMeasured: relativeError(lossPredicted, lossMeasured),
      meanCount: sumCounts / (groups * n),
      sampledGroups,
      droppedSamples,
    });
  }
  return analyses.sort((a, b) => a.stream.localeCompare(b.stream) || a.n - b.n);
}

function formatAnalysis(a: StreamAnalysis): string {
  const pct = (x: number): string => `${(100 * x).toFixed(2)}%`;
  const cpuNote = a.source === 'cpu' ? '  (CPU lockstep backend: CPU SIMD lanes, not a GPU measurement)' : '';
  return [
    `${a.stream}  source=${a.source} n=${a.n} device=${a.device}${cpuNote}`,
    `  launches ${a.launches}, groups ${a.groups}, mean count ${a.meanCount.toFixed(3)}, sampled groups ${a.sampledGroups}${a.droppedSamples ? ` (+${a.droppedSamples} dropped)` : ''}`,
    `  lossPredicted ${a.lossPredicted.toFixed(4)}   lossCounts ${a.lossCounts.toFixed(4)}   lossMeasured ${a.lossMeasured.toFixed(4)}`,
    `  workloadLoss predicted ${a.workloadLossPredicted.toFixed(4)}   counts ${a.workloadLossCounts.toFixed(4)}   measured ${a.workloadLossMeasured.toFixed(4)}`,
    `  η(predicted, counts) ${pct(a.etaPredictedCounts)}   η(counts, measured) ${pct(a.etaCountsMeasured)}   η(predicted, measured) ${pct(a.etaPredictedMeasured)}`,
  ].join('\n');
}

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
    .action((file: string, flags: { json?: boolean }) => {
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(readFileSync(file));
      } catch (error) {
        throw new UsageError(`cannot read frame file '${file}': ${(error as Error).message}`);
      }
      let frames: Frame[];
      try {
        frames = decodeFrames(bytes);
      } catch (error) {
        if (error instanceof FrameError) throw new UsageError(`'${file}' is not a valid frame file: ${error.message}`, { cause: error });
        throw error;
      }
      const streams = analyzeFrames(frames);
      if (flags.json === true) {
        process.stdout.write(`${JSON.stringify({ file, frames: frames.length, streams }, null, 2)}\n`);
        return;
      }
      if (streams.length === 0) {
        process.stdout.write(`${file}: ${frames.length} frame(s), no launch summaries\n`);
        return;
      }
      process.stdout.write(`${file}: ${frames.length} frame(s), ${streams.length} stream(s)\n${streams.map(formatAnalysis).join('\n')}\n`);
    });
}
