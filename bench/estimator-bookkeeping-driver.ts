/**
 * Micro-benchmarks of the estimator's bookkeeping per frame and per window close, outside the
 * engine's model work (docs/estimator.md, Performance): the frames counter and the per-frame
 * consumer span (estimator-telemetry.ts, estimator-service.ts), the stream checkpoint encoding
 * (checkpoint-codec.ts) and the distribution record's JSON (contracts/wire-records.ts). Each is
 * timed in CPU time of this process (process.cpuUsage), this tree against another tree's code
 * (`--baseline <dir>`: the root of another checkout, e.g. `git archive <commit> | tar -x -C
 * /tmp/ww-base` with a node_modules link), interleaved round by round, on the same inputs; the
 * checkpoint texts of both trees are also compared byte for byte.
 *
 *     npx tsx bench/estimator-bookkeeping-driver.ts --baseline /tmp/ww-base [--rounds 7]
 *
 * Inputs: the bench's launch summaries (bench/estimator-frames.ts), 300 streams, 10 per second
 * each, 1 s windows, the service's default settings; checkpoints every 2 s of event time over
 * 18 s (as the latency20k case of bench/estimator.bench.ts, whose streams hold 20 to 180 dedupe
 * identities); distribution records from the same engine with every 4th launch of odd streams
 * also a GroupSamples frame.
 */
import { fileURLToPath } from 'node:url';
import type * as EstimatorModule from '../estimator/index.ts';
import type * as TelemetryModule from '../estimator/adapters/estimator-telemetry.ts';
import type * as CodecModule from '../estimator/engine/checkpoint-codec.ts';
import type * as ContractsModule from '../contracts/index.ts';
import type { DistributionRecord } from '../contracts/index.ts';
import type { FrameOutcome } from '../estimator/engine/estimator-engine.ts';
import type { FrameKind } from '../protocol/index.ts';
import { SpanKind, trace } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { frameAt, samplesFrameAt, samplesTemplates, templates } from './estimator-frames.ts';
import { argument, cpuMicros, importFromTree, median } from './driver-support.ts';

interface Tree {
  readonly estimator: typeof EstimatorModule;
  readonly telemetry: typeof TelemetryModule;
  readonly codec: typeof CodecModule;
  readonly contracts: typeof ContractsModule;
}

async function loadTree(root: string): Promise<Tree> {
  const load = async <T>(path: string): Promise<T> => importFromTree<T>(root, path);
  return {
    estimator: await load('estimator/index.ts'),
    telemetry: await load('estimator/adapters/estimator-telemetry.ts'),
    codec: await load('estimator/engine/checkpoint-codec.ts'),
    contracts: await load('contracts/index.ts'),
  };
}

const START_MILLIS = 1_700_000_000_000;
const WALL_MILLIS = Date.now() + 86_400_000;

/** An engine of `tree` with the service's defaults and 1 s windows; its distribution records go to `records`. */
function engineOf(tree: Tree, records: DistributionRecord[]): ReturnType<Tree['estimator']['createEstimatorEngine']> {
  const config = tree.estimator.loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '1000', WARPWATCH_HISTOGRAM_POINTS: 'false' } });
  return tree.estimator.createEstimatorEngine(
    { ...config, fitter: tree.estimator.modelFitter, monotonicMillis: () => performance.now() },
    { writePoints: () => {}, publishDistribution: (_key, record) => void records.push(record), publishAlert: () => {} },
    { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
  );
}

/** Stream checkpoints as the service writes them over 18 s: every 2 s of event time, 300 streams (decoded back to states). */
function checkpointStates(tree: Tree): ReturnType<Tree['codec']['decodeStreamCheckpoint']>[] {
  const streams = 300;
  const summaries = templates(streams, 3);
  const engine = engineOf(tree, []);
  const texts: string[] = [];
  let offset = 0;
  for (let launch = 0; launch < 180; launch += 1) {
    for (let s = 0; s < streams; s += 1) {
      engine.handleMessage(0, String(offset), frameAt(summaries[s]!, launch, START_MILLIS + launch * 100), WALL_MILLIS);
      offset += 1;
    }
    if (launch % 20 === 19) {
      for (const record of engine.checkpoint(0)?.records ?? []) if (record.streamKey !== undefined && record.value !== null) texts.push(record.value);
    }
  }
  return texts.map((text, i) => tree.codec.decodeStreamCheckpoint(text, `s${i}`, WALL_MILLIS));
}

