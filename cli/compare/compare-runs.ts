/**
 * `warpwatch compare A B`: two runs side by side per stream, the change, and whether it is beyond
 * noise (docs/kernels.md "Comparing two runs").
 *
 * Noise: each run's mean (lossMeasured, lossCounts, mean iterations) gets a standard error with
 * independent units —
 * - launches, when the stream has ≥ 2 LaunchSummary frames: the ratio estimator R = ΣY_l/ΣX_l
 *   (Y_l the launch's sum, X_l its groups, or lanes for mean iterations) with the delta-method
 *   standard error SE² = L/(L−1) · Σ_l (Y_l − R·X_l)² / (Σ_l X_l)²;
 * - otherwise groups: the per-group values of the sampled groups (GroupSamples) estimate the
 *   per-group standard deviation s, and SE = s/√G for the mean over all G counted groups
 *   (groups taken as independent draws); needs ≥ 2 sampled groups.
 * The change is tested with z = (b − a)/√(SE_a² + SE_b²); |z| > {@link NOISE_Z} is "beyond noise".
 */
import { createSampledGroups, recordSampledGroup } from '../../model/index.ts';
import { sampledGroupInputOf } from '../../estimator/index.ts';
import { streamIdOf, type Frame, type GroupSample, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { analyzeFrames, isCountsOnlySummary, type StreamAnalysis } from '../../analysis/index.ts';

/** |z| above which a change is called beyond noise (two-sided p ≈ 0.0027 under normality). */
export const NOISE_Z = 3;

/** How a run's standard errors were formed. */
export type NoiseBasis = 'launches' | 'sampled groups' | 'none';

/** The quantities compared; the first three carry a standard error. */
export const COMPARED = ['lossMeasured', 'lossCounts', 'meanCount', 'lossPredicted', 'groups'] as const;
export type ComparedQuantity = (typeof COMPARED)[number];

/** One quantity of one stream in both runs. */
export interface ComparedValue {
  readonly quantity: ComparedQuantity;
  readonly a: number;
  readonly b: number;
  /** b − a. */
  readonly difference: number;
  /** b / a; null when a = 0. */
  readonly ratio: number | null;
  /** Standard errors of a and b; null where the quantity or the run has none. */
  readonly standardErrorA: number | null;
  readonly standardErrorB: number | null;
  /** (b − a)/√(SE_a² + SE_b²); null without both standard errors or when both are 0, below 1e-12 of the values (no noise to scale by). */
  readonly z: number | null;
  /**
   * 'beyond noise' when |z| > NOISE_Z, or when both standard errors are 0 (below 1e-12 of the values) and b ≠ a (every unit
   * gave the same value: any change is real); 'unknown' without standard errors (lossPredicted,
   * groups, or too few units).
   */
  readonly verdict: 'beyond noise' | 'within noise' | 'unknown';
}

/** One stream (stream id and group size) of the comparison. */
export interface StreamComparison {
  /** Stream id in run A (and in run B unless {@link streamB} differs). */
  readonly stream: string;
  /** Stream id in run B when it was paired with a different id (`--pair A=B`); absent when both runs use `stream`. */
  readonly streamB?: string;
  readonly n: number;
  /** Launches of the stream in each run. */
  readonly launchesA: number;
  readonly launchesB: number;
  readonly basisA: NoiseBasis;
  readonly basisB: NoiseBasis;
  /**
   * The runs whose stream has no clocked launch (counts-only frames, protocol/SPEC.md): lossMeasured
   * is then not measured there and left out of `values`; absent when both runs measured it.
   */
  readonly notMeasured?: readonly ('A' | 'B')[];
  readonly values: readonly ComparedValue[];
}

/** A pairing of a stream of run A with a differently named stream of run B (`--pair A=B`). */
export interface StreamPair {
  readonly a: string;
  readonly b: string;
}

/** What {@link compareRuns} returns. */
export interface RunComparison {
  readonly noiseZ: number;
  readonly streams: readonly StreamComparison[];
  /** `<stream> n=<n>` of streams found in one run only. */
  readonly onlyInA: readonly string[];
  readonly onlyInB: readonly string[];
}

type Noisy = 'lossMeasured' | 'lossCounts' | 'meanCount';

/** Standard errors of a run's stream means, and the basis they came from. */
interface RunNoise {
  readonly basis: NoiseBasis;
  readonly standardErrors: Readonly<Record<Noisy, number>> | null;
}

const keyOf = (stream: string, n: number): string => `${stream} n=${n}`;

const finiteOrNull = (value: number | undefined): number | null => (value !== undefined && Number.isFinite(value) ? value : null);

/** SE of ΣY/ΣX over units (the delta method); needs ≥ 2 units and ΣX > 0. */
function ratioStandardError(ys: readonly number[], xs: readonly number[]): number {
  const sumY = ys.reduce((s, y) => s + y, 0);
  const sumX = xs.reduce((s, x) => s + x, 0);
  const r = sumY / sumX;
  let squares = 0;
  ys.forEach((y, i) => (squares += (y - r * (xs[i] ?? 0)) ** 2));
  return Math.sqrt((ys.length / (ys.length - 1)) * squares) / sumX;
}

/** Sample standard deviation (n − 1 denominator) divided by √count. */
function meanStandardError(values: readonly number[], count: number): number {
  const mean = values.reduce((s, v) => s + v, 0) / values.length;
  const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / (values.length - 1);
  return Math.sqrt(variance / count);
}

function runNoise(summaries: readonly LaunchSummaryFrame[], samples: readonly GroupSample[], n: number, groups: number): RunNoise {
  if (summaries.length >= 2) {
    const g = summaries.map((s) => s.groupsCounted);
    // The measured loss over the clocked launches only (counts-only ones have none: protocol/SPEC.md); NaN (no SE) with fewer than 2.
    const clocked = summaries.filter((s) => !isCountsOnlySummary(s));
    return {
      basis: 'launches',
      standardErrors: {
        lossMeasured: clocked.length >= 2 ? ratioStandardError(clocked.map((s) => s.sumMeasuredLoss), clocked.map((s) => s.groupsCounted)) : Number.NaN,
        lossCounts: ratioStandardError(summaries.map((s) => s.sumCountsLoss), g),
        meanCount: ratioStandardError(summaries.map((s) => s.sumCounts), g.map((x) => x * n)),
      },
    };
  }
  // One launch: per-group values of the sampled groups, with the estimator's definitions of H.
  const perGroup = samples.map((group) => {
    const one = createSampledGroups();
    recordSampledGroup(one, sampledGroupInputOf(group));
    return one.groups === 1 ? { clocked: one.clockedGroups === 1, lossMeasured: one.sumLossMeasured, lossCounts: one.sumLossCounts, meanCount: one.sumCounts / one.lanes } : undefined;
  }).filter((v) => v !== undefined);
  if (perGroup.length < 2) return { basis: 'none', standardErrors: null };
  return {
    basis: 'sampled groups',
    standardErrors: {
      lossMeasured: (() => {
        const clocked = perGroup.filter((v) => v.clocked);
        return clocked.length >= 2 ? meanStandardError(clocked.map((v) => v.lossMeasured), groups) : Number.NaN;
      })(),
      lossCounts: meanStandardError(perGroup.map((v) => v.lossCounts), groups),
      meanCount: meanStandardError(perGroup.map((v) => v.meanCount), groups),
    },
  };
}

/** Per stream key: the analysis and the frames behind it. */
function streamsOf(frames: readonly Frame[]): Map<string, { analysis: StreamAnalysis; noise: RunNoise }> {
  const analyses = analyzeFrames(frames, { divergence: { mode: 'off' } });
  const summaries = new Map<string, LaunchSummaryFrame[]>();
  const samples = new Map<string, GroupSample[]>();
  for (const frame of frames) {
    const key = keyOf(streamIdOf(frame), frame.groupSize);
    if (frame.type === 'launch-summary') summaries.set(key, [...(summaries.get(key) ?? []), frame]);
    else samples.set(key, [...(samples.get(key) ?? []), ...frame.groups]);
  }
  const out = new Map<string, { analysis: StreamAnalysis; noise: RunNoise }>();
  for (const analysis of analyses) {
    const key = keyOf(analysis.stream, analysis.n);
    if (out.has(key)) continue; // the same stream id and n from two sources: the first (sorted) one
    out.set(key, { analysis, noise: runNoise(summaries.get(key) ?? [], samples.get(key) ?? [], analysis.n, analysis.groups) });
  }
  return out;
}

function compareValue(quantity: ComparedQuantity, a: number, b: number, seA: number | null, seB: number | null): ComparedValue {
  const difference = b - a;
  let z: number | null = null;
  let noNoise = false;
  if (seA !== null && seB !== null) {
    const se = Math.sqrt(seA ** 2 + seB ** 2);
    // Identical units leave a rounding residue (~1e-16) rather than an exact 0: below 1e-12 of
    // the values the noise is 0, z is not defined, and a difference against it is beyond it.
    if (se > 1e-12 * Math.max(Math.abs(a), Math.abs(b), 1)) z = difference / se;
    else noNoise = true;
  }
  const verdict = seA === null || seB === null ? 'unknown' : noNoise ? (difference === 0 ? 'within noise' : 'beyond noise') : z !== null && Math.abs(z) > NOISE_Z ? 'beyond noise' : 'within noise';
  return { quantity, a, b, difference, ratio: a === 0 ? null : b / a, standardErrorA: seA, standardErrorB: seB, z, verdict };
}

/**
 * Compares two runs' frames per stream (stream id and group size): lossMeasured, lossCounts,
 * mean iterations per lane, lossPredicted and groups side by side, with the difference, the ratio
 * and, for the first three, a z test of the difference against the runs' standard errors.
 *
 * Streams are matched by stream id and n; `pairs` match a stream id of A with a different one of
 * B (at every n both hold), e.g. `local/escape` with `local/escape-sorted`.
 *
 * @throws RangeError (from model/) when a histogram cannot form a distribution.
 * @example compareRuns(readFrameFile('a.wwf').frames, readFrameFile('b.wwf').frames).streams[0].values[0].verdict
 */
export function compareRuns(framesA: readonly Frame[], framesB: readonly Frame[], pairs: readonly StreamPair[] = []): RunComparison {
  const a = streamsOf(framesA);
  const b = streamsOf(framesB);
  const streams: StreamComparison[] = [];
  const usedB = new Set<string>();
  for (const [key, left] of a) {
    const pair = pairs.find((p) => p.a === left.analysis.stream);
    const keyB = pair === undefined ? key : keyOf(pair.b, left.analysis.n);
    const right = b.get(keyB);
    if (right === undefined) continue;
    usedB.add(keyB);
    const se = (run: RunNoise, q: ComparedQuantity): number | null =>
      q === 'lossMeasured' || q === 'lossCounts' || q === 'meanCount' ? finiteOrNull(run.standardErrors?.[q]) : null;
    const notMeasured = [...(left.analysis.lossMeasured === undefined ? ['A' as const] : []), ...(right.analysis.lossMeasured === undefined ? ['B' as const] : [])];
    streams.push({
      stream: left.analysis.stream,
      ...(right.analysis.stream === left.analysis.stream ? {} : { streamB: right.analysis.stream }),
      n: left.analysis.n,
      launchesA: left.analysis.launches,
      launchesB: right.analysis.launches,
      basisA: left.noise.basis,
      basisB: right.noise.basis,
      ...(notMeasured.length === 0 ? {} : { notMeasured }),
      values: COMPARED.flatMap((q) => {
        const valueA = left.analysis[q];
        const valueB = right.analysis[q];
        return valueA === undefined || valueB === undefined ? [] : [compareValue(q, valueA, valueB, se(left.noise, q), se(right.noise, q))];
      }),
    });
  }
  return {
    noiseZ: NOISE_Z,
    streams,
    onlyInA: [...a.keys()].filter((k) => !streams.some((s) => keyOf(s.stream, s.n) === k)),
    onlyInB: [...b.keys()].filter((k) => !usedB.has(k)),
  };
}
