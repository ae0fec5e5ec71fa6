import { COLLECTOR_FIELDS } from '../contracts/index.ts';
import { createInfluxWriter, readSecretFile, type InfluxWriter, type Secret } from '../service/index.ts';
import { CollectorError } from './errors.ts';
import type { LogFunction } from './delivery-pipeline.ts';

/**
 * The collector's InfluxDB adapter: the shared writer of service/influx-writer.ts (bounded
 * buffer, batching, retries with backoff, drops counted by reason) set up for the collector's
 * own `warpwatch_pipeline` points, a few per minute, with the collector's logging:
 *
 * - one request in flight at a time; a failed request is retried after a backoff of
 *   {@link COLLECTOR_INFLUX_RETRY} (1 s doubling to 30 s, ±25 %) while new points queue;
 * - the buffer is bounded (`maxBufferPoints`): on overflow the oldest waiting points are
 *   dropped and counted, logged once until a write succeeds again;
 * - a batch InfluxDB rejects for good (HTTP 4xx other than 408/429) is dropped and counted;
 * - the first failure of an outage is logged (`WW_ERR_COLLECTOR_INFLUX_WRITE`; when nothing
 *   answers, with what to try: service/server-hint.ts), the rest are only counted until a write
 *   succeeds again, which is logged too;
 * - nothing here throws into the collector or rejects.
 */

/** Settings of {@link createInfluxMetricsWriter} (the `influx` slice of CollectorConfig). */
export interface InfluxMetricsWriterOptions {
  readonly url: string;
  readonly database: string;
  readonly retentionPolicy: string;
  readonly org: string;
  readonly token: Secret;
  /** Read again after InfluxDB refuses the token (WARPWATCH_INFLUX_TOKEN_FILE); undefined: the token never changes. */
  readonly tokenFile?: string | undefined;
  /** Bound of the buffer in points. */
  readonly maxBufferPoints: number;
  /** Longest wait for one write request, in milliseconds. */
  readonly requestTimeoutMillis: number;
}

/** Points per request; more wait for the next one. */
const MAX_BATCH_POINTS = 5_000;

/** Pauses between attempts after a failed write (ms). */
export const COLLECTOR_INFLUX_RETRY = { initialMillis: 1_000, maxMillis: 30_000, jitter: 0.5 } as const;

/**
 * Creates the writer. No request is made until the first `write`.
 *
 * @example
 * const writer = createInfluxMetricsWriter(config.influx, log);
 * const reporter = startPipelineReporter({ instance: config.instance, intervalMillis: config.pipelineIntervalMillis, totals, writer });
 */
export function createInfluxMetricsWriter(options: InfluxMetricsWriterOptions, log: LogFunction): InfluxWriter {
  let overflowLogged = false;
  return createInfluxWriter(
    {
      url: options.url,
      token: options.token,
      refreshToken: options.tokenFile === undefined ? undefined : () => readSecretFile(options.tokenFile as string),
      org: options.org,
      bucket: `${options.database}/${options.retentionPolicy}`,
      batchSize: MAX_BATCH_POINTS,
      flushIntervalMillis: 0,
      maxBufferPoints: options.maxBufferPoints,
      maxInFlightBatches: 1,
      retry: COLLECTOR_INFLUX_RETRY,
      requestTimeoutMillis: options.requestTimeoutMillis,
      urlFlag: COLLECTOR_FIELDS.influxUrl.flag,
    },
    {
      onError(failure) {
        if (failure.failingWrites !== 1) return;
        const error = new CollectorError(
          'WW_ERR_COLLECTOR_INFLUX_WRITE',
          `pipeline metrics: ${failure.message}. Further failures are counted (influx_write_errors), not logged, until a write succeeds.`,
          { retriable: failure.retriable, cause: failure },
        );
        log('warn', `${error.code}: ${error.message}`);
      },
      onRecovered(failedRequests) {
        overflowLogged = false;
        log('info', `pipeline metrics: writing to InfluxDB works again after ${failedRequests} failed attempt(s)`);
      },
      onDrop(reason) {
        if (reason !== 'overflow' || overflowLogged) return;
        overflowLogged = true;
        log('warn', `pipeline metrics: ${options.maxBufferPoints} points wait for InfluxDB; dropping the oldest (counted, logged once until writes succeed)`);
      },
    },
  );
}
