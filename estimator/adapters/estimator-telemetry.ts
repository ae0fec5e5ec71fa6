import { context, ProxyTracer, ProxyTracerProvider, trace, TraceFlags, type Attributes, type Context, type Meter, type Tracer } from '@opentelemetry/api';
import type { FrameKind } from '../../protocol/index.ts';
import type { EngineTelemetry, FrameOutcome } from '../engine/estimator-engine.ts';

/**
 * Self-telemetry of the estimator through @opentelemetry/api only (the SDK and the
 * Prometheus exporter are set up by metrics-server.ts, the entry point's concern). Metric
 * names are dotted, lowercase, with units; stream ids go on spans, never on metric
 * attributes (cardinality).
 */

/** Counters the service also needs to read back (health, warpwatch_pipeline). */
export interface EstimatorCounters {
  framesIn: number;
  framesOut: number;
  /** Not valid frames, valid frames dated too far ahead (outcome `future`, also in framesFuture) and quarantined frames (also in framesQuarantined). */
  framesRejected: number;
  framesFuture: number;
  /** Frames whose handling failed unexpectedly: to the DLQ, not recorded (WW_ERR_ESTIMATOR_FRAME_QUARANTINED). */
  framesQuarantined: number;
  /** Windows whose close failed unexpectedly: their summary to the DLQ, not written (WW_ERR_ESTIMATOR_WINDOW_QUARANTINED). */
  windowsQuarantined: number;
  /** Windows written without the fields derived from a sum that overflowed (WW_ERR_ESTIMATOR_WINDOW_OVERFLOW). */
  windowsOverflowed: number;
  /** Records handed to the DLQ topic: rejected and quarantined frames, quarantined windows. */
  dlqRecords: number;
  framesDropped: number;
  /** Checkpoint records that could not be decoded (their streams started empty). */
  checkpointsCorrupt: number;
  /** Result records for Kafka (distributions, alerts) dropped because the outgoing queue was full. */
  outgoingDropped: number;
  /** Streams evicted to stay within WARPWATCH_MAX_STREAMS. */
  streamsEvicted: number;
  windowsClosed: number;
  modelErrors: number;
  sinkErrors: number;
  /** Messages behind the frames topic's end over the restored partitions; undefined while a partition's lag is unknown (no fresh measurement from a broker that answered). */
  consumerLag: number | undefined;
  lastWindowLatencyMillis: number | undefined;
  /** Full garbage collections the heap target ran (service/heap-target.ts), and their time in ms. */
  heapCollections: number;
  heapCollectionMillis: number;
}

/** Telemetry handles. */
export interface EstimatorTelemetry {
  readonly engine: EngineTelemetry;
  readonly counters: EstimatorCounters;
  readonly tracer: Tracer;
  /**
   * Whether spans of `tracer` can be recorded: false only while it is the API's proxy and no
   * tracer SDK is installed (no global tracer provider registered), when every span it starts
   * is a no-op that nobody sees (docs/estimator.md, Self-telemetry), so the per-frame span and
   * its parent context need not be built. Cheap enough to ask per frame; once true, stays true.
   */
  spansRecordable(): boolean;
  sinkError(sink: 'influx' | 'kafka' | 'checkpoint'): void;
  /** Result records dropped from the full outgoing queue (reason `outgoing-queue-full`). */
  outgoingDropped(count: number): void;
  /** A full garbage collection of the heap target took `durationMillis`. */
  heapCollected(durationMillis: number): void;
}

/**
 * Creates instruments on `meter`. Observable gauges read `observe()` at collection time.
 *
 * Instruments: warpwatch.estimator.frames (observable counter over the counts kept here, {frame},
 * attributes outcome and type),
 * warpwatch.estimator.windows.closed (counter, {window}), warpwatch.estimator.model.duration
 * (histogram, ms), warpwatch.estimator.window.event_lag (histogram, ms: close time − window end),
 * warpwatch.estimator.sink.errors (counter, {error}, attribute sink),
 * warpwatch.estimator.alerts (counter, {alert}, attribute kind), warpwatch.estimator.checkpoints.corrupt
 * (counter, {record}), warpwatch.estimator.records.dropped (counter, {record}, attribute reason),
 * warpwatch.estimator.streams.evicted (counter, {stream}), warpwatch.estimator.windows.quarantined
 * (counter, {window}), warpwatch.estimator.windows.overflowed (counter, {window}),
 * warpwatch.estimator.dlq.records (counter, {record}, attributes kind and reason),
 * warpwatch.estimator.consumer.lag
 * (gauge, {message}), warpwatch.estimator.streams (gauge, {stream}),
 * warpwatch.estimator.influx.buffered_lines (gauge, {line}), warpwatch.estimator.influx.dropped_lines
 * (observable counter, {line}), warpwatch.estimator.heap.collections (counter, {collection}),
 * warpwatch.estimator.heap.collection.duration (histogram, ms).
 *
 * @example
 * const telemetry = createEstimatorTelemetry(meter, tracer, () => ({ streams: engine.liveStreams(), influxBuffered: 0, influxDropped: 0 }));
 */
