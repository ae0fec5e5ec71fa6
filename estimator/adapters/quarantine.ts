import { Buffer } from 'node:buffer';
import { DLQ_HEADERS } from '../../contracts/index.ts';
import type { QuarantineRecord } from '../engine/estimator-engine.ts';
import type { OutgoingRecord } from './kafka.ts';

/**
 * What the estimator does with what it cannot use (docs/estimator.md, Quarantine): a frame it
 * rejects at decode, or a frame or window whose handling failed unexpectedly, becomes one record
 * on the DLQ topic, with the header names the collector uses for its DLQ records
 * (contracts/dlq-headers.ts) plus where it was read from; each stream's first such event is
 * logged, the rest counted.
 */

/** Bytes of a frame kept in its DLQ record (the collector's default cap, WARPWATCH_DLQ_MAX_VALUE_BYTES). */
export const DLQ_MAX_VALUE_BYTES = 64 * 1024;

/**
 * The DLQ record of a quarantined or rejected frame or window: key = the stream key ('' when
 * the frame did not decode), value = the frame's bytes capped at {@link DLQ_MAX_VALUE_BYTES}
 * (or the window's JSON summary), headers = the frame's own plus ww-error-code,
 * ww-error-message, ww-original-topic, ww-original-key, ww-original-bytes,
 * ww-original-partition, ww-original-offset, ww-quarantined-by and ww-quarantined-kind.
 *
 * @example dlqRecordOf(record, 'warpwatch.frames').headers['ww-error-code'] // 'WW_ERR_ESTIMATOR_FRAME_QUARANTINED'
 */
export function dlqRecordOf(record: QuarantineRecord, framesTopic: string): OutgoingRecord & { readonly headers: Readonly<Record<string, string>> } {
  const bytes = typeof record.value === 'string' ? Buffer.from(record.value, 'utf8') : Buffer.from(record.value.buffer, record.value.byteOffset, record.value.byteLength);
  return {
    key: record.streamKey ?? '',
    value: bytes.subarray(0, Math.min(bytes.byteLength, DLQ_MAX_VALUE_BYTES)),
    headers: {
      ...record.headers,
      [DLQ_HEADERS.errorCode]: record.code,
      [DLQ_HEADERS.errorMessage]: record.message.slice(0, 300),
      [DLQ_HEADERS.originalTopic]: framesTopic,
      [DLQ_HEADERS.originalKey]: record.streamKey ?? '',
      [DLQ_HEADERS.originalBytes]: String(bytes.byteLength),
      [DLQ_HEADERS.originalPartition]: String(record.partition),
      [DLQ_HEADERS.originalOffset]: record.offset ?? '',
      [DLQ_HEADERS.quarantinedBy]: record.reason === 'rejected' ? 'estimator' : 'estimator-quarantine',
      [DLQ_HEADERS.quarantinedKind]: record.kind,
    },
  };
}

/**
 * Logs the first problem of each stream (the key `?<partition>` stands for frames that did not
 * decode, per partition) with its code, and counts the rest; `line` makes the text. Remembers at
 * most 10,000 streams (beyond, new streams are counted, not logged).
 *
 * @example const once = createOncePerStreamLog(log); once('job/k|n=32|…', () => 'WW_ERR_…');
 */
export function createOncePerStreamLog(log: (line: string) => void): (streamKey: string, line: () => string) => void {
  const seen = new Map<string, number>();
  return (streamKey, line) => {
    const count = (seen.get(streamKey) ?? 0) + 1;
    if (seen.size < 10_000 || seen.has(streamKey)) seen.set(streamKey, count);
    if (count === 1 && seen.has(streamKey)) log(line());
  };
}
