import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from './categorical-distribution.ts';
import { createSeededRandom, type RandomSource } from './random.ts';
import { fitParametric } from './fit-parametric.ts';
import { fitParametric as previousFitParametric } from '../testing/previous/fit-parametric.ts';
import { randomTestDistribution, TEST_DISTRIBUTION_KINDS } from '../testing/random-distributions.ts';

/** Over- and under-dispersed supports, with 0 or not, values past the ln k! table (256) and past the shared ln Γ rows (4096). */
function randomSample(random: RandomSource, i: number): CategoricalDistribution {
  if (i % 3 === 0) return randomTestDistribution(random, TEST_DISTRIBUTION_KINDS[i % TEST_DISTRIBUTION_KINDS.length]!, 2 + random.nextInt(100));
  const weights = new Map<number, number>();
  const centre = [3, 40, 300, 5_000][random.nextInt(4)]!;
  const width = i % 3 === 1 ? 1 + random.nextInt(Math.max(1, Math.floor(Math.sqrt(centre)))) : 1 + random.nextInt(3 * centre);
  const size = 1 + random.nextInt(60);
  for (let j = 0; j < size; j++) weights.set(Math.max(0, centre + random.nextInt(2 * width + 1) - width), 1 + random.nextInt(500));
  return CategoricalDistribution.fromPmf(weights);
}

function bits(fits: ReturnType<typeof fitParametric>): string {
  // Every number as its exact bits (JSON writes -0 as 0; Object.is tells them apart).
  return JSON.stringify(fits, (_key, value: unknown) => (typeof value === 'number' ? (Object.is(value, -0) ? '-0' : String(value)) : value));
}

describe('parametric fit against the previous implementation, bit for bit', () => {
  it('gives the same families, parameters, log-likelihoods and AIC, with the shared ln Γ rows cold and warm', () => {
    const random = createSeededRandom(11);
    const families = new Set<string>();
    for (let i = 0; i < 150; i++) {
      const dist = randomSample(random, i);
      const sampleSize = random.nextInt(2) === 0 ? undefined : 1 + random.nextInt(100_000);
      const options = sampleSize === undefined ? {} : { sampleSize };
      const before = bits(previousFitParametric(dist, options));
      expect(bits(fitParametric(dist, options)), JSON.stringify([...dist.values])).toBe(before);
      expect(bits(fitParametric(dist, options))).toBe(before);
      for (const fit of fitParametric(dist, options)) families.add(fit.family);
    }
    expect([...families].sort()).toEqual(['binom', 'geo', 'nbinom', 'pois', 'unif']);
  });
});
