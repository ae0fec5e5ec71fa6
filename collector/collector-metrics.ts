import { DLQ_HEADERS } from '../contracts/index.ts';
import type { Meter } from '@opentelemetry/api';
import type { ProduceRecord } from './produce-record.ts';

/** Where a frame entered the collector (also the ww-source header). */
export type FrameSourceKind = 'socket' | 'stdin' | 'file';

/** Totals since start, for /healthz, the shutdown summary and tests. */
export interface CollectorTotals {
  readonly framesIn: number;
  readonly framesOut: number;
  readonly framesRejected: number;
  readonly dlqOut: number;
  readonly framesSpooled: number;
  readonly framesDropped: number;
  readonly threadRecordsIn: number;
  readonly connectionsClosedForErrors: number;
  /** Records a previous run left in the spool, found at start (damaged ones included; they count as dropped too). */
  readonly recordsRecovered: number;
  /** Dropped records per reason (the same counts as framesDropped, split). */
  readonly droppedByReason: Readonly<Record<string, number>>;
  /** Records moved to the DLQ by the agent because Kafka could not take them, per reason. */
  readonly reroutedByReason: Readonly<Record<string, number>>;
}

/** Drop reasons decided before a record reaches the delivery pipeline (it was never submitted). */
export const INTAKE_DROP_REASONS = ['connection-closed', 'validation-worker-failed'] as const;

/** Every reason a record is dropped for (the `reason` attribute of warpwatch.collector.frames.dropped). */
export const DROP_REASONS = [
  // the disk spool (disk-spool.ts SpoolDropReason, passed on by collector.ts)
  'spool-full',
  'disk-full',
  'disk-error',
  'too-large-for-spool',
  'disk-error-at-stop',
  // damaged records of a previous run found at start (collector.ts)
  'spool-corrupt',
  // the delivery pipeline: the broker refused a record for good, or it was still queued at stop
  'rejected-by-broker',
  'closed',
  ...INTAKE_DROP_REASONS,
] as const;

/**
 * One of {@link DROP_REASONS}. {@link CollectorMetrics.dropped} takes only these, so a reason
 * used in the code but missing from the list does not compile (the spool's SpoolDropReason
 * through collector.ts's `onDrop`); collector-metrics.test.ts checks that each one listed is
 * used and documented in docs/collector.md.
 */
export type DropReason = (typeof DROP_REASONS)[number];

/**
 * The collector's bookkeeping identity: every record read (valid frames, rejected stretches,
 * items dropped at intake, and records a previous run left in the spool) is delivered (frames or DLQ), dropped after intake with a
 * reason, or still held in the spool (`held`). `balanced` says whether the two sides agree.
 *
 * @example accountingOf(metrics.totals(), spool.recordCount) // { read: 12, delivered: 10, dropped: 1, held: 1, balanced: true }
 */
export function accountingOf(totals: CollectorTotals, held: number): { read: number; delivered: number; dropped: number; held: number; balanced: boolean } {
  let intakeDrops = 0;
  for (const reason of INTAKE_DROP_REASONS) intakeDrops += totals.droppedByReason[reason] ?? 0;
  const read = totals.framesIn + totals.framesRejected + intakeDrops + totals.recordsRecovered;
  const delivered = totals.framesOut + totals.dlqOut;
  return { read, delivered, dropped: totals.framesDropped, held, balanced: read === delivered + totals.framesDropped + held };
}

/**
 * The collector's closing summary, true by construction: the accounting identity with every
 * drop reason, and "everything delivered" only when nothing was dropped and nothing is held.
 *
 * @example describeTotals(metrics.totals(), spool.recordCount)
 * // 'read 500 (frames 500, rejected 0) = delivered 500 (frames 500, DLQ 0) + dropped 0 + held 0; everything delivered'
 */
