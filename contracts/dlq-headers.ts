/**
 * Kafka header names of records on the DLQ topic (TOPICS.dlq), shared by everyone who writes or
 * reads it: the collector (frames it rejects, records Kafka refused; docs/collector.md) and the
 * estimator (frames it rejects at decode, frames and windows it quarantines; docs/estimator.md).
 * A DLQ record also keeps the headers of the record it stands for (ww-host, ww-label-*, traceparent).
 *
 * @example
 * const code = headers[DLQ_HEADERS.errorCode]; // 'WW_ERR_FRAME_CRC_MISMATCH'
 */
export const DLQ_HEADERS = {
  /** The WW_ERR_* code of the problem (docs/errors.md). */
  errorCode: 'ww-error-code',
  /** One line saying what went wrong (at most 300 characters). */
  errorMessage: 'ww-error-message',
  /** Collector: the exact length of a rejected stretch of bytes (the value is a sample of it). */
  discardedBytes: 'ww-discarded-bytes',
  /** The topic the record was meant for (collector) or read from (estimator). */
  originalTopic: 'ww-original-topic',
  /** The record's key there ('' when it had none). */
  originalKey: 'ww-original-key',
  /** The uncapped length of the value in bytes (the DLQ value may be capped). */
  originalBytes: 'ww-original-bytes',
  /** Estimator: the partition of the frames topic the record was read from. */
  originalPartition: 'ww-original-partition',
  /** Estimator: its offset there (decimal); for a window, the offset of the stream's last frame applied. */
  originalOffset: 'ww-original-offset',
  /** Estimator: who put it there and why: `estimator` (rejected at decode) or `estimator-quarantine` (an unexpected error while handling it). */
  quarantinedBy: 'ww-quarantined-by',
  /** Estimator: `frame` (value = the frame's bytes, capped) or `window` (value = the window's summary as JSON). */
  quarantinedKind: 'ww-quarantined-kind',
} as const;
