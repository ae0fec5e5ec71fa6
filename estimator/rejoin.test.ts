import { describe, expect, it } from 'vitest';
import { markerNextOffset, partitionsToRelease } from './estimator-service.ts';

describe('partitions dropped on joining the group (docs/estimator.md, Scale-out)', () => {
  it('drops only the revoked partitions when the member stays the same', () => {
    expect(partitionsToRelease(new Set([0, 1, 2]), [0, 1, 5], false)).toEqual([2]);
    expect(partitionsToRelease(new Set([3, 4]), [3, 4], false)).toEqual([]);
  });

  it('drops every partition it held when it joined as a new member, the kept ones too', () => {
    // The outage case: the old owner crashed, another member served 0..2 and committed past the
    // old owner's state, then 0..2 came back: the old state must not be used again.
    expect(partitionsToRelease(new Set([0, 1, 2]), [0, 1, 2], true)).toEqual([0, 1, 2]);
    expect(partitionsToRelease(new Set([0, 1, 2]), [1], true)).toEqual([0, 1, 2]);
  });

  it('has nothing to drop when nothing was held', () => {
    expect(partitionsToRelease(new Set(), [0, 1], true)).toEqual([]);
  });
});

describe('the checkpoint marker offset a restore compares with the committed offset', () => {
  it('reads nextOffset of a well-formed marker as a BigInt', () => {
    expect(markerNextOffset('{"v":1,"nextOffset":"42"}')).toBe(42n);
    expect(markerNextOffset('{"v":1,"nextOffset":"9007199254740993"}')).toBe(9007199254740993n);
  });

  it('has none for a missing, corrupt or non-decimal marker', () => {
    expect(markerNextOffset(undefined)).toBeUndefined();
    expect(markerNextOffset('{"v":1')).toBeUndefined();
    expect(markerNextOffset('{"v":1,"nextOffset":42}')).toBeUndefined();
    expect(markerNextOffset('{"v":1,"nextOffset":"-1"}')).toBeUndefined();
    expect(markerNextOffset('null')).toBeUndefined();
    expect(markerNextOffset('[]')).toBeUndefined();
  });
});