/** Distribution records of 100 streams over 10 s, a quarter of the odd streams' launches with a GroupSamples frame too. */
function distributionRecords(tree: Tree): DistributionRecord[] {
  const streams = 100;
  const summaries = templates(streams, 3);
  const samples = samplesTemplates(summaries, 3, 6);
  const records: DistributionRecord[] = [];
  const engine = engineOf(tree, records);
  let offset = 0;
  for (let launch = 0; launch < 100; launch += 1) {
    for (let s = 0; s < streams; s += 1) {
      const endMillis = START_MILLIS + launch * 100;
      engine.handleMessage(0, String(offset++), frameAt(summaries[s]!, launch, endMillis), WALL_MILLIS);
      if (s % 2 === 1 && launch % 4 === 0) engine.handleMessage(0, String(offset++), samplesFrameAt(samples[s]![launch % 3]!, launch, endMillis), WALL_MILLIS);
    }
  }
  engine.closeAll();
  return records;
}

/**
 * A hand-written serializer of a DistributionRecord built by the engine (members in the order
 * of estimator/engine/records.ts; labels, sweep, fit and sampled through JSON.stringify): the
 * candidate that was measured against JSON.stringify and not adopted (no faster).
 */
function handWrittenDistribution(r: DistributionRecord): string {
  const num = (v: number): string => (Number.isFinite(v) ? String(v) : 'null');
  const nullable = (v: number | null): string => (v === null ? 'null' : num(v));
  const str = (v: string): string => JSON.stringify(v);
  const entries = (list: DistributionRecord['window']['entries']): string => {
    let t = '[';
    for (let i = 0; i < list.length; i += 1) {
      const [low, high, weight] = list[i]!;
      t += `${i === 0 ? '[' : ',['}${num(low)},${num(high)},${num(weight)}]`;
    }
    return `${t}]`;
  };
  const { window: w, current: c, cumulative: cu, predictions: p } = r;
  let t = `{"schema":${str(r.schema)}`;
  if (r.key !== undefined) t += `,"key":${str(r.key)}`;
  t += `,"stream":${str(r.stream)},"job":${str(r.job)},"kernel":${str(r.kernel)},"device":${str(r.device)}`;
  if (r.deviceUuid !== undefined) t += `,"deviceUuid":${str(r.deviceUuid)}`;
  if (r.host !== undefined) t += `,"host":${str(r.host)}`;
  if (r.labels !== undefined) t += `,"labels":${JSON.stringify(r.labels)}`;
  t += `,"groupSize":${num(r.groupSize)},"source":${str(r.source)},"updatedAtMillis":${num(r.updatedAtMillis)}`;
  t += `,"window":{"startMillis":${num(w.startMillis)},"endMillis":${num(w.endMillis)},"launches":${num(w.launches)},"groups":${num(w.groups)},"units":${num(w.units)},"entries":${entries(w.entries)}}`;
  t += `,"current":{"mode":${str(c.mode)},"halfLifeLaunches":${nullable(c.halfLifeLaunches)},"launches":${nullable(c.launches)},"totalWeight":${num(c.totalWeight)},"entries":${entries(c.entries)}}`;
  t += `,"cumulative":{"launches":${num(cu.launches)},"groups":${num(cu.groups)},"totalWeight":${num(cu.totalWeight)},"entries":${entries(cu.entries)}}`;
  const q = p.lossQuantiles;
  t += `,"predictions":{"basis":${str(p.basis)},"lossPredicted":${nullable(p.lossPredicted)},"lossPredictedLow":${nullable(p.lossPredictedLow)},"lossPredictedHigh":${nullable(p.lossPredictedHigh)}`;
  t += `,"standardErrorMethod":${p.standardErrorMethod === null ? 'null' : str(p.standardErrorMethod)},"lossCounts":${nullable(p.lossCounts)},"lossMeasured":${nullable(p.lossMeasured)}`;
  t += `,"workloadLossPredicted":${nullable(p.workloadLossPredicted)},"workloadLossMeasured":${nullable(p.workloadLossMeasured)}`;
  t += `,"lossQuantiles":${q === null ? 'null' : `{"0.5":${num(q['0.5'])},"0.9":${num(q['0.9'])},"0.99":${num(q['0.99'])}}`}`;
  t += `,"binningErrorBound":${num(p.binningErrorBound)},"sweep":${JSON.stringify(p.sweep)},"fit":${JSON.stringify(p.fit)}`;
  if (p.lossLocality !== undefined) t += `,"lossLocality":${nullable(p.lossLocality)}`;
  if (p.lossLocalityLow !== undefined) t += `,"lossLocalityLow":${nullable(p.lossLocalityLow)}`;
  if (p.lossLocalityHigh !== undefined) t += `,"lossLocalityHigh":${nullable(p.lossLocalityHigh)}`;
  t += '}';
  if (r.sampled !== undefined) t += `,"sampled":${JSON.stringify(r.sampled)}`;
  return `${t}}`;
}

