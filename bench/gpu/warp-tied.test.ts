import { describe, expect, it } from 'vitest';
import { createSeededRandom, type RandomSource } from '../../model/index.ts';
import { specOfRunTag, warpTiedLoss } from './warp-tied.ts';

// Exact expectations by enumerating every warp of 4 lanes with counts in {0, 1, 3}, each with
// probability 1/3, averaged over the (warp, group) pairs whose group has Σ w > 0 (as the
// Monte Carlo does).
function enumerate(n: number): { own: number; tied: number } {
  const values = [0, 1, 3];
  let own = 0;
  let tied = 0;
  let pairs = 0;
  for (let code = 0; code < 81; code++) {
    const lanes = [0, 1, 2, 3].map((lane) => values[Math.floor(code / 3 ** lane) % 3] as number);
    const warpMax = Math.max(...lanes);
    for (let first = 0; first < 4; first += n) {
      const group = lanes.slice(first, first + n);
      const sum = group.reduce((a, b) => a + b, 0);
      if (sum === 0) continue;
      own += (n * Math.max(...group)) / sum;
      tied += (n * warpMax) / sum;
      pairs++;
    }
  }
  return { own: own / pairs, tied: tied / pairs };
}

const draw = (random: RandomSource): number => [0, 1, 3][random.nextInt(3)] as number;

describe('warpTiedLoss', () => {
  it('matches exact enumeration for warps of 4 lanes and groups of 1, 2 and 4', () => {
    const results = warpTiedLoss(draw, createSeededRandom(7), [1, 2, 4], 1 << 17, 4);
    for (const r of results) {
      const exact = enumerate(r.n);
      expect(Math.abs(r.own - exact.own)).toBeLessThan(0.01);
      expect(Math.abs(r.tied - exact.tied)).toBeLessThan(4 * r.tiedStandardError);
    }
    // Sanity of the enumeration itself: a group of one lane has own loss 1; a group as wide as the warp is tied to itself.
    expect(enumerate(1).own).toBe(1);
    expect(enumerate(4).tied).toBeCloseTo(enumerate(4).own, 12);
    const whole = results.find((r) => r.n === 4);
    expect(whole?.tied).toBeCloseTo(whole?.own ?? Number.NaN, 12);
  });

  it('rejects a group size that does not divide the warp, and no warps', () => {
    expect(() => warpTiedLoss(draw, createSeededRandom(1), [3], 10, 4)).toThrow(RangeError);
    expect(() => warpTiedLoss(draw, createSeededRandom(1), [2], 0, 4)).toThrow(RangeError);
  });
});

describe('specOfRunTag', () => {
  it('turns run-on-device.sh file tags back into specs', () => {
    expect(specOfRunTag('binom_60_0.5')).toBe('binom(60,0.5)');
    expect(specOfRunTag('geo_0.05')).toBe('geo(0.05)');
    expect(specOfRunTag('unif_10_50')).toBe('unif(10,50)');
    expect(specOfRunTag('nbinom_5_0.15')).toBe('nbinom(5,0.15)');
    expect(specOfRunTag('geo')).toBeUndefined();
    expect(specOfRunTag('nope_1')).toBeUndefined();
  });
});
