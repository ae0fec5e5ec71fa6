/**
 * The window model's cache-miss path in process (docs/estimator.md, Performance): every window
 * close whose basis the model cache does not hold computes the basis model (μ_A, E[max]/E[W],
 * the linearised standard error, exact quantiles, the granularity sweep, the parametric fit).
 * This driver closes windows whose bases never repeat, without a cache, with the service's
 * default compute settings and fitter, and times `computeWindowResult` in CPU time of this
 * process (process.cpuUsage, user + system) against another tree's, interleaved round by round,
 * on the same windows; and again with a cache holding every basis (all hits), so that a miss
 * less a hit is the basis model's own cost. It also checks that both trees give the same result text.
 *
 *     npx tsx bench/basis-model-driver.ts --baseline /tmp/ww-base [--rounds 7] [--windows 400] [--shape random|bench] [--env KEY=VALUE,…]
 *       (a baseline tree: `git archive <commit> | tar -x -C /tmp/ww-base` and a node_modules link in it)
 *     npx tsx bench/basis-model-driver.ts --phases [--baseline /tmp/ww-base]   # one tree's basis model split by part (µs per window)
 *
 * Shapes: `random` draws histograms of 3..200 entries (values 0..~4·entries, weights 1..2,000
 * lanes, a quarter of them decayed to fractions); `bench` draws the engine bench's windows
 * (10 launches × 64 groups × 32 lanes of a three-point distribution, as bench/estimator-frames.ts).
 * `--env` changes settings (the service's environment variables), e.g.
 * `WARPWATCH_QUANTILE_SAMPLES=100`: the random shape's windows are dominated by what is seeded
 * per window (bootstrap, Monte Carlo quantiles), whose noise swamps a miss less a hit.
 */
import { fileURLToPath } from 'node:url';
import { createSeededRandom, type RandomSource } from '../model/index.ts';
import type * as WindowResultModule from '../estimator/engine/window-result.ts';
import type * as StreamStateModule from '../estimator/engine/stream-state.ts';
import type * as HistogramModule from '../estimator/engine/count-histogram.ts';
import type * as EstimatorModule from '../estimator/index.ts';
import type * as ModelModule from '../model/index.ts';
import type { StreamIdentity } from '../contracts/index.ts';
import { GROUP_SIZE } from './estimator-frames.ts';
import { argument, cpuMicros, importFromTree, median } from './driver-support.ts';

interface Tree {
  readonly windowResult: typeof WindowResultModule;
  readonly streamState: typeof StreamStateModule;
  readonly histogram: typeof HistogramModule;
  readonly estimator: typeof EstimatorModule;
}

async function loadTree(root: string): Promise<Tree> {
  const load = async <T>(path: string): Promise<T> => importFromTree<T>(root, path);
  return {
    windowResult: await load('estimator/engine/window-result.ts'),
    streamState: await load('estimator/engine/stream-state.ts'),
    histogram: await load('estimator/engine/count-histogram.ts'),
    estimator: await load('estimator/index.ts'),
  };
}

