import { trace, type Span, type Tracer, type TracerProvider } from '@opentelemetry/api';
import { PrometheusExporter, PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import type { FrameKind } from '../../protocol/index.ts';
import type { FrameOutcome } from '../engine/estimator-engine.ts';
import { createEstimatorTelemetry } from './estimator-telemetry.ts';

/** A reader collected on demand with cumulative temporality: what the OTLP push exports (metrics-export.ts). */
class CumulativeReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

/** A MeterProvider read by a Prometheus exporter (as /metrics) and a cumulative reader (as OTLP). */
function exportSetup(): { provider: MeterProvider; prometheus: PrometheusExporter; otlp: CumulativeReader } {
  const prometheus = new PrometheusExporter({ preventServerStart: true, withoutScopeInfo: true, withoutTargetInfo: true });
  const otlp = new CumulativeReader();
  return { provider: new MeterProvider({ readers: [prometheus, otlp] }), prometheus, otlp };
}

/** The warpwatch_estimator_frames block of the Prometheus text (HELP, TYPE and samples). */
async function prometheusFrames(exporter: PrometheusExporter): Promise<string[]> {
  const text = new PrometheusSerializer(undefined, false, undefined, true, true).serialize((await exporter.collect()).resourceMetrics);
  return text.split('\n').filter((line) => line.includes('warpwatch_estimator_frames'));
}

/** The warpwatch.estimator.frames metric as the OTLP exporter gets it, without timestamps. */
async function otlpFrames(reader: CumulativeReader): Promise<unknown> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  const metric = (resourceMetrics as ResourceMetrics).scopeMetrics.flatMap((scope) => scope.metrics).find((m) => m.descriptor.name === 'warpwatch.estimator.frames');
  if (metric === undefined) return undefined;
  return {
    name: metric.descriptor.name,
    description: metric.descriptor.description,
    unit: metric.descriptor.unit,
    valueType: metric.descriptor.valueType,
    dataPointType: metric.dataPointType,
    temporality: metric.aggregationTemporality,
    monotonic: 'isMonotonic' in metric ? metric.isMonotonic : undefined,
    points: metric.dataPoints.map((point) => ({ attributes: point.attributes, value: point.value })),
  };
}

const OUTCOMES: readonly FrameOutcome[] = ['recorded', 'duplicate', 'late', 'rejected', 'future', 'quarantined', 'replayed'];
const TYPES: readonly (FrameKind | undefined)[] = ['launch-summary', 'group-samples', undefined];

/** A fixed mix of frames: every (outcome, type) pair, in an order where new series appear between collections. */
function frameMix(): [FrameOutcome, FrameKind | undefined][] {
  const mix: [FrameOutcome, FrameKind | undefined][] = [];
  let state = 12345;
  for (let i = 0; i < 3_000; i += 1) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    // Mostly recorded launch summaries, as in a running estimator; later frames reach the rarer pairs.
    const rare = state % 10 === 0 || i > 2_900;
    const outcome = rare ? OUTCOMES[(state >> 8) % (i < 1_000 ? 3 : OUTCOMES.length)]! : 'recorded';
    const type = rare ? TYPES[(state >> 4) % TYPES.length] : 'launch-summary';
    mix.push([outcome, type]);
  }
  return mix;
}

/** The frames as the code before the observable counter counted them: one counter add per frame. */
function previousFramesCounter(provider: MeterProvider): (outcome: FrameOutcome, type: FrameKind | undefined) => void {
  const frames = provider.getMeter('warpwatch-estimator').createCounter('warpwatch.estimator.frames', { description: 'Frames consumed, by outcome and frame type', unit: '{frame}' });
  return (outcome, type) => frames.add(1, type === undefined ? { outcome } : { outcome, type });
}

