import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * The heap target (docs/estimator.md, The heap target): a soft bound on the V8 heap in use,
 * kept by running a full garbage collection when the heap passes it, instead of a hard limit
 * (`--max-old-space-size`) that aborts the process when its live data grows past it.
 *
 * V8 lets its old generation grow to a few times the live heap before it collects it when the
 * machine has memory to spare, and keeps the pages it grew into. Under eviction churn (many
 * short-lived streams) the estimator promotes enough medium-lived garbage to grow its RSS to
 * ~2× what it holds. A collection at the target keeps the heap from growing there at all.
 *
 * The policy is pure ({@link shouldCollect}, {@link afterCollection}); {@link startHeapTarget}
 * runs it on a timer.
 */

/** How the heap target decides. */
export interface HeapTargetPolicy {
  /** Heap in use (bytes) from which a collection runs. */
  readonly targetBytes: number;
  /**
   * Least growth of the heap in use (bytes) since the last collection left it before the next
   * one runs: with live data near or above the target, every collection still follows at
   * least this much allocation, so their cost stays proportional to it (as V8's own).
   */
  readonly minGrowthBytes: number;
  /** Largest share of the time the collections may take: after one of d ms the next waits d·(1/share − 1). */
  readonly maxTimeShare: number;
}

/** The policy's defaults beside the target itself (docs/estimator.md, The heap target). */
export const HEAP_TARGET_POLICY: Omit<HeapTargetPolicy, 'targetBytes'> = Object.freeze({ minGrowthBytes: 32 * 1_048_576, maxTimeShare: 0.1 });

/** How often the heap in use is looked at (ms): reading V8's heap statistics takes microseconds. */
export const HEAP_TARGET_CHECK_MILLIS = 250;

/** What the heap target remembers between checks. */
export interface HeapTargetState {
  /** Heap in use right after the last collection (bytes; 0 before the first). */
  readonly liveBytes: number;
  /** The earliest time (ms, the clock of the checks) the next collection may start. */
  readonly notBeforeMillis: number;
  readonly collections: number;
  /** Time spent in the collections (ms). */
  readonly collectionMillis: number;
}

/** The state before any collection. */
export const INITIAL_HEAP_TARGET_STATE: HeapTargetState = Object.freeze({ liveBytes: 0, notBeforeMillis: 0, collections: 0, collectionMillis: 0 });

/**
 * Whether a collection runs now: the heap in use has reached both the target and the last
 * live heap + minGrowthBytes, and the wait after the last collection has passed.
 *
 * @param usedBytes - V8 heap in use now (bytes)
 * @param nowMillis - the clock of the checks (ms)
 * @example shouldCollect({ targetBytes: 100e6, ...HEAP_TARGET_POLICY }, INITIAL_HEAP_TARGET_STATE, 120e6, 0) // true
 */
export function shouldCollect(policy: HeapTargetPolicy, state: HeapTargetState, usedBytes: number, nowMillis: number): boolean {
  return nowMillis >= state.notBeforeMillis && usedBytes >= Math.max(policy.targetBytes, state.liveBytes + policy.minGrowthBytes);
}

/**
 * The state after a collection that ran from `startMillis` to `endMillis` and left `liveBytes`
 * in use.
 *
 * @example afterCollection(policy, INITIAL_HEAP_TARGET_STATE, 60e6, 0, 50).notBeforeMillis // 500 (9 × 50 ms after its end)
 */
export function afterCollection(policy: HeapTargetPolicy, state: HeapTargetState, liveBytes: number, startMillis: number, endMillis: number): HeapTargetState {
  const took = Math.max(0, endMillis - startMillis);
  return {
    liveBytes,
    notBeforeMillis: endMillis + took * (1 / policy.maxTimeShare - 1),
    collections: state.collections + 1,
    collectionMillis: state.collectionMillis + took,
  };
}

/**
 * A function that runs a full (major) garbage collection now, or undefined where this Node
 * cannot: `globalThis.gc` when the process runs with `--expose-gc`, else the one V8 gives a new
 * context after `--expose-gc` is set at run time (the flag only adds that function).
 *
 * @example const collect = fullCollection(); collect?.();
 */
export function fullCollection(): (() => void) | undefined {
  const existing: unknown = (globalThis as { gc?: unknown }).gc;
  if (typeof existing === 'function') return () => void (existing as () => unknown)();
  try {
    setFlagsFromString('--expose-gc');
    const exposed: unknown = runInNewContext('typeof gc === "function" ? gc : undefined');
    return typeof exposed === 'function' ? () => void (exposed as () => unknown)() : undefined;
  } catch {
    return undefined;
  }
}

/** A running heap target. */
export interface HeapTarget {
  /** Collections so far and their time. */
  stats(): HeapTargetState;
  stop(): void;
}

/**
 * Checks the heap in use every {@link HEAP_TARGET_CHECK_MILLIS} ms (an unref'd timer: it never
 * keeps the process alive) and runs a full collection when {@link shouldCollect} says so.
 * Returns undefined when no collection can be run on demand ({@link fullCollection}).
 *
 * @param targetBytes - the heap target (bytes)
 * @param collected - told each collection's duration (ms) and the heap in use after it (bytes)
 * @example const target = startHeapTarget(100 * 1024 * 1024, (ms) => histogram.record(ms)); target?.stop();
 */
export function startHeapTarget(targetBytes: number, collected: (durationMillis: number, liveBytes: number) => void): HeapTarget | undefined {
  const collect = fullCollection();
  if (collect === undefined) return undefined;
  const policy: HeapTargetPolicy = { targetBytes, ...HEAP_TARGET_POLICY };
  let state = INITIAL_HEAP_TARGET_STATE;
  const timer = setInterval(() => {
    const now = performance.now();
    if (!shouldCollect(policy, state, getHeapStatistics().used_heap_size, now)) return;
    collect();
    const end = performance.now();
    const live = getHeapStatistics().used_heap_size;
    state = afterCollection(policy, state, live, now, end);
    collected(end - now, live);
  }, HEAP_TARGET_CHECK_MILLIS);
  timer.unref();
  return {
    stats: () => state,
    stop: () => clearInterval(timer),
  };
}
