/**
 * In-process driver of the estimator engine (docs/estimator.md, Performance): the bench's frames
 * fed to `createEstimatorEngine` without Kafka or InfluxDB, timed in CPU time of this process
 * (process.cpuUsage, user + system) so that the load of a shared machine changes the numbers
 * little, and always against baselines measured in the same run, interleaved round by round:
 * decoding the same frames alone, and optionally a second engine (`--baseline <dir>`: the root of
 * another checkout, e.g. an export of main) on the same frames.
 *
 *     npx tsx bench/estimator-engine-driver.ts throughput [--baseline /tmp/ww-base] [--rounds 7] [--cases 10s,1s,samples] [--launch-ids recorder] [--write]
 *       (--write: bench/results/estimator-inprocess.json; a baseline tree: `git archive <commit> | tar -x -C /tmp/ww-base`
 *       and a node_modules link in it)
 *     npx tsx bench/estimator-engine-driver.ts profile --case 1s     # under node --cpu-prof (see below)
 *     npx tsx bench/estimator-engine-driver.ts memory                # RSS: 10,000 live streams; 20,000 against a 10,000 cap
 *     node --expose-gc --import tsx bench/estimator-engine-driver.ts memory --streams 10000 --launches 1100 --launch-ids recorder --checkpoint-every 20 --write
 *       (full dedupe memories, recorder-like launchIds: the steady state of long-running jobs)
 *     node --cpu-prof --cpu-prof-dir /tmp/prof --import tsx bench/estimator-engine-driver.ts profile --case 1s
 *
 * The engine runs with the service's default settings (the config of an empty environment
 * with the service's fitter: the parametric fit, bootstrap/linearised standard error, exact or Monte Carlo
 * quantiles, the sweep) and its points are turned into line protocol as the InfluxDB writer does.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { decodeFrame } from '../protocol/index.ts';
import type * as EstimatorModule from '../estimator/index.ts';
import { frameAt, recorderLaunchId, samplesFrameAt, samplesTemplates, SUMMARIES_PER_SAMPLES_FRAME, templates } from './estimator-frames.ts';
import { argument, cpuMicros, importFromTree, median } from './driver-support.ts';

type Estimator = typeof EstimatorModule;

/** One workload: frames in partition order, and the window length the engine runs with. */
interface Workload {
  readonly name: string;
  readonly frames: readonly Buffer[];
  /** The partition of each frame: its stream's (stream mod 6, as Kafka's key hashing keeps a stream in one partition). */
  readonly partitions: readonly number[];
  readonly windowMillis: number;
  /** Launch summaries among the frames (the rest are GroupSamples frames). */
  readonly summaries: number;
}

const START_MILLIS = 1_700_000_000_000;
/** The traceparent header of the frames (a collector sends one per record). */
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
const WALL_MILLIS = Date.now() + 86_400_000;

type CaseName = '10s' | '1s' | 'samples' | 'varied';
/** The frames' launchIds: the launch's number (`counter`), or 64-bit hashes as the C++ recorder makes them (`recorder`, `--launch-ids recorder`). */
type LaunchIds = 'counter' | 'recorder';

/**
 * The bench's throughput backlogs: 100 streams, event time 100 ms apart per stream; with
 * GroupSamples, one per 4 launches of a stream. Their frames repeat one histogram per stream
 * (as a kernel on inputs of one shape does), so a window's basis repeats too; `varied` (1 s
 * windows) draws every launch afresh, so no two windows share a basis (the model cache never hits).
 */
export function workload(name: CaseName, frames: number, launchIds: LaunchIds = 'counter'): Workload {
  const streams = 100;
  const summaryTemplates = templates(streams, 3);
  const freshTemplates = new Map<number, ReturnType<typeof templates>>();
  const templateOf = (s: number, launch: number): (typeof summaryTemplates)[number] => {
    if (name !== 'varied') return summaryTemplates[s]!;
    let set = freshTemplates.get(launch);
    if (set === undefined) freshTemplates.set(launch, (set = templates(streams, 1_000 + launch)));
    return set[s]!;
  };
  const samples = name === 'samples' ? samplesTemplates(summaryTemplates, 4, 6) : [];
  const out: Buffer[] = [];
  const partitions: number[] = [];
  let summaries = 0;
  for (let k = 0; out.length < frames; k += 1) {
    const s = k % streams;
    const launch = Math.floor(k / streams);
    const endMillis = START_MILLIS + launch * 100;
    const launchId = launchIds === 'recorder' ? recorderLaunchId(s, launch) : BigInt(k);
    out.push(frameAt(templateOf(s, launch), k, endMillis, launchId));
    partitions.push(s % 6);
    summaries += 1;
    if (name === 'samples' && (launch + s) % SUMMARIES_PER_SAMPLES_FRAME === 0) {
      out.push(samplesFrameAt(samples[s]![launch % samples[s]!.length]!, k, endMillis, launchId));
      partitions.push(s % 6);
    }
  }
  return { name, frames: out, partitions, windowMillis: name === '1s' || name === 'varied' ? 1_000 : 10_000, summaries };
}

