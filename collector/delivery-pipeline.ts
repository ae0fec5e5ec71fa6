import type { CollectorMetrics } from './collector-metrics.ts';
import type { DiskSpool } from './disk-spool.ts';
import { recordSizeBytes, type ProduceFunction, type ProduceRecord } from './produce-record.ts';

/** Severity of a collector log line. */
export type LogLevel = 'info' | 'warn' | 'error';

/** Where the collector writes its (rare, state-change) log lines; the CLI passes a stderr writer. */
export type LogFunction = (level: LogLevel, message: string) => void;

/** Settings and I/O of {@link createDeliveryPipeline}. Sizes in bytes, times in milliseconds. */
export interface DeliveryPipelineOptions {
  /** Sends one batch to Kafka (kafka-producer.ts in production, a double in tests). */
  readonly produce: ProduceFunction;
  /** Overflow and outage storage. */
  readonly spool: DiskSpool;
  readonly metrics: CollectorMetrics;
  /** Bound of the in-memory queue; a record that does not fit goes to the spool. */
  readonly maxQueueBytes: number;
  readonly maxBatchBytes: number;
  readonly maxBatchRecords: number;
  /** A partial batch waits at most this long for more records. */
  readonly lingerMillis: number;
  /** After a failed send, wait this long before trying the broker again. */
  readonly retryBackoffMillis: number;
  /** A send that takes longer counts as failed (its records are spooled; Kafka may still get them: at-least-once). */
  readonly produceTimeoutMillis: number;
  readonly log?: LogFunction;
  /** Monotonic clock in milliseconds (default performance.now). */
  readonly now?: () => number;
}

/** What the pipeline is doing, for /healthz. */
export type DeliveryState = 'idle' | 'delivering' | 'replaying-spool' | 'broker-unavailable' | 'closed';

/**
 * Moves records from the sources to Kafka without ever blocking a source:
 * `submit` is synchronous and always returns at once. Records go to a bounded memory
 * queue, are batched by bytes, count and linger time, and sent one batch at a time (so
 * per-key order is the submit order). When the queue is full or a send fails, records go
 * to the disk spool, and from then on every record goes through the spool until it is
 * drained, which keeps the order; a failed in-flight batch is put before the spool's
 * content. When the spool is full its policy drops records, counted.
 */
export interface DeliveryPipeline {
  /** Accepts one record; never blocks, never throws for back-pressure (overflow is spooled or dropped and counted). */
  submit(record: ProduceRecord): void;
  /** Bytes held in the memory queue. */
  readonly queuedBytes: number;
  /** Records held in the memory queue. */
  readonly queuedRecords: number;
  readonly state: DeliveryState;
  /** Resolves true once memory queue and spool are empty and nothing is in flight, or false after `timeoutMillis`. */
  flush(timeoutMillis: number): Promise<boolean>;
  /**
   * Flushes for at most `timeoutMillis`, then stops: what is still in memory (and a batch
   * still in flight) is written to the spool, the spool is closed. Resolves with whether
   * everything reached Kafka.
   */
  close(timeoutMillis: number): Promise<{ flushed: boolean }>;
}

/**
 * Starts the delivery loop.
 *
 * @example
 * const pipeline = createDeliveryPipeline({ produce, spool, metrics, maxQueueBytes: 64 << 20, maxBatchBytes: 1 << 20,
 *   maxBatchRecords: 10_000, lingerMillis: 5, retryBackoffMillis: 1000, produceTimeoutMillis: 60_000 });
 * pipeline.submit(record);
 * await pipeline.close(10_000);
 */
