// createAttributionReader gives what attributionFromHeaders gives, the same frozen object while
// the ww-host and ww-label-* values stay the same (whatever else the headers carry), a new one
// as soon as one of them is added, removed or changed, and attributionFromHeaders' error for
// invalid headers (remembering nothing from them).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StreamIdentityError } from './errors.ts';
import { attributionFromHeaders, createAttributionReader } from './stream-identity.ts';

describe('createAttributionReader', () => {
  it('returns the same frozen object for the same host and labels, a traceparent that changes per record notwithstanding', () => {
    const attributionOf = createAttributionReader();
    const first = attributionOf({ 'ww-host': 'node7', 'ww-label-pod': 'trainer-0', traceparent: '00-a-b-01', 'ww-source': 'stdin' });
    const second = attributionOf({ traceparent: '00-c-d-01', 'ww-label-pod': 'trainer-0', 'ww-host': 'node7' });
    expect(second).toBe(first);
    expect(first).toEqual({ host: 'node7', labels: { pod: 'trainer-0' } });
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.labels)).toBe(true);
  });

  it('makes a new one when the host or a label is added, removed or changed', () => {
    const attributionOf = createAttributionReader();
    const steps: Record<string, string>[] = [
      { 'ww-host': 'node7' },
      { 'ww-host': 'node8' },
      { 'ww-host': 'node8', 'ww-label-pod': 'a' },
      { 'ww-host': 'node8', 'ww-label-pod': 'b' },
      { 'ww-host': 'node8', 'ww-label-pod': 'b', 'ww-label-zone': 'z1' },
      { 'ww-host': 'node8', 'ww-label-zone': 'z1' },
      { 'ww-label-zone': 'z1' },
      {},
    ];
    let previous: unknown;
    for (const headers of steps) {
      const attribution = attributionOf(headers);
      expect(attribution).not.toBe(previous);
      expect(attribution).toEqual(attributionFromHeaders(headers));
      previous = attribution;
    }
    expect(attributionOf(undefined)).toBe(previous);
  });

  it('agrees with attributionFromHeaders on any sequence of headers, answers and errors alike', () => {
    const value = fc.constantFrom('', 'node7', 'node8', 'a', 'bad value\n', 'b/c');
    const headers = fc.dictionary(fc.constantFrom('ww-host', 'ww-label-pod', 'ww-label-zone', 'ww-label-Bad Name', 'traceparent', 'ww-source'), value, { maxKeys: 4 });
    const outcome = (run: () => unknown): unknown => {
      try {
        return { ok: run() };
      } catch (error) {
        if (!(error instanceof StreamIdentityError)) throw error;
        return { error: error.message };
      }
    };
    fc.assert(
      fc.property(fc.array(headers, { minLength: 1, maxLength: 8 }), (sequence) => {
        const attributionOf = createAttributionReader();
        for (const h of sequence) expect(outcome(() => attributionOf(h))).toEqual(outcome(() => attributionFromHeaders(h)));
      }),
      { numRuns: 300 },
    );
  });
});
