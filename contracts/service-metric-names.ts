/**
 * The collector's and the estimator's self-telemetry instruments that alert rules read, by
 * their OpenTelemetry name (as collector/collector-metrics.ts and estimator/adapters/estimator-telemetry.ts
 * create them) and their Prometheus name on `/metrics` (dots become underscores, counters get
 * `_total`; units in braces add no suffix). The full lists are in docs/collector.md
 * ("Telemetry") and docs/estimator.md ("Self-telemetry"). Pure data.
 */

/** One self-telemetry instrument: OpenTelemetry name, kind, Prometheus name. */
export interface ServiceMetricName {
  readonly otel: string;
  readonly kind: 'counter' | 'gauge';
  readonly prometheus: string;
}

function counter(otel: string): ServiceMetricName {
  return { otel, kind: 'counter', prometheus: `${otel.replaceAll('.', '_')}_total` };
}

function gauge(otel: string): ServiceMetricName {
  return { otel, kind: 'gauge', prometheus: otel.replaceAll('.', '_') };
}

/**
 * Self-telemetry the alert rules use (dashboards/alert-definitions.ts).
 *
 * @example SERVICE_METRICS.collectorFramesDropped.prometheus; // 'warpwatch_collector_frames_dropped_total'
 */
export const SERVICE_METRICS = Object.freeze({
  /** Valid frames received; attribute `source`. */
  collectorFramesIn: counter('warpwatch.collector.frames.in'),
  /** Frames Kafka acknowledged on the frames topic. */
  collectorFramesOut: counter('warpwatch.collector.frames.out'),
  /** Invalid frames sent to the DLQ; attributes `source`, `code`. */
  collectorFramesRejected: counter('warpwatch.collector.frames.rejected'),
  /** Records dropped on purpose; attribute `reason` (docs/collector.md). */
  collectorFramesDropped: counter('warpwatch.collector.frames.dropped'),
  /** Frames consumed; attributes `outcome` (recorded, rejected, future, late, duplicate) and `type`. */
  estimatorFrames: counter('warpwatch.estimator.frames'),
  /** Failed writes to a sink; attribute `sink` (influx, kafka, checkpoint). */
  estimatorSinkErrors: counter('warpwatch.estimator.sink.errors'),
  /** Lines for InfluxDB dropped (buffer full or refused). */
  estimatorInfluxDroppedLines: counter('warpwatch.estimator.influx.dropped_lines'),
  /** Result records for Kafka dropped; attribute `reason`. */
  estimatorRecordsDropped: counter('warpwatch.estimator.records.dropped'),
  /** Streams evicted to stay within WARPWATCH_MAX_STREAMS. */
  estimatorStreamsEvicted: counter('warpwatch.estimator.streams.evicted'),
  /** Messages behind the frames topic's end. */
  estimatorConsumerLag: gauge('warpwatch.estimator.consumer.lag'),
});

/** `outcome` values of warpwatch.estimator.frames that mean the frame was refused as invalid. */
export const ESTIMATOR_REJECTED_OUTCOMES = Object.freeze(['rejected', 'future'] as const);
