import { describe, expect, it } from 'vitest';
import { createMembershipLease, membershipLeaseMillis } from './membership-lease.ts';

describe('the membership lease (docs/estimator.md § Fault tolerance, Fencing)', () => {
  it('is half the session timeout, and refuses a session timeout that is not a positive number', () => {
    expect(membershipLeaseMillis(6_000)).toBe(3_000);
    expect(membershipLeaseMillis(45_001)).toBe(22_500);
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) expect(() => membershipLeaseMillis(bad)).toThrow(RangeError);
  });

  it('holds nothing before the first confirmation', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
    expect(lease.holds(0)).toBe(false);
    expect(lease.status(10)).toEqual({ held: false, confirmedAgoMillis: null, leaseMillis: 3_000 });
  });

  it('holds from the send time of a confirmed request for exactly the lease, measured from the send time and not from when the answer came', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
    lease.confirm({ sentAtMillis: 1_000 });
    expect(lease.holds(1_000)).toBe(true);
    expect(lease.holds(3_999)).toBe(true);
    expect(lease.holds(4_000)).toBe(false);
    expect(lease.status(4_500)).toEqual({ held: false, confirmedAgoMillis: 3_500, leaseMillis: 3_000 });
  });

  it('is extended by a newer confirmation and not shortened by an older one that was answered later', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 10_000 });
    lease.confirm({ sentAtMillis: 2_000 });
    lease.confirm({ sentAtMillis: 1_000 }); // a commit sent earlier, answered after the heartbeat
    expect(lease.holds(6_999)).toBe(true);
    expect(lease.holds(7_000)).toBe(false);
    lease.confirm({ sentAtMillis: 6_000 });
    expect(lease.holds(10_999)).toBe(true);
    expect(lease.holds(11_000)).toBe(false);
  });

  it('ends at once when the membership ends, and a request sent before the end (in flight at a crash) does not revive it', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
    lease.confirm({ sentAtMillis: 1_000 });
    lease.end(1_500);
    expect(lease.holds(1_500)).toBe(false);
    lease.confirm({ sentAtMillis: 1_400 });
    lease.confirm({ sentAtMillis: 1_500 });
    expect(lease.holds(1_600)).toBe(false);
    expect(lease.status(1_600).confirmedAgoMillis).toBeNull();
    // The join after the restart was sent after the end: it holds again.
    lease.confirm({ sentAtMillis: 2_000 });
    expect(lease.holds(2_100)).toBe(true);
    expect(lease.holds(5_000)).toBe(false);
  });

  it('ignores a confirmation without a finite send time', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
    lease.confirm({ sentAtMillis: Number.NaN });
    expect(lease.holds(0)).toBe(false);
  });
});
