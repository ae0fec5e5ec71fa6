/**
 * Direct samplers of the parametric families (docs/model.md §2d), independent of the pmf code: used
 * by Monte Carlo checks of the model and by workloads that draw iteration counts.
 */
import { generateFamilyPmf, validateFamilySpec, type FamilySpec } from './family.ts';
import { createCategoricalSampler } from './categorical-sampler.ts';
import { CategoricalDistribution } from './categorical-distribution.ts';
import type { RandomSource } from './random.ts';

function poissonSmall(lambda: number, random: RandomSource): number {
  // Knuth: count uniforms until their product drops below e^(−λ); fine for λ ≤ 30.
  const limit = Math.exp(-lambda);
  let k = 0;
  let product = random.nextFloat();
  while (product > limit) {
    k++;
    product *= random.nextFloat();
  }
  return k;
}

function poisson(lambda: number, random: RandomSource): number {
  // A sum of independent Poissons is Poisson: split λ into pieces ≤ 30.
  let total = 0;
  let left = lambda;
  while (left > 30) {
    total += poissonSmall(30, random);
    left -= 30;
  }
  return total + poissonSmall(left, random);
}

function standardNormal(random: RandomSource): number {
  let u = 0;
  while (u === 0) u = random.nextFloat();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextFloat());
}

function gamma(shape: number, random: RandomSource): number {
  // Marsaglia & Tsang (2000); shape < 1 boosted by U^(1/shape).
  if (shape < 1) return gamma(shape + 1, random) * Math.pow(random.nextFloat() || Number.MIN_VALUE, 1 / shape);
  const d = shape - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    const z = standardNormal(random);
    const v = (1 + c * z) ** 3;
    if (v <= 0) continue;
    const u = random.nextFloat();
    if (Math.log(u || Number.MIN_VALUE) < 0.5 * z * z + d - d * v + d * Math.log(v)) return d * v;
  }
}

function geometricTrials(p: number, random: RandomSource): number {
  // Inversion: the number of trials up to the first success, on {1, 2, ...}.
  if (p === 1) return 1;
  const u = 1 - random.nextFloat(); // (0, 1]
  return Math.max(1, Math.ceil(Math.log(u) / Math.log1p(-p)));
}

/**
 * Draws one value from a family, untruncated, by a construction independent of the pmf:
 * binom as a sum of Bernoulli trials, geo by inversion, pois by Knuth's product method (split
 * into pieces of λ ≤ 30), nbinom as a gamma–Poisson mixture (failures before the r-th success),
 * unif by scaling, cat by the alias method.
 *
 * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC for an invalid spec.
 * @example sampleFamily({ family: 'geo', p: 0.2 }, createSeededRandom(1)) // ≥ 1
 */
export function sampleFamily(spec: FamilySpec, random: RandomSource): number {
  validateFamilySpec(spec);
  return createFamilySampler(spec)(random);
}

/**
 * Like {@link sampleFamily} but validates once and returns a reusable draw function (faster in loops).
 *
 * @throws {ModelError} WW_ERR_MODEL_INVALID_SPEC for an invalid spec.
 */
export function createFamilySampler(spec: FamilySpec): (random: RandomSource) => number {
  validateFamilySpec(spec);
  switch (spec.family) {
    case 'binom':
      return (random) => {
        let k = 0;
        for (let i = 0; i < spec.trials; i++) if (random.nextFloat() < spec.p) k++;
        return k;
      };
    case 'geo':
      return (random) => geometricTrials(spec.p, random);
    case 'pois':
      return (random) => poisson(spec.lambda, random);
    case 'unif':
      return (random) => spec.low + Math.floor(random.nextFloat() * (spec.high - spec.low + 1));
    case 'nbinom':
      return (random) => (spec.p === 1 ? 0 : poisson((gamma(spec.r, random) * (1 - spec.p)) / spec.p, random));
    case 'cat': {
      const pmf = generateFamilyPmf(spec);
      const draw = createCategoricalSampler(CategoricalDistribution.fromPmf(pmf.values.map((v, i) => [v, pmf.probabilities[i]!] as const)));
      return draw;
    }
  }
}
