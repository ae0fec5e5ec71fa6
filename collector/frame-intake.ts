import { Worker } from 'node:worker_threads';
import { DLQ_HEADERS, KAFKA_HEADERS } from '../contracts/index.ts';
import type { CollectorMetrics, FrameSourceKind } from './collector-metrics.ts';
import type { DeliveryPipeline, LogFunction } from './delivery-pipeline.ts';
import type { ProduceRecord } from './produce-record.ts';
import { createStreamValidator, type StreamValidator, type ValidatedItem } from './stream-validator.ts';
import { createTraceparentGenerator } from './trace-context.ts';
import type { ValidationRequest, ValidationResponse } from './validation-worker.ts';

/** Settings of {@link createFrameIntake}. */
export interface FrameIntakeOptions {
  /** Where valid and rejected records go. */
  readonly pipeline: Pick<DeliveryPipeline, 'submit'>;
  readonly metrics: CollectorMetrics;
  readonly framesTopic: string;
  readonly dlqTopic: string;
  /** ww-host header value. */
  readonly hostName: string;
  /** Sent as `ww-label-<name>` headers. */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * Validate in a worker thread (default false: on the event loop). The worker takes the
   * splitting and decoding off the thread that reads sockets and runs the Kafka client.
   */
  readonly useWorker?: boolean;
  /**
   * Bound on bytes handed to the worker and not yet validated (default 64 MiB). Past it the
   * intake reports {@link FrameIntake.overloaded} and the sources pause reading until the
   * backlog has halved; nothing is dropped.
   */
  readonly maxBacklogBytes?: number;
  readonly log?: LogFunction;
  /** Wall clock in ms since the epoch (default Date.now), for record timestamps. */
  readonly wallClockMillis?: () => number;
}

/** One byte stream (a socket connection, stdin, a file) being split into frames. */
export interface FrameStream {
  /** Feeds bytes (never blocks); valid frames are submitted, each contiguous invalid stretch goes to the DLQ as one record. */
  push(chunk: Uint8Array): void;
  /** The stream ended: resolves once all its bytes are validated and submitted (leftover bytes are a truncated frame). */
  end(): Promise<void>;
  /** Invalid stretches (and frames failing decoding) seen on this stream so far. */
  readonly errorCount: number;
}

/** Opens frame streams that share the enrichment, the validation (thread) and the pipeline. */
export interface FrameIntake {
  /**
   * @param source where the bytes come from (ww-source header).
   * @param maxErrors after this many rejects (one per contiguous invalid stretch) the stream stops and `onTooManyErrors` is called once (sockets); Infinity for files/stdin.
   * @param onTooManyErrors close the connection here.
   */
  openStream(source: FrameSourceKind, maxErrors: number, onTooManyErrors?: () => void): FrameStream;
  /** Bytes handed to the validation worker and not yet answered (0 without a worker). */
  readonly backlogBytes: number;
  /** True while the worker's backlog is over its bound: sources should pause reading (see {@link FrameIntake.relieved}). */
  readonly overloaded: boolean;
  /** Resolves once the worker's backlog is at most half its bound (at once without a worker, or when it stopped). */
  relieved(): Promise<void>;
  /** Resolves true once nothing waits for validation, or false after `timeoutMillis`. */
  drain(timeoutMillis: number): Promise<boolean>;
  /** Stops the validation worker (after {@link FrameIntake.drain}). */
  close(): Promise<void>;
}

const MAX_ERROR_MESSAGE_CHARS = 300;

/** The intake's state of one input byte stream (a socket connection, stdin or a file); not the estimator's per-stream StreamState. */
/** Least time between two log lines of rejected input of one source and code (ms). */
const REJECT_LINE_MILLIS = 60_000;

interface InputStreamState {
  readonly source: FrameSourceKind;
  readonly maxErrors: number;
  readonly onTooManyErrors: (() => void) | undefined;
  readonly baseHeaders: Readonly<Record<string, string>>;
  errorCount: number;
  stopped: boolean;
  /** Frames accepted since the last metrics update (counted per chunk). */
  pendingFrames: number;
  pendingThreadRecords: number;
  inline: StreamValidator | undefined;
  resolveEnd: (() => void) | undefined;
}

/**
 * Validation and enrichment: each byte stream is split and decoded with the protocol codec
 * (stream-validator.ts), on the event loop or in one worker thread; valid frames are
 * submitted unchanged with key = stream id `<job>/<kernel>` and headers ww-source,
 * ww-host, traceparent and ww-label-*; anything invalid goes to the DLQ topic with
 * ww-error-code, ww-error-message and ww-discarded-bytes headers, and the stream keeps going
 * (the splitter resynchronises on the next valid frame). One contiguous invalid stretch is one
 * DLQ record (and one error against the stream's budget), however long: its value is a sample
 * of the stretch's first 64 KiB, ww-discarded-bytes its exact length in bytes (decimal); a
 * frame that passes the CRC but fails decoding is its own record, whole. Per-stream order is
 * kept in both modes.
 *
 * @example
 * const intake = createFrameIntake({ pipeline, metrics, framesTopic: 'warpwatch.frames', dlqTopic: 'warpwatch.dlq', hostName: 'gpu-7', labels: {} });
 * const stream = intake.openStream('socket', 16, () => socket.destroy());
 * socket.on('data', (chunk) => stream.push(chunk));
 */
