import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createServiceLogger, formatLogLine, stderrLineSink } from './service-logger.ts';
import { waitForStopSignal } from './stop-signal.ts';

describe('createServiceLogger', () => {
  it('writes the prefix once per line, with the level when the service shows levels', () => {
    const lines: string[] = [];
    const collector = createServiceLogger({ prefix: 'warpwatch collect', showLevel: true, write: (line) => lines.push(line) });
    collector.info('started');
    collector.warn('spooling');
    collector.log('error', 'broken');
    const estimator = createServiceLogger({ prefix: 'warpwatch estimate', showLevel: false, write: (line) => lines.push(line) });
    const { info } = estimator; // bound: passed on as a callback
    info('stopped');
    estimator.error('WW_ERR_X: failed');
    expect(lines).toEqual([
      'warpwatch collect info: started',
      'warpwatch collect warn: spooling',
      'warpwatch collect error: broken',
      'warpwatch estimate: stopped',
      'warpwatch estimate: WW_ERR_X: failed',
    ]);
    expect(formatLogLine({ prefix: 'warpwatch estimate', showLevel: false }, 'warn', 'x')).toBe('warpwatch estimate: x');
  });

  it('puts an ISO timestamp before each line on the stream, one line per write', () => {
    const written: string[] = [];
    stderrLineSink({ write: (text: string) => written.push(text) })('warpwatch collect info: started');
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z warpwatch collect info: started\n$/);
  });
});

describe('waitForStopSignal', () => {
  it('resolves with the first stop signal and removes its listeners on dispose', async () => {
    const target = new EventEmitter();
    const wait = waitForStopSignal(target as unknown as NodeJS.Process);
    expect(target.listenerCount('SIGTERM')).toBe(1);
    expect(target.listenerCount('SIGINT')).toBe(1);
    target.emit('SIGINT', 'SIGINT');
    await expect(wait.received).resolves.toBe('SIGINT');
    wait.dispose();
    expect(target.listenerCount('SIGTERM')).toBe(0);
    expect(target.listenerCount('SIGINT')).toBe(0);
  });
});
