import { createFrameSplitter, decodeFrame, streamIdOf, type Frame, type FrameError } from '../protocol/index.ts';
import type { CollectorMetrics, FrameSourceKind } from './collector-metrics.ts';
import type { DeliveryPipeline } from './delivery-pipeline.ts';
import type { ProduceRecord } from './produce-record.ts';
import { createTraceparentGenerator } from './trace-context.ts';

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
  /** Wall clock in ms since the epoch (default Date.now), for record timestamps. */
  readonly wallClockMillis?: () => number;
}

/** What the caller of {@link FrameStream.push} must do next. */
export interface FrameStreamVerdict {
  /** True when the stream passed its error budget: close the connection. */
  readonly close: boolean;
}

/** One byte stream (a socket connection, stdin, a file) being split into frames. */
export interface FrameStream {
  /** Feeds bytes; valid frames are submitted, invalid stretches go to the DLQ. */
  push(chunk: Uint8Array): FrameStreamVerdict;
  /** The stream ended: leftover bytes are a truncated frame (DLQ). */
  end(): void;
  /** Invalid frames seen on this stream. */
  readonly errorCount: number;
}

/** Opens frame streams that share the enrichment and the pipeline. */
export interface FrameIntake {
  /**
   * @param source where the bytes come from (ww-source header).
   * @param maxErrors after this many invalid frames `push` answers `close: true` (sockets); Infinity for files/stdin.
   */
  openStream(source: FrameSourceKind, maxErrors: number): FrameStream;
}

const MAX_ERROR_MESSAGE_CHARS = 300;

/**
 * Validation and enrichment: splits each byte stream with the protocol splitter, decodes
 * every frame with the protocol codec (full validation), and submits the raw bytes
 * unchanged with key = stream id `<job>/<kernel>` and headers ww-source, ww-host,
 * traceparent and ww-label-*. Anything invalid goes to the DLQ topic with ww-error-code
 * and ww-error-message headers; the stream keeps going (resynchronised by the splitter).
 *
 * @example
 * const intake = createFrameIntake({ pipeline, metrics, framesTopic: 'warpwatch.frames', dlqTopic: 'warpwatch.dlq', hostName: 'gpu-7', labels: {} });
 * const stream = intake.openStream('socket', 16);
 * socket.on('data', (chunk) => { if (stream.push(chunk).close) socket.destroy(); });
 */
export function createFrameIntake(options: FrameIntakeOptions): FrameIntake {
  const wallClockMillis = options.wallClockMillis ?? Date.now;
  const nextTraceparent = createTraceparentGenerator();
  const labelHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.labels)) labelHeaders[`ww-label-${name}`] = value;

  return {
    openStream(source, maxErrors) {
      const splitter = createFrameSplitter();
      const baseHeaders = Object.freeze({ 'ww-source': source, 'ww-host': options.hostName, ...labelHeaders });
      let errorCount = 0;

      const reject = (code: string, message: string, bytes: Uint8Array, key: string | null): void => {
        errorCount += 1;
        options.metrics.frameRejected(source, code);
        const record: ProduceRecord = {
          topic: options.dlqTopic,
          key,
          value: bytes.slice(),
          headers: {
            ...baseHeaders,
            'ww-error-code': code,
            'ww-error-message': message.slice(0, MAX_ERROR_MESSAGE_CHARS),
            traceparent: nextTraceparent(),
          },
          timestampMillis: wallClockMillis(),
        };
        options.pipeline.submit(record);
      };

      const accept = (raw: Uint8Array): void => {
        let frame: Frame;
        try {
          frame = decodeFrame(raw);
        } catch (error) {
          const e = error as FrameError;
          reject(typeof e.code === 'string' ? e.code : 'WW_ERR_FRAME_INVALID', e.message, raw, null);
          return;
        }
        options.metrics.frameIn(source, threadRecordsOf(frame));
        options.pipeline.submit({
          topic: options.framesTopic,
          key: streamIdOf(frame),
          value: raw,
          headers: { ...baseHeaders, traceparent: nextTraceparent() },
          timestampMillis: wallClockMillis(),
        });
      };

      const handle = (items: ReturnType<typeof splitter.push>): void => {
        for (let i = 0; i < items.length; i++) {
          if (errorCount >= maxErrors) {
            // Error budget spent: the stream is being closed; the rest of this chunk is dropped, counted.
            options.metrics.dropped(items.length - i, 'connection-closed');
            return;
          }
          const item = items[i] as (typeof items)[number];
          if ('raw' in item) accept(item.raw);
          else reject(item.error.code, item.error.message, item.discarded, null);
        }
      };

      return {
        push(chunk) {
          handle(splitter.push(chunk));
          return { close: errorCount >= maxErrors };
        },
        end() {
          handle(splitter.end());
        },
        get errorCount() {
          return errorCount;
        },
      };
    },
  };
}

/**
 * Per-lane records a frame describes: every lane of every counted group for a launch
 * summary, every lane of every sampled group for group samples.
 *
 * @example threadRecordsOf(groupSamplesFrameWith3Groups) // 3 × groupSize
 */
export function threadRecordsOf(frame: Frame): number {
  return frame.type === 'launch-summary' ? frame.groupsCounted * frame.groupSize : frame.groups.length * frame.groupSize;
}