export function describeTotals(totals: CollectorTotals, held: number): string {
  const a = accountingOf(totals, held);
  const reasons = Object.entries(totals.droppedByReason)
    .filter(([, n]) => n > 0)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const recovered = totals.recordsRecovered > 0 ? `, recovered from the spool ${totals.recordsRecovered}` : '';
  const rerouted = Object.entries(totals.reroutedByReason).map(([reason, n]) => `${reason} ${n}`).join(', ');
  const verdict =
    a.dropped === 0 && a.held === 0
      ? 'everything delivered'
      : [a.dropped > 0 ? `${a.dropped} record(s) dropped` : '', a.held > 0 ? `${a.held} record(s) left in the spool` : ''].filter((t) => t !== '').join(', ');
  return (
    `read ${a.read} (frames ${totals.framesIn}, rejected ${totals.framesRejected}${recovered}) = delivered ${a.delivered} (frames ${totals.framesOut}, DLQ ${totals.dlqOut}${rerouted === '' ? '' : `; moved to the DLQ: ${rerouted}`})` +
    ` + dropped ${a.dropped}${reasons === '' ? '' : ` (${reasons})`} + held ${a.held}; ${verdict}${a.balanced ? '' : ' (WARNING: the counts do not balance; please report this)'}`
  );
}

/**
 * Self-telemetry of the collector through `@opentelemetry/api` (no SDK here: without one
 * installed every instrument is a no-op; the CLI entry point installs the SDK with the
 * Prometheus exporter). Instruments (Prometheus names in brackets):
 *
 * - `warpwatch.collector.frames.in` {frame} [warpwatch_collector_frames_in_total], attribute source
 * - `warpwatch.collector.frames.out` {frame}: delivered to warpwatch.frames
 * - `warpwatch.collector.frames.rejected` {frame}: invalid, sent to the DLQ; attributes source, code
 * - `warpwatch.collector.dlq.out` {message}: delivered to warpwatch.dlq
 * - `warpwatch.collector.frames.spooled` {frame}: taken into the write-ahead disk spool
 * - `warpwatch.collector.records.rerouted` {record}: moved to the DLQ because Kafka could not take them; attribute reason
 * - `warpwatch.collector.frames.dropped` {frame}: dropped, counted; attribute reason, one of {@link DROP_REASONS}
 * - `warpwatch.collector.thread_records.in` {record}: lane records carried by frames in
 * - `warpwatch.collector.produce.duration` (ms histogram): one batch send until acknowledged
 * - `warpwatch.collector.spool.size` (By gauge), `warpwatch.collector.queue.size` (By gauge)
 *
 * Job and kernel never become attributes (unbounded cardinality).
 */
export class CollectorMetrics {
  #totals = { framesIn: 0, framesOut: 0, framesRejected: 0, dlqOut: 0, framesSpooled: 0, framesDropped: 0, threadRecordsIn: 0, connectionsClosedForErrors: 0, recordsRecovered: 0 };
  #droppedByReason: Record<string, number> = {};
  #reroutedByReason: Record<string, number> = {};
  readonly #rerouted;
  readonly #framesIn;
  readonly #framesOut;
  readonly #framesRejected;
  readonly #dlqOut;
  readonly #framesSpooled;
  readonly #framesDropped;
  readonly #threadRecordsIn;
  readonly #connectionsClosed;
  readonly #produceDuration;