export function createFrameIntake(options: FrameIntakeOptions): FrameIntake {
  const wallClockMillis = options.wallClockMillis ?? Date.now;
  const log = options.log ?? (() => {});
  const maxBacklogBytes = options.maxBacklogBytes ?? 64 * 1024 * 1024;
  const nextTraceparent = createTraceparentGenerator();
  const labelHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.labels)) labelHeaders[`${KAFKA_HEADERS.labelPrefix}${name}`] = value;
  const streams = new Map<number, InputStreamState>();
  let nextStreamId = 1;
  let backlogBytes = 0;
  /** Chunks handed to the worker and not yet answered (one answer per chunk). */
  let backlogChunks = 0;
  const drainWaiters = new Set<() => void>();
  const relievedWaiters = new Set<() => void>();

  // One line per source and code a minute (the counter and the DLQ have every one).
  const rejectLines = new Map<string, { atMillis: number; leftOut: number }>();
  const sayRejected = (source: FrameSourceKind, code: string, message: string, discardedLength: number): void => {
    const key = `${source}|${code}`;
    const now = wallClockMillis();
    const last = rejectLines.get(key);
    if (last !== undefined && now - last.atMillis < REJECT_LINE_MILLIS) {
      last.leftOut += 1;
      return;
    }
    const more = last === undefined || last.leftOut === 0 ? '' : ` (${last.leftOut} more like it in the last minute)`;
    rejectLines.set(key, { atMillis: now, leftOut: 0 });
    log('warn', `${code}: rejected ${discardedLength} invalid byte(s) from the ${source} input: ${message.slice(0, MAX_ERROR_MESSAGE_CHARS)}; sent to the DLQ ${options.dlqTopic} (header ${DLQ_HEADERS.errorCode})${more}`);
  };

  const reject = (state: InputStreamState, code: string, message: string, bytes: Uint8Array, discardedLength: number): void => {
    state.errorCount += 1;
    options.metrics.frameRejected(state.source, code);
    sayRejected(state.source, code, message, discardedLength);
    options.pipeline.submit({
      topic: options.dlqTopic,
      key: null,
      value: bytes,
      headers: {
        ...state.baseHeaders,
        [DLQ_HEADERS.errorCode]: code,
        [DLQ_HEADERS.errorMessage]: message.slice(0, MAX_ERROR_MESSAGE_CHARS),
        [DLQ_HEADERS.discardedBytes]: String(discardedLength),
        traceparent: nextTraceparent(),
      },
      timestampMillis: wallClockMillis(),
    });
    if (state.errorCount >= state.maxErrors && !state.stopped) {
      state.stopped = true;
      state.onTooManyErrors?.();
    }
  };

  const countAccepted = (state: InputStreamState): void => {
    if (state.pendingFrames === 0) return;
    options.metrics.framesIn(state.source, state.pendingFrames, state.pendingThreadRecords);
    state.pendingFrames = 0;
    state.pendingThreadRecords = 0;
  };

  const accept = (state: InputStreamState, raw: Uint8Array, key: string, threadRecords: number): void => {
    state.pendingFrames += 1;
    state.pendingThreadRecords += threadRecords;
    const record: ProduceRecord = { topic: options.framesTopic, key, value: raw, headers: { ...state.baseHeaders, traceparent: nextTraceparent() }, timestampMillis: wallClockMillis() };
    options.pipeline.submit(record);
  };

  const handleInline = (state: InputStreamState, items: readonly ValidatedItem[]): void => {
    for (let i = 0; i < items.length; i++) {
      if (state.stopped) {
        // Error budget spent: the connection is being closed; the rest is dropped, counted.
        options.metrics.dropped(items.length - i, 'connection-closed');
        break;
      }
      const item = items[i] as ValidatedItem;
      if (item.kind === 'frame') accept(state, item.raw, item.key, item.threadRecords);
      else reject(state, item.code, item.message, item.bytes, item.discardedLength);
    }
    countAccepted(state);
  };

  const handleResponse = (response: ValidationResponse): void => {
    backlogBytes -= response.consumedBytes;
    if (response.consumedBytes > 0) backlogChunks -= 1;
    const state = streams.get(response.id);
    if (state !== undefined) {
      let frame = 0;
      let rejected = 0;
      let at = 0;
      for (let i = 0; i < response.kinds.length; i++) {
        if (state.stopped) {
          // Error budget spent: the connection is being closed; the rest is dropped, counted.
          options.metrics.dropped(response.kinds.length - i, 'connection-closed');
          break;
        }
        if (response.kinds[i] === 'f') {
          const length = response.lengths[frame] as number;
          accept(state, response.frames.subarray(at, at + length), response.keys[frame] as string, response.threadRecords[frame] as number);
          at += length;
          frame += 1;
        } else {
          const item = response.rejects[rejected++] as ValidationResponse['rejects'][number];
          reject(state, item.code, item.message, item.bytes, item.discardedLength);
        }
      }
      countAccepted(state);
      if (response.ended) {
        streams.delete(response.id);
        state.resolveEnd?.();
      }
    }
    if (backlogBytes === 0) for (const waiter of drainWaiters) waiter();
    if (backlogBytes <= maxBacklogBytes / 2) for (const resume of [...relievedWaiters]) resume();
  };

  // --- the optional worker ----------------------------------------------------------------
  let worker: Worker | undefined;
  let closing = false;
  if (options.useWorker === true) {
    // From sources (tsx) the worker needs tsx's loader first; the compiled CLI (dist/, bin/build.mjs)
    // has the worker body as its own entry point beside this module.
    worker = import.meta.url.endsWith('.ts')
      ? new Worker(new URL('./validation-worker-entry.mjs', import.meta.url), { workerData: { module: new URL('./validation-worker.ts', import.meta.url).href, host: options.hostName } })
      : new Worker(new URL('./validation-worker.js', import.meta.url), { workerData: { host: options.hostName } });
    worker.on('message', handleResponse);
    const fail = (reason: string): void => {
      if (worker === undefined || closing) return;
      worker = undefined;
      log('error', `validation worker stopped (${reason}); validating on the main thread from now on; ${backlogChunks} chunk(s) it held were lost (counted dropped, reason validation-worker-failed)`);
      if (backlogChunks > 0) options.metrics.dropped(backlogChunks, 'validation-worker-failed');
      backlogBytes = 0;
      backlogChunks = 0;
      for (const [id, state] of streams) {
        if (state.resolveEnd !== undefined) {
          streams.delete(id);
          state.resolveEnd();
        }
      }
      for (const waiter of drainWaiters) waiter();
      for (const resume of [...relievedWaiters]) resume();
    };
    worker.on('error', (error) => fail(error.message));
    worker.on('exit', (code) => fail(`exit code ${code}`));
  }

  const send = (request: ValidationRequest, transfer: ArrayBuffer[]): void => {
    (worker as Worker).postMessage(request, transfer);
  };

  return {
    openStream(source, maxErrors, onTooManyErrors) {
      const id = nextStreamId++;
      const state: InputStreamState = {
        source,
        maxErrors,
        onTooManyErrors,
        baseHeaders: Object.freeze({ [KAFKA_HEADERS.source]: source, [KAFKA_HEADERS.host]: options.hostName, ...labelHeaders }),
        errorCount: 0,
        stopped: false,
        pendingFrames: 0,
        pendingThreadRecords: 0,
        inline: undefined,
        resolveEnd: undefined,
      };
      streams.set(id, state);
      return {
        push(chunk) {
          if (state.stopped || chunk.byteLength === 0) return;
          if (worker === undefined) {
            state.inline ??= createStreamValidator({ host: options.hostName });
            handleInline(state, state.inline.push(chunk));
            return;
          }
          // Copy exactly the chunk's bytes into a buffer we can transfer (a socket Buffer may share its memory).
          const copy = new Uint8Array(chunk);
          backlogBytes += copy.byteLength;
          backlogChunks += 1;
          send({ op: 'push', id, chunk: copy }, [copy.buffer as ArrayBuffer]);
        },
        end() {
          if (worker === undefined) {
            state.inline ??= createStreamValidator({ host: options.hostName });
            if (!state.stopped) handleInline(state, state.inline.end());
            streams.delete(id);
            return Promise.resolve();
          }
          return new Promise<void>((resolve) => {
            state.resolveEnd = resolve;
            send({ op: 'end', id }, []);
          });
        },
        get errorCount() {
          return state.errorCount;
        },
      };
    },
    get backlogBytes() {
      return backlogBytes;
    },
    get overloaded() {
      return backlogBytes > maxBacklogBytes;
    },
    relieved() {
      if (backlogBytes <= maxBacklogBytes / 2 || worker === undefined) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          relievedWaiters.delete(done);
          resolve();
        };
        relievedWaiters.add(done);
      });
    },
    drain(timeoutMillis) {
      if (backlogBytes === 0) return Promise.resolve(true);
      return new Promise<boolean>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          drainWaiters.delete(done);
          resolve(backlogBytes === 0);
        };
        const timer = setTimeout(done, timeoutMillis);
        drainWaiters.add(done);
      });
    },
    async close() {
      closing = true;
      const stopping = worker;
      worker = undefined;
      if (stopping !== undefined) await stopping.terminate();
    },
  };
}