/** Runs `frames` through a fresh engine of `estimator` (the service's default settings) and closes every window. Returns the window closes. */
function runEngine(estimator: Estimator, load: Workload, extra: Record<string, string> = {}): number {
  const config = estimator.loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: String(load.windowMillis), WARPWATCH_HISTOGRAM_POINTS: 'false', ...extra } });
  let windows = 0;
  let lineBytes = 0;
  const engine = estimator.createEstimatorEngine(
    engineOptionsOf(estimator, config),
    {
      writePoints: (points) => {
        for (const point of points) lineBytes += estimator.toLineProtocol(point).length;
      },
      // A record as the Kafka adapter encodes it (an engine before records were typed handed the text).
      publishDistribution: (_key, record: unknown) => {
        lineBytes += (typeof record === 'string' ? record : JSON.stringify(record)).length;
      },
      publishAlert: () => {},
    },
    { frame: () => {}, windowClosed: () => (windows += 1), modelError: () => {}, alertRaised: () => {} },
  );
  // Each frame with the headers a collector sends (a new object per message, as the Kafka adapter makes them).
  load.frames.forEach((bytes, i) => engine.handleMessage(load.partitions[i]!, String(i), bytes, WALL_MILLIS, { 'ww-host': 'gpu-host-7', 'ww-source': 'stdin', traceparent: TRACEPARENT }));
  engine.closeAll();
  if (lineBytes === 0) throw new Error('no output');
  return windows;
}

/**
 * The engine options of the service for `config`: the config with the service's fitter and
 * clock; a baseline checkout from before the config slices were the engine's options maps them
 * with its own `engineOptionsFromConfig`.
 */
function engineOptionsOf(estimator: Estimator, config: ReturnType<Estimator['loadEstimatorConfig']>): Parameters<Estimator['createEstimatorEngine']>[0] {
  const older = (estimator as Partial<Record<'engineOptionsFromConfig', (c: typeof config) => Parameters<Estimator['createEstimatorEngine']>[0]>>).engineOptionsFromConfig;
  if (older !== undefined) return older(config);
  return { ...config, fitter: estimator.modelFitter, monotonicMillis: () => performance.now() };
}

async function loadEstimator(root: string): Promise<Estimator> {
  return importFromTree<Estimator>(root, 'estimator/index.ts');
}