/** Histogram entries (value → weight) of one window, drawn per `shape`. */
function drawCounts(shape: string, random: RandomSource): Map<number, number> {
  const counts = new Map<number, number>();
  if (shape === 'bench') {
    // 10 launches × 64 groups × 32 lanes, each lane 1..7, 10..22 or 30 (by stream) with weights 3:2:1.
    const low = 1 + random.nextInt(7);
    const middle = 10 + random.nextInt(13);
    for (let lane = 0; lane < 10 * 64 * 32; lane += 1) {
      const u = random.nextInt(6);
      const value = u < 3 ? low : u < 5 ? middle : 30;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
  } else {
    const size = 3 + random.nextInt(198);
    const decayed = random.nextInt(4) === 0;
    const span = size + random.nextInt(3 * size + 1);
    const values = new Set<number>();
    while (values.size < size) values.add(random.nextInt(span + 1));
    for (const value of values) counts.set(value, decayed ? (1 + random.nextInt(2_000)) * 0.63 ** (1 + random.nextInt(6)) : 1 + random.nextInt(2_000));
  }
  return counts;
}

/** Windows of one tree with the given histograms (the sums are what a window of them would have). */
function windowsOf(tree: Tree, all: readonly Map<number, number>[]): { identity: StreamIdentity; window: StreamStateModule.WindowAccumulation }[] {
  const options = { maxExactSupport: 4096, subBinsPerOctave: 128 };
  return all.map((counts, i) => {
    const window = tree.streamState.createWindowAccumulation(1_700_000_000_000 + i * 1_000, 1_000);
    for (const [value, weight] of counts) tree.histogram.addCount(window.histogram, value, value, weight, options);
    window.launches = 10;
    window.groups = window.histogram.total / GROUP_SIZE;
    window.units = window.histogram.total;
    window.sumLossCounts = window.groups * 1.5;
    const identity: StreamIdentity = { stream: `bench${i}/k`, job: `bench${i}`, kernel: 'k', device: 'synthetic', groupSize: GROUP_SIZE, source: 'cpu', deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'h', labels: {} };
    return { identity, window };
  });
}

/** `--env KEY=VALUE,KEY=VALUE`: settings of the service's config (its environment variables) on top of the defaults. */
function settings(): Record<string, string> {
  const text = argument('--env', '');
  return Object.fromEntries(text === '' ? [] : text.split(',').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
}

async function compare(): Promise<void> {
  const current = await loadTree(fileURLToPath(new URL('..', import.meta.url)));
  const baselineRoot = argument('--baseline', '');
  const baseline = baselineRoot === '' ? undefined : await loadTree(baselineRoot);
  const rounds = Number(argument('--rounds', '7'));
  const count = Number(argument('--windows', '400'));
  const shape = argument('--shape', 'random');
  const random = createSeededRandom(20261127);
  const all = Array.from({ length: count }, () => drawCounts(shape, random));
  // Windows and settings per tree built outside the timed part; the results are compared as text after it.
  const prepared = (tree: Tree) => {
    const config = tree.estimator.loadEstimatorConfig({ env: settings() });
    return { tree, compute: { ...config.compute, fitter: tree.estimator.modelFitter }, windows: windowsOf(tree, all) };
  };
  // Without a cache every window misses; with a cache that holds every basis (filled before the
  // rounds) every window hits, which times what a window close costs besides the basis model.
  const run = ({ tree, compute, windows }: ReturnType<typeof prepared>, cache?: WindowResultModule.WindowModelCache): unknown[] =>
    windows.map(({ identity, window }) => tree.windowResult.computeWindowResult(identity, window, window.histogram, compute, cache));
  const warmCache = (setup: ReturnType<typeof prepared>): WindowResultModule.WindowModelCache => {
    const cache = setup.tree.windowResult.createWindowModelCache(count + 1, 64 * 1_000 * (count + 1));
    run(setup, cache);
    return cache;
  };
  const setups = [{ name: 'current', setup: prepared(current) }, ...(baseline === undefined ? [] : [{ name: 'baseline', setup: prepared(baseline) }])].map((entry) => ({
    ...entry,
    cache: warmCache(entry.setup),
    miss: [] as number[],
    hit: [] as number[],
    results: [] as unknown[],
  }));
  let same = true;
  for (let round = -1; round < rounds; round += 1) {
    // Alternate which tree goes first.
    for (const entry of round % 2 === 0 ? setups : [...setups].reverse()) {
      const miss = cpuMicros(() => (entry.results = run(entry.setup)));
      const hit = cpuMicros(() => run(entry.setup, entry.cache));
      if (round >= 0) {
        entry.miss.push(miss / count);
        entry.hit.push(hit / count);
      }
    }
    if (setups.length === 2 && setups[0]!.results.some((result, i) => JSON.stringify(result) !== JSON.stringify(setups[1]!.results[i]))) same = false;
  }
  const summary = (entry: (typeof setups)[number]) => ({
    cpuMicrosPerWindowMiss: +median(entry.miss).toFixed(1),
    cpuMicrosPerWindowHit: +median(entry.hit).toFixed(1),
    // The basis model: a miss less a hit, per round, median.
    cpuMicrosPerBasisModel: +median(entry.miss.map((miss, i) => miss - entry.hit[i]!)).toFixed(1),
  });
  const now = summary(setups[0]!);
  const before = setups[1] === undefined ? undefined : summary(setups[1]);
  console.log(
    JSON.stringify({
      shape,
      windows: count,
      rounds,
      ...now,
      baseline: before,
      speedupMiss: before === undefined ? undefined : +(before.cpuMicrosPerWindowMiss / now.cpuMicrosPerWindowMiss).toFixed(2),
      speedupBasisModel: before === undefined ? undefined : +(before.cpuMicrosPerBasisModel / now.cpuMicrosPerBasisModel).toFixed(2),
      identicalResults: baseline === undefined ? undefined : same,
    }),
  );
  if (!same) process.exitCode = 1;
}

async function phases(): Promise<void> {
  const root = process.argv.includes('--baseline') ? argument('--baseline', '') : fileURLToPath(new URL('..', import.meta.url));
  const model = await importFromTree<typeof ModelModule>(root, 'model/index.ts');
  const tree = await loadTree(root);
  const count = Number(argument('--windows', '400'));
  const shape = argument('--shape', 'random');
  const random = createSeededRandom(20261127);
  const all = Array.from({ length: count }, () => drawCounts(shape, random));
  const config = tree.estimator.loadEstimatorConfig({ env: settings() });
  const compute = config.compute;
  const n = GROUP_SIZE;
  const dists = all.map((counts) => model.CategoricalDistribution.fromPmf(counts));
  const parts: Record<string, () => void> = {
    distribution: () => all.forEach((counts) => model.CategoricalDistribution.fromPmf(counts)),
    expectedLoss: () => dists.forEach((d) => model.expectedLoss(d, n)),
    workloadLoss: () => dists.forEach((d) => model.workloadLoss(d, n)),
    linearised: () => all.forEach((counts) => tree.windowResult.linearisedStandardError(counts, n)),
    exactQuantiles: () =>
      dists.forEach((d) => model.exactCost(d, n).operations <= compute.quantileExactWorkLimit && model.lossQuantiles(d, n, [0.5, 0.9, 0.99], { method: 'exact' })),
    sweep: () => dists.forEach((d) => compute.sweepGroupSizes.forEach((size) => size !== n && (model.expectedLoss(d, size), model.workloadLoss(d, size)))),
    fit: () => dists.forEach((d, i) => tree.estimator.modelFitter(d, all[i]!.size)),
  };
  const result: Record<string, number> = {};
  for (const [name, fn] of Object.entries(parts)) {
    fn();
    const samples = [0, 1, 2, 3, 4].map(() => cpuMicros(fn) / count);
    result[name] = +median(samples).toFixed(1);
  }
  console.log(JSON.stringify({ shape, windows: count, cpuMicrosPerWindow: result }));
}

if (process.argv.includes('--phases')) await phases();
else await compare();