export function createEstimatorTelemetry(
  meter: Meter,
  tracer: Tracer,
  observe: () => { streams: number; influxBuffered: number; influxDropped: number },
): EstimatorTelemetry {
  const counters: EstimatorCounters = {
    framesIn: 0,
    framesOut: 0,
    framesRejected: 0,
    framesFuture: 0,
    framesQuarantined: 0,
    windowsQuarantined: 0,
    windowsOverflowed: 0,
    dlqRecords: 0,
    framesDropped: 0,
    checkpointsCorrupt: 0,
    outgoingDropped: 0,
    streamsEvicted: 0,
    windowsClosed: 0,
    modelErrors: 0,
    sinkErrors: 0,
    consumerLag: 0,
    lastWindowLatencyMillis: undefined,
    heapCollections: 0,
    heapCollectionMillis: 0,
  };
  // Frames are counted here, per (outcome, type), and reported at collection time: a counter's
  // add() per frame hashes its attributes in the SDK (~1 µs, the largest telemetry cost per
  // frame). Same name, description, unit, attributes and cumulative values; as for every
  // observable counter, a series' OTLP start time is the first collection that saw it.
  const frameCounts = createFrameCounts();
  meter.createObservableCounter('warpwatch.estimator.frames', { description: 'Frames consumed, by outcome and frame type', unit: '{frame}' }).addCallback((result) => {
    for (const series of frameCounts.series) result.observe(series.count, series.attributes);
  });
  const windows = meter.createCounter('warpwatch.estimator.windows.closed', { description: 'Windows closed and computed', unit: '{window}' });
  const modelDuration = meter.createHistogram('warpwatch.estimator.model.duration', { description: 'Model time per window close', unit: 'ms' });
  const eventLag = meter.createHistogram('warpwatch.estimator.window.event_lag', { description: 'Processing time of a window close minus the window end (event time)', unit: 'ms' });
  const sinkErrors = meter.createCounter('warpwatch.estimator.sink.errors', { description: 'Failed writes to sinks', unit: '{error}' });
  const modelErrors = meter.createCounter('warpwatch.estimator.model.errors', { description: 'Windows whose prediction failed', unit: '{error}' });
  const alerts = meter.createCounter('warpwatch.estimator.alerts', { description: 'Alerts raised', unit: '{alert}' });
  const checkpointsCorrupt = meter.createCounter('warpwatch.estimator.checkpoints.corrupt', { description: 'Checkpoint records that could not be decoded (their streams started empty)', unit: '{record}' });
  const streamsEvicted = meter.createCounter('warpwatch.estimator.streams.evicted', { description: 'Streams evicted to stay within WARPWATCH_MAX_STREAMS (their open windows written first)', unit: '{stream}' });
  const windowsQuarantined = meter.createCounter('warpwatch.estimator.windows.quarantined', { description: 'Windows whose close failed unexpectedly (summary to the DLQ, not written)', unit: '{window}' });
  const windowsOverflowed = meter.createCounter('warpwatch.estimator.windows.overflowed', { description: 'Windows written without the fields derived from a sum that overflowed', unit: '{window}' });
  const dlqRecords = meter.createCounter('warpwatch.estimator.dlq.records', { description: 'Records handed to the DLQ topic, by kind (frame, window) and reason (rejected, quarantined)', unit: '{record}' });
  const heapCollections = meter.createCounter('warpwatch.estimator.heap.collections', { description: 'Full garbage collections run by the heap target (WARPWATCH_HEAP_TARGET_MIB)', unit: '{collection}' });
  const heapCollectionDuration = meter.createHistogram('warpwatch.estimator.heap.collection.duration', { description: 'Time of each full garbage collection run by the heap target', unit: 'ms' });
  const dropped = meter.createCounter('warpwatch.estimator.records.dropped', { description: 'Result records for Kafka dropped, by reason', unit: '{record}' });
  meter.createObservableGauge('warpwatch.estimator.consumer.lag', { description: 'Messages behind the frames topic end', unit: '{message}' }).addCallback((result) => {
    // Unknown is no value, not 0: a dashboard or alert sees the gap (docs/estimator.md § Self-telemetry).
    if (counters.consumerLag !== undefined) result.observe(counters.consumerLag);
  });
  meter.createObservableGauge('warpwatch.estimator.streams', { description: 'Live streams held', unit: '{stream}' }).addCallback((result) => {
    result.observe(observe().streams);
  });
  meter.createObservableGauge('warpwatch.estimator.influx.buffered_lines', { description: 'Lines waiting for InfluxDB', unit: '{line}' }).addCallback((result) => {
    result.observe(observe().influxBuffered);
  });
  meter.createObservableCounter('warpwatch.estimator.influx.dropped_lines', { description: 'Lines dropped because the buffer was full or InfluxDB refused them', unit: '{line}' }).addCallback((result) => {
    result.observe(observe().influxDropped);
  });

  const engine: EngineTelemetry = {
    frame(outcome: FrameOutcome, type) {
      counters.framesIn += 1;
      if (outcome === 'recorded') counters.framesOut += 1;
      else if (outcome === 'rejected') counters.framesRejected += 1;
      else if (outcome === 'future') {
        counters.framesRejected += 1;
        counters.framesFuture += 1;
      } else if (outcome === 'quarantined') {
        counters.framesRejected += 1;
        counters.framesQuarantined += 1;
      }
      else if (outcome === 'late' || outcome === 'duplicate') counters.framesDropped += 1;
      frameCounts.add(outcome, type);
    },
    windowClosed(modelMillis, eventLagMillis) {
      counters.windowsClosed += 1;
      counters.lastWindowLatencyMillis = eventLagMillis;
      windows.add(1);
      modelDuration.record(modelMillis);
      eventLag.record(Math.max(0, eventLagMillis));
    },
    modelError() {
      counters.modelErrors += 1;
      modelErrors.add(1);
    },
    alertRaised(kind) {
      alerts.add(1, { kind });
    },
    checkpointCorrupt() {
      counters.checkpointsCorrupt += 1;
      checkpointsCorrupt.add(1);
    },
    streamEvicted() {
      counters.streamsEvicted += 1;
      streamsEvicted.add(1);
    },
    quarantined(record) {
      counters.dlqRecords += 1;
      dlqRecords.add(1, { kind: record.kind, reason: record.reason });
      if (record.kind === 'window') {
        counters.windowsQuarantined += 1;
        windowsQuarantined.add(1);
      }
    },
    windowOverflowed() {
      counters.windowsOverflowed += 1;
      windowsOverflowed.add(1);
    },
  };
  let recordable = false;
  return {
    engine,
    counters,
    tracer,
    spansRecordable() {
      if (!recordable) recordable = !isNoopProxyTracer(tracer);
      return recordable;
    },
    sinkError(sink) {
      counters.sinkErrors += 1;
      sinkErrors.add(1, { sink });
    },
    outgoingDropped(count) {
      counters.outgoingDropped += count;
      dropped.add(count, { reason: 'outgoing-queue-full' });
    },
    heapCollected(durationMillis) {
      counters.heapCollections += 1;
      counters.heapCollectionMillis += durationMillis;
      heapCollections.add(1);
      heapCollectionDuration.record(durationMillis);
    },
  };
}