async function throughput(): Promise<void> {
  const current = await loadEstimator(fileURLToPath(new URL('..', import.meta.url)));
  const baselineRoot = process.argv.includes('--baseline') ? argument('--baseline', '') : undefined;
  const baseline = baselineRoot === undefined ? undefined : await loadEstimator(baselineRoot);
  const rounds = Number(argument('--rounds', '7'));
  const cases = argument('--cases', '10s,1s,samples,varied').split(',') as CaseName[];
  // The Kafka bench's backlogs until 2026-11-28: 100,000 and 30,000 launch summaries; 12,000 with 3,000 GroupSamples frames (it now drains longer ones: bench/estimator.bench.ts).
  const sizes = { '10s': 100_000, '1s': 30_000, samples: 15_000, varied: 10_000 };
  const results: Record<string, unknown>[] = [];
  const loadBefore = loadavg()[0];
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  for (const name of cases) {
    const launchIds: LaunchIds = argument('--launch-ids', 'counter') === 'recorder' ? 'recorder' : 'counter';
    const load = workload(name, sizes[name], launchIds);
    const n = load.frames.length;
    const times: Record<string, number[]> = { decode: [], current: [], baseline: [] };
    let windows = 0;
    // One warm-up of each, then rounds interleaved: decode, baseline, current.
    for (let round = -1; round < rounds; round += 1) {
      const decode = cpuMicros(() => {
        for (const bytes of load.frames) decodeFrame(bytes);
      });
      const base = baseline === undefined ? Number.NaN : cpuMicros(() => runEngine(baseline, load));
      const cur = cpuMicros(() => (windows = runEngine(current, load)));
      if (round < 0) continue;
      times.decode!.push(decode);
      times.baseline!.push(base);
      times.current!.push(cur);
    }
    const perFrame = (key: string): number => median(times[key]!) / n;
    const decode = perFrame('decode');
    const cur = perFrame('current');
    const base = perFrame('baseline');
    const result = {
        // Recorder-like launchIds are a case of their own in the results file.
        case: launchIds === 'recorder' ? `${name}, recorder launchIds` : name,
        commit,
        loadAverage1m: loadavg()[0],
        frames: n,
        launchSummaries: load.summaries,
        windowCloses: windows,
        rounds,
        decodeCpuMicrosPerFrame: +decode.toFixed(3),
        engineCpuMicrosPerFrame: +cur.toFixed(3),
        engineRatioToDecode: +(cur / decode).toFixed(2),
        launchSummariesPerCpuSecond: Math.round((load.summaries / (median(times.current!) / 1e6))),
        ...(baseline === undefined
          ? {}
          : { baselineCpuMicrosPerFrame: +base.toFixed(3), baselineRatioToDecode: +(base / decode).toFixed(2), speedup: +(base / cur).toFixed(2), baselineLaunchSummariesPerCpuSecond: Math.round(load.summaries / (median(times.baseline!) / 1e6)) }),
    };
    results.push(result);
    console.log(JSON.stringify(result));
  }
  if (process.argv.includes('--write')) {
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'estimator', 'model', 'protocol', 'contracts', 'bench'], { encoding: 'utf8' }).trim() !== '';
    const file = fileURLToPath(new URL('./results/estimator-inprocess.json', import.meta.url));
    // Cases not run this time keep their last record.
    const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { results?: Record<string, unknown>[] }).results ?? []) : [];
    const kept = previous.filter((old) => !results.some((now) => now.case === old.case));
    const record = {
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadAverage1mStart: loadBefore, loadAverage1mEnd: loadavg()[0], node: process.version, date: new Date().toISOString(), commit, dirty },
      timeBasis: 'cpu (process.cpuUsage, user + system), medians over interleaved rounds',
      baseline: baselineRoot === undefined ? null : `engine of ${baselineRoot} (argument --baseline)`,
      settings: 'the config of an empty environment as engine options (the service defaults, parametric fit included), WARPWATCH_HISTOGRAM_POINTS=false as in the Kafka throughput bench; points turned into line protocol',
      results: [...results, ...kept],
    };
    writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    console.log(`wrote ${file}`);
  }
}

/** Runs one case in a loop for a profiler (node --cpu-prof). */
async function profile(): Promise<void> {
  const root = process.argv.includes('--baseline') ? argument('--baseline', '') : fileURLToPath(new URL('..', import.meta.url));
  const estimator = await loadEstimator(root);
  const name = argument('--case', '1s') as CaseName;
  const load = workload(name, Number(argument('--frames', '10000')));
  const repeats = Number(argument('--repeats', '5'));
  const used = cpuMicros(() => {
    for (let r = 0; r < repeats; r += 1) runEngine(estimator, load);
  });
  console.log(JSON.stringify({ case: name, frames: load.frames.length, repeats, cpuMicrosPerFrame: +(used / (repeats * load.frames.length)).toFixed(3) }));
}

/**
 * RSS of the engine holding `live` streams (`--launches`, default 3, each; 10 min windows open),
 * and with `offered` distinct streams against a cap of `cap` (evictions). Run one per process
 * (`--streams 10000` / `--streams 20000 --cap 10000`): RSS does not shrink after a case.
 * `--launch-ids recorder` gives the launches 64-bit launchIds as the C++ recorder does (default
 * `counter`: the launch number); with `--launches 1100` every stream's dedupe memory is full (the
 * steady state of a long-running job). The partitions are checkpointed every
 * `--checkpoint-every` launches (default 1). `--write` keeps the result in
 * bench/results/estimator-memory-inprocess.json (one record per tree and parameters).
 */
