import { DLQ_HEADERS } from '../contracts/index.ts';
import { isUnreachableError, type LogLevel as ServiceLogLevel, type ServiceLogger } from '../service/index.ts';
import type { CollectorMetrics } from './collector-metrics.ts';
import type { DiskSpool } from './disk-spool.ts';
import { recordSizeBytes, type ProduceFunction, type ProduceRecord } from './produce-record.ts';

/** Severity of a collector log line (the services' one, service/service-logger.ts). */
export type LogLevel = ServiceLogLevel;

/** Where the collector writes its (rare, state-change) log lines: the `log` of its ServiceLogger (collector-service.ts). */
export type LogFunction = ServiceLogger['log'];

/** Settings and I/O of {@link createDeliveryPipeline}. Sizes in bytes, times in milliseconds. */
export interface DeliveryPipelineOptions {
  /** Sends one batch to Kafka (kafka-producer.ts in production, a double in unit tests). */
  readonly produce: ProduceFunction;
  /** The write-ahead spool every record goes through (disk-spool.ts). */
  readonly spool: DiskSpool;
  readonly metrics: CollectorMetrics;
  readonly maxBatchBytes: number;
  readonly maxBatchRecords: number;
  /** A partial batch waits at most this long for more records. */
  readonly lingerMillis: number;
  /** After a failed send, wait this long before trying the broker again. */
  readonly retryBackoffMillis: number;
  /** A send that takes longer counts as failed (its records stay at the spool head and are sent again). */
  readonly produceTimeoutMillis: number;
  /** A send outstanding longer than this reports the broker as stalled (default 2000). */
  readonly stallMillis?: number;
  /** Largest record the broker takes (its message.max.bytes); a larger record goes to the DLQ, capped. */
  readonly maxMessageBytes: number;
  /** Topic of records the broker cannot take. */
  readonly dlqTopic: string;
  /** Bytes of a record's value kept when it is moved to the DLQ (default 65536). */
  readonly dlqMaxValueBytes?: number;
  readonly log?: LogFunction;
  /**
   * What to try when the broker cannot be reached at all (service/server-hint.ts), added to the
   * one line that reports an outage; none by default.
   */
  readonly unreachableHint?: string;
  /** Monotonic clock in milliseconds (default performance.now). */
  readonly now?: () => number;
}

/** What the pipeline is doing, for /healthz. */
export type DeliveryState = 'idle' | 'delivering' | 'broker-stalled' | 'broker-unavailable' | 'closed';

/**
 * Moves records from the sources to Kafka through the write-ahead spool, without ever
 * blocking a source: `submit` is synchronous and returns at once. Every record is written to
 * the spool as it arrives (durable against a crash of the agent before it is produced);
 * the delivery loop reads batches from the spool head, sends them one batch at a time (so
 * per-key order is the arrival order) and commits what Kafka acknowledged. A failed send
 * leaves the batch at the head and is retried after a backoff. A record over the broker's
 * size limit, or one the broker rejects for good (MESSAGE_TOO_LARGE, INVALID_RECORD, ...),
 * is moved to the DLQ with its value capped and the reason in its headers, and delivery
 * goes on behind it.
 */
export interface DeliveryPipeline {
  /** Accepts one record; never blocks, never throws (what cannot be kept is dropped and counted). */
  submit(record: ProduceRecord): void;
  /** Estimated bytes of records held in memory (the spool's cache and records the disk refused). */
  readonly queuedBytes: number;
  /** Records not yet acknowledged by Kafka. */
  readonly queuedRecords: number;
  readonly state: DeliveryState;
  /**
   * While sends fail (state `broker-unavailable`): the failure when it is one the operator must
   * fix (`WW_ERR_KAFKA_AUTHORIZATION`, `WW_ERR_KAFKA_AUTH`, `WW_ERR_KAFKA_TLS`), as
   * `<code>: <message>`; else undefined.
   */
  readonly configurationFailure: string | undefined;
  /**
   * Resolves with the error if the delivery loop itself failed (an unexpected throw, not a
   * failed send: those are retried): nothing is delivered after it, records stay in the spool.
   * Never resolves otherwise. The collector ends with WW_ERR_COLLECTOR_DELIVERY_STOPPED.
   */
  readonly failed: Promise<Error>;
  /** Resolves true once every record is acknowledged and nothing is in flight, or false after `timeoutMillis`. */
  flush(timeoutMillis: number): Promise<boolean>;
  /**
   * Flushes for at most `timeoutMillis`, then stops: what is not yet acknowledged stays in
   * the spool for the next start (a batch still in flight may also reach Kafka: at least
   * once). Closes the spool. Resolves with whether everything reached Kafka.
   */
  close(timeoutMillis: number): Promise<{ flushed: boolean }>;
}

