/**
 * The checkpoint-before-commit protocol of the estimator, without I/O (the service passes it
 * in): what makes "a committed offset never stands for a window that was not written" true.
 *
 * One round (`run()`):
 * 1. For every assigned, restored partition, take the engine's checkpoint records (changed
 *    streams, tombstones, the partition marker with the next offset) and merge them into the
 *    partition's pending set (a record taken earlier and not yet written is kept, a newer value
 *    of the same key replaces it; the marker stays last).
 * 2. Flush the outputs the checkpoint depends on: InfluxDB points, then the result records for
 *    Kafka (distributions, alerts). A failure ends the round: nothing is committed, the pending
 *    records stay for the next round.
 * 3. Per partition still assigned: write its pending checkpoint records, then commit its next
 *    offset. A failure ends the round; that partition's records stay pending (written again
 *    next round: the topic is compacted, so a repeat is harmless) and its offset uncommitted.
 *    A partition whose offset is already committed and whose only record is the marker is
 *    skipped.
 *
 * Crash anywhere: the committed offset is at most the offset of a checkpoint that was written
 * after every output it covers, so a restart replays from there and rewrites identical values.
 */

/** One checkpoint-topic record: key → JSON (null = tombstone). */
export interface CheckpointTopicRecord {
  readonly key: string;
  readonly value: string | null;
}

/** What the protocol needs from the service. */
export interface CheckpointProtocolIo {
  /** Partitions assigned to this instance now. */
  assigned(): Iterable<number>;
  /** Whether a partition's state was restored (only restored partitions are checkpointed). */
  isRestored(partition: number): boolean;
  /** The engine's records for a partition (stream key undefined = the partition marker), or undefined when it has none. */
  snapshot(partition: number): { records: readonly { streamKey: string | undefined; dedupeBase?: boolean; value: string | null }[]; nextOffset: string } | undefined;
  /** The checkpoint-topic key of a stream of a partition (undefined = the partition marker), or of its dedupe base record. */
  keyOf(partition: number, streamKey: string | undefined, dedupeBase?: boolean): string;
  /** Writes the pending InfluxDB points; throws when they could not be written. */
  flushInflux(): Promise<void>;
  /** Sends the pending result records for Kafka; throws when they could not be sent. */
  flushResults(): Promise<void>;
  /** Writes a partition's checkpoint records (in order, the marker last); throws on failure. */
  writeCheckpoint(partition: number, records: readonly CheckpointTopicRecord[]): Promise<void>;
  /** Commits a partition's next offset; throws on failure. */
  commit(partition: number, nextOffset: string): Promise<void>;
}

/** The protocol's state for the service. */
export interface CheckpointProtocol {
  /** One round (see the module comment); throws the first failure (the service logs and retries later). */
  run(): Promise<void>;
  /** A partition was revoked: forget its pending records and its committed offset. */
  forget(partition: number): void;
  /** Partitions with records not yet written (tests, health). */
  pendingPartitions(): number[];
}

/**
 * Creates the protocol over the service's I/O.
 *
 * @example
 * const protocol = createCheckpointProtocol({ assigned: () => assigned, isRestored: (p) => restored.has(p), ... });
 * setInterval(() => protocol.run().catch(log), 2000);
 */
export function createCheckpointProtocol(io: CheckpointProtocolIo): CheckpointProtocol {
  const pending = new Map<number, { records: Map<string, string | null>; nextOffset: string }>();
  const lastCommitted = new Map<number, string>();
  const assignedNow = (): Set<number> => new Set(io.assigned());
  return {
    async run() {
      const assigned = assignedNow();
      for (const partition of assigned) {
        if (!io.isRestored(partition)) continue;
        const snapshot = io.snapshot(partition);
        if (snapshot === undefined) continue;
        const entry = pending.get(partition) ?? { records: new Map<string, string | null>(), nextOffset: snapshot.nextOffset };
        for (const record of snapshot.records) {
          const key = io.keyOf(partition, record.streamKey, record.dedupeBase);
          entry.records.delete(key); // keep insertion order: the marker stays last
          entry.records.set(key, record.value);
        }
        entry.nextOffset = snapshot.nextOffset;
        pending.set(partition, entry);
      }
      if (pending.size === 0) return;
      // Outputs first: a committed offset must never stand for a window that was not written.
      await io.flushInflux();
      await io.flushResults();
      for (const [partition, entry] of pending) {
        if (!assignedNow().has(partition)) {
          pending.delete(partition);
          continue;
        }
        const unchanged = lastCommitted.get(partition) === entry.nextOffset && entry.records.size <= 1;
        if (!unchanged) {
          await io.writeCheckpoint(partition, [...entry.records].map(([key, value]) => ({ key, value })));
          await io.commit(partition, entry.nextOffset);
          lastCommitted.set(partition, entry.nextOffset);
        }
        pending.delete(partition);
      }
    },
    forget(partition) {
      pending.delete(partition);
      lastCommitted.delete(partition);
    },
    pendingPartitions() {
      return [...pending.keys()];
    },
  };
}
