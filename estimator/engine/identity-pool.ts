import type { StreamIdentity } from '../../contracts/index.ts';

/**
 * Shared copies of what many streams repeat in their identity: the device model and UUID, the
 * host and the label set of the collector that forwarded them (a host's GPUs run many kernels;
 * a collector labels every stream it forwards alike). The engine keeps one identity per live
 * stream; without sharing, each held its own copies of these strings and its own labels object
 * (as decoded from its first frame), ~100 bytes more per stream for the same text.
 *
 * Sharing never changes a value, only which equal copy is kept, so the pool may forget: it
 * holds at most `limit` strings and `limit` label sets and starts afresh when one fills
 * (identities shared before stay valid).
 */

/** Shares the repeated parts of stream identities. */
export interface IdentityPool {
  /**
   * The identity with its device, deviceUuid, host and labels replaced by the pool's equal
   * copies (labels: one frozen object per distinct set of name/value pairs, whatever their
   * order). The other fields, and parts that are absent (checkpoints written before they
   * existed), are kept as given.
   */
  share(identity: StreamIdentity): StreamIdentity;
  /** Strings and label sets held now (tests). */
  size(): { strings: number; labelSets: number };
}

/** Label sets and strings held at most by default. */
export const IDENTITY_POOL_LIMIT = 4096;

const NO_LABELS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Creates a pool.
 *
 * @param limit strings (and, separately, label sets) held at most before the pool starts afresh (≥ 1).
 * @throws RangeError when limit is not a positive integer.
 * @example
 * const pool = createIdentityPool();
 * pool.share(a).labels === pool.share(b).labels; // true when a and b carry the same labels
 */
export function createIdentityPool(limit = IDENTITY_POOL_LIMIT): IdentityPool {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`identity pool limit must be a positive integer, got ${limit}`);
  let strings = new Map<string, string>();
  let labelSets = new Map<string, Readonly<Record<string, string>>>();
  const sharedString = (value: string): string => {
    // A checkpoint written before a field existed lacks it: kept as it is.
    if (typeof value !== 'string') return value;
    const held = strings.get(value);
    if (held !== undefined) return held;
    if (strings.size >= limit) strings = new Map();
    strings.set(value, value);
    return value;
  };
  const sharedLabels = (labels: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
    if (typeof labels !== 'object' || labels === null) return labels;
    const entries = Object.entries(labels);
    if (entries.length === 0) return NO_LABELS;
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    const key = JSON.stringify(entries);
    const held = labelSets.get(key);
    if (held !== undefined) return held;
    if (labelSets.size >= limit) labelSets = new Map();
    const copy = Object.freeze(Object.fromEntries(entries.map(([name, value]) => [sharedString(name), sharedString(value)])));
    labelSets.set(key, copy);
    return copy;
  };
  return {
    share(identity) {
      // A literal of every field, not a spread: V8 keeps a spread-and-override result in
      // dictionary mode, larger than the identity it replaces (and this one is kept per stream).
      return {
        stream: identity.stream,
        job: identity.job,
        kernel: identity.kernel,
        groupSize: identity.groupSize,
        source: identity.source,
        device: sharedString(identity.device),
        deviceUuid: sharedString(identity.deviceUuid),
        host: sharedString(identity.host),
        labels: sharedLabels(identity.labels),
      };
    },
    size() {
      return { strings: strings.size, labelSets: labelSets.size };
    },
  };
}
