/**
 * The one retry/backoff helper of the services (kafkajs' own `retry` settings stay kafkajs').
 * Delays grow exponentially from `initialMillis` by `factor` per attempt up to `maxMillis`, and
 * are spread by `jitter` so that many clients failing together do not retry in lockstep.
 */

/** How long to wait between attempts. */
export interface BackoffPolicy {
  /** Delay before the 2nd attempt (ms, > 0). */
  readonly initialMillis: number;
  /** Cap on the delay before jitter (ms, ≥ initialMillis). */
  readonly maxMillis: number;
  /** Growth per failed attempt (default 2). */
  readonly factor?: number | undefined;
  /**
   * Relative spread, 0..1 (default 0 = exact): the delay is multiplied by a uniform factor in
   * [1 − jitter/2, 1 + jitter/2), so its mean stays the un-jittered value.
   */
  readonly jitter?: number | undefined;
}

/**
 * The delay after the `failures`-th failed attempt: min(maxMillis, initialMillis·factor^(failures−1)),
 * times the jitter factor drawn from `random`.
 *
 * @param failures failed attempts so far, ≥ 1.
 * @param random uniform [0, 1) source (default Math.random; pass a seeded one in tests).
 * @throws RangeError when failures < 1 or the policy is out of range.
 * @example
 * backoffDelayMillis(3, { initialMillis: 100, maxMillis: 1_000 }); // 400
 */
export function backoffDelayMillis(failures: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const factor = policy.factor ?? 2;
  const jitter = policy.jitter ?? 0;
  if (!Number.isInteger(failures) || failures < 1) throw new RangeError(`failures must be an integer ≥ 1, got ${failures}`);
  if (!(policy.initialMillis > 0) || !(policy.maxMillis >= policy.initialMillis) || !(factor >= 1) || !(jitter >= 0 && jitter <= 1)) {
    throw new RangeError(`backoff policy out of range: ${JSON.stringify(policy)}`);
  }
  // Stop growing once the cap is reached (also keeps factor^n finite for long outages).
  let base = policy.initialMillis;
  for (let i = 1; i < failures && base < policy.maxMillis; i++) base *= factor;
  base = Math.min(base, policy.maxMillis);
  return jitter === 0 ? base : base * (1 - jitter / 2 + jitter * random());
}

/**
 * Resolves after `millis` ms, or rejects with the signal's reason as soon as `signal` aborts.
 *
 * @throws the abort reason (a DOMException 'AbortError' unless the caller gave one).
 * @example await sleepMillis(250, controller.signal);
 */
export function sleepMillis(millis: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, millis));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settings of {@link retry}. */
export interface RetryOptions extends BackoffPolicy {
  /** Whether a failure is worth another attempt (default: every failure). */
  readonly shouldRetry?: ((error: unknown, failures: number) => boolean) | undefined;
  /** Gives up (throwing the last error) when the next pause would end past this many ms after the start. */
  readonly timeoutMillis?: number | undefined;
  /** Gives up after this many attempts in all (default unlimited). */
  readonly maxAttempts?: number | undefined;
  /** Aborting stops waiting at once and rejects with the signal's reason. */
  readonly signal?: AbortSignal | undefined;
  /** Uniform [0, 1) source for the jitter (default Math.random). */
  readonly random?: (() => number) | undefined;
}

/**
 * Runs `operation` until it resolves, pausing {@link backoffDelayMillis} between attempts.
 *
 * @throws the last error of `operation` when it is not retriable, or the attempts or time are
 *   used up; the signal's reason when aborted.
 * @example
 * const offsets = await retry(() => admin.fetchTopicOffsets('warpwatch.frames'), { initialMillis: 100, maxMillis: 1_000, timeoutMillis: 15_000, shouldRetry: isTransientKafkaError }); // isTransientKafkaError: kafka-topics.ts
 */
export async function retry<T>(operation: () => Promise<T>, options: RetryOptions): Promise<T> {
  const start = Date.now();
  for (let failures = 0; ; ) {
    options.signal?.throwIfAborted();
    try {
      return await operation();
    } catch (error) {
      failures += 1;
      if (options.shouldRetry !== undefined && !options.shouldRetry(error, failures)) throw error;
      if (options.maxAttempts !== undefined && failures >= options.maxAttempts) throw error;
      const pause = backoffDelayMillis(failures, options, options.random);
      if (options.timeoutMillis !== undefined && Date.now() + pause > start + options.timeoutMillis) throw error;
      await sleepMillis(pause, options.signal);
    }
  }
}