/** The frames of a running estimator: mostly recorded launch summaries, some GroupSamples, a few duplicates and late ones. */
function frameOutcomes(count: number): [FrameOutcome, FrameKind][] {
  return Array.from({ length: count }, (_, i): [FrameOutcome, FrameKind] => [i % 50 === 7 ? 'duplicate' : i % 97 === 3 ? 'late' : 'recorded', i % 5 === 0 ? 'group-samples' : 'launch-summary']);
}

/** Per-frame telemetry of a tree as the service does it: engine.frame() on a MeterProvider read by Prometheus. */
function framesCounter(tree: Tree): { frame: (outcome: FrameOutcome, type: FrameKind) => void; telemetry: TelemetryModule.EstimatorTelemetry } {
  const provider = new MeterProvider({ readers: [new PrometheusExporter({ preventServerStart: true })] });
  const telemetry = tree.telemetry.createEstimatorTelemetry(provider.getMeter('warpwatch-estimator'), trace.getTracer('warpwatch-estimator'), () => ({ streams: 0, influxBuffered: 0, influxDropped: 0 }));
  return { frame: (outcome, type) => telemetry.engine.frame(outcome, type), telemetry };
}

/** The per-frame span of estimator-service.ts processBatch in a tree (before: always built; after: only when spans can be recorded). */
function frameSpan(tree: Tree, telemetry: TelemetryModule.EstimatorTelemetry): (offset: string) => void {
  const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const { contextFromTraceparent, frameSpanAttributes } = tree.telemetry;
  const start = (): ReturnType<typeof telemetry.tracer.startSpan> => telemetry.tracer.startSpan('warpwatch.estimator.frame', { kind: SpanKind.CONSUMER }, contextFromTraceparent(traceparent));
  if (typeof (telemetry as Partial<TelemetryModule.EstimatorTelemetry>).spansRecordable !== 'function') {
    return (offset) => {
      const span = start();
      span.setAttributes(frameSpanAttributes(3, offset, 'job/kernel', 'recorded'));
      span.end();
    };
  }
  return (offset) => {
    const span = telemetry.spansRecordable() ? start() : undefined;
    if (span !== undefined) {
      span.setAttributes(frameSpanAttributes(3, offset, 'job/kernel', 'recorded'));
      span.end();
    }
  };
}

