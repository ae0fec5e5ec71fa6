import { HttpError, type WriteApi } from '@influxdata/influxdb-client';
import { createInfluxWriteApi, encodeLineProtocol, isUnreachableError, unreachableServerHint } from '../service/index.ts';
import { CollectorError } from './errors.ts';
import type { LogFunction } from './delivery-pipeline.ts';
import type { MetricsPoint, MetricsPointWriter, MetricsWriterStats } from './pipeline-reporter.ts';
import type { Secret } from './secret.ts';

/**
 * The collector's one adapter to InfluxDB (@influxdata/influxdb-client, v2 write API; on
 * InfluxDB 1.8 the compatibility endpoint takes org '-', bucket '<database>/<retention
 * policy>' and token '' or 'user:password'). It only carries the collector's own
 * `warpwatch_pipeline` points, a few per minute, so it is deliberately small:
 *
 * - `write` queues and returns: at most one request is in flight, and a new attempt is made
 *   on the next `write` (so while InfluxDB is away the collector retries once per interval);
 * - the queue is bounded (`maxBufferPoints`): on overflow the oldest waiting points are
 *   dropped and counted;
 * - a batch InfluxDB rejects as malformed (HTTP 4xx other than 408/429) is dropped and counted;
 * - the first failure of an outage is logged (`WW_ERR_COLLECTOR_INFLUX_WRITE`), the rest are
 *   only counted until a write succeeds again, which is logged too;
 * - nothing here throws into the collector or rejects.
 */

/** Settings of {@link createInfluxMetricsWriter} (the `influx` slice of CollectorConfig). */
export interface InfluxMetricsWriterOptions {
  readonly url: string;
  readonly database: string;
  readonly retentionPolicy: string;
  readonly org: string;
  readonly token: Secret;
  /** Bound of the point queue. */
  readonly maxBufferPoints: number;
  /** Longest wait for one write request, in milliseconds. */
  readonly requestTimeoutMillis: number;
}

/** Points per request; more wait for the next one. */
const MAX_BATCH_POINTS = 5_000;

/**
 * Creates the writer. No request is made until the first `write`.
 *
 * @example
 * const writer = createInfluxMetricsWriter(config.influx, log);
 * const reporter = startPipelineReporter({ instance: config.instance, intervalMillis: config.pipelineIntervalMillis, totals, writer });
 */
export function createInfluxMetricsWriter(options: InfluxMetricsWriterOptions, log: LogFunction): MetricsPointWriter {
  const bucket = `${options.database}/${options.retentionPolicy}`;
  const where = `InfluxDB ${safeUrl(options.url)} (bucket ${bucket})`;
  // The queue and the retry policy are ours: the client neither batches, retries, buffers nor logs.
  const writeApi: WriteApi = createInfluxWriteApi({
    url: options.url,
    token: options.token.reveal(),
    org: options.org,
    bucket,
    requestTimeoutMillis: options.requestTimeoutMillis,
    maxBatchLines: MAX_BATCH_POINTS,
  });

  const queue: MetricsPoint[] = [];
  /** Points at the head of the queue that are being sent: overflow never drops those. */
  let sendingCount = 0;
  let inFlight: Promise<boolean> | undefined;
  let pointsWritten = 0;
  let pointsDropped = 0;
  let writeErrors = 0;
  /** Failed requests since the last success (0 = healthy). */
  let failuresInRow = 0;
  let overflowLogged = false;
  let closing = false;
  let finished = false;

  const stats = (): MetricsWriterStats => ({ pointsWritten, pointsDropped, writeErrors, buffered: queue.length });

  const attempt = async (batch: readonly MetricsPoint[]): Promise<boolean> => {
    try {
      writeApi.writeRecords(batch.flatMap(toLine));
      await writeApi.flush();
      if (finished) return true;
      queue.splice(0, batch.length);
      pointsWritten += batch.length;
      if (failuresInRow > 0) log('info', `pipeline metrics: writing to ${where} works again after ${failuresInRow} failed attempt(s)`);
      failuresInRow = 0;
      overflowLogged = false;
      return true;
    } catch (error) {
      if (finished) return false;
      writeErrors += 1;
      failuresInRow += 1;
      const status = error instanceof HttpError ? error.statusCode : undefined;
      const permanent = status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429;
      if (permanent) {
        queue.splice(0, batch.length);
        pointsDropped += batch.length;
      }
      if (failuresInRow === 1) {
        const failure = new CollectorError(
          'WW_ERR_COLLECTOR_INFLUX_WRITE',
          `pipeline metrics: writing ${batch.length} point(s) to ${where} failed${status === undefined ? '' : ` with HTTP ${status}`}: ` +
            `${error instanceof Error ? error.message : String(error)}; ${permanent ? 'the batch is dropped (InfluxDB rejected it)' : `retrying with the next point, keeping up to ${options.maxBufferPoints} points`}` +
            `${!permanent && isUnreachableError(error) ? `; ${unreachableServerHint('influx', safeUrl(options.url), '--influx-url')}` : ''}. ` +
            'Further failures are counted (influx_write_errors), not logged, until a write succeeds.',
          { retriable: !permanent, cause: error },
        );
        log('warn', `${failure.code}: ${failure.message}`);
      }
      return false;
    }
  };

  /** Sends the head of the queue unless a request is already in flight (then joins it). Never rejects. */
  const sendOnce = (): Promise<boolean> => {
    if (inFlight !== undefined) return inFlight;
    if (queue.length === 0 || finished) return Promise.resolve(true);
    const batch = queue.slice(0, MAX_BATCH_POINTS);
    sendingCount = batch.length;
    const current = attempt(batch)
      .catch(() => false)
      .finally(() => {
        sendingCount = 0;
        inFlight = undefined;
      });
    inFlight = current;
    return current;
  };

  return {
    write(point) {
      if (closing) {
        pointsDropped += 1;
        return;
      }
      queue.push(point);
      const excess = queue.length - options.maxBufferPoints;
      if (excess > 0) {
        const removed = queue.splice(sendingCount, Math.min(excess, queue.length - sendingCount)).length;
        pointsDropped += removed;
        if (removed > 0 && !overflowLogged) {
          overflowLogged = true;
          log('warn', `pipeline metrics: ${options.maxBufferPoints} points wait for ${where}; dropping the oldest (counted, logged once until writes succeed)`);
        }
      }
      void sendOnce();
    },
    stats,
    async close(timeoutMillis) {
      if (finished) return stats();
      closing = true;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, Math.max(0, timeoutMillis));
      });
      const drain = async (): Promise<void> => {
        // A request already in flight may fail; the remaining points still get one attempt of their own.
        let failures = 0;
        while (queue.length > 0 && failures < 2) {
          if (!(await sendOnce())) failures += 1;
        }
      };
      await Promise.race([drain(), timedOut]);
      if (timer !== undefined) clearTimeout(timer);
      finished = true;
      pointsDropped += queue.length;
      queue.length = 0;
      writeApi.dispose();
      return stats();
    },
  };
}

/** The point in the shared line protocol (service/influx-line.ts), non-finite fields left out; none when no field is left. */
function toLine(point: MetricsPoint): string[] {
  const fields = Object.fromEntries(Object.entries(point.fields).filter(([, value]) => Number.isFinite(value)));
  return Object.keys(fields).length === 0 ? [] : [encodeLineProtocol({ ...point, fields })];
}

/** The URL without user:password, for log lines. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return '[invalid url]';
  }
}
