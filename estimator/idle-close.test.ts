import { describe, expect, it } from 'vitest';
import { createMembershipLease, type MembershipLease } from './engine/membership-lease.ts';
import { idleCloseAllowed, lagFreshnessMillis, noteLag } from './estimator-service.ts';

/** A lease that always holds (the member is confirmed at every instant these tests ask about). */
const alwaysHeld: MembershipLease = { confirm() {}, end() {}, holds: () => true, status: () => ({ held: true, confirmedAgoMillis: 0, leaseMillis: 1 }) };

/** The service's partition bookkeeping, as idleCloseAllowed reads it. */
function partitions(restored: number[], lease: MembershipLease = alwaysHeld) {
  return { restored: new Set(restored), lag: new Map<number, bigint>(), lagMeasuredAt: new Map<number, number>(), reachableSince: new Map<number, number>(), lease };
}

describe('idle close of a partition (docs/estimator.md, late data)', () => {
  const limits = { freshnessMillis: 2_000, idleCloseMillis: 10_000 };

  it('allows it once the lag has been measured zero without a gap for the idle-close time', () => {
    const state = partitions([0]);
    for (let t = 0; t <= 10_000; t += 250) noteLag(state, 0, 0n, t, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 0, 9_999, limits)).toBe(false);
    expect(idleCloseAllowed(state, 0, 10_000, limits)).toBe(true);
  });

  it('refuses it while the broker does not answer: a zero lag measured before the outage does not count', () => {
    const state = partitions([0]);
    for (let t = 0; t <= 20_000; t += 250) noteLag(state, 0, 0n, t, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 0, 20_000, limits)).toBe(true);
    // The broker stops answering at 20 s: no measurement since.
    expect(idleCloseAllowed(state, 0, 22_000, limits)).toBe(true);
    expect(idleCloseAllowed(state, 0, 22_001, limits)).toBe(false);
    expect(idleCloseAllowed(state, 0, 48_000, limits)).toBe(false);
    // It answers again at 48 s (zero lag): the collectors get the idle-close time to deliver what they spooled.
    for (let t = 48_000; t < 58_000; t += 250) {
      noteLag(state, 0, 0n, t, limits.freshnessMillis);
      expect(idleCloseAllowed(state, 0, t, limits)).toBe(false);
    }
    noteLag(state, 0, 0n, 58_000, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 0, 58_000, limits)).toBe(true);
  });

  it('refuses it while the partition has lag, before it is restored, and for a partition never measured', () => {
    const state = partitions([0, 1]);
    for (let t = 0; t <= 20_000; t += 250) noteLag(state, 0, t === 20_000 ? 3n : 0n, t, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 0, 20_000, limits)).toBe(false);
    noteLag(state, 0, -2n, 20_250, limits.freshnessMillis); // a high watermark behind the position counts as caught up
    expect(idleCloseAllowed(state, 0, 20_250, limits)).toBe(true);
    expect(idleCloseAllowed(state, 1, 20_250, limits)).toBe(false);
    for (let t = 0; t <= 20_000; t += 250) noteLag(state, 2, 0n, t, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 2, 20_000, limits)).toBe(false);
  });

  it('never allows it while the membership is not confirmed within the lease (a member cut off from the coordinator, docs/estimator.md § Fencing)', () => {
    const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
    const state = partitions([0], lease);
    for (let t = 0; t <= 30_000; t += 250) noteLag(state, 0, 0n, t, limits.freshnessMillis);
    // Lag zero for 30 s from a broker that answers, but no confirmation yet: nothing closes.
    expect(idleCloseAllowed(state, 0, 30_000, limits)).toBe(false);
    lease.confirm({ sentAtMillis: 29_000 });
    expect(idleCloseAllowed(state, 0, 30_000, limits)).toBe(true);
    // 3 s (half the session timeout) after the confirmed heartbeat was sent, the member stops closing.
    expect(idleCloseAllowed(state, 0, 31_999, limits)).toBe(true);
    expect(idleCloseAllowed(state, 0, 32_000, limits)).toBe(false);
    lease.confirm({ sentAtMillis: 31_500 });
    lease.end(31_600);
    expect(idleCloseAllowed(state, 0, 31_700, limits)).toBe(false);
  });

  it('counts a measurement as fresh for three probe periods, at least 2 s', () => {
    expect(lagFreshnessMillis(250)).toBe(2_000);
    expect(lagFreshnessMillis(1_000)).toBe(3_000);
  });

  it('keeps the newer of two measurements: a batch that ends after the probe measured during it does not write its older "caught up" over the probe', () => {
    const state = partitions([0]);
    for (let t = 0; t <= 20_000; t += 250) noteLag(state, 0, 0n, t, limits.freshnessMillis);
    // A batch came at 20,100 (lag ≥ its 500 frames while processed); the probe at 21,000 sees 900 behind.
    noteLag(state, 0, 500n, 20_100, limits.freshnessMillis);
    noteLag(state, 0, 900n, 21_000, limits.freshnessMillis);
    // The batch ends at 22,500 with its high watermark reached: caught up as of 20,100 only.
    noteLag(state, 0, 0n, 20_100, limits.freshnessMillis);
    expect(state.lag.get(0)).toBe(900n);
    expect(idleCloseAllowed(state, 0, 22_500, limits)).toBe(false);
    // A probe dated later (within the freshness of the last: no gap) measures zero: caught up.
    noteLag(state, 0, 0n, 22_900, limits.freshnessMillis);
    expect(idleCloseAllowed(state, 0, 23_000, limits)).toBe(true);
  });

  it('does not let a "caught up" dated at a long batch’s start count once it is older than the freshness', () => {
    const state = partitions([0]);
    for (let t = 0; t <= 20_000; t += 250) noteLag(state, 0, 0n, t, limits.freshnessMillis);
    noteLag(state, 0, 0n, 20_100, limits.freshnessMillis); // a batch fetched by 20,100, processed until 25,000
    expect(idleCloseAllowed(state, 0, 25_000, limits)).toBe(false);
  });
});
