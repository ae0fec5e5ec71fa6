// Statistics of sampled groups, written out independently of the estimator, for checking the
// group selection of the probe and the CPU backend (kernels/sampling-selection.test.ts,
// kernels/measure-sampling.ts): per-group sums, the one-way ANOVA ICC, the splitmix64 hash of
// the GroupSamples `hash` selection, and a fixed-seed Monte Carlo of an ideal random selection.

import { mulberry32 } from '../model/index.ts';

/** Per-group sums of one group's lane counts. */
export interface GroupStats {
  /** Σ w over the lanes. */
  readonly total: number;
  /** Σ w² over the lanes. */
  readonly squares: number;
  /** H = n·max(w)/Σw (1 when every count is 0). */
  readonly loss: number;
}

/**
 * Σw, Σw² and H of one group's lane counts.
 *
 * @example groupStats([1, 3]) // { total: 4, squares: 10, loss: 1.5 }
 */
export function groupStats(counts: readonly number[]): GroupStats {
  let total = 0;
  let squares = 0;
  let max = 0;
  for (const w of counts) {
    total += w;
    squares += w * w;
    max = Math.max(max, w);
  }
  return { total, squares, loss: total === 0 ? 1 : (counts.length * max) / total };
}

/**
 * Mean H (loss_counts) and the one-way ANOVA ICC, (MSB − MSW)/(MSB + (n − 1)·MSW), of a list
 * of groups of `groupSize` lanes (repeats allowed). NaN when fewer than 2 groups.
 *
 * @example sampleStatistics([groupStats([1, 1]), groupStats([5, 5])], 2).icc // 1
 */
export function sampleStatistics(groups: readonly GroupStats[], groupSize: number): { lossCounts: number; icc: number } {
  const g = groups.length;
  const n = groupSize;
  let sum = 0;
  let squares = 0;
  let totals2 = 0;
  let losses = 0;
  for (const s of groups) {
    sum += s.total;
    squares += s.squares;
    totals2 += s.total * s.total;
    losses += s.loss;
  }
  if (g < 2) return { lossCounts: g === 1 ? losses : Number.NaN, icc: Number.NaN };
  const msb = (totals2 / n - (sum * sum) / (g * n)) / (g - 1);
  const msw = (squares - totals2 / n) / (g * (n - 1));
  return { lossCounts: losses / g, icc: (msb - msw) / (msb + (n - 1) * msw) };
}

/**
 * splitmix64 finaliser on unsigned 64-bit integers (protocol/SPEC.md, GroupSamples `hash`:
 * group g of launch L is sampled iff splitmix64(L ^ g) mod stride = 0).
 *
 * @example splitmix64(0n) // 0xe220a8397b1dcdafn
 */
export function splitmix64(value: bigint): bigint {
  const mask = (1n << 64n) - 1n;
  let z = (value + 0x9e3779b97f4a7c15n) & mask;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
  return z ^ (z >> 31n);
}

/** Mean and standard deviation of a list. */
export interface Moments {
  readonly mean: number;
  readonly sd: number;
}

function moments(values: readonly number[]): Moments {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, sd: Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (values.length - 1)) };
}

/**
 * Fixed-seed Monte Carlo of an ideal selection: each group of each of `launches` launches is
 * taken independently with probability 1/`stride` (geometric skips); the pooled loss_counts
 * and ICC of each repetition. Returns their means and standard deviations over `repetitions`.
 *
 * @example idealSelection(population, 32, 64, 1, 2000, 7).icc.sd
 */
export function idealSelection(
  population: readonly GroupStats[],
  groupSize: number,
  stride: number,
  launches: number,
  repetitions: number,
  seed: number,
): { lossCounts: Moments; icc: Moments } {
  const random = mulberry32(seed);
  const logKeep = Math.log(1 - 1 / stride);
  const skip = (): number => Math.floor(Math.log(1 - random()) / logKeep);
  const losses: number[] = [];
  const iccs: number[] = [];
  for (let r = 0; r < repetitions; ++r) {
    const chosen: GroupStats[] = [];
    for (let l = 0; l < launches; ++l) {
      for (let g = skip(); g < population.length; g += 1 + skip()) chosen.push(population[g] as GroupStats);
    }
    if (chosen.length < 2) continue;
    const s = sampleStatistics(chosen, groupSize);
    losses.push(s.lossCounts);
    iccs.push(s.icc);
  }
  return { lossCounts: moments(losses), icc: moments(iccs) };
}
