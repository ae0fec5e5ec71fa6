/**
 * The collector's own counters as `warpwatch_pipeline` points (tag service=collector), the
 * route the "Pipeline health" dashboard reads. Names come from contracts/series.ts, the one
 * module that defines InfluxDB names; it is a leaf module of constants (no imports), so the
 * collector takes only the names, none of the estimator's code.
 *
 * This file holds the timing and the mapping only; the InfluxDB client lives in
 * influx-metrics-writer.ts and is passed in as a {@link MetricsPointWriter}.
 */
import { FIELDS, MEASUREMENTS, PIPELINE_SERVICES, TAGS } from '../contracts/index.ts';
import type { InfluxWriter, InfluxWriterStats } from '../service/index.ts';
import type { CollectorTotals } from './collector-metrics.ts';
import type { LogFunction } from './delivery-pipeline.ts';

/** One InfluxDB point: every field is a float (InfluxDB fixes a field's type per shard). */
export interface MetricsPoint {
  readonly measurement: string;
  readonly tags: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, number>>;
  /** Unix time in milliseconds. */
  readonly timestampMillis: number;
}

/**
 * Where points go: the shared InfluxDB writer (influx-metrics-writer.ts) in production, an
 * in-memory double in tests. `write` must return at once and never throw; sending happens in
 * the background; `close` never rejects, and what it could not send counts as dropped.
 */
export type MetricsPointWriter = Pick<InfluxWriter, 'write' | 'stats' | 'close'>;

/**
 * The `warpwatch_pipeline` point of a collector: cumulative counters since its start.
 * frames_in = valid frames received, frames_out = frames Kafka acknowledged on the frames
 * topic, frames_rejected = invalid frames sent to the DLQ, frames_spooled = records taken
 * into the write-ahead disk spool (every accepted record, frames and DLQ), frames_dropped = records lost on purpose (spool full, closed
 * connection, ...), influx_write_errors = failed write requests of this very writer.
 *
 * @example
 * collectorPipelinePoint('gpu-node-3:4711', metrics.totals(), 12, Date.now())
 */
export function collectorPipelinePoint(instance: string, totals: CollectorTotals, influxWriteErrors: number, timestampMillis: number): MetricsPoint {
  const f = FIELDS.pipeline;
  return {
    measurement: MEASUREMENTS.pipeline,
    tags: { [TAGS.service]: PIPELINE_SERVICES.collector, [TAGS.instance]: instance },
    timestampMillis,
    fields: {
      [f.framesIn]: totals.framesIn,
      [f.framesOut]: totals.framesOut,
      [f.framesRejected]: totals.framesRejected,
      [f.framesSpooled]: totals.framesSpooled,
      [f.framesDropped]: totals.framesDropped,
      [f.influxWriteErrors]: influxWriteErrors,
    },
  };
}

/** Settings of {@link startPipelineReporter}. */
export interface PipelineReporterOptions {
  /** Tag `instance` (config.instance). */
  readonly instance: string;
  /** Milliseconds between points. */
  readonly intervalMillis: number;
  /** Reads the collector's totals (RunningCollector.metrics.totals in production). */
  readonly totals: () => CollectorTotals;
  readonly writer: MetricsPointWriter;
  readonly log?: LogFunction;
  /** Clock in Unix milliseconds (default Date.now). */
  readonly now?: () => number;
}

/** A running reporter. */
export interface PipelineReporter {
  /** Writes a point with the current totals now (also done at start, every interval and at stop). */
  report(): void;
  /**
   * Stops the timer, writes a last point with the final totals and closes the writer
   * within `timeoutMillis`. Idempotent; never rejects.
   */
  stop(timeoutMillis: number): Promise<InfluxWriterStats>;
}

/**
 * Writes one point at once (so a new instance shows up immediately and a restart starts its
 * rate from 0), then one every `intervalMillis`, and a last one on stop. The timer is
 * unref'ed: it never keeps the process alive.
 *
 * @example
 * const reporter = startPipelineReporter({ instance: config.instance, intervalMillis: config.pipelineIntervalMillis, totals: () => metrics.totals(), writer });
 * await reporter.stop(2_000);
 */
export function startPipelineReporter(options: PipelineReporterOptions): PipelineReporter {
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => {});
  let stopped: Promise<InfluxWriterStats> | undefined;
  let failureLogged = false;

  const report = (): void => {
    try {
      options.writer.write([collectorPipelinePoint(options.instance, options.totals(), options.writer.stats().writeErrors, now())]);
    } catch (error) {
      // The writer promises not to throw; if one does, metrics must still never stop the collector.
      if (!failureLogged) {
        failureLogged = true;
        log('warn', `pipeline metrics: writing a point failed (logged once): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  };

  report();
  const timer = setInterval(report, options.intervalMillis);
  timer.unref();

  return {
    report() {
      if (stopped === undefined) report();
    },
    stop(timeoutMillis) {
      stopped ??= (async () => {
        clearInterval(timer);
        report();
        try {
          return await options.writer.close(timeoutMillis);
        } catch {
          return options.writer.stats();
        }
      })();
      return stopped;
    },
  };
}
