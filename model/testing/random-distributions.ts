/**
 * Seeded generator of awkward test distributions: zero-heavy, gapped, bimodal, spiky, flat.
 */
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import type { RandomSource } from '../distributions/random.ts';

/** Kinds of distributions {@link randomTestDistribution} produces. */
export const TEST_DISTRIBUTION_KINDS = ['flat', 'zero-heavy', 'gapped', 'bimodal', 'spiky'] as const;

/**
 * A random categorical distribution of the given kind with at most `maxValues` support values
 * (values up to about 150).
 */
export function randomTestDistribution(random: RandomSource, kind: (typeof TEST_DISTRIBUTION_KINDS)[number], maxValues = 60): CategoricalDistribution {
  const count = 2 + random.nextInt(maxValues - 1);
  const weights = new Map<number, number>();
  const add = (value: number, weight: number): void => {
    weights.set(value, (weights.get(value) ?? 0) + weight);
  };
  switch (kind) {
    case 'flat':
      for (let i = 0; i < count; i++) add(random.nextInt(80), random.nextFloat() + 0.01);
      break;
    case 'zero-heavy':
      add(0, 5 + 50 * random.nextFloat());
      for (let i = 1; i < count; i++) add(1 + random.nextInt(60), random.nextFloat());
      break;
    case 'gapped': {
      const step = 2 + random.nextInt(6);
      for (let i = 0; i < count; i++) add(step * random.nextInt(Math.floor(150 / step)) + (random.nextFloat() < 0.1 ? 1 : 0), random.nextFloat() + 0.01);
      break;
    }
    case 'bimodal': {
      const low = random.nextInt(10);
      const high = 60 + random.nextInt(60);
      for (let i = 0; i < count; i++) {
        const near = random.nextFloat() < 0.7 ? low : high;
        add(Math.max(0, near + random.nextInt(11) - 5), random.nextFloat() + 0.01);
      }
      break;
    }
    case 'spiky':
      for (let i = 0; i < count; i++) add(random.nextInt(100), random.nextFloat() ** 8 + 1e-9);
      add(random.nextInt(100), 100);
      break;
  }
  return CategoricalDistribution.fromPmf(weights);
}
