/**
 * Drawing from a CategoricalDistribution with a passed-in random source (Walker/Vose alias method).
 */
import type { CategoricalDistribution } from './categorical-distribution.ts';
import type { RandomSource } from './random.ts';

/** Draws one value of W per call from the given random source. */
export type CategoricalSampler = (random: RandomSource) => number;

/** The alias tables of Vose's method: column i holds values[i] below threshold[i], else values[alias[i]]. */
export interface AliasTable {
  readonly size: number;
  readonly values: Float64Array;
  readonly threshold: Float64Array;
  readonly alias: Int32Array;
}

/**
 * Builds the alias tables of `dist` (Vose's alias method, O(size)): a uniform u in [0, size)
 * draws values[⌊u⌋] when u − ⌊u⌋ < threshold[⌊u⌋], else values[alias[⌊u⌋]].
 *
 * @example aliasTable(CategoricalDistribution.fromCounts({ 1: 3, 9: 1 })).size // 2
 */
export function aliasTable(dist: CategoricalDistribution): AliasTable {
  const size = dist.size;
  const values = Float64Array.from(dist.values);
  const threshold = new Float64Array(size);
  const alias = new Int32Array(size);
  const scaled = dist.probabilities.map((p) => p * size);
  const small: number[] = [];
  const large: number[] = [];
  scaled.forEach((p, i) => (p < 1 ? small : large).push(i));
  while (small.length > 0 && large.length > 0) {
    const s = small.pop()!;
    const l = large.pop()!;
    threshold[s] = scaled[s]!;
    alias[s] = l;
    scaled[l] = scaled[l]! + scaled[s]! - 1;
    (scaled[l]! < 1 ? small : large).push(l);
  }
  for (const i of [...small, ...large]) {
    threshold[i] = 1;
    alias[i] = i;
  }
  return { size, values, threshold, alias };
}

/**
 * Builds an O(1)-per-draw sampler (Vose's alias method, O(size) setup; {@link aliasTable}),
 * one nextFloat (53 random bits) per draw.
 *
 * @example
 * const draw = createCategoricalSampler(CategoricalDistribution.fromCounts({ 1: 3, 9: 1 }));
 * draw(createSeededRandom(7)); // 1 or 9
 */
export function createCategoricalSampler(dist: CategoricalDistribution): CategoricalSampler {
  const { size, values, threshold, alias } = aliasTable(dist);
  return (random) => {
    const u = random.nextFloat() * size;
    const column = Math.floor(u);
    return u - column < threshold[column]! ? values[column]! : values[alias[column]!]!;
  };
}
