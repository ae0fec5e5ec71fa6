import { describe, expect, it } from 'vitest';
import { runCli } from '../testing/run-cli.ts';

describe('warpwatch estimate', () => {
  describe('flags', () => {
    it('exits 2 with one line naming every invalid setting, before connecting anywhere', async () => {
      const result = await runCli('estimate', '--window-millis', '0', '--prediction-basis', 'never', '--influx-url', 'nope');
      expect(result.status).toBe(2);
      const text = result.stderr;
      expect(text.split('\n').filter((line) => line !== '')).toHaveLength(1);
      expect(text).toContain('--window-millis must be an integer 10..86400000, got "0"');
      expect(text).toContain('--prediction-basis must be one of window|current|cumulative, got "never"');
      expect(text).toContain('--influx-url must be an http(s) URL or "off", got "nope"');
    });

    it.each([
      [['--current', 'decay', '--last-launches', '5'], '--last-launches applies to --current last-n only (the current mode is decay)'],
      [['--current', 'last-n', '--half-life-launches', '4'], '--half-life-launches applies to --current decay only (the current mode is last-n)'],
    ])('a window setting of the other current mode is an error: %j', async (args, message) => {
      const result = await runCli('estimate', ...args, '--influx-url', 'off', '--metrics-port', 'off');
      expect(result.status).toBe(2);
      expect(result.stderr).toBe(`warpwatch: ${message}\n`);
    }, 10_000);
  });
});
