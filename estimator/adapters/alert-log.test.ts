import { describe, expect, it } from 'vitest';
import type { AlertEvent } from '../engine/alert-detector.ts';
import { createAlertLog } from './alert-log.ts';

const alert = (job: string, kind = 'loss-rising'): AlertEvent =>
  ({
    kind,
    identity: { stream: `${job}/k`, job, kernel: 'k', groupSize: 32, source: 'cuda', device: 'NVIDIA H200', deviceUuid: 'GPU-1', host: 'node7', labels: {} },
    timeMillis: Date.UTC(2026, 11, 2, 8, 0, 0),
    series: 'loss_measured',
    oldLevel: 1.2,
    newLevel: 1.6,
    statistic: 140.84,
    evidence: {},
    message: 'loss_measured rose from 1.20 to 1.60',
  }) as unknown as AlertEvent;

describe('createAlertLog', () => {
  it('says which stream, rule, evidence and destinations, once per stream and kind per period', () => {
    const lines: string[] = [];
    let now = 0;
    const logAlert = createAlertLog((line) => lines.push(line), { alertsTopic: 'warpwatch.alerts', perStreamMillis: 600_000, now: () => now });
    logAlert(alert('a'));
    expect(lines).toEqual([
      'alert loss-rising on a/k (n=32, cuda, NVIDIA H200, host node7) at 2026-12-02T08:00:00.000Z: loss_measured rose from 1.20 to 1.60; statistic 140.8; written to warpwatch_alert and warpwatch.alerts',
    ]);
    now = 599_999;
    logAlert(alert('a'));
    logAlert(alert('a', 'drift'));
    expect(lines).toHaveLength(2);
    // The drift line is another rule: it is written, and says that one line was left out before it.
    expect(lines[1]).toMatch(/^alert drift on a\/k .*\(1 earlier alert line\(s\) left out by the rate limit; every alert is in InfluxDB and on the topic\)$/);
    now = 600_000 + 60_000;
    logAlert(alert('a'));
    expect(lines).toHaveLength(3);
    expect(lines[2]).not.toContain('left out');
  });

  it('writes at most perMinute lines a minute across streams, and counts the rest', () => {
    const lines: string[] = [];
    let now = 0;
    const logAlert = createAlertLog((line) => lines.push(line), { alertsTopic: 't', perMinute: 3, now: () => now });
    for (let i = 0; i < 10; i++) logAlert(alert(`job${i}`));
    expect(lines).toHaveLength(3);
    now = 60_000;
    logAlert(alert('late'));
    expect(lines).toHaveLength(4);
    expect(lines[3]).toContain('(7 earlier alert line(s) left out');
  });
});
