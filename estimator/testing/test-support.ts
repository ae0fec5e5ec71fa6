import { CategoricalDistribution, createSeededRandom, type RandomSource } from '../../model/index.ts';
import type { LaunchSummaryFrame } from '../../protocol/index.ts';
import { DEFAULT_CUSUM_OPTIONS } from '../engine/change-detector.ts';
import type { EngineOptions } from '../engine/estimator-engine.ts';
import { syntheticLaunchSummary } from '../engine/synthetic-launch.ts';
import type { SeriesPoint } from '../engine/series-points.ts';
import { toLineProtocol } from '../adapters/influx-writer.ts';

/**
 * Shared fixtures for the estimator's tests and benchmarks: engine options with small,
 * fast settings and a seeded generator of LaunchSummary frames for several streams.
 */

/** Engine options for tests: 1 s windows, 8 bootstrap replicates, exact quantiles when cheap. */
export function testEngineOptions(overrides: Partial<EngineOptions> = {}): EngineOptions {
  return {
    window: {
      windowMillis: 1_000,
      allowedLatenessMillis: 0,
      current: { mode: 'decay', halfLifeLaunches: 8 },
      dedupeCapacity: 256,
      histogram: { maxExactSupport: 4096, subBinsPerOctave: 128 },
      idleCloseMillis: 1_000,
      streamRetentionMillis: 3_600_000,
      predictionBasis: 'window',
      maxFutureSkewMillis: 300_000,
    },
    compute: {
      bootstrapReplicates: 8,
      confidenceLevel: 0.95,
      sweepGroupSizes: [1, 2, 4, 8, 16, 32],
      quantiles: true,
      quantileExactWorkLimit: 2_000_000,
      quantileSamples: 2_000,
      fit: false,
      histogramPoints: true,
      sweepIntervalMillis: 0,
    },
    // The detectors of DEFAULT_CUSUM_OPTIONS (the service's defaults, alert-detector.ts alertOptionsOf).
    alerts: {
      warmupWindows: DEFAULT_CUSUM_OPTIONS.warmupWindows,
      referenceSigmas: DEFAULT_CUSUM_OPTIONS.referenceSigmas,
      thresholdSigmas: DEFAULT_CUSUM_OPTIONS.thresholdSigmas,
      minRelativeSigma: DEFAULT_CUSUM_OPTIONS.minRelativeSigma,
      driftMinSigma: 0.01,
      lossMeasuredThreshold: undefined,
      driftThreshold: undefined,
      staleAfterMillis: undefined,
    },
    monotonicMillis: () => 0,
    ...overrides,
  };
}

/** One generated message: the stream key (Kafka key), the frame and its encoded bytes are made by the caller. */
export interface GeneratedLaunch {
  readonly key: string;
  readonly frame: LaunchSummaryFrame;
}

/**
 * Frames of `streams` streams (job `job<i>`, kernel `k`), `launchesPerStream` launches each,
 * interleaved in time order, `launchIntervalMillis` apart per stream, from distributions
 * pois-like categoricals that differ per stream. Deterministic for a seed.
 */
export function generateLaunches(options: {
  streams: number;
  launchesPerStream: number;
  launchIntervalMillis: number;
  startMillis: number;
  groups: number;
  groupSize: number;
  seed: number;
  distributions?: readonly CategoricalDistribution[];
}): GeneratedLaunch[] {
  const random: RandomSource = createSeededRandom(options.seed);
  const distributions =
    options.distributions ??
    Array.from({ length: options.streams }, (_, i) =>
      CategoricalDistribution.fromPmf(new Map([[1, 4], [2 + (i % 5), 3], [10 + i, 2], [40, 1]])),
    );
  const launches: GeneratedLaunch[] = [];
  let sequence = 0;
  for (let l = 0; l < options.launchesPerStream; l += 1) {
    for (let s = 0; s < options.streams; s += 1) {
      const distribution = distributions[s % distributions.length];
      if (distribution === undefined) throw new RangeError('no distribution');
      const frame = syntheticLaunchSummary({
        job: `job${s}`,
        kernel: 'k',
        deviceName: 'synthetic',
        groupSize: options.groupSize,
        source: 'cpu',
        launchId: BigInt(l),
        frameSequence: sequence,
        endMillis: options.startMillis + l * options.launchIntervalMillis + s,
        groups: options.groups,
        distribution,
        random,
        measuredOverhead: 0.02,
        measuredNoise: 0.01,
      });
      sequence += 1;
      launches.push({ key: `job${s}/k`, frame });
    }
  }
  return launches;
}

/**
 * The final line per (measurement, tags, time) of `points`: what InfluxDB holds after later
 * writes of the same point overwrite earlier ones (tests compare runs by it).
 *
 * @example expect(lastWriteWins(crashed.points)).toEqual(lastWriteWins(reference.points));
 */
export function lastWriteWins(points: readonly SeriesPoint[]): Map<string, string> {
  const table = new Map<string, string>();
  for (const point of points) {
    const line = toLineProtocol(point);
    const [head = '', , time = ''] = line.split(' ');
    table.set(`${head} ${time}`, line);
  }
  return table;
}
