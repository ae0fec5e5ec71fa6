import { HttpError, InfluxDB, setLogger, type WriteApi } from '@influxdata/influxdb-client';
import { EstimatorError } from './errors.ts';
import { toLineProtocol, type SeriesPoint } from './series-points.ts';

/**
 * The one adapter to InfluxDB (@influxdata/influxdb-client, v2 write API; on InfluxDB 1.8
 * the compatibility endpoint takes org '-', bucket '<database>/<retention policy>' and token
 * '' or 'user:password'). Lines wait in a bounded in-memory buffer; a timer sends batches;
 * a failed batch is retried with exponential backoff (network errors, 429 and 5xx) while new
 * lines keep queueing; when the buffer is full the oldest lines are dropped and counted,
 * never silently. A 4xx other than 429 (a malformed line) drops the batch and counts it.
 */

/** Settings of the writer (the influx slice of EstimatorConfig). */
export interface InfluxWriterOptions {
  readonly url: string;
  readonly database: string;
  readonly retentionPolicy: string;
  readonly token: string;
  readonly org: string;
  readonly batchSize: number;
  readonly flushIntervalMillis: number;
  readonly maxBufferLines: number;
  readonly minRetryDelayMillis: number;
  readonly maxRetryDelayMillis: number;
  readonly requestTimeoutMillis: number;
}

/** Counters of the writer. */
export interface InfluxWriterStats {
  readonly linesWritten: number;
  readonly linesDropped: number;
  readonly writeErrors: number;
  readonly buffered: number;
}

/** The writer. */
export interface InfluxWriter {
  /** Queues points (never blocks, never throws; overflow drops the oldest lines and counts them). */
  write(points: readonly SeriesPoint[]): void;
  /**
   * Sends everything queued so far. Resolves when the buffer is empty; rejects with a
   * retriable EstimatorError (WW_ERR_ESTIMATOR_INFLUX_WRITE) when a batch failed (the lines
   * stay queued for the next attempt).
   */
  flush(): Promise<void>;
  stats(): InfluxWriterStats;
  /** Stops the timer and tries a last flush (bounded by `timeoutMillis`); returns lines left unwritten. */
  close(timeoutMillis: number): Promise<number>;
}

let loggerInstalled = false;

/**
 * Creates a writer and starts its flush timer.
 *
 * @param onError called once per failed batch (for logs and the sink-error metric).
 * @example
 * const writer = createInfluxWriter(config.influx, (error) => log(error.message));
 * writer.write(points);
 */
export function createInfluxWriter(options: InfluxWriterOptions, onError: (error: EstimatorError) => void): InfluxWriter {
  if (!loggerInstalled) {
    // The client logs every failed write to the console; errors reach us through promises instead.
    setLogger({ error: () => {}, warn: () => {} });
    loggerInstalled = true;
  }
  const client = new InfluxDB({ url: options.url, token: options.token, timeout: options.requestTimeoutMillis });
  const bucket = `${options.database}/${options.retentionPolicy}`;
  const writeApi: WriteApi = client.getWriteApi(options.org, bucket, 'ms', {
    batchSize: options.batchSize + 1,
    flushInterval: 0,
    maxRetries: 0,
    maxBufferLines: options.batchSize,
    // The retry budget is ours; the client must neither retry nor buffer on its own.
    writeFailed: () => undefined,
  });

  const queue: string[] = [];
  let linesWritten = 0;
  let linesDropped = 0;
  let writeErrors = 0;
  let attempt = 0;
  let nextAttemptMillis = 0;
  let inFlight: Promise<void> | undefined;
  /** Lines at the head of the queue that are being sent now: overflow never drops those. */
  let sendingCount = 0;
  let closed = false;

  const sendOne = async (): Promise<void> => {
    const batch = queue.slice(0, options.batchSize);
    sendingCount = batch.length;
    try {
      writeApi.writeRecords(batch);
      await writeApi.flush();
      // Remove only what was sent: new lines may have been queued meanwhile.
      queue.splice(0, batch.length);
      linesWritten += batch.length;
      attempt = 0;
      nextAttemptMillis = 0;
    } catch (error) {
      writeErrors += 1;
      const status = error instanceof HttpError ? error.statusCode : undefined;
      const retriable = status === undefined || status === 429 || status >= 500;
      if (!retriable) {
        queue.splice(0, batch.length);
        linesDropped += batch.length;
      } else {
        attempt += 1;
        const delay = Math.min(options.maxRetryDelayMillis, options.minRetryDelayMillis * 2 ** (attempt - 1));
        nextAttemptMillis = Date.now() + delay * (0.75 + 0.5 * Math.random());
      }
      throw new EstimatorError(
        'WW_ERR_ESTIMATOR_INFLUX_WRITE',
        `writing ${batch.length} lines to InfluxDB ${options.url} (bucket ${bucket}) failed${status === undefined ? '' : ` with HTTP ${status}`}: ${error instanceof Error ? error.message : String(error)}${retriable ? `; retrying in up to ${options.maxRetryDelayMillis} ms, ${queue.length} lines buffered` : '; batch dropped (not retriable)'}`,
        { retriable, cause: error },
      );
    } finally {
      sendingCount = 0;
    }
  };

  const drain = async (force: boolean): Promise<void> => {
    while (queue.length > 0) {
      if (!force && Date.now() < nextAttemptMillis) return;
      await sendOne();
    }
  };

  const run = (force: boolean): Promise<void> => {
    if (inFlight !== undefined) return inFlight.then(() => run(force), () => run(force));
    const current = drain(force).finally(() => {
      inFlight = undefined;
    });
    inFlight = current;
    return current;
  };

  const timer = setInterval(() => {
    if (queue.length === 0 || inFlight !== undefined || closed) return;
    run(false).catch((error: unknown) => {
      if (error instanceof EstimatorError) onError(error);
    });
  }, options.flushIntervalMillis);
  timer.unref();

  return {
    write(points) {
      for (const point of points) queue.push(toLineProtocol(point));
      const excess = queue.length - options.maxBufferLines;
      if (excess > 0) {
        // Drop the oldest lines that are not in flight (the buffer may exceed its bound by one batch meanwhile).
        const removed = queue.splice(sendingCount, Math.min(excess, queue.length - sendingCount));
        linesDropped += removed.length;
      }
    },
    flush() {
      if (Date.now() < nextAttemptMillis && queue.length > 0) {
        return Promise.reject(
          new EstimatorError('WW_ERR_ESTIMATOR_INFLUX_WRITE', `InfluxDB ${options.url} is backing off after a failed write; ${queue.length} lines buffered`, {
            retriable: true,
          }),
        );
      }
      return run(true);
    },
    stats() {
      return { linesWritten, linesDropped, writeErrors, buffered: queue.length };
    },
    async close(timeoutMillis) {
      closed = true;
      clearInterval(timer);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([
        run(true).catch(() => undefined),
        new Promise<void>((resolve) => {
          timeout = setTimeout(resolve, timeoutMillis);
        }),
      ]);
      if (timeout !== undefined) clearTimeout(timeout);
      const left = queue.length;
      writeApi.dispose();
      return left;
    },
  };
}
