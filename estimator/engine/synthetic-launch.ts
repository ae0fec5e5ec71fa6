import { createCategoricalSampler, groupLoss, type CategoricalDistribution, type RandomSource } from '../../model/index.ts';
import { histogramOfCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { normalDeviate } from './random-deviates.ts';

/**
 * Synthetic LaunchSummary frames from a known distribution, for tests, benchmarks and the
 * end-to-end test when no kernel is at hand: every lane's count is an independent draw, the
 * group's measured loss is its count loss times (1 + overhead) with a little Gaussian noise
 * (a stand-in for clocks), exactly the sums a device would report.
 */
export interface SyntheticLaunchOptions {
  readonly job: string;
  readonly kernel: string;
  readonly deviceName: string;
  readonly groupSize: number;
  readonly source: 'cuda' | 'cpu';
  readonly launchId: bigint;
  readonly frameSequence: number;
  /** Launch end time, ms since epoch (the estimator's event time). */
  readonly endMillis: number;
  readonly groups: number;
  readonly distribution: CategoricalDistribution;
  readonly random: RandomSource;
  /** Relative excess of measured over count-based loss (hardware effects), e.g. 0.02. */
  readonly measuredOverhead: number;
  /** Standard deviation of the per-group relative noise on measured loss, e.g. 0.01. */
  readonly measuredNoise: number;
}

/**
 * Generates one LaunchSummary frame.
 *
 * @example
 * const frame = syntheticLaunchSummary({ ...identity, distribution: CategoricalDistribution.fromFamily(spec), random, ... });
 */
export function syntheticLaunchSummary(options: SyntheticLaunchOptions): LaunchSummaryFrame {
  const sample = createCategoricalSampler(options.distribution);
  const n = options.groupSize;
  const counts: number[] = [];
  const lane = new Array<number>(n).fill(0);
  let sumCountsLoss = 0;
  let sumMeasuredLoss = 0;
  let sumSimt = 0;
  let sumMimd = 0;
  let sumMax = 0;
  let sumAll = 0;
  for (let g = 0; g < options.groups; g += 1) {
    let max = 0;
    let sum = 0;
    for (let i = 0; i < n; i += 1) {
      const w = sample(options.random);
      lane[i] = w;
      counts.push(w);
      if (w > max) max = w;
      sum += w;
    }
    const countsLoss = groupLoss(lane);
    const measured = Math.max(1, countsLoss * (1 + options.measuredOverhead + options.measuredNoise * normalDeviate(options.random)));
    sumCountsLoss += countsLoss;
    sumMeasuredLoss += measured;
    // Cycles: 100 per iteration; C_SIMT = n·max, C_MIMD scaled so that the ratio matches the measured loss.
    const mimd = Math.max(1, 100 * sum);
    sumMimd += mimd;
    sumSimt += Math.round(mimd * measured);
    sumMax += max;
    sumAll += sum;
  }
  const startNanos = BigInt(Math.round(options.endMillis - 1)) * 1_000_000n;
  return {
    type: 'launch-summary',
    job: options.job,
    kernel: options.kernel,
    launchId: options.launchId,
    frameSequence: options.frameSequence,
    source: options.source,
    groupSize: n,
    sync: true,
    device: {
      name: options.deviceName,
      uuid: '00000000-0000-0000-0000-000000000000',
      computeCapability: { major: 0, minor: 0 },
      clockHz: 1_000_000_000,
    },
    startUnixNanos: startNanos,
    endUnixNanos: BigInt(Math.round(options.endMillis)) * 1_000_000n,
    groupCount: options.groups,
    groupsCounted: options.groups,
    sumSimtClocks: BigInt(sumSimt),
    sumMimdClocks: BigInt(sumMimd),
    sumMeasuredLoss,
    sumCountsLoss,
    sumMaxCounts: sumMax,
    sumCounts: sumAll,
    droppedSamples: 0,
    histogram: histogramOfCounts(counts),
  };
}