describe('estimator telemetry: warpwatch.estimator.frames', () => {
  it('exports the same frames series and values on /metrics and to OTLP as one counter add per frame did, collection after collection', async () => {
    const previous = exportSetup();
    const current = exportSetup();
    const add = previousFramesCounter(previous.provider);
    const telemetry = createEstimatorTelemetry(current.provider.getMeter('warpwatch-estimator'), trace.getTracer('t'), () => ({ streams: 0, influxBuffered: 0, influxDropped: 0 }));
    const expected = new Map<string, number>();
    const mix = frameMix();
    const collectAt = new Set([0, 1, 7, 500, 1_200, 2_950, mix.length]);
    for (let i = 0; i <= mix.length; i += 1) {
      if (collectAt.has(i)) {
        // Both readers, in both orders, so that each sees series its last collection did not.
        const readers = i % 2 === 0 ? (['prometheus', 'otlp'] as const) : (['otlp', 'prometheus'] as const);
        for (const reader of readers) {
          if (reader === 'prometheus') {
            const [before, after] = [await prometheusFrames(previous.prometheus), await prometheusFrames(current.prometheus)];
            expect(after).toEqual(before);
          } else {
            expect(await otlpFrames(current.otlp)).toEqual(await otlpFrames(previous.otlp));
          }
        }
      }
      if (i === mix.length) break;
      const [outcome, type] = mix[i]!;
      add(outcome, type);
      telemetry.engine.frame(outcome, type);
      const label = type === undefined ? `outcome="${outcome}"` : `outcome="${outcome}",type="${type}"`;
      expected.set(label, (expected.get(label) ?? 0) + 1);
    }
    // The counts themselves, tallied here from the mix (a lost or extra frame fails).
    const lines = await prometheusFrames(current.prometheus);
    const samples = new Map(lines.filter((l) => !l.startsWith('#')).map((l) => [/\{(.*)\}/.exec(l)?.[1] ?? '', Number(l.split(' ').at(-1))]));
    expect(samples).toEqual(expected);
    expect(expected.size).toBe(OUTCOMES.length * TYPES.length);
    expect([...expected.values()].reduce((a, b) => a + b, 0)).toBe(mix.length);
    expect(lines.filter((l) => l.startsWith('#'))).toEqual([
      '# HELP warpwatch_estimator_frames_total Frames consumed, by outcome and frame type',
      '# UNIT warpwatch_estimator_frames_total {frame}',
      '# TYPE warpwatch_estimator_frames_total counter',
    ]);
    expect(telemetry.counters.framesIn).toBe(mix.length);
    await previous.provider.shutdown();
    await current.provider.shutdown();
  });

  it('exports no frames series before the first frame, as the counter did not', async () => {
    const { provider, prometheus, otlp } = exportSetup();
    createEstimatorTelemetry(provider.getMeter('warpwatch-estimator'), trace.getTracer('t'), () => ({ streams: 0, influxBuffered: 0, influxDropped: 0 }));
    expect(await prometheusFrames(prometheus)).toEqual([]);
    expect(await otlpFrames(otlp)).toBeUndefined();
    await provider.shutdown();
  });
});

describe('estimator telemetry: whether frame spans can be recorded', () => {
  afterEach(() => {
    trace.disable();
  });

  const recordingTracer: Tracer = {
    startSpan: () => ({}) as Span,
    startActiveSpan: (() => undefined) as unknown as Tracer['startActiveSpan'],
  };
  const provider: TracerProvider = { getTracer: () => recordingTracer };
  const observe = (): { streams: number; influxBuffered: number; influxDropped: number } => ({ streams: 0, influxBuffered: 0, influxDropped: 0 });

  it('not while no tracer SDK is installed (the proxy tracer starts no-op spans); yes from its registration on, and it stays so', () => {
    const meter = new MeterProvider().getMeter('m');
    const telemetry = createEstimatorTelemetry(meter, trace.getTracer('warpwatch-estimator'), observe);
    expect(telemetry.spansRecordable()).toBe(false);
    expect(telemetry.tracer.startSpan('x').isRecording()).toBe(false);
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    expect(telemetry.spansRecordable()).toBe(true);
    expect(telemetry.tracer.startSpan('x')).toEqual({}); // the proxy now starts the SDK's spans
    trace.disable();
    // The proxy keeps the SDK's tracer it bound to: spans still go there.
    expect(telemetry.tracer.startSpan('x')).toEqual({});
    expect(telemetry.spansRecordable()).toBe(true);
  });

  it('always for a tracer that is not the API proxy', () => {
    const telemetry = createEstimatorTelemetry(new MeterProvider().getMeter('m'), recordingTracer, observe);
    expect(telemetry.spansRecordable()).toBe(true);
  });

  it('a tracer SDK installed before the tracer was asked for: recordable', () => {
    trace.setGlobalTracerProvider(provider);
    const telemetry = createEstimatorTelemetry(new MeterProvider().getMeter('m'), trace.getTracer('warpwatch-estimator'), observe);
    expect(telemetry.spansRecordable()).toBe(true);
  });
});