export function createDeliveryPipeline(options: DeliveryPipelineOptions): DeliveryPipeline {
  const { produce, spool, metrics } = options;
  const now = options.now ?? (() => performance.now());
  const log: LogFunction = options.log ?? (() => {});

  // Memory queue: an array with a moving head, compacted now and then (O(1) amortised).
  let queue: ProduceRecord[] = [];
  let queueSizes: number[] = []; // recordSizeBytes of each queued record, computed once
  let queueHead = 0;
  let queueBytes = 0;
  let batchStartedAt = 0; // when the records now at the head of the queue started waiting

  let spoolMode = spool.recordCount > 0; // a previous run left records: they go first
  let brokerDown = false;
  let nextProbeAt = 0;
  let inFlight: readonly ProduceRecord[] | undefined;
  let inFlightFromSpool = false;
  let closing = false;
  let stopped = false;
  let wakeLoop: (() => void) | undefined;
  const idleWaiters = new Set<() => void>();

  const queueLength = (): number => queue.length - queueHead;

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

  const isIdle = (): boolean => queueLength() === 0 && !spoolMode && inFlight === undefined;

  const notifyIdle = (): void => {
    if (!isIdle()) return;
    for (const waiter of idleWaiters) waiter();
  };

  const toSpool = (record: ProduceRecord): void => {
    const result = spool.append(record);
    if (result.spooled) metrics.spooled(1);
    if (result.droppedRecords > 0) metrics.dropped(result.droppedRecords, 'spool-full');
  };

  const moveQueueToSpool = (): void => {
    for (let i = queueHead; i < queue.length; i++) toSpool(queue[i] as ProduceRecord);
    queue = [];
    queueSizes = [];
    queueHead = 0;
    queueBytes = 0;
  };

  const takeBatch = (): ProduceRecord[] => {
    const batch: ProduceRecord[] = [];
    let bytes = 0;
    while (queueHead < queue.length && batch.length < options.maxBatchRecords) {
      const record = queue[queueHead] as ProduceRecord;
      const size = queueSizes[queueHead] as number;
      if (batch.length > 0 && bytes + size > options.maxBatchBytes) break;
      batch.push(record);
      bytes += size;
      queueBytes -= size;
      queueHead += 1;
    }
    if (queueHead > 4096 && queueHead * 2 > queue.length) {
      queue = queue.slice(queueHead);
      queueSizes = queueSizes.slice(queueHead);
      queueHead = 0;
    }
    // What is left has waited at least as long as this batch; a full batch goes at once anyway.
    batchStartedAt = now();
    return batch;
  };

  const send = async (batch: readonly ProduceRecord[]): Promise<boolean> => {
    const started = now();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        produce(batch),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`send did not complete within ${options.produceTimeoutMillis} ms`)), options.produceTimeoutMillis);
        }),
      ]);
      metrics.delivered(batch, now() - started);
      if (brokerDown) log('info', 'Kafka accepts records again; replaying the spool');
      brokerDown = false;
      return true;
    } catch (error) {
      if (!brokerDown) {
        const code = (error as { code?: unknown }).code;
        const prefix = typeof code === 'string' && code.startsWith('WW_ERR_') ? `${code}: ` : '';
        log('warn', `${prefix}Kafka send of ${batch.length} record(s) failed, spooling to disk and retrying every ${options.retryBackoffMillis} ms: ${(error as Error).message}`);
      }
      brokerDown = true;
      nextProbeAt = now() + options.retryBackoffMillis;
      return false;
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  };

  const loop = async (): Promise<void> => {
    while (!stopped) {
      if (queueLength() > 0) {
        const batchFull = queueBytes >= options.maxBatchBytes || queueLength() >= options.maxBatchRecords;
        if (!closing && !batchFull) {
          const waitMillis = options.lingerMillis - (now() - batchStartedAt);
          if (waitMillis > 0) {
            await sleep(waitMillis);
            continue;
          }
        }
        const batch = takeBatch();
        inFlight = batch;
        const ok = await send(batch);
        inFlight = undefined;
        if (stopped) return;
        if (!ok) {
          // The failed batch is older than anything spooled meanwhile: it goes first.
          spool.prepend(batch);
          metrics.spooled(batch.length);
          moveQueueToSpool();
          spoolMode = true;
        }
        continue;
      }
      if (spoolMode) {
        if (brokerDown) {
          const waitMillis = nextProbeAt - now();
          if (waitMillis > 0) {
            await sleep(waitMillis);
            continue;
          }
        }
        const batch = spool.peek(options.maxBatchRecords, options.maxBatchBytes);
        if (batch.length === 0) {
          spoolMode = false;
          continue;
        }
        inFlight = batch;
        inFlightFromSpool = true;
        const ok = await send(batch);
        inFlight = undefined;
        inFlightFromSpool = false;
        if (stopped) return;
        if (ok) spool.commit(batch.length);
        continue;
      }
      notifyIdle();
      await sleep(Number.POSITIVE_INFINITY);
    }
  };

  const running = loop().catch((error: unknown) => {
    // Only a spool I/O failure can get here; the sources keep running and records are dropped, counted.
    log('error', `delivery loop stopped: ${(error as Error).message}`);
    stopped = true;
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
      const size = recordSizeBytes(record);
      if (spoolMode || queueBytes + size > options.maxQueueBytes) {
        if (!spoolMode) {
          moveQueueToSpool();
          spoolMode = true;
        }
        toSpool(record);
        wake();
        return;
      }
      if (queueLength() === 0) batchStartedAt = now();
      queue.push(record);
      queueSizes.push(size);
      queueBytes += size;
      if (queueLength() === 1 || queueBytes >= options.maxBatchBytes || queueLength() >= options.maxBatchRecords) wake();
    },
    get queuedBytes() {
      return queueBytes;
    },
    get queuedRecords() {
      return queueLength();
    },
    get state(): DeliveryState {
      if (stopped) return 'closed';
      if (brokerDown) return 'broker-unavailable';
      if (spoolMode) return 'replaying-spool';
      return isIdle() ? 'idle' : 'delivering';
    },
    flush,
    async close(timeoutMillis) {
      closing = true;
      wake();
      const flushed = await flush(timeoutMillis);
      stopped = true;
      wake();
      if (inFlight !== undefined && !inFlightFromSpool) {
        // Still unacknowledged: keep it (Kafka may also get it: at-least-once, never lost).
        spool.prepend(inFlight);
        metrics.spooled(inFlight.length);
      }
      inFlight = undefined;
      moveQueueToSpool();
      spool.close();
      // The loop ends by itself once a send still in flight settles; it touches nothing after `stopped`.
      void running;
      return { flushed };
    },
  };
}
