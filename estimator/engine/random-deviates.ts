import type { RandomSource } from '../../model/index.ts';

/**
 * Normal and Poisson deviates drawn from the model's seeded {@link RandomSource}, plus a
 * string hash for deriving seeds. Everything random the estimator does (the bootstrap of
 * loss_predicted, synthetic test series) is reproducible from a seed, so a restarted
 * estimator recomputes bit-identical windows and re-written InfluxDB points are idempotent.
 */

/**
 * A standard normal deviate (Box–Muller; the second value of the pair is discarded, which
 * costs one extra uniform but keeps the generator stateless).
 *
 * @example
 * normalDeviate(createSeededRandom(1)); // same value on every run
 */
export function normalDeviate(random: RandomSource): number {
  let u = random.nextFloat();
  while (u === 0) u = random.nextFloat();
  const v = random.nextFloat();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * A Poisson deviate with mean `lambda`. Knuth's product method below 30 (exact); above, the
 * normal approximation rounded and clamped at 0, whose shape error O(1/√λ) is far below the
 * bootstrap's own Monte Carlo error.
 *
 * @throws RangeError when lambda is negative or not finite.
 * @example
 * poissonDeviate(createSeededRandom(1), 4.5);
 */
export function poissonDeviate(random: RandomSource, lambda: number): number {
  if (!(lambda >= 0) || !Number.isFinite(lambda)) {
    throw new RangeError(`Poisson mean must be a finite number >= 0, got ${lambda}`);
  }
  if (lambda === 0) return 0;
  if (lambda < 30) {
    const limit = Math.exp(-lambda);
    let k = 0;
    let product = random.nextFloat();
    while (product > limit) {
      k += 1;
      product *= random.nextFloat();
    }
    return k;
  }
  return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * normalDeviate(random)));
}

/**
 * FNV-1a 32-bit hash of a string: derives per-stream, per-window bootstrap seeds.
 *
 * @example
 * hashString('matpow/pow16|cpu|32|cpu'); // a stable unsigned 32-bit integer
 */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