  /**
   * @param meter a Meter from `metrics.getMeter('warpwatch-collector')`.
   * @param gauges callbacks read at each collection: bytes in the disk spool and the memory queue.
   * @example new CollectorMetrics(metrics.getMeter('warpwatch-collector'), { spoolBytes: () => spool.sizeBytes, queueBytes: () => pipeline.queuedBytes })
   */
  constructor(meter: Meter, gauges: { spoolBytes: () => number; queueBytes: () => number }) {
    this.#framesIn = meter.createCounter('warpwatch.collector.frames.in', { unit: '{frame}', description: 'Valid frames received' });
    this.#framesOut = meter.createCounter('warpwatch.collector.frames.out', { unit: '{frame}', description: 'Frames acknowledged by Kafka' });
    this.#framesRejected = meter.createCounter('warpwatch.collector.frames.rejected', { unit: '{frame}', description: 'Invalid frames routed to the DLQ' });
    this.#dlqOut = meter.createCounter('warpwatch.collector.dlq.out', { unit: '{message}', description: 'DLQ messages acknowledged by Kafka' });
    this.#framesSpooled = meter.createCounter('warpwatch.collector.frames.spooled', { unit: '{frame}', description: 'Records taken into the write-ahead disk spool' });
    this.#framesDropped = meter.createCounter('warpwatch.collector.frames.dropped', { unit: '{frame}', description: `Records dropped on purpose, by reason (${DROP_REASONS.join(', ')})` });
    this.#threadRecordsIn = meter.createCounter('warpwatch.collector.thread_records.in', { unit: '{record}', description: 'Per-lane records carried by valid frames' });
    this.#connectionsClosed = meter.createCounter('warpwatch.collector.connections.closed_for_errors', { unit: '{connection}', description: 'Connections closed after too many invalid frames' });
    this.#rerouted = meter.createCounter('warpwatch.collector.records.rerouted', { unit: '{record}', description: 'Records moved to the DLQ because Kafka could not take them' });
    this.#produceDuration = meter.createHistogram('warpwatch.collector.produce.duration', {
      unit: 'ms',
      description: 'Time from sending a batch to its acknowledgement',
      advice: { explicitBucketBoundaries: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 30000] },
    });
    meter.createObservableGauge('warpwatch.collector.spool.size', { unit: 'By', description: 'Bytes in the disk spool' }).addCallback((result) => result.observe(gauges.spoolBytes()));
    meter.createObservableGauge('warpwatch.collector.queue.size', { unit: 'By', description: 'Bytes in the in-memory queue' }).addCallback((result) => result.observe(gauges.queueBytes()));
  }

  /** `frames` valid frames arrived (counted per chunk, not per frame: cheaper with the SDK); `threadRecords` = lanes they describe. */
  framesIn(source: FrameSourceKind, frames: number, threadRecords: number): void {
    this.#totals.framesIn += frames;
    this.#totals.threadRecordsIn += threadRecords;
    this.#framesIn.add(frames, { source });
    if (threadRecords > 0) this.#threadRecordsIn.add(threadRecords, { source });
  }

  /** An invalid frame was routed to the DLQ. */
  frameRejected(source: FrameSourceKind, code: string): void {
    this.#totals.framesRejected += 1;
    this.#framesRejected.add(1, { source, code });
  }

  /** A connection was closed because it sent too many invalid frames. */
  connectionClosedForErrors(source: FrameSourceKind): void {
    this.#totals.connectionsClosedForErrors += 1;
    this.#connectionsClosed.add(1, { source });
  }

  /** A batch was acknowledged; DLQ messages (those with a ww-error-code header) are counted apart. */
  delivered(records: readonly ProduceRecord[], durationMillis: number): void {
    let dlq = 0;
    for (const record of records) if (record.headers[DLQ_HEADERS.errorCode] !== undefined) dlq += 1;
    const frames = records.length - dlq;
    this.#totals.framesOut += frames;
    this.#totals.dlqOut += dlq;
    if (frames > 0) this.#framesOut.add(frames);
    if (dlq > 0) this.#dlqOut.add(dlq);
    this.#produceDuration.record(durationMillis);
  }

  /** Records were taken into the write-ahead spool (every accepted record is). */
  spooled(count: number): void {
    this.#totals.framesSpooled += count;
    this.#framesSpooled.add(count);
  }

  /** Records were dropped on purpose, for one of the {@link DROP_REASONS}. */
  dropped(count: number, reason: DropReason): void {
    this.#totals.framesDropped += count;
    this.#droppedByReason[reason] = (this.#droppedByReason[reason] ?? 0) + count;
    this.#framesDropped.add(count, { reason });
  }

  /** `count` records a previous run left in the spool were found at start. */
  recovered(count: number): void {
    this.#totals.recordsRecovered += count;
  }

  /** Records were moved to the DLQ by the agent (too large for the broker, or rejected by it); `reason` too-large | broker-rejected. */
  rerouted(count: number, reason: string): void {
    this.#reroutedByReason[reason] = (this.#reroutedByReason[reason] ?? 0) + count;
    this.#rerouted.add(count, { reason });
  }

  /** Current totals (a copy). */
  totals(): CollectorTotals {
    return { ...this.#totals, droppedByReason: { ...this.#droppedByReason }, reroutedByReason: { ...this.#reroutedByReason } };
  }
}
