import { metrics as otelMetrics } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { CollectorMetrics, DROP_REASONS, accountingOf, describeTotals } from './collector-metrics.ts';
import type { ProduceRecord } from './produce-record.ts';
import { degradedReasons } from './collector.ts';

const fresh = (): CollectorMetrics => new CollectorMetrics(otelMetrics.getMeter('test'), { spoolBytes: () => 0, queueBytes: () => 0 });
const rec = (dlq = false): ProduceRecord => ({ topic: 't', key: null, value: new Uint8Array(1), headers: dlq ? { 'ww-error-code': 'X' } : {}, timestampMillis: 0 });

describe('accountingOf', () => {
  it('balances read (frames, rejections, intake drops, recovered) against delivered + dropped + held', () => {
    const m = fresh();
    m.framesIn('socket', 10, 320); // 10 valid frames
    m.frameRejected('socket', 'WW_ERR_FRAME_BAD_MAGIC'); // 1 DLQ record
    m.dropped(2, 'connection-closed'); // 2 items never submitted
    m.recovered(4); // 4 records a previous run left
    m.delivered([rec(), rec(), rec(), rec(), rec(), rec(), rec(), rec(true)], 1); // 7 frames + 1 DLQ
    m.dropped(3, 'disk-full');
    // read 10 + 1 + 2 + 4 = 17; delivered 8; dropped 2 + 3 = 5; held must be 4.
    expect(accountingOf(m.totals(), 4)).toEqual({ read: 17, delivered: 8, dropped: 5, held: 4, balanced: true });
    expect(accountingOf(m.totals(), 5).balanced).toBe(false);
  });
});

describe('describeTotals', () => {
  it('says everything delivered only when nothing was dropped and nothing is held', () => {
    const m = fresh();
    m.framesIn('stdin', 3, 0);
    m.delivered([rec(), rec(), rec()], 1);
    expect(describeTotals(m.totals(), 0)).toBe('read 3 (frames 3, rejected 0) = delivered 3 (frames 3, DLQ 0) + dropped 0 + held 0; everything delivered');
    m.framesIn('stdin', 2, 0);
    m.dropped(1, 'connection-closed');
    m.dropped(1, 'disk-full');
    expect(describeTotals(m.totals(), 1)).toBe(
      'read 6 (frames 5, rejected 0) = delivered 3 (frames 3, DLQ 0) + dropped 2 (connection-closed 1, disk-full 1) + held 1; 2 record(s) dropped, 1 record(s) left in the spool',
    );
  });
});

describe('degradedReasons', () => {
  it('names the broker, the disk and a full spool', () => {
    expect(degradedReasons('idle', { diskError: undefined, sizeBytes: 0 }, 100)).toEqual([]);
    expect(degradedReasons('broker-stalled', { diskError: { code: 'ENOSPC', message: '', sinceMillis: 0 }, sizeBytes: 96 }, 100)).toEqual(['broker-stalled', 'disk:ENOSPC', 'spool-full']);
    expect(degradedReasons('broker-unavailable', { diskError: undefined, sizeBytes: 94 }, 100)).toEqual(['broker-unavailable']);
  });
});

describe('DROP_REASONS', () => {
  it('lists only reasons the collector code drops for, and docs/collector.md documents each', () => {
    const dir = new URL('.', import.meta.url);
    const sources = readdirSync(dir)
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && name !== 'collector-metrics.ts')
      .map((name) => readFileSync(new URL(name, dir), 'utf8'))
      .join('\n');
    const docs = readFileSync(new URL('../docs/collector.md', import.meta.url), 'utf8');
    const documented = /`warpwatch\.collector\.frames\.dropped` \|[^|]*\| reason \(([^\n]*)\) \|/.exec(docs)?.[1] ?? '';
    expect(documented).not.toBe('');
    for (const reason of DROP_REASONS) {
      expect(sources.includes(`'${reason}'`), `drop reason '${reason}' is not used in collector/`).toBe(true);
      expect(documented.includes(reason), `drop reason '${reason}' is not in docs/collector.md`).toBe(true);
    }
  });
});
