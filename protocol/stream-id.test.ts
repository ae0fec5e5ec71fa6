import { describe, expect, it } from 'vitest';
import { parseStreamId, streamIdOf } from './stream-id.ts';

describe('streamIdOf', () => {
  it('joins job and kernel with a slash, and parseStreamId splits at the first slash', () => {
    const id = streamIdOf({ job: 'train-7', kernel: 'ns::k/v2' });
    expect(id).toBe('train-7/ns::k/v2');
    expect(parseStreamId(id)).toEqual({ job: 'train-7', kernel: 'ns::k/v2' });
  });

  it('rejects ids without both parts', () => {
    for (const bad of ['nojob', '/k', 'j/']) expect(() => parseStreamId(bad)).toThrow(RangeError);
  });
});
