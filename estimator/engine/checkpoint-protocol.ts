/**
 * The checkpoint-before-commit protocol of the estimator, without I/O (the service passes it
 * in): what makes "a committed offset never stands for a window that was not written" true.
 *
 * One round (`run()`, or `run(partitions)` for some of the assigned partitions: the service
 * spreads a round over its interval, docs/estimator.md § Checkpoints spread over the interval):
 * 1. Flush the outputs waiting now (InfluxDB points, then result records), so that what the
 *    records of step 2 depend on is mostly written before they exist: they are then held for
 *    milliseconds, not for the length of a flush. A failure ends the round before step 2.
 * 2. For every chosen assigned, restored partition, take the engine's checkpoint records (changed
 *    streams, tombstones, the partition marker with the next offset) and merge them into the
 *    partition's pending set (a record taken earlier and not yet written is kept, a newer value
 *    of the same key replaces it; the marker stays last).
 * 3. Flush the outputs the checkpoint depends on: InfluxDB points, then the result records for
 *    Kafka (distributions, alerts), i.e. what came after step 1. A failure ends the round: nothing
 *    is committed, the pending records stay for the next round.
 * 4. Per pending partition still assigned: write its pending checkpoint records, then commit its
 *    next offset. A failure ends the round; that partition's records stay pending (written again
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
  /**
   * One round (see the module comment) over `partitions` (default: every assigned partition; one
   * not assigned is skipped); throws the first failure (the service logs and retries later).
   */
  run(partitions?: Iterable<number>): Promise<void>;
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
    async run(partitions) {
      // Step 1: what is waiting now is written before the records that depend on it are taken.
      await io.flushInflux();
      await io.flushResults();
      // Assigned as of now, after the flush (the snapshots below are taken without awaiting).
      const assigned = assignedNow();
      for (const partition of partitions ?? assigned) {
        if (!assigned.has(partition) || !io.isRestored(partition)) continue;
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

/**
 * How often the estimator's checkpoint timer runs (ms): an eighth of the checkpoint interval,
 * at least 50 ms (at most the interval).
 *
 * @param checkpointIntervalMillis - how often each partition is checkpointed (ms, > 0)
 * @example checkpointTickMillis(2000) // 250
 */
export function checkpointTickMillis(checkpointIntervalMillis: number): number {
  return Math.min(checkpointIntervalMillis, Math.max(50, Math.floor(checkpointIntervalMillis / 8)));
}

/** Which partitions a round takes at each tick; see {@link createCheckpointTurns}. */
export interface CheckpointTurns {
  /**
   * The partitions whose turn has come at this tick, given those held now (any order); none
   * while `busy` (a round in progress: the turns earned meanwhile are kept for the next tick).
   */
  next(held: readonly number[], busy: boolean): number[];
}

/**
 * Spreads a checkpoint round over its interval (docs/estimator.md § Checkpoints spread over the
 * interval): at each tick every partition held earns `turnPerTick` of a turn (tick / interval);
 * whole turns earned are taken by the next partitions in partition order, continuing from where
 * the last tick stopped. Turns earned are capped at one per partition held, so after a slow round
 * every partition is taken at once, never twice. With P partitions and 1/8 of a turn per tick,
 * each of them is taken once in any 8 ticks in a row.
 *
 * @param turnPerTick - the tick as a fraction of the checkpoint interval (0 < turnPerTick ≤ 1)
 * @example
 * const turns = createCheckpointTurns(1 / 8);
 * turns.next([0, 1, 2, 3, 4, 5], false); // [] (0.75 turns earned)
 * turns.next([0, 1, 2, 3, 4, 5], false); // [0] (1.5 earned, one taken)
 */
export function createCheckpointTurns(turnPerTick: number): CheckpointTurns {
  let earned = 0;
  // The last partition taken: the next tick goes on after it (partitions held may have changed meanwhile).
  let last = -1;
  return {
    next(held, busy) {
      if (held.length === 0) {
        earned = 0;
        return [];
      }
      const sorted = [...held].sort((a, b) => a - b);
      earned = Math.min(sorted.length, earned + sorted.length * turnPerTick);
      if (busy) return [];
      // The epsilon makes n ticks of 1/n a whole turn despite rounding.
      const due = Math.floor(earned + 1e-9);
      if (due === 0) return [];
      earned = Math.max(0, earned - due);
      const after = sorted.findIndex((partition) => partition > last);
      const start = after === -1 ? 0 : after;
      const taken = Array.from({ length: due }, (_, i) => sorted[(start + i) % sorted.length]!);
      last = taken[taken.length - 1]!;
      return taken;
    },
  };
}
