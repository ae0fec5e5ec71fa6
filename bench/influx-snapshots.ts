/**
 * InfluxDB 1.x writes a shard's in-memory cache to a TSM file once the cache reaches
 * `cache-snapshot-memory-size` (25 MB by default). On the development machine a snapshot takes
 * ~0.6 s of a core, and the bench's latency cases share those cores: the seconds it lands in are
 * the ones over the 500 ms target (docs/estimator.md, The 20,000/s tail, second by second). The
 * latency cases count the snapshots of their measured time from the local stack's log.
 */

/** The cache snapshots that ended in a time range: how many, and their time in all (ms). */
export interface InfluxSnapshots {
  readonly count: number;
  readonly millis: number;
}

const SNAPSHOT_END = /^ts=(\S+) .*msg="Cache snapshot \(end\)".* op_elapsed=([0-9.]+)(ms|s|µs)\b/;

/**
 * The `Cache snapshot (end)` entries of an influxd log (logfmt, as InfluxDB 1.8 writes it) whose
 * time is within [fromMillis, toMillis], with their `op_elapsed` summed. Lines that are not such
 * entries are skipped.
 *
 * @param log the text of influxd.log (or a part of it)
 * @param fromMillis start of the range, ms since the Unix epoch (inclusive)
 * @param toMillis end of the range, ms since the Unix epoch (inclusive)
 * @example
 * influxSnapshotsBetween('ts=2026-11-28T11:33:49.634832Z lvl=info msg="Cache snapshot (end)" op_event=end op_elapsed=590.829ms', 0, Date.now())
 * // { count: 1, millis: 590.829 }
 */
export function influxSnapshotsBetween(log: string, fromMillis: number, toMillis: number): InfluxSnapshots {
  let count = 0;
  let millis = 0;
  for (const line of log.split('\n')) {
    const match = SNAPSHOT_END.exec(line);
    if (match === null) continue;
    const at = Date.parse(match[1]!);
    if (!(at >= fromMillis && at <= toMillis)) continue;
    const value = Number(match[2]);
    count += 1;
    millis += match[3] === 's' ? value * 1000 : match[3] === 'µs' ? value / 1000 : value;
  }
  return { count, millis };
}