async function memory(): Promise<void> {
  const root = process.argv.includes('--baseline') ? argument('--baseline', '') : fileURLToPath(new URL('..', import.meta.url));
  const estimator = await loadEstimator(root);
  const streams = Number(argument('--streams', '10000'));
  const cap = argument('--cap', '');
  const launches = Number(argument('--launches', '3'));
  const recorderIds = argument('--launch-ids', 'counter') === 'recorder';
  const checkpointEvery = Number(argument('--checkpoint-every', '1'));
  const shapes = templates(50, 4);
  const config = estimator.loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '600000', ...(cap === '' ? {} : { WARPWATCH_MAX_STREAMS: cap }) } });
  let evicted = 0;
  let windows = 0;
  let points = 0;
  const engine = estimator.createEstimatorEngine(
    engineOptionsOf(estimator, config),
    { writePoints: (p) => (points += p.length), publishDistribution: () => {}, publishAlert: () => {} },
    { frame: () => {}, windowClosed: () => (windows += 1), modelError: () => {}, alertRaised: () => {}, streamEvicted: () => (evicted += 1) },
  );
  const rssBefore = process.memoryUsage().rss;
  let lastCheckpointBytes = 0;
  // Bytes written in the rounds of the second half of the run (the steady state once memories fill).
  let laterCheckpointBytes = 0;
  let laterCheckpointRounds = 0;
  let checkpointCpuMicros = 0;
  let checkpointRounds = 0;
  let offset = 0;
  const started = process.cpuUsage();
  for (let launch = 0; launch < launches; launch += 1) {
    for (let s = 0; s < streams; s += 1) {
      const template = { ...shapes[s % 50]!, job: `mem${s}` };
      const launchId = recorderIds ? recorderLaunchId(s, launch) : BigInt(launch);
      engine.handleMessage(s % 6, String(offset), frameAt(template, launch, START_MILLIS + launch * 1000, launchId), WALL_MILLIS + offset);
      offset += 1;
    }
    // The service checkpoints every partition periodically (dirty streams encoded).
    if ((launch + 1) % checkpointEvery === 0 || launch + 1 === launches) {
      const before = process.cpuUsage();
      for (const partition of engine.partitions()) {
        for (const record of engine.checkpoint(partition)?.records ?? []) lastCheckpointBytes += record.value?.length ?? 0;
      }
      if (2 * (launch + 1) > launches) {
        laterCheckpointBytes += lastCheckpointBytes;
        laterCheckpointRounds += 1;
      }
      const spent = process.cpuUsage(before);
      checkpointCpuMicros += spent.user + spent.system;
      checkpointRounds += 1;
      if (launch + 1 < launches) lastCheckpointBytes = 0;
    }
  }
  const used = process.cpuUsage(started);
  global.gc?.();
  const usage = process.memoryUsage();
  const result = {
    tree: root === fileURLToPath(new URL('..', import.meta.url)) ? 'current' : `baseline ${root}`,
    streamsOffered: streams,
    launches,
    launchIds: recorderIds ? 'recorder' : 'counter',
    checkpointEvery,
    cap: cap === '' ? null : Number(cap),
    frames: offset,
    liveStreams: engine.liveStreams(),
    evicted,
    windowsClosedByEviction: windows,
    points,
    cpuMicrosPerFrame: +((used.user + used.system) / offset).toFixed(1),
    rssMegabytes: +(usage.rss / 1e6).toFixed(0),
    rssPeakMegabytes: +((process.resourceUsage().maxRSS * 1024) / 1e6).toFixed(0),
    rssBeforeMegabytes: +(rssBefore / 1e6).toFixed(0),
    heapUsedMegabytes: +(usage.heapUsed / 1e6).toFixed(0),
    arrayBuffersMegabytes: +(usage.arrayBuffers / 1e6).toFixed(0),
    checkpointRounds,
    checkpointCpuMillisPerRound: +(checkpointCpuMicros / checkpointRounds / 1000).toFixed(1),
    lastCheckpointBytesPerStream: Math.round(lastCheckpointBytes / Math.max(1, engine.liveStreams())),
    checkpointBytesPerStreamRoundSecondHalf: Math.round(laterCheckpointBytes / Math.max(1, laterCheckpointRounds) / Math.max(1, engine.liveStreams())),
  };
  console.log(JSON.stringify(result));
  if (process.argv.includes('--write')) {
    // One record per tree and parameters; the others are kept (run one case per process).
    const file = fileURLToPath(new URL('./results/estimator-memory-inprocess.json', import.meta.url));
    const sameCase = (r: Record<string, unknown>): boolean =>
      r.tree === result.tree && r.streamsOffered === streams && r.cap === result.cap && r.launches === launches && r.launchIds === result.launchIds && r.checkpointEvery === checkpointEvery;
    const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { results?: Record<string, unknown>[] }).results ?? []) : [];
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadAverage1m: loadavg()[0], node: process.version, date: new Date().toISOString(), commit };
    const record = {
      note: 'bench/estimator-engine-driver.ts memory: the engine in process, RSS and heap after a full GC at the end (node --expose-gc), CPU time per frame with the checkpoint rounds',
      results: [...previous.filter((r) => !sameCase(r)), { ...result, machine }],
    };
    writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    console.log(`wrote ${file}`);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const mode = process.argv[2];
  if (mode === 'throughput') await throughput();
  else if (mode === 'profile') await profile();
  else if (mode === 'memory') await memory();
  else {
    console.error('usage: estimator-engine-driver.ts throughput|profile|memory [options] (see the file header)');
    process.exitCode = 2;
  }
}
