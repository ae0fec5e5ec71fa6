/**
 * What a sub-warp group's lane clocks measure when the group cannot end before its warp
 * (docs/validation.md §4, first effect): a Monte Carlo of the measured loss of groups of n lanes
 * packed into warps of `warpSize` lanes, every lane's count drawn independently from one family,
 * every iteration costing the same time.
 *
 * A group's measured H is n·(c_end − c0)/Σ(c_i − c0). With equal iteration costs c_i − c0 is
 * proportional to the lane's count w_i. A group that runs alone ends with its own deepest lane,
 * so H = n·max(group)/Σ(group): the model's loss (docs/model.md §2). A group that shares a warp
 * ends with the warp's deepest lane, so H = n·max(warp)/Σ(group). bench/gpu/summarize.ts prints
 * both beside each matpow run's measured loss.
 */
import { parseDistributionSpec, type RandomSource } from '../../model/index.ts';

/** The two expectations for one group size, over the groups with Σ w > 0 (the others have no measured H). */
export interface WarpTiedLoss {
  /** Lanes per group. */
  readonly n: number;
  /** Mean n·max(group)/Σ(group): groups that end with their own deepest lane. */
  readonly own: number;
  /** Mean n·max(warp)/Σ(group): groups that end with their warp's deepest lane. */
  readonly tied: number;
  /** Standard error of `tied` (the sample standard deviation over √groups). */
  readonly tiedStandardError: number;
  /** Groups averaged (those with Σ w > 0). */
  readonly groups: number;
}

/**
 * Monte Carlo of {@link WarpTiedLoss} for every group size that divides the warp.
 *
 * @param draw one iteration count (≥ 0) per call, e.g. `createFamilySampler(parseDistributionSpec('geo(0.05)'))`.
 * @param random the random source `draw` uses (seeded, so the result is reproducible).
 * @param groupSizes lane counts per group; each must divide `warpSize`.
 * @param warps warps simulated (each gives warpSize/n groups per group size).
 * @param warpSize lanes per warp (32 on NVIDIA GPUs).
 * @throws {RangeError} when a group size does not divide the warp, or warps < 1.
 * @example
 * const random = createSeededRandom(1);
 * warpTiedLoss(createFamilySampler(parseDistributionSpec('geo(0.05)')), random, [8, 32], 1 << 16);
 * // n = 8: own ≈ 2.67, tied ≈ 4.41; n = 32: own = tied ≈ 3.98
 */
export function warpTiedLoss(draw: (random: RandomSource) => number, random: RandomSource, groupSizes: readonly number[], warps: number, warpSize = 32): WarpTiedLoss[] {
  if (!Number.isInteger(warps) || warps < 1) throw new RangeError(`warps must be an integer ≥ 1, got ${String(warps)}`);
  for (const n of groupSizes) {
    if (!Number.isInteger(n) || n < 1 || warpSize % n !== 0) throw new RangeError(`group size ${String(n)} does not divide the warp of ${String(warpSize)} lanes`);
  }
  const sums = groupSizes.map(() => ({ own: 0, tied: 0, tiedSquares: 0, groups: 0 }));
  const lanes = new Float64Array(warpSize);
  for (let warp = 0; warp < warps; warp++) {
    let warpMax = 0;
    for (let lane = 0; lane < warpSize; lane++) {
      const w = draw(random);
      lanes[lane] = w;
      if (w > warpMax) warpMax = w;
    }
    groupSizes.forEach((n, index) => {
      const acc = sums[index] as (typeof sums)[number];
      for (let first = 0; first < warpSize; first += n) {
        let sum = 0;
        let max = 0;
        for (let lane = first; lane < first + n; lane++) {
          const w = lanes[lane] as number;
          sum += w;
          if (w > max) max = w;
        }
        if (sum === 0) continue;
        const tied = (n * warpMax) / sum;
        acc.own += (n * max) / sum;
        acc.tied += tied;
        acc.tiedSquares += tied * tied;
        acc.groups++;
      }
    });
  }
  return groupSizes.map((n, index) => {
    const { own, tied, tiedSquares, groups } = sums[index] as (typeof sums)[number];
    const mean = tied / groups;
    const variance = groups > 1 ? Math.max(0, (tiedSquares - groups * mean * mean) / (groups - 1)) : Number.NaN;
    return { n, own: own / groups, tied: mean, tiedStandardError: Math.sqrt(variance / groups), groups };
  });
}

/**
 * The distribution spec of a matpow run's file tag (run-on-device.sh writes `geo(0.05)` as
 * `geo_0.05` and `binom(60,0.5)` as `binom_60_0.5`).
 *
 * @returns the spec, or undefined when the tag is not of that form.
 * @example specOfRunTag('binom_60_0.5') // 'binom(60,0.5)'
 */
export function specOfRunTag(tag: string): string | undefined {
  const match = /^([a-z]+)_([0-9.]+(?:_[0-9.]+)*)$/.exec(tag);
  if (match === null) return undefined;
  const spec = `${match[1] as string}(${(match[2] as string).replaceAll('_', ',')})`;
  try {
    parseDistributionSpec(spec);
    return spec;
  } catch {
    return undefined;
  }
}
