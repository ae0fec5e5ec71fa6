import { describe, expect, it } from 'vitest';
import { influxSnapshotsBetween } from './influx-snapshots.ts';

// Lines as InfluxDB 1.8.10 wrote them in the local stack's influxd.log (2026-11-28).
const LOG = [
  'ts=2026-11-28T11:33:49.044013Z lvl=info msg="Cache snapshot (start)" log_id=16pUUngG000 engine=tsm1 trace_id=16pUlqSl000 op_name=tsm1_cache_snapshot op_event=start',
  'ts=2026-11-28T11:33:49.634775Z lvl=info msg="Snapshot for path written" log_id=16pUUngG000 engine=tsm1 trace_id=16pUlqSl000 op_name=tsm1_cache_snapshot path=/x/data/db/autogen/534 duration=590.784ms',
  'ts=2026-11-28T11:33:49.634832Z lvl=info msg="Cache snapshot (end)" log_id=16pUUngG000 engine=tsm1 trace_id=16pUlqSl000 op_name=tsm1_cache_snapshot op_event=end op_elapsed=590.829ms',
  'ts=2026-11-28T11:34:46.701972Z lvl=info msg="Cache snapshot (end)" log_id=16pUUngG000 engine=tsm1 trace_id=16pUpKKG000 op_name=tsm1_cache_snapshot op_event=end op_elapsed=1.25s',
  'ts=2026-11-28T11:35:00.000000Z lvl=info msg="Cache snapshot (end)" log_id=16pUUngG000 engine=tsm1 op_name=tsm1_cache_snapshot op_event=end op_elapsed=800µs',
  'not a log line',
  '',
].join('\n');

describe('influxSnapshotsBetween', () => {
  it('counts the snapshots that ended in the range and sums their time in ms', () => {
    // 11:33:49.634832 = 1795865629634.832 ms; 11:34:46.701972 = 1795865686701.972 ms.
    expect(influxSnapshotsBetween(LOG, Date.UTC(2026, 10, 28, 11, 33, 0), Date.UTC(2026, 10, 28, 11, 34, 0))).toEqual({ count: 1, millis: 590.829 });
    const all = influxSnapshotsBetween(LOG, Date.UTC(2026, 10, 28, 11, 0, 0), Date.UTC(2026, 10, 28, 12, 0, 0));
    expect(all.count).toBe(3);
    expect(all.millis).toBeCloseTo(590.829 + 1250 + 0.8, 9);
  });

  it('takes the range as inclusive and finds nothing outside it', () => {
    const end = Date.parse('2026-11-28T11:33:49.634Z');
    expect(influxSnapshotsBetween(LOG, end, end + 1).count).toBe(1);
    expect(influxSnapshotsBetween(LOG, end + 1, end + 2).count).toBe(0);
    expect(influxSnapshotsBetween('', 0, Number.MAX_SAFE_INTEGER)).toEqual({ count: 0, millis: 0 });
  });
});
