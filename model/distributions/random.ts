/**
 * A small seeded pseudo-random generator for Monte Carlo checks and samplers. model/ never
 * uses Math.random: every random draw comes from a {@link RandomSource} the caller passes in.
 */

/** A source of uniform random numbers (deterministic for a given seed). */
export interface RandomSource {
  /** A uniform float in [0, 1) with 53 random bits. */
  nextFloat(): number;
  /** A uniform unsigned 32-bit integer. */
  nextUint32(): number;
  /** A uniform integer in [0, maxExclusive); maxExclusive must be an integer 1..2^32. */
  nextInt(maxExclusive: number): number;
}

function splitMix32(state: number): () => number {
  let s = state >>> 0;
  return () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * Creates a xoshiro128** generator (Blackman & Vigna) seeded through splitmix32, so nearby
 * seeds give unrelated streams. Period 2^128 − 1; fine for simulations, not for cryptography.
 *
 * @param seed any finite number; its low 32 bits and the next 32 (for seeds ≥ 2^32) are used.
 * @throws {RangeError} when seed is not a finite number.
 * @example
 * const random = createSeededRandom(42);
 * random.nextFloat(); // same value on every run
 */
export function createSeededRandom(seed: number): RandomSource {
  if (!Number.isFinite(seed)) throw new RangeError(`seed must be a finite number, got ${String(seed)}`);
  const high = Math.floor(Math.abs(seed) / 2 ** 32) >>> 0;
  const next = splitMix32((seed >>> 0) ^ Math.imul(high, 0x27d4eb2d));
  let a = next();
  let b = next();
  let c = next();
  let d = next();
  if ((a | b | c | d) === 0) a = 1;
  const nextUint32 = (): number => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
  const nextFloat = (): number => {
    // 21 high bits of one draw and 32 of the next give 53 bits, the full double mantissa.
    const high21 = nextUint32() >>> 11;
    const low32 = nextUint32();
    return (high21 * 4294967296 + low32) / 9007199254740992;
  };
  const nextInt = (maxExclusive: number): number => {
    if (!Number.isInteger(maxExclusive) || maxExclusive < 1 || maxExclusive > 4294967296) {
      throw new RangeError(`nextInt bound must be an integer 1..2^32, got ${String(maxExclusive)}`);
    }
    return Math.floor(nextFloat() * maxExclusive);
  };
  return { nextUint32, nextFloat, nextInt };
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

/**
 * mulberry32 (Tommy Ettinger's 32-bit generator): a plain seeded source of uniforms for tests,
 * benchmarks and measurements that draw with a bare `() => number`. Period 2^32; the same seed
 * gives the same sequence on every run and platform. Prefer {@link createSeededRandom} for
 * simulations that need more than 2^32 draws or 53-bit floats.
 *
 * @param seed any number; its low 32 bits are the state.
 * @returns a function giving uniform floats in [0, 1) with 32 random bits.
 * @example
 * const random = mulberry32(7);
 * random(); // same value on every run
 */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
