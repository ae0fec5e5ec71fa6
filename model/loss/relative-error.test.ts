import { describe, expect, it } from 'vitest';
import { relativeError } from './relative-error.ts';

describe('relativeError (η, docs/model.md §2c)', () => {
  it('is |(a − b)/a| with a the reference', () => {
    expect(relativeError(2, 1.5)).toBe(0.25);
    expect(relativeError(2, 2.5)).toBe(0.25);
    expect(relativeError(-4, 1)).toBe(1.25);
    expect(relativeError(1.5, 1.5)).toBe(0);
  });

  it('is undefined for a zero reference, 0/0 included, and for a missing value', () => {
    expect(relativeError(0, 0)).toBeUndefined();
    expect(relativeError(0, 1)).toBeUndefined();
    expect(relativeError(-0, 1)).toBeUndefined();
    expect(relativeError(undefined, 1)).toBeUndefined();
    expect(relativeError(1, undefined)).toBeUndefined();
  });

  it('returns a non-finite quotient as IEEE arithmetic gives it (callers decide)', () => {
    expect(relativeError(Number.MIN_VALUE, 1)).toBe(Number.POSITIVE_INFINITY);
    expect(relativeError(Number.POSITIVE_INFINITY, 1)).toBeNaN();
    expect(relativeError(1, Number.NaN)).toBeNaN();
  });
});
