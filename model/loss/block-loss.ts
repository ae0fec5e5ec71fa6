/**
 * Two-level lockstep loss (docs/model.md §11a): lanes in warps, and warps in blocks. A thread
 * block keeps its SM resources (registers, shared memory, its warp slots) until its slowest warp
 * ends, so besides the lanes a warp idles (§1) a block idles the warp slots of the warps that
 * finished early. From block-contiguous runs (all units of a block in unit order, cut into warps
 * of n consecutive units) this reports both levels with run-level (block-level) intervals.
 */
import { ModelError } from '../errors.ts';
import { normalQuantileTwoSided } from '../numerics/normal-quantile.ts';
import { ratioEstimate, type RatioEstimate } from './locality-loss.ts';

/** Result of {@link blockLoss}. Counts are iterations; t_bj = max lane count of warp j of block b, T_b = max_j t_bj. */
export interface BlockLoss {
  /** Blocks (runs) used. */
  readonly blocks: number;
  /** Warps cut from them (Σ_b K_b). */
  readonly warps: number;
  /** Lanes per warp n. */
  readonly warpSize: number;
  /** Warp level: Σ_b Σ_j n·t_bj / Σ w — lane-iterations warps hold over those that work (1 = no lane idles). */
  readonly warpLoss: RatioEstimate;
  /** Warps in blocks: Σ_b K_b·T_b / Σ_b Σ_j t_bj — warp slots a block holds until its slowest warp ends over the warp time used (1 = all warps of a block end together). */
  readonly warpInBlockLoss: RatioEstimate;
  /** Block level, both together: Σ_b K_b·n·T_b / Σ w = warpLoss × warpInBlockLoss (aggregate ratios, exact). */
  readonly blockLoss: RatioEstimate;
}

/**
 * The block-level loss of block-contiguous runs beside the warp-level loss of the same warps.
 * Each run is one block's units in order; it is cut into warps of `warpSize` consecutive units.
 * Intervals treat blocks as the independent units (ratio estimator over blocks, as localityLoss).
 * An all-zero block adds nothing to any sum (no work, no time).
 *
 * @param blocks - per-unit iteration counts of each block, in unit order (non-negative, finite)
 * @param warpSize - lanes per warp n (1..1024); every block's length must be a multiple of it
 * @param options - confidence level of the intervals (default 0.95)
 * @throws ModelError WW_ERR_MODEL_INVALID_ARGUMENT for no blocks, an empty block, a length that
 *   is not a multiple of warpSize, a negative or non-finite count, a level outside (0, 1);
 *   WW_ERR_MODEL_GROUP_SIZE for a warpSize outside 1..1024
 * @example
 * // one block of two warps of 2 lanes: warp times 4 and 1, T = 4
 * blockLoss([[4, 2, 1, 1]], 2).blockLoss.value // 2·2·4 / 8 = 2
 * blockLoss([[4, 2, 1, 1]], 2).warpLoss.value // (2·4 + 2·1) / 8 = 1.25
 * blockLoss([[4, 2, 1, 1]], 2).warpInBlockLoss.value // 2·4 / (4 + 1) = 1.6
 */
export function blockLoss(blocks: readonly (readonly number[])[], warpSize: number, options: { confidenceLevel?: number } = {}): BlockLoss {
  const level = options.confidenceLevel ?? 0.95;
  if (!(level > 0 && level < 1)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `confidence level must be in (0, 1), got ${level}`);
  if (!Number.isInteger(warpSize) || warpSize < 1 || warpSize > 1024) throw new ModelError('WW_ERR_MODEL_GROUP_SIZE', `warp size must be an integer 1..1024, got ${warpSize}`);
  if (blocks.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', 'block loss needs at least one block of unit counts');
  const n = warpSize;
  const work: number[] = [];
  const warpLockstep: number[] = [];
  const warpTimes: number[] = [];
  const blockTimes: number[] = [];
  const blockLockstep: number[] = [];
  let warps = 0;
  for (const [b, block] of blocks.entries()) {
    if (block.length === 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `block ${b} is empty`);
    if (block.length % n !== 0) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `block ${b} has ${block.length} units, not a multiple of the warp size ${n}`);
    let sum = 0;
    let sumWarpTimes = 0;
    let slowest = 0;
    const k = block.length / n;
    for (let j = 0; j < k; j++) {
      let max = 0;
      for (let i = j * n; i < (j + 1) * n; i++) {
        const w = block[i]!;
        if (!(w >= 0) || !Number.isFinite(w)) throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `unit counts must be finite and non-negative, got ${String(w)} in block ${b}`);
        if (w > max) max = w;
        sum += w;
      }
      sumWarpTimes += max;
      if (max > slowest) slowest = max;
    }
    warps += k;
    work.push(sum);
    warpLockstep.push(n * sumWarpTimes);
    warpTimes.push(sumWarpTimes);
    blockTimes.push(k * slowest);
    blockLockstep.push(k * n * slowest);
  }
  const z = normalQuantileTwoSided(level);
  return {
    blocks: blocks.length,
    warps,
    warpSize: n,
    warpLoss: ratioEstimate(warpLockstep, work, z),
    warpInBlockLoss: ratioEstimate(blockTimes, warpTimes, z),
    blockLoss: ratioEstimate(blockLockstep, work, z),
  };
}