/** One series of warpwatch.estimator.frames: its attributes and its count so far. */
interface FrameSeries {
  readonly attributes: Attributes;
  count: number;
}

/** Frame counts per (outcome, type), and every series in the order of its first frame (the order the counter's series had). */
function createFrameCounts(): { readonly series: FrameSeries[]; add(outcome: FrameOutcome, type: FrameKind | undefined): void } {
  const series: FrameSeries[] = [];
  const byOutcome = new Map<FrameOutcome, Map<FrameKind | undefined, FrameSeries>>();
  return {
    series,
    add(outcome, type) {
      let byType = byOutcome.get(outcome);
      if (byType === undefined) byOutcome.set(outcome, (byType = new Map()));
      let entry = byType.get(type);
      if (entry === undefined) {
        entry = { attributes: type === undefined ? { outcome } : { outcome, type }, count: 0 };
        byType.set(type, entry);
        series.push(entry);
      }
      entry.count += 1;
    },
  };
}

/** What the API's proxy delegates to while no tracer provider is registered. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/**
 * True when `tracer` is the API's proxy (what trace.getTracer returns) and the global tracer
 * provider is the API's own proxy without a delegate: no tracer SDK is installed, so every span
 * the proxy starts is a NonRecordingSpan. Anything else may record.
 */
function isNoopProxyTracer(tracer: Tracer): boolean {
  if (!(tracer instanceof ProxyTracer)) return false;
  const provider = trace.getTracerProvider();
  return provider instanceof ProxyTracerProvider && provider.getDelegate() === NOOP_TRACER_PROVIDER;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/**
 * The parent context carried in a W3C `traceparent` header (version 00), or the active
 * context when the header is missing or malformed. API only: no propagator needs registering.
 *
 * @example
 * tracer.startActiveSpan('estimate frame', {}, contextFromTraceparent(headers.traceparent), (span) => { ...; span.end(); });
 */
export function contextFromTraceparent(traceparent: string | undefined): Context {
  const active = context.active();
  if (traceparent === undefined) return active;
  const match = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (match === null || match[1] === 'ff') return active;
  const traceId = match[2] ?? '';
  const spanId = match[3] ?? '';
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return active;
  const flags = Number.parseInt(match[4] ?? '00', 16) & TraceFlags.SAMPLED;
  return trace.setSpanContext(active, { traceId, spanId, traceFlags: flags, isRemote: true });
}

/** Span attributes of one frame (stream ids belong on spans, not metrics). */
export function frameSpanAttributes(partition: number, offset: string, key: string | undefined, outcome: FrameOutcome): Attributes {
  return { 'messaging.system': 'kafka', 'messaging.kafka.partition': partition, 'messaging.kafka.offset': offset, 'warpwatch.stream': key ?? '', 'warpwatch.outcome': outcome };
}
