import type { OutgoingRecord } from './kafka.ts';

/**
 * The estimator's queue of result records for Kafka (warpwatch.distributions and
 * warpwatch.alerts): the engine queues records as windows close, a timer and every checkpoint
 * send them. Bounded in records: when full, the oldest are dropped and counted. One send at a
 * time; a failed send puts its records back in front (bounded again) and rethrows, so the
 * checkpoint that waited for them is postponed and the records go with the next send.
 */

/** Settings and I/O of {@link createOutgoingQueue}. */
export interface OutgoingQueueOptions {
  /** Most records kept (≥ 1). */
  readonly maxRecords: number;
  /** Sends the records of one topic in order; throws on failure. */
  readonly produce: (topic: string, records: readonly OutgoingRecord[]) => Promise<void>;
  /** Called with the number of records dropped to keep the bound, and the running total. */
  readonly onDropped: (dropped: number, total: number) => void;
}

/** The queue; see {@link createOutgoingQueue}. */
export interface OutgoingQueue {
  /** Queues a record for `topic` (never throws; may drop the oldest). */
  queue(topic: string, record: OutgoingRecord): void;
  /**
   * Sends everything queued now (after any send in progress), topic by topic.
   *
   * @throws the produce failure; the records are queued again.
   */
  send(): Promise<void>;
  /** Records queued now (not counting those of a send in progress). */
  readonly size: number;
  /** Records held now: queued, and those of a send in progress (what backpressure counts, docs/estimator.md). */
  readonly held: number;
  /** Records dropped since the start. */
  readonly dropped: number;
}

/**
 * Creates an empty queue.
 *
 * @example
 * const outgoing = createOutgoingQueue({ maxRecords: 100_000, produce: (topic, records) => kafka.produce(topic, records), onDropped: (n) => log(`${n} dropped`) });
 * outgoing.queue('warpwatch.distributions', { key, value });
 * await outgoing.send();
 */
export function createOutgoingQueue(options: OutgoingQueueOptions): OutgoingQueue {
  let items: { topic: string; record: OutgoingRecord }[] = [];
  let dropped = 0;
  let sending: Promise<void> | undefined;
  /** Records of the send in progress. */
  let sendingRecords = 0;

  /** Keeps the queue within maxRecords by dropping the oldest records. */
  const bound = (): void => {
    if (items.length <= options.maxRecords) return;
    const excess = items.length - options.maxRecords;
    items = items.slice(excess);
    dropped += excess;
    options.onDropped(excess, dropped);
  };

  const send = async (): Promise<void> => {
    while (sending !== undefined) await sending.catch(() => undefined);
    if (items.length === 0) return;
    const batch = items;
    items = [];
    const byTopic = new Map<string, OutgoingRecord[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic) ?? [];
      list.push(item.record);
      byTopic.set(item.topic, list);
    }
    const run = (async () => {
      for (const [topic, records] of byTopic) await options.produce(topic, records);
    })();
    sending = run;
    sendingRecords = batch.length;
    try {
      await run;
    } catch (error) {
      // Put the batch back for the next attempt (bounded: what does not fit is counted as dropped).
      items = [...batch, ...items];
      bound();
      throw error;
    } finally {
      sending = undefined;
      sendingRecords = 0;
    }
  };

  return {
    queue(topic, record) {
      items.push({ topic, record });
      bound();
    },
    send,
    get size() {
      return items.length;
    },
    get held() {
      return items.length + sendingRecords;
    },
    get dropped() {
      return dropped;
    },
  };
}
