import { describe, expect, it, vi } from 'vitest';
import { main } from '../main.ts';

describe('warpwatch estimate', () => {
  describe('flags', () => {
    it('exits 2 with one line naming every invalid setting, before connecting anywhere', async () => {
      const writes: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        writes.push(String(chunk));
        return true;
      });
      try {
        const code = await main(['node', 'warpwatch', 'estimate', '--window-millis', '0', '--prediction-basis', 'never', '--influx-url', 'nope']);
        expect(code).toBe(2);
      } finally {
        spy.mockRestore();
      }
      const text = writes.join('');
      expect(text.split('\n').filter((line) => line !== '')).toHaveLength(1);
      expect(text).toContain('--window-millis must be an integer 10..86400000, got "0"');
      expect(text).toContain('--prediction-basis must be one of window|current|cumulative, got "never"');
      expect(text).toContain('--influx-url must be an http(s) URL or "off", got "nope"');
    });
  });
});
