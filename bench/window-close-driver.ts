/**
 * The window close on realistic histograms (docs/estimator.md, Performance): the estimator engine
 * in process, fed launch summaries whose lanes are drawn from distributions recorded on real
 * hardware (the committed H200 frames: matpow's five families and escape, at n = 32) and from
 * the CPU backend's wide families (geometric and uniform counts up to ~2,000, supports ~500 to
 * ~1,300 distinct values per window), plus the bench's three-value histogram as one labelled
 * row. Each window close is timed as the engine times it (telemetry.windowClosed: wall time of
 * the model and the points of one window, performance.now) and filed under the support of its
 * histogram; p50 and p99 per support range are reported, and where the time goes (each part of
 * the model timed alone on the same histograms).
 *
 *     npx tsx bench/window-close-driver.ts [--windows 12] [--window-millis 1000] [--write] [--env KEY=VALUE,…]
 *       (the same file copied into another checkout measures that tree: `git archive <commit> | tar -x -C /tmp/ww-base`)
 *
 * Every stream runs 4 launches per second of 64 groups × 32 lanes (8,192 lanes per 1 s window,
 * 81,920 per 10 s window), each launch drawn afresh, so no two windows share a histogram (the
 * model cache never hits, as on a real kernel). Settings: the service's defaults (the config of
 * an empty environment and its fitter), WARPWATCH_HISTOGRAM_POINTS=false as in the Kafka bench;
 * `--env` changes them. `--write` adds the run to bench/results/window-close.json (by window length).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as model from '../model/index.ts';
import { CategoricalDistribution, createCategoricalSampler, createSeededRandom, exactCost, lossQuantiles, prepareFastLoss, preparedExpectedLoss, prepareWorkloadLoss, preparedWorkloadLoss } from '../model/index.ts';
import { decodeFrames, encodeFrame, histogramToCounts, type LaunchSummaryFrame } from '../protocol/index.ts';
import * as estimator from '../estimator/index.ts';
import { GROUP_SIZE, GROUPS_PER_LAUNCH } from './estimator-frames.ts';
import { argument, median } from './driver-support.ts';

const H200_FRAMES = fileURLToPath(new URL('./results/gpu/raw-h200-2026-11-28-batch.tar.gz', import.meta.url));
/** The H200 runs whose distributions the streams draw from (n = 32, probe without sync). */
const H200_RUNS = [
  'matpow/matpow_pois_30_n32_syncoff.wwf',
  'matpow/matpow_binom_60_0.5_n32_syncoff.wwf',
  'matpow/matpow_unif_10_50_n32_syncoff.wwf',
  'matpow/matpow_nbinom_5_0.15_n32_syncoff.wwf',
  'matpow/matpow_geo_0.05_n32_syncoff.wwf',
  'escape/escape_n32_plain.wwf',
];
const START_MILLIS = 1_700_000_000_000;
const LAUNCHES_PER_SECOND = 4;

interface Source {
  readonly name: string;
  readonly distribution: CategoricalDistribution;
}

