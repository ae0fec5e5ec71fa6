import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { Secret } from './secret.ts';

describe('Secret', () => {
  it('prints as [redacted] however it is printed, and reveals the value only through reveal()', () => {
    const secret = new Secret('hunter2');
    expect([String(secret), `${secret}`, JSON.stringify({ secret }), inspect({ secret }, { depth: 5 })].join(' ')).not.toContain('hunter2');
    expect(JSON.stringify({ secret })).toBe('{"secret":"[redacted]"}');
    expect(secret.reveal()).toBe('hunter2');
  });

  it('compares values with equals', () => {
    expect(new Secret('a:b').equals(new Secret('a:b'))).toBe(true);
    expect(new Secret('a:b').equals(new Secret('a:c'))).toBe(false);
    expect(new Secret('').equals(new Secret(''))).toBe(true);
  });
});
