import { describe, expect, it } from 'vitest';
import { NIL_UUID } from '../../contracts/index.ts';
import { createIdentityPool } from './identity-pool.ts';
import type { StreamIdentity } from '../../contracts/index.ts';

const identity = (job: string, labels: Record<string, string>, host = 'gpu-node-7'): StreamIdentity => ({
  stream: `${job}/k`,
  job,
  kernel: 'k',
  groupSize: 32,
  source: 'cuda',
  device: 'NVIDIA H100 80GB HBM3',
  deviceUuid: '5a8c2f3e-0b1d-4e6f-8a9b-c0d1e2f3a4b5',
  host,
  labels,
});

describe('createIdentityPool', () => {
  it('keeps every value: the shared identity equals the given one', () => {
    const pool = createIdentityPool();
    const given = identity('train', { pod: 'trainer-0', namespace: 'ml' });
    expect(pool.share(given)).toEqual(given);
  });

  it('gives streams with the same labels (in any order) one frozen labels object, and all label-less streams one empty object', () => {
    const pool = createIdentityPool();
    const a = pool.share(identity('a', { pod: 'trainer-0', namespace: 'ml' }));
    const b = pool.share(identity('b', { namespace: 'ml', pod: 'trainer-0' }));
    const c = pool.share(identity('c', { namespace: 'ml', pod: 'trainer-1' }));
    expect(a.labels).toBe(b.labels);
    expect(a.labels).not.toBe(c.labels);
    expect(Object.isFrozen(a.labels)).toBe(true);
    expect(pool.share(identity('d', {})).labels).toBe(pool.share(identity('e', {})).labels);
    expect(pool.size().labelSets).toBe(2);
    // device model, UUID, host and the label names and values (pod twice: trainer-0, trainer-1).
    expect(pool.size().strings).toBe(3 + 2 + 3);
  });

  it('starts afresh when full, without changing what it returns', () => {
    const pool = createIdentityPool(2);
    const shared = Array.from({ length: 5 }, (_, i) => pool.share(identity(`job${i}`, { pod: `p${i}` }, `host${i}`)));
    shared.forEach((value, i) => expect(value).toEqual(identity(`job${i}`, { pod: `p${i}` }, `host${i}`)));
    expect(pool.size().strings).toBeLessThanOrEqual(2);
    expect(pool.size().labelSets).toBeLessThanOrEqual(2);
  });

  it('keeps parts that an old checkpoint lacks as they are', () => {
    const pool = createIdentityPool();
    const old = { stream: 'a/k', job: 'a', kernel: 'k', groupSize: 32, source: 'cpu', device: 'cpu0' } as unknown as StreamIdentity;
    const shared = pool.share(old);
    expect(shared.labels).toBeUndefined();
    expect(shared.host).toBeUndefined();
    expect(shared.deviceUuid).toBeUndefined();
    expect(pool.share({ ...old, deviceUuid: NIL_UUID }).deviceUuid).toBe(NIL_UUID);
  });

  it('rejects a limit that is not a positive integer', () => {
    expect(() => createIdentityPool(0)).toThrow(RangeError);
    expect(() => createIdentityPool(1.5)).toThrow(RangeError);
  });
});
