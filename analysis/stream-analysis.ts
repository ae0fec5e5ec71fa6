/**
 * The per-stream analysis of decoded frames that `warpwatch analyze`, `warpwatch compare` and the
 * GPU benchmark summary print: the model's loss on the observed counts next to the counts-based and
 * the clock-based loss (docs/model.md §2c), and the divergence-extended prediction
 * (divergence-analysis.ts, docs/model.md §4). Pure: frames in, numbers out.
 */
import { CategoricalDistribution, createSampledGroups, expectedLoss, recordSampledGroup, relativeError, summarizeSampledGroups, workloadLoss } from '../model/index.ts';
import { histogramToCounts, streamIdOf, type Frame, type GroupSample, type LaunchSummaryFrame } from '../protocol/index.ts';
import { sampledGroupInputOf } from '../estimator/index.ts';
import { analyzeDivergence, type DivergenceAnalysis, type DivergenceSettings } from './divergence-analysis.ts';

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
  /** η(a, b) = |(a − b)/a| between the three loss means (model/loss/relative-error.ts); 0 for 0/0, +∞ for b/0. */
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

/**
 * η(a, b) (model/loss/relative-error.ts) as `analyze` reports it: where η is undefined (a = 0), 0 for
 * 0/0 (no loss on either side, no error) and +∞ for b/0.
 */
const eta = (a: number, b: number): number => relativeError(a, b) ?? (b === 0 ? 0 : Number.POSITIVE_INFINITY);

/**
 * Aggregates decoded frames per stream (and group size and source) and compares the model's
 * prediction on the observed counts with the counts-based and the clock-based loss; where the
 * stream has GroupSamples, adds the divergence-extended prediction (see divergence-analysis.ts).
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
      etaPredictedCounts: eta(lossPredicted, lossCounts),
      ...(measured ? { etaCountsMeasured: eta(lossCounts, lossMeasured), etaPredictedMeasured: eta(lossPredicted, lossMeasured) } : {}),
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
