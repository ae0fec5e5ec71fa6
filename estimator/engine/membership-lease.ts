/**
 * The fence of a consumer-group member (docs/estimator.md § Fault tolerance, Fencing): how long
 * this process may still act as the owner of its partitions after the group coordinator last
 * confirmed its membership, without I/O (the service feeds it confirmations and asks it the time).
 *
 * Why a lease: the coordinator hands a member's partitions to another member only after the
 * member's session has expired (no heartbeat processed for the session timeout), after it left
 * the group, or in a rebalance it takes part in (the member then learns it at its next join).
 * A member cut off from the coordinator (a broker restart, a network split, a consumer stuck in
 * its retries) does not learn that it lost its partitions until it reaches the coordinator again,
 * and meanwhile its timers would go on closing windows and writing checkpoints for partitions
 * another member now serves. The coordinator's session clock starts no earlier than the moment
 * a confirming request was sent, so a member that stops acting `leaseMillis` (half the session
 * timeout) after the send time of its last confirmed request stops well before the coordinator
 * can give its partitions away, whatever the response's delay.
 */

/** One confirmation of membership: a request the coordinator answered with success. */
export interface MembershipConfirmation {
  /** When the confirming request was sent (ms, Date.now()): the coordinator processed it later. */
  readonly sentAtMillis: number;
}

/** What {@link MembershipLease.status} reports (for `/healthz`). */
export interface MembershipLeaseStatus {
  /** Whether this member may act as the owner of its partitions now. */
  readonly held: boolean;
  /** Milliseconds since the send time of the last confirmed request; null before the first. */
  readonly confirmedAgoMillis: number | null;
  /** The lease's length (ms). */
  readonly leaseMillis: number;
}

/** The lease; see {@link createMembershipLease}. */
export interface MembershipLease {
  /** The coordinator confirmed the membership (a heartbeat, a join, an offset commit); a confirmation older than the last one changes nothing. */
  confirm(confirmation: MembershipConfirmation): void;
  /** The membership ended at `nowMillis` (the consumer crashed, left or stopped): nothing is held until a request sent after that is confirmed. */
  end(nowMillis: number): void;
  /** Whether this member may act as the owner of its partitions at `nowMillis` (ms, Date.now()). */
  holds(nowMillis: number): boolean;
  /** The lease as `/healthz` shows it. */
  status(nowMillis: number): MembershipLeaseStatus;
}

/**
 * The lease's length for a session timeout: half of it, so that a member stops acting at least
 * half a session before the coordinator can expire it, with room for a checkpoint request in
 * flight at the lease's end to land (docs/estimator.md § Fault tolerance, Fencing).
 *
 * @param sessionTimeoutMillis the consumer's session timeout (ms, ≥ 1)
 * @returns the lease (ms)
 * @throws RangeError when the session timeout is not a positive finite number
 * @example membershipLeaseMillis(6_000) // 3000
 */
export function membershipLeaseMillis(sessionTimeoutMillis: number): number {
  if (!Number.isFinite(sessionTimeoutMillis) || sessionTimeoutMillis <= 0) throw new RangeError(`the session timeout must be a positive number of milliseconds, not ${sessionTimeoutMillis}`);
  return Math.floor(sessionTimeoutMillis / 2);
}

/**
 * Creates the lease of one consumer-group member; it holds nothing until the first confirmation.
 *
 * @param options.sessionTimeoutMillis the consumer's session timeout (ms)
 * @throws RangeError when the session timeout is not a positive finite number
 * @example
 * const lease = createMembershipLease({ sessionTimeoutMillis: 6_000 });
 * lease.confirm({ sentAtMillis: 1_000 });
 * lease.holds(3_999); // true
 * lease.holds(4_000); // false: 3 s after the confirmed request was sent
 */
export function createMembershipLease(options: { readonly sessionTimeoutMillis: number }): MembershipLease {
  const leaseMillis = membershipLeaseMillis(options.sessionTimeoutMillis);
  let confirmedAt: number | undefined;
  // A request sent before the membership ended (a heartbeat in flight at a crash) confirms nothing.
  let endedAt = Number.NEGATIVE_INFINITY;
  const holds = (nowMillis: number): boolean => confirmedAt !== undefined && confirmedAt > endedAt && nowMillis - confirmedAt < leaseMillis;
  return {
    confirm({ sentAtMillis }) {
      if (!Number.isFinite(sentAtMillis) || sentAtMillis <= endedAt) return;
      if (confirmedAt === undefined || sentAtMillis > confirmedAt) confirmedAt = sentAtMillis;
    },
    end(nowMillis) {
      endedAt = Math.max(endedAt, nowMillis);
    },
    holds,
    status(nowMillis) {
      return { held: holds(nowMillis), confirmedAgoMillis: confirmedAt === undefined || confirmedAt <= endedAt ? null : Math.max(0, nowMillis - confirmedAt), leaseMillis };
    },
  };
}
