/**
 * One message on its way to Kafka: what the collector queues, spools and produces.
 * `value` holds the raw frame bytes exactly as they arrived (never re-encoded).
 */
export interface ProduceRecord {
  /** Destination topic (warpwatch.frames or warpwatch.dlq). */
  readonly topic: string;
  /** Partition key: the stream id `<job>/<kernel>` for frames; null when unknown (DLQ). */
  readonly key: string | null;
  /** Raw bytes (the frame; for the DLQ the rejected bytes, at most the first 64 KiB of a long stretch). */
  readonly value: Uint8Array;
  /** Kafka headers (ww-source, ww-host, traceparent, ww-label-*; on the DLQ also ww-error-code, ww-error-message, ww-discarded-bytes). */
  readonly headers: Readonly<Record<string, string>>;
  /** When the collector received the frame, milliseconds since the Unix epoch. */
  readonly timestampMillis: number;
}

/** Fixed per-record overhead used when counting bytes (lengths, timestamp, bookkeeping). */
const RECORD_OVERHEAD_BYTES = 64;

/**
 * Approximate memory/disk footprint of a record in bytes: value + key + headers + a fixed
 * overhead. Used for queue, batch and spool bounds (cheap: headers are short ASCII).
 *
 * @example recordSizeBytes({ topic: 't', key: 'a/b', value: new Uint8Array(100), headers: {}, timestampMillis: 0 }) // 167
 */
export function recordSizeBytes(record: ProduceRecord): number {
  let bytes = RECORD_OVERHEAD_BYTES + record.value.byteLength + (record.key?.length ?? 0);
  for (const name in record.headers) bytes += name.length + (record.headers[name]?.length ?? 0);
  return bytes;
}

/**
 * Sends one batch of records to Kafka and resolves when every record is acknowledged
 * (acks from all in-sync replicas). Rejects when the batch could not be delivered; the
 * caller then spools it. The only implementation that talks to a broker is
 * kafka-producer.ts; tests pass in-memory doubles.
 */
export type ProduceFunction = (records: readonly ProduceRecord[]) => Promise<void>;