async function main(): Promise<void> {
  const baselineRoot = argument('--baseline', '');
  if (baselineRoot === '') throw new Error('usage: npx tsx bench/estimator-bookkeeping-driver.ts --baseline <tree> [--rounds 7]');
  const rounds = Number(argument('--rounds', '7'));
  const current = await loadTree(fileURLToPath(new URL('..', import.meta.url)));
  const baseline = await loadTree(baselineRoot);

  const outcomes = frameOutcomes(200_000);
  const offsets = outcomes.map((_, i) => String(i));
  const counters = { baseline: framesCounter(baseline), current: framesCounter(current) };
  const spans = { baseline: frameSpan(baseline, counters.baseline.telemetry), current: frameSpan(current, counters.current.telemetry) };
  const windows = counters.current.telemetry.engine;

  const states = checkpointStates(current);
  const identities = states.reduce((sum, c) => sum + c.state.dedupe.size, 0);
  let differing = 0;
  for (const checkpoint of states) if (baseline.codec.encodeStreamCheckpoint(checkpoint) !== current.codec.encodeStreamCheckpoint(checkpoint)) differing += 1;
  const records = distributionRecords(current);
  for (const record of records) if (handWrittenDistribution(record) !== JSON.stringify(record)) throw new Error('hand-written distribution text differs');

  const cases: Record<string, { unit: number; unitName: string; baseline: () => void; current: () => void }> = {
    'frames counter per frame (engine.frame)': {
      unit: outcomes.length,
      unitName: 'frame',
      baseline: () => outcomes.forEach(([outcome, type]) => counters.baseline.frame(outcome, type)),
      current: () => outcomes.forEach(([outcome, type]) => counters.current.frame(outcome, type)),
    },
    'consumer span per frame, no tracer SDK': {
      unit: offsets.length,
      unitName: 'frame',
      baseline: () => offsets.forEach((offset) => spans.baseline(offset)),
      current: () => offsets.forEach((offset) => spans.current(offset)),
    },
    'windowClosed telemetry (unchanged; windows.add + 2 histogram records)': {
      unit: 100_000,
      unitName: 'close',
      baseline: () => {
        for (let i = 0; i < 100_000; i += 1) windows.windowClosed(i * 1e-3, 250 + (i % 100));
      },
      current: () => {
        for (let i = 0; i < 100_000; i += 1) windows.windowClosed(i * 1e-3, 250 + (i % 100));
      },
    },
    'encodeStreamCheckpoint': {
      unit: states.length,
      unitName: 'checkpoint',
      baseline: () => states.forEach((checkpoint) => baseline.codec.encodeStreamCheckpoint(checkpoint)),
      current: () => states.forEach((checkpoint) => current.codec.encodeStreamCheckpoint(checkpoint)),
    },
    'distribution record JSON: JSON.stringify (baseline) vs hand-written candidate (current)': {
      unit: records.length * 3,
      unitName: 'record',
      baseline: () => {
        for (let i = 0; i < 3; i += 1) records.forEach((record) => baseline.contracts.encodeWireRecord(record));
      },
      current: () => {
        for (let i = 0; i < 3; i += 1) records.forEach((record) => handWrittenDistribution(record));
      },
    },
  };
  console.log(`inputs: ${outcomes.length} frames; ${states.length} stream checkpoints (mean ${(identities / states.length).toFixed(0)} dedupe identities), ${differing} whose texts differ between the trees; ${records.length} distribution records`);
  for (const [name, run] of Object.entries(cases)) {
    const times: { baseline: number[]; current: number[] } = { baseline: [], current: [] };
    run.baseline();
    run.current();
    for (let round = 0; round < rounds; round += 1) {
      const order = round % 2 === 0 ? (['baseline', 'current'] as const) : (['current', 'baseline'] as const);
      for (const which of order) times[which].push(cpuMicros(run[which]) / run.unit);
    }
    const before = median(times.baseline);
    const after = median(times.current);
    console.log(`${name}: baseline ${before.toFixed(3)} µs/${run.unitName}, current ${after.toFixed(3)} µs/${run.unitName} (×${(before / after).toFixed(2)}; CPU, median of ${rounds})`);
  }
}

await main();
