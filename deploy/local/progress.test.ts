import { describe, expect, it } from 'vitest';
import { createStepReporter, formatDuration } from './progress.ts';

describe('formatDuration', () => {
  it('uses ms below a second, seconds with one decimal below a minute, then minutes and seconds', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(7_449)).toBe('7.4 s');
    expect(formatDuration(125_000)).toBe('2 min 05 s');
    expect(formatDuration(3_600_000)).toBe('60 min 00 s');
  });
});

describe('createStepReporter', () => {
  it('prints start, success with elapsed time from the injected clock, and notes', async () => {
    const lines: string[] = [];
    let nowMillis = 1_000;
    const reporter = createStepReporter((line) => lines.push(line), () => nowMillis);
    const result = await reporter.step('kafka: download', async () => {
      nowMillis += 7_400;
      return 42;
    }, { expectation: 'first run only' });
    reporter.note('57 jars');
    expect(result).toBe(42);
    expect(lines).toEqual(['▸ kafka: download (first run only) …', '✓ kafka: download in 7.4 s', '  57 jars']);
  });

  it('reports a failed step and rethrows its error', async () => {
    const lines: string[] = [];
    const reporter = createStepReporter((line) => lines.push(line), () => 0);
    await expect(reporter.step('influxdb: build', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(lines.at(-1)).toBe('✗ influxdb: build failed after 0 ms');
  });

  it('prints a heartbeat while a long step runs', async () => {
    const lines: string[] = [];
    const heartbeats = (): string[] => lines.filter((line) => line.startsWith('  … slow: still running after '));
    const reporter = createStepReporter((line) => lines.push(line));
    // The step ends only after two heartbeats; without them the test times out.
    await reporter.step('slow', async () => {
      while (heartbeats().length < 2) await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    }, { heartbeatMillis: 25 });
    expect(heartbeats()[0]).toMatch(/^ {2}… slow: still running after \d+ ms$/);
    expect(lines.at(-1)).toMatch(/^✓ slow in \d+ ms$/);
  });
});