/** The lane distribution of each H200 run: every launch summary's histogram added up (bins < 1024 are exact values). */
function h200Sources(): Source[] {
  const dir = mkdtempSync(join(tmpdir(), 'ww-h200-'));
  try {
    execFileSync('tar', ['-xzf', H200_FRAMES, '-C', dir, ...H200_RUNS.map((run) => `./${run}`)]);
    return H200_RUNS.map((run) => {
      const total = new Map<number, number>();
      for (const frame of decodeFrames(new Uint8Array(readFileSync(join(dir, run))))) {
        if (frame.type !== 'launch-summary') continue;
        for (const [value, count] of histogramToCounts(frame.histogram)) total.set(value, (total.get(value) ?? 0) + count);
      }
      return { name: `h200 ${run.split('/')[1]!.replace(/_n32.*$/, '')}`, distribution: CategoricalDistribution.fromPmf(total) };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Wide CPU-backend families (what a data-dependent loop over a long tail gives) and the bench's three values. */
function syntheticSources(): Source[] {
  const uniform = new Map<number, number>();
  for (let v = 0; v <= 1_500; v += 1) uniform.set(v, 1);
  return [
    { name: 'bench three values', distribution: CategoricalDistribution.fromPmf(new Map([[3, 3], [15, 2], [30, 1]])) },
    { name: 'cpu geo(0.01)', distribution: CategoricalDistribution.fromFamily({ family: 'geo', p: 0.01 }) },
    { name: 'cpu geo(0.004)', distribution: CategoricalDistribution.fromFamily({ family: 'geo', p: 0.004 }) },
    { name: 'cpu unif(0,1500)', distribution: CategoricalDistribution.fromPmf(uniform) },
  ];
}

interface Close {
  readonly source: string;
  readonly support: number;
  readonly millis: number;
}

/** Runs every stream for `windows` windows through one engine and returns each close's time and support. */
function runEngine(sources: readonly Source[], windows: number, windowMillis: number, extra: Record<string, string>): Close[] {
  const config = estimator.loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: String(windowMillis), WARPWATCH_HISTOGRAM_POINTS: 'false', ...extra } });
  const closes: Close[] = [];
  let lastMillis = 0;
  let lineBytes = 0;
  const sourceOfJob = new Map(sources.map((source, s) => [`stream${s}`, source.name]));
  const engine = estimator.createEstimatorEngine(
    { ...config, fitter: estimator.modelFitter, monotonicMillis: () => performance.now() },
    {
      writePoints: (points) => {
        for (const point of points) lineBytes += estimator.toLineProtocol(point).length;
      },
      publishDistribution: (_key, record) => {
        lineBytes += JSON.stringify(record).length;
      },
      publishAlert: () => {},
      recordWindow: (result) => closes.push({ source: sourceOfJob.get(result.identity.job)!, support: result.histogram.length, millis: lastMillis }),
    },
    { frame: () => {}, windowClosed: (millis) => (lastMillis = millis), modelError: (error) => console.error(error), alertRaised: () => {} },
  );
  const random = createSeededRandom(20261202);
  const launches = Math.round((windows * windowMillis * LAUNCHES_PER_SECOND) / 1_000);
  const wall = START_MILLIS + windows * windowMillis + 86_400_000;
  let key = 0;
  for (let launch = 0; launch < launches; launch += 1) {
    const endMillis = START_MILLIS + Math.floor((launch * 1_000) / LAUNCHES_PER_SECOND) + 1;
    sources.forEach((source, s) => {
      const frame: LaunchSummaryFrame = estimator.syntheticLaunchSummary({
        job: `stream${s}`,
        kernel: 'k',
        deviceName: 'synthetic',
        groupSize: GROUP_SIZE,
        source: 'cuda',
        launchId: BigInt(launch),
        frameSequence: launch,
        endMillis,
        groups: GROUPS_PER_LAUNCH,
        distribution: source.distribution,
        random,
        measuredOverhead: 0.02,
        measuredNoise: 0.01,
      });
      engine.handleMessage(s % 6, String(key++), encodeFrame(frame), wall, { 'ww-host': 'gpu-host-7', 'ww-source': 'stdin' });
    });
  }
  engine.closeAll();
  if (lineBytes === 0) throw new Error('no output');
  return closes;
}

/** The q-quantile (nearest rank) of the values. */
function percentile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

const SUPPORT_RANGES: readonly [number, number][] = [
  [1, 9],
  [10, 63],
  [64, 255],
  [256, 1_023],
  [1_024, 4_096],
];

/** µs per call of `fn` on each item (wall time, the median of 5 passes over the items). */
function timeMicros<T>(items: readonly T[], fn: (item: T) => unknown): number {
  const runs: number[] = [];
  for (let round = 0; round < 5; round += 1) {
    const started = performance.now();
    for (const item of items) fn(item);
    runs.push(((performance.now() - started) * 1_000) / items.length);
  }
  return +median(runs).toFixed(1);
}

/** Where a close's time goes: each part of the basis model timed alone on window-sized draws of a source. */
function phases(source: Source, lanes: number): Record<string, number | string> {
  const random = createSeededRandom(7);
  const draw = createCategoricalSampler(source.distribution);
  const counted = Array.from({ length: 6 }, () => {
    const counts = new Map<number, number>();
    for (let lane = 0; lane < lanes; lane += 1) {
      const value = draw(random);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return new Map([...counts].sort((a, b) => a[0] - b[0]));
  });
  const histograms = counted.map((counts) => CategoricalDistribution.fromPmf(counts));
  const n = GROUP_SIZE;
  const config = estimator.loadEstimatorConfig({ env: {} });
  const limit = config.compute.quantileExactWorkLimit;
  return {
    source: source.name,
    support: Math.round(histograms.reduce((sum, h) => sum + h.values.length, 0) / histograms.length),
    distribution: timeMicros(counted, (counts) => CategoricalDistribution.fromPmf(counts)),
    lossPredicted: timeMicros(histograms, (d) => preparedExpectedLoss(prepareFastLoss(d), n)),
    workloadLoss: timeMicros(histograms, (d) => preparedWorkloadLoss(prepareWorkloadLoss(d), n)),
    // The linearised standard error (one quadrature); a tree without it (a baseline) reports its 32-replicate bootstrap's cost: 32 evaluations of E[X].
    standardError:
      'lossStandardError' in model
        ? timeMicros(histograms, (d) => (model as unknown as { lossStandardError: (d: CategoricalDistribution, n: number, total: number) => number }).lossStandardError(d, n, lanes))
        : 32 * timeMicros(histograms, (d) => preparedExpectedLoss(prepareFastLoss(d), n)),
    quantiles: timeMicros(histograms, (d) =>
      exactCost(d, n).operations <= limit
        ? lossQuantiles(d, n, [0.5, 0.9, 0.99], { method: 'exact' })
        : lossQuantiles(d, n, [0.5, 0.9, 0.99], { method: 'monte-carlo', samples: config.compute.quantileSamples, random: createSeededRandom(1) }),
    ),
    sweep: timeMicros(histograms, (d) => {
      const prepared = prepareFastLoss(d);
      const workload = prepareWorkloadLoss(d);
      let sum = 0;
      for (const size of config.compute.sweepGroupSizes) if (size !== n) sum += preparedExpectedLoss(prepared, size) + preparedWorkloadLoss(workload, size);
      return sum;
    }),
    fit: timeMicros(histograms, (d) => estimator.modelFitter(d, lanes)),
  };
}

function main(): void {
  const windows = Number(argument('--windows', '12'));
  const windowMillis = Number(argument('--window-millis', '1000'));
  const extra = Object.fromEntries(
    argument('--env', '')
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
  );
  const sources = [...h200Sources(), ...syntheticSources()];
  const lanes = (windowMillis / 1_000) * LAUNCHES_PER_SECOND * GROUPS_PER_LAUNCH * GROUP_SIZE;
  process.stderr.write(`window close: ${sources.length} streams × ${windows} windows of ${windowMillis} ms (${lanes} lanes each)\n`);
  runEngine(sources, 2, windowMillis, extra); // warm-up (JIT)
  const closes = runEngine(sources, windows, windowMillis, extra).filter((close) => close.support > 0);
  const micros = (values: readonly number[], q: number): number => +(percentile(values, q) * 1_000).toFixed(1);
  const bySupport = SUPPORT_RANGES.map(([low, high]) => {
    const inRange = closes.filter((close) => close.support >= low && close.support <= high).map((close) => close.millis);
    return inRange.length === 0 ? undefined : { support: `${low}-${high}`, closes: inRange.length, p50Micros: micros(inRange, 0.5), p99Micros: micros(inRange, 0.99), meanMicros: +((inRange.reduce((a, b) => a + b, 0) / inRange.length) * 1_000).toFixed(1) };
  }).filter((row) => row !== undefined);
  const bySource = sources.map((source) => {
    const own = closes.filter((close) => close.source === source.name);
    return { source: source.name, support: Math.round(own.reduce((sum, c) => sum + c.support, 0) / own.length), p50Micros: micros(own.map((c) => c.millis), 0.5), p99Micros: micros(own.map((c) => c.millis), 0.99) };
  });
  const all = closes.map((close) => close.millis);
  const overall = { closes: all.length, p50Micros: micros(all, 0.5), p99Micros: micros(all, 0.99), meanMicros: +((all.reduce((a, b) => a + b, 0) / all.length) * 1_000).toFixed(1) };
  const parts = sources.map((source) => phases(source, lanes));
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  const record = {
    case: `${windowMillis} ms windows`,
    commit,
    settings: Object.keys(extra).length === 0 ? 'service defaults' : extra,
    overall,
    bySupport,
    bySource,
    partsMicros: parts,
  };
  console.log(JSON.stringify(record, null, 1));
  if (process.argv.includes('--write')) {
    const file = fileURLToPath(new URL('./results/window-close.json', import.meta.url));
    const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { results?: { case: string }[] }).results ?? []) : [];
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'estimator', 'model', 'protocol', 'contracts', 'bench'], { encoding: 'utf8' }).trim() !== '';
    const out = {
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadAverage1m: loadavg()[0], node: process.version, date: new Date().toISOString(), commit, dirty },
      timeBasis: 'wall time per window close as the engine measures it (performance.now), nearest-rank percentiles; parts: wall-time medians of 5 passes',
      results: [record, ...previous.filter((old) => old.case !== record.case)],
    };
    writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
    console.log(`wrote ${file}`);
  }
}

main();
