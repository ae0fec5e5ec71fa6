/**
 * Reconvergence-stack emulator for loops whose trip count differs per lane (docs/model.md §4,
 * after Bialas & Strzelecki's divergence micro-benchmarks).
 *
 * Stack discipline modelled (pre-Volta SIMT, one warp):
 * - entering a loop pushes one reconvergence token (the loop exit, like `SSY`);
 * - at every evaluation of the loop condition where some active lanes leave and others stay
 *   (a *diverging exit*), one token is pushed for the lanes that wait at the exit;
 * - when the last active lanes leave, all tokens pushed by that loop are popped.
 * The physical stack holds `physicalEntries` tokens (16); pushing onto a full physical stack
 * first spills the oldest `spillChunkEntries` (4) tokens to memory (one *spill*); a pop that
 * empties the physical stack while tokens remain in memory reloads one chunk (one *reload*).
 */

/** One loop of a loop nest: a per-lane trip count, and the loops run inside each iteration. */
export interface LoopSpec {
  /** Trip count of the loop for each lane (non-negative integers); all loops of a nest have the same lane count. */
  readonly bounds: readonly number[];
  /** Loops executed, in order, inside every iteration of this loop (by the lanes still iterating). */
  readonly body?: readonly LoopSpec[];
}

/** Options of {@link emulateReconvergenceStack}. */
export interface ReconvergenceStackOptions {
  /** Tokens the on-chip stack holds before it spills; default 16. */
  readonly physicalEntries?: number;
  /** Tokens moved to memory per spill and back per reload; default 4. */
  readonly spillChunkEntries?: number;
  /** Tokens already on the stack when the loop nest starts (enclosing control flow); default 0. */
  readonly baseDepth?: number;
}

/** What the emulator counted for one warp running a loop nest. */
export interface ReconvergenceStackTrace {
  /** Tokens pushed (loop-entry tokens + one per diverging exit). */
  readonly pushes: number;
  /** Tokens popped (equals pushes: every loop reconverges). */
  readonly pops: number;
  /** Largest number of tokens on the stack, including `baseDepth`. */
  readonly maxDepth: number;
  /** Loop-condition evaluations where some active lanes left and some stayed. */
  readonly divergingExits: number;
  /** Loop iterations issued by the warp, summed over all loops of the nest. */
  readonly issuedIterations: number;
  /** Chunks written to memory because the physical stack was full. */
  readonly spills: number;
  /** Chunks read back from memory. */
  readonly reloads: number;
}

/** Physical stack of tokens with chunked spill to memory; counts spills and reloads. */
interface SpillingStack {
  depth: number;
  physical: number;
  inMemory: number;
  spills: number;
  reloads: number;
  maxDepth: number;
}

function pushToken(stack: SpillingStack, physicalEntries: number, chunk: number): void {
  if (stack.physical === physicalEntries) {
    stack.physical -= chunk;
    stack.inMemory += chunk;
    stack.spills += 1;
  }
  stack.physical += 1;
  stack.depth += 1;
  if (stack.depth > stack.maxDepth) stack.maxDepth = stack.depth;
}

function popToken(stack: SpillingStack, chunk: number): void {
  stack.physical -= 1;
  stack.depth -= 1;
  if (stack.physical === 0 && stack.inMemory > 0) {
    const back = Math.min(chunk, stack.inMemory);
    stack.physical += back;
    stack.inMemory -= back;
    stack.reloads += 1;
  }
}

/**
 * Spill chunks of a single loop without a body that pushes `pushes` tokens (its entry token and
 * one per diverging exit) onto a stack already holding `baseDepth` tokens: the `spills` of
 * {@link emulateReconvergenceStack} for that loop, without building a trace (the estimator calls
 * it per sampled group, model/related/sampled-groups.ts). The same push discipline, on numbers.
 * The options are not checked here (emulateReconvergenceStack checks them).
 *
 * @example singleLoopSpills(17); // → 1: the 17th token finds the 16 physical entries full
 */
export function singleLoopSpills(pushes: number, physicalEntries = 16, chunk = 4, baseDepth = 0): number {
  let physical = 0;
  for (let i = 0; i < baseDepth; i += 1) physical = physical === physicalEntries ? physical - chunk + 1 : physical + 1;
  // The enclosing tokens' own spills happened before the loop: only the loop's count.
  let spills = 0;
  for (let i = 0; i < pushes; i += 1) {
    if (physical === physicalEntries) {
      physical -= chunk;
      spills += 1;
    }
    physical += 1;
  }
  return spills;
}

function checkInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer ${min}..${max}, got ${String(value)}`);
  }
}

function laneCountOf(loops: readonly LoopSpec[], expected: number | undefined, path: string): number {
  let lanes = expected;
  loops.forEach((loop, index) => {
    const where = `${path}[${index}]`;
    if (!Array.isArray(loop.bounds) || loop.bounds.length === 0) {
      throw new RangeError(`${where}.bounds must be a non-empty array of trip counts, got ${String(loop.bounds)}`);
    }
    if (lanes !== undefined && loop.bounds.length !== lanes) {
      throw new RangeError(`${where}.bounds must have one trip count per lane (${lanes}), got ${loop.bounds.length}`);
    }
    lanes = loop.bounds.length;
    loop.bounds.forEach((bound, lane) => {
      if (!Number.isSafeInteger(bound) || bound < 0) {
        throw new RangeError(`${where}.bounds[${lane}] must be a non-negative integer, got ${String(bound)}`);
      }
    });
    if (loop.body !== undefined) laneCountOf(loop.body, lanes, `${where}.body`);
  });
  if (lanes === undefined) throw new RangeError(`${path} must contain at least one loop`);
  return lanes;
}

/**
 * Emulates the reconvergence stack of one warp running a loop nest whose trip counts differ
 * per lane, and counts pushes, pops, diverging exits, the maximum depth and chunked spills.
 *
 * For a single loop the counts are closed-form (D = distinct trip counts below the maximum):
 * pushes = pops = 1 + D, maxDepth = baseDepth + 1 + D; nested loops are emulated iteration by
 * iteration. Cost: O(issued iterations × lanes) for nests, O(lanes·log lanes) for a single loop.
 *
 * @param loops one loop or a sequence of loops run one after the other by the whole warp
 * @throws RangeError on empty or ragged bounds, negative or non-integer trip counts or options
 * @example
 * emulateReconvergenceStack({ bounds: [32, 32, 31, 30] });
 * // → { pushes: 3, pops: 3, maxDepth: 3, divergingExits: 2, issuedIterations: 32, spills: 0, reloads: 0 }
 */
export function emulateReconvergenceStack(
  loops: LoopSpec | readonly LoopSpec[],
  options: ReconvergenceStackOptions = {},
): ReconvergenceStackTrace {
  const physicalEntries = options.physicalEntries ?? 16;
  const chunk = options.spillChunkEntries ?? 4;
  const baseDepth = options.baseDepth ?? 0;
  checkInteger('physicalEntries', physicalEntries, 1, 1 << 20);
  checkInteger('spillChunkEntries', chunk, 1, physicalEntries);
  checkInteger('baseDepth', baseDepth, 0, 1 << 20);
  const list: readonly LoopSpec[] = Array.isArray(loops) ? (loops as readonly LoopSpec[]) : [loops as LoopSpec];
  const lanes = laneCountOf(list, undefined, 'loops');

  const stack: SpillingStack = { depth: 0, physical: 0, inMemory: 0, spills: 0, reloads: 0, maxDepth: 0 };
  for (let i = 0; i < baseDepth; i += 1) pushToken(stack, physicalEntries, chunk);
  stack.spills = 0; // the enclosing tokens' own spills happened before the loop nest
  const counts = { pushes: 0, pops: 0, divergingExits: 0, issuedIterations: 0 };

  // A single loop without a body (the estimator's per-group case, many times a second): every
  // distinct trip count but the largest is a diverging exit, no token is popped before the end.
  const only = list.length === 1 ? list[0] : undefined;
  if (only !== undefined && only.body === undefined) {
    let issued = 0;
    for (const bound of only.bounds) if (bound > issued) issued = bound;
    const pushes = new Set(only.bounds).size; // 1 entry token + (distinct − 1) diverging exits
    for (let i = 0; i < pushes; i += 1) pushToken(stack, physicalEntries, chunk);
    for (let i = 0; i < pushes; i += 1) popToken(stack, chunk);
    return {
      pushes,
      pops: pushes,
      maxDepth: Math.max(stack.maxDepth, baseDepth),
      divergingExits: pushes - 1,
      issuedIterations: issued,
      spills: stack.spills,
      reloads: stack.reloads,
    };
  }

  const runLoop = (loop: LoopSpec, active: readonly number[]): void => {
    if (active.length === 0) return;
    pushToken(stack, physicalEntries, chunk);
    counts.pushes += 1;
    let pushed = 1;
    // Distinct exit times of the active lanes, ascending; lanes leave when t reaches their bound.
    const exits = [...new Set(active.map((lane) => loop.bounds[lane] as number))].sort((a, b) => a - b);
    const hasBody = loop.body !== undefined && loop.body.length > 0;
    let remaining = active;
    let t = 0;
    for (const exitTime of exits) {
      if (hasBody) {
        for (; t < exitTime; t += 1) {
          counts.issuedIterations += 1;
          for (const inner of loop.body as readonly LoopSpec[]) runLoop(inner, remaining);
        }
      } else {
        counts.issuedIterations += exitTime - t;
        t = exitTime;
      }
      const staying = remaining.filter((lane) => (loop.bounds[lane] as number) > exitTime);
      if (staying.length > 0) {
        counts.divergingExits += 1;
        pushToken(stack, physicalEntries, chunk);
        counts.pushes += 1;
        pushed += 1;
      }
      remaining = staying;
    }
    for (let i = 0; i < pushed; i += 1) {
      popToken(stack, chunk);
      counts.pops += 1;
    }
  };

  const allLanes = Array.from({ length: lanes }, (_, lane) => lane);
  for (const loop of list) runLoop(loop, allLanes);
  return {
    pushes: counts.pushes,
    pops: counts.pops,
    maxDepth: Math.max(stack.maxDepth, baseDepth),
    divergingExits: counts.divergingExits,
    issuedIterations: counts.issuedIterations,
    spills: stack.spills,
    reloads: stack.reloads,
  };
}