/** Kafka error types that reject a record for good: resending the same bytes cannot succeed. */
const RECORD_REJECTIONS = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD', 'CORRUPT_MESSAGE', 'INVALID_TIMESTAMP']);
/** Send failures that only an operator can end (an ACL, a password, a certificate): named on /healthz. */
const CONFIGURATION_FAILURES = new Set(['WW_ERR_KAFKA_AUTHORIZATION', 'WW_ERR_KAFKA_AUTH', 'WW_ERR_KAFKA_TLS']);
/** Kafka's record batch header plus record framing, beyond what recordSizeBytes counts. */
const KAFKA_BATCH_OVERHEAD_BYTES = 61;

/**
 * The Kafka error type when `error` (or an error it wraps) says the broker rejected the
 * record for good, else undefined (the failure is retriable: outage, timeout, leadership).
 *
 * @example recordRejectionOf(new KafkaJSProtocolError({ type: 'MESSAGE_TOO_LARGE', ... })) // 'MESSAGE_TOO_LARGE'
 */
export function recordRejectionOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const type = (current as { type?: unknown }).type;
    if (typeof type === 'string' && RECORD_REJECTIONS.has(type)) return type;
    current = (current as { originalError?: unknown }).originalError ?? (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The DLQ form of a record Kafka cannot take: value capped at `maxValueBytes`, headers of
 * the original plus `ww-error-code`, `ww-error-message`, `ww-original-topic`,
 * `ww-original-key` and `ww-original-bytes` (the uncapped value length).
 *
 * @example toDlqRecord(record, 'warpwatch.dlq', 'WW_ERR_COLLECTOR_RECORD_TOO_LARGE', 'record of 2 MB over 1 MB', 65536)
 */
export function toDlqRecord(record: ProduceRecord, dlqTopic: string, code: string, message: string, maxValueBytes: number): ProduceRecord {
  return {
    topic: dlqTopic,
    key: null,
    value: record.value.subarray(0, Math.min(record.value.byteLength, maxValueBytes)),
    headers: {
      ...record.headers,
      [DLQ_HEADERS.errorCode]: code,
      [DLQ_HEADERS.errorMessage]: message.slice(0, 300),
      [DLQ_HEADERS.originalTopic]: record.topic,
      [DLQ_HEADERS.originalKey]: record.key ?? '',
      [DLQ_HEADERS.originalBytes]: String(record.value.byteLength),
    },
    timestampMillis: record.timestampMillis,
  };
}

type SendOutcome = { ok: true } | { ok: false; rejection: string | undefined; error: Error };

/**
 * Starts the delivery loop over `options.spool`.
 *
 * @example
 * const pipeline = createDeliveryPipeline({ produce, spool, metrics, maxBatchBytes: 1 << 20, maxBatchRecords: 10_000,
 *   lingerMillis: 5, retryBackoffMillis: 1000, produceTimeoutMillis: 15_000, maxMessageBytes: 8 << 20, dlqTopic: 'warpwatch.dlq' });
 * pipeline.submit(record);
 * await pipeline.close(10_000);
 */
export function createDeliveryPipeline(options: DeliveryPipelineOptions): DeliveryPipeline {
  const { produce, spool, metrics } = options;
  const now = options.now ?? (() => performance.now());
  const log: LogFunction = options.log ?? (() => {});
  const stallMillis = options.stallMillis ?? 2_000;
  const dlqMaxValueBytes = options.dlqMaxValueBytes ?? 65_536;

  let brokerDown = false;
  let nextProbeAt = 0;
  let inFlightSince: number | undefined;
  let closing = false;
  let stopped = false;
  let lastConfigurationFailure: string | undefined;
  let wakeLoop: (() => void) | undefined;
  const idleWaiters = new Set<() => void>();

  const sleep = (millis: number): Promise<void> =>
    new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        if (wakeLoop === done) wakeLoop = undefined;
        resolve();
      };
      if (Number.isFinite(millis)) timer = setTimeout(done, Math.max(0, millis));
      wakeLoop = done;
    });
  const wake = (): void => wakeLoop?.();
  const isIdle = (): boolean => spool.recordCount === 0 && inFlightSince === undefined;
  const notifyIdle = (): void => {
    if (isIdle()) for (const waiter of idleWaiters) waiter();
  };

  const tooLarge = (record: ProduceRecord): boolean => recordSizeBytes(record) + KAFKA_BATCH_OVERHEAD_BYTES > options.maxMessageBytes;
  const oversizeToDlq = (record: ProduceRecord): ProduceRecord => {
    if (!tooLarge(record)) return record;
    metrics.rerouted(1, 'too-large');
    return toDlqRecord(
      record,
      options.dlqTopic,
      'WW_ERR_COLLECTOR_RECORD_TOO_LARGE',
      `record of ${record.value.byteLength} bytes is over the broker limit WARPWATCH_KAFKA_MAX_MESSAGE_BYTES=${options.maxMessageBytes}; value capped to ${dlqMaxValueBytes} bytes`,
      dlqMaxValueBytes,
    );
  };

  const send = async (batch: readonly ProduceRecord[]): Promise<SendOutcome> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        produce(batch),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`send did not complete within ${options.produceTimeoutMillis} ms (WARPWATCH_PRODUCE_TIMEOUT_MILLIS)`)), options.produceTimeoutMillis);
        }),
      ]);
      return { ok: true };
    } catch (error) {
      return { ok: false, rejection: recordRejectionOf(error), error: error as Error };
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  };

  const brokerFailed = (count: number, error: Error): void => {
    if (!brokerDown) {
      const code = (error as { code?: unknown }).code;
      const prefix = typeof code === 'string' && code.startsWith('WW_ERR_') ? `${code}: ` : '';
      const hint = options.unreachableHint !== undefined && isUnreachableError(error) ? `; ${options.unreachableHint}` : '';
      // Said once per outage (the retries are not logged; `Kafka accepts records again` ends it).
      log('warn', `${prefix}Kafka send of ${count} record(s) failed; they stay in the spool, retrying every ${options.retryBackoffMillis} ms: ${error.message}${hint}`);
    }
    brokerDown = true;
    const failureCode = (error as { code?: unknown }).code;
    lastConfigurationFailure = typeof failureCode === 'string' && CONFIGURATION_FAILURES.has(failureCode) ? `${failureCode}: ${error.message}` : undefined;
    nextProbeAt = now() + options.retryBackoffMillis;
  };

  /**
   * The broker rejected a batch for good: find the record(s) by sending one at a time; a
   * rejected record goes to the DLQ (capped), one the DLQ also rejects is dropped, counted.
   * A retriable failure meanwhile leaves the whole batch at the head (records already sent
   * may arrive twice: at least once). Returns the records delivered, or undefined.
   */
  const isolate = async (batch: readonly ProduceRecord[]): Promise<{ delivered: ProduceRecord[]; dropped: number } | undefined> => {
    const delivered: ProduceRecord[] = [];
    let dropped = 0;
    for (const record of batch) {
      let outcome = await send([record]);
      if (outcome.ok) {
        delivered.push(record);
        continue;
      }
      if (outcome.rejection === undefined || stopped) return undefined;
      const dlq = toDlqRecord(record, options.dlqTopic, 'WW_ERR_KAFKA_RECORD_REJECTED', `Kafka rejected the record: ${outcome.rejection}: ${outcome.error.message}`, dlqMaxValueBytes);
      outcome = await send([dlq]);
      if (outcome.ok) {
        metrics.rerouted(1, 'broker-rejected');
        delivered.push(dlq);
      } else if (outcome.rejection !== undefined) {
        dropped += 1;
      } else {
        return undefined;
      }
    }
    const rejected = delivered.filter((record) => record.headers[DLQ_HEADERS.errorCode] === 'WW_ERR_KAFKA_RECORD_REJECTED').length + dropped;
    log('warn', `WW_ERR_KAFKA_RECORD_REJECTED: Kafka rejected ${rejected} record(s) of a batch for good; moved to the DLQ ${options.dlqTopic} (value capped at ${dlqMaxValueBytes} bytes)${dropped > 0 ? `, ${dropped} dropped (the DLQ rejected them too)` : ''}`);
    return { delivered, dropped };
  };

  /** Sends the head batch; true when it was settled (delivered, moved to the DLQ or dropped). */
  const deliverHead = async (): Promise<boolean> => {
    const batch = spool.peek(options.maxBatchRecords, options.maxBatchBytes);
    if (batch.length === 0) return false;
    const outgoing = batch.map(oversizeToDlq);
    const started = now();
    inFlightSince = started;
    const outcome = await send(outgoing);
    let settled: { delivered: ProduceRecord[]; dropped: number } | undefined = outcome.ok ? { delivered: outgoing, dropped: 0 } : undefined;
    if (!outcome.ok && outcome.rejection !== undefined && !stopped) settled = await isolate(outgoing);
    inFlightSince = undefined;
    if (stopped || settled === undefined) {
      spool.release();
      if (!stopped && !outcome.ok) brokerFailed(batch.length, outcome.error);
      else if (!stopped) brokerFailed(batch.length, new Error('a record was rejected, then the broker failed'));
      return false;
    }
    spool.commit(batch.length);
    metrics.delivered(settled.delivered, now() - started);
    if (settled.dropped > 0) metrics.dropped(settled.dropped, 'rejected-by-broker');
    if (brokerDown) log('info', 'Kafka accepts records again; delivering the spool');
    brokerDown = false;
    return true;
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      if (spool.recordCount === 0) {
        notifyIdle();
        await sleep(Number.POSITIVE_INFINITY);
        // Woken by a new record: let a batch fill for up to the linger time.
        if (!closing && !stopped && spool.recordCount < options.maxBatchRecords && options.lingerMillis > 0) await sleep(options.lingerMillis);
        continue;
      }
      if (brokerDown && now() < nextProbeAt && !stopped) {
        await sleep(nextProbeAt - now());
        continue;
      }
      if (!(await deliverHead()) && !brokerDown && spool.recordCount > 0 && !stopped) {
        // Records held but none readable yet (for example the disk just failed): look again soon.
        await sleep(options.retryBackoffMillis);
      }
    }
  };

  let reportFailure: (error: Error) => void = () => {};
  const failed = new Promise<Error>((resolve) => {
    reportFailure = resolve;
  });
  const running = loop().catch((error: unknown) => {
    stopped = true;
    reportFailure(error instanceof Error ? error : new Error(String(error)));
  });

  const flush = (timeoutMillis: number): Promise<boolean> => {
    if (isIdle()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        idleWaiters.delete(done);
        resolve(isIdle());
      };
      const timer = setTimeout(done, timeoutMillis);
      idleWaiters.add(done);
      wake();
    });
  };

  return {
    submit(record) {
      if (stopped) {
        metrics.dropped(1, 'closed');
        return;
      }
      if (spool.append(record)) {
        metrics.spooled(1);
        wake();
      }
    },
    get queuedBytes() {
      return spool.memoryBytes;
    },
    get queuedRecords() {
      return spool.recordCount;
    },
    failed,
    get configurationFailure() {
      return brokerDown && !stopped ? lastConfigurationFailure : undefined;
    },
    get state(): DeliveryState {
      if (stopped) return 'closed';
      if (brokerDown) return 'broker-unavailable';
      if (inFlightSince !== undefined && now() - inFlightSince > stallMillis) return 'broker-stalled';
      return isIdle() ? 'idle' : 'delivering';
    },
    flush,
    async close(timeoutMillis) {
      closing = true;
      wake();
      const flushed = await flush(timeoutMillis);
      stopped = true;
      wake();
      spool.close();
      // The loop ends by itself once a send still in flight settles; it touches nothing after `stopped`.
      void running;
      return { flushed };
    },
  };
}
