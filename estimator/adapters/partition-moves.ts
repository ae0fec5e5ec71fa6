/**
 * Streams that moved to another partition of the frames topic after partitions were added
 * (docs/estimator.md § Adding partitions). A producer places a stream by its key's hash modulo
 * the partition count; a frame that arrives on a partition other than the one the count at this
 * instance's start gives its key belongs to a stream that moved. The window that stream had open
 * at its move is split between two partitions' states (each closes its half, and both are
 * written to the same InfluxDB point): each moved stream is counted once, as one window that may
 * be split (it is not when the stream was idle across the move), and said in a rate-limited line.
 */
import { keyPartition } from '../../service/index.ts';

/** Keys remembered with their partition at the start count; beyond, the map starts over (a key is then counted at most once more). */
const MAX_REMEMBERED_KEYS = 100_000;
/** Least time between two lines about moved streams (ms). */
const LINE_MILLIS = 60_000;

/** See {@link createPartitionMoves}. */
export interface PartitionMoves {
  /** The partition count at this instance's start (the first call counts; later ones are ignored). */
  start(partitionCount: number): void;
  /** A frame of `key` arrived on `partition`; counts the key once if it moved. */
  observe(partition: number, key: string | undefined): void;
  /** Streams seen on a partition their key did not have at the start count: windows that may be split. */
  readonly streamsMoved: number;
}

/**
 * The counter of moved streams, with its line (`WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: <n> stream(s) moved …`,
 * the first at once, then at most one a minute while more move).
 *
 * @param partitionOf the producers' placement (default: service/kafka-client.ts keyPartition)
 * @example const moves = createPartitionMoves('warpwatch.frames', log); moves.start(6); moves.observe(7, key);
 */
export function createPartitionMoves(
  topic: string,
  log: (line: string) => void,
  options: { readonly now?: () => number; readonly partitionOf?: (key: string, partitionCount: number) => number } = {},
): PartitionMoves {
  const now = options.now ?? Date.now;
  const partitionOf = options.partitionOf ?? keyPartition;
  let initial: number | undefined;
  const home = new Map<string, number>();
  const moved = new Set<string>();
  let count = 0;
  let lastLineAt = Number.NEGATIVE_INFINITY;
  let unsaid = 0;
  return {
    start(partitionCount) {
      if (partitionCount > 0) initial ??= partitionCount;
    },
    observe(partition, key) {
      if (initial === undefined || key === undefined) return;
      let at = home.get(key);
      if (at === undefined) {
        if (home.size >= MAX_REMEMBERED_KEYS) home.clear();
        at = partitionOf(key, initial);
        home.set(key, at);
      }
      if (at === partition || moved.has(key)) return;
      if (moved.size >= MAX_REMEMBERED_KEYS) moved.clear();
      moved.add(key);
      count += 1;
      unsaid += 1;
      const time = now();
      if (time - lastLineAt < LINE_MILLIS) return;
      lastLineAt = time;
      log(
        `WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: ${count} stream(s) of ${topic} moved to another partition since this instance started with ${initial} (${unsaid} since the last line; latest: ${key} now on ${partition}, was ${at}): ` +
          `the window each had open at its move may be split in two, both halves written to the same InfluxDB point (the last kept); counted in /healthz streamsMoved; docs/estimator.md § Adding partitions`,
      );
      unsaid = 0;
    },
    get streamsMoved() {
      return count;
    },
  };
}
