import { describe, expect, it } from 'vitest';
import { localityLoss } from '../loss/locality-loss.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { blockLoss } from '../loss/block-loss.ts';
import { addDivergenceObservation, createDivergenceMoments, divergenceObservationOfGroup } from './divergence-fit.ts';
import { createSampledGroups, mergeSampledGroups, recordSampledBlock, recordSampledGroup, recordSampledGroupColumns, summarizeSampledGroups, type SampledGroupInput } from './sampled-groups.ts';

// Groups whose clocks follow the divergence-cost model exactly: a single loop with lane trip
// counts w issues max(w) iterations and diverges once per distinct exit below the maximum
// (new Set(w).size − 1: computed here directly, not with the model's stack emulator). With at
// most 15 distinct values the 16-entry stack never spills.
function modelGroup(random: () => number, n: number, cost: { t: number; delta: number; overhead: number }, noise = 0): SampledGroupInput {
  const levels = 1 + Math.floor(random() * 15);
  const base = Math.floor(random() * 40);
  const laneCounts = Array.from({ length: n }, () => base + Math.floor(random() * levels) * 3);
  const max = Math.max(...laneCounts);
  const exits = new Set(laneCounts).size - 1;
  const duration = cost.overhead + cost.t * max + cost.delta * exits + noise * (random() - 0.5);
  const laneFinishTicks = laneCounts.map((w) => cost.overhead / 2 + cost.t * w);
  return { laneCounts, laneFinishTicks, durationTicks: duration };
}

function uniform(seed: number): () => number {
  const source = createSeededRandom(seed);
  return () => source.nextFloat();
}

describe('sampled groups', () => {
  it('recovers T, δ and the overhead from noiseless model clocks; spills unidentified', () => {
    const random = uniform(5);
    const samples = createSampledGroups();
    for (let i = 0; i < 400; i += 1) recordSampledGroup(samples, modelGroup(random, 32, { t: 37.5, delta: 26, overhead: 120 }));
    const result = summarizeSampledGroups(samples, 32);
    const fit = result?.divergence;
    expect(fit?.iterationTicks).toBeCloseTo(37.5, 6);
    expect(fit?.deltaTicks).toBeCloseTo(26, 6);
    expect(fit?.overheadTicks).toBeCloseTo(120, 4);
    expect(fit?.spillTicks).toBeUndefined();
    expect(fit?.rSquared).toBeCloseTo(1, 9);
    expect(fit?.groups).toBe(400);
  });

  it('with noisy clocks δ lies within 4 standard errors of the truth, and the standard error matches the spread over seeds', () => {
    const estimates: number[] = [];
    const errors: number[] = [];
    for (let seed = 1; seed <= 30; seed += 1) {
      const random = uniform(100 + seed);
      const samples = createSampledGroups();
      for (let i = 0; i < 300; i += 1) recordSampledGroup(samples, modelGroup(random, 32, { t: 20, delta: 30, overhead: 50 }, 400));
      const fit = summarizeSampledGroups(samples, 32)?.divergence;
      const delta = fit?.deltaTicks as number;
      const se = fit?.deltaStandardError as number;
      expect(Math.abs(delta - 30)).toBeLessThan(4 * se);
      estimates.push(delta);
      errors.push(se);
    }
    const mean = estimates.reduce((s, v) => s + v, 0) / estimates.length;
    const spread = Math.sqrt(estimates.reduce((s, v) => s + (v - mean) ** 2, 0) / (estimates.length - 1));
    const meanSe = errors.reduce((s, v) => s + v, 0) / errors.length;
    // 30 replicates: the sample SD is within ±40 % of σ with overwhelming probability.
    expect(spread / meanSe).toBeGreaterThan(0.6);
    expect(spread / meanSe).toBeLessThan(1.4);
  });

  it('gives mean losses, the idle share and the ICC as direct computation on the raw groups does', () => {
    const random = uniform(9);
    const groups: SampledGroupInput[] = [];
    for (let g = 0; g < 50; g += 1) {
      // Correlated lanes: a group-level level plus lane noise.
      const level = Math.floor(random() * 30);
      const laneCounts = Array.from({ length: 8 }, () => level + Math.floor(random() * 10));
      const laneFinishTicks = laneCounts.map((w) => 5 * w + Math.floor(random() * 3));
      groups.push({ laneCounts, laneFinishTicks, durationTicks: Math.max(...laneFinishTicks) + 2 });
    }
    const samples = createSampledGroups();
    for (const group of groups) recordSampledGroup(samples, group);
    const result = summarizeSampledGroups(samples, 8);

    const n = 8;
    const h = groups.map((g) => (n * g.durationTicks) / g.laneFinishTicks.reduce((s, c) => s + c, 0));
    const hc = groups.map((g) => (n * Math.max(...g.laneCounts)) / g.laneCounts.reduce((s, c) => s + c, 0));
    expect(result?.lossMeasured).toBeCloseTo(h.reduce((s, v) => s + v, 0) / h.length, 12);
    expect(result?.lossCounts).toBeCloseTo(hc.reduce((s, v) => s + v, 0) / hc.length, 12);
    const simt = groups.reduce((s, g) => s + n * g.durationTicks, 0);
    const mimd = groups.reduce((s, g) => s + g.laneFinishTicks.reduce((a, c) => a + c, 0), 0);
    expect(result?.laneIdleFraction).toBeCloseTo(1 - mimd / simt, 12);

    // One-way ANOVA ICC by two passes over the raw counts.
    const all = groups.flatMap((g) => g.laneCounts);
    const grand = all.reduce((s, v) => s + v, 0) / all.length;
    const means = groups.map((g) => g.laneCounts.reduce((s, v) => s + v, 0) / n);
    const msb = (n * means.reduce((s, m) => s + (m - grand) ** 2, 0)) / (groups.length - 1);
    const msw = groups.reduce((s, g, i) => s + g.laneCounts.reduce((a, w) => a + (w - (means[i] as number)) ** 2, 0), 0) / (groups.length * (n - 1));
    const icc = (msb - msw) / (msb + (n - 1) * msw);
    expect(result?.countIcc).toBeCloseTo(icc, 10);
    expect(icc).toBeGreaterThan(0.5); // the construction correlates lanes strongly
  });

  it('ICC of independent lanes is near 0 (within 4 SE of the large-sample value)', () => {
    const random = uniform(21);
    const samples = createSampledGroups();
    const groupsCount = 4000;
    for (let g = 0; g < groupsCount; g += 1) {
      const laneCounts = Array.from({ length: 16 }, () => Math.floor(random() * 50));
      recordSampledGroup(samples, { laneCounts, laneFinishTicks: laneCounts, durationTicks: Math.max(...laneCounts) });
    }
    const icc = summarizeSampledGroups(samples, 16)?.countIcc as number;
    // Large-sample SE of the ANOVA ICC at ρ = 0: √(2/(g·n·(n−1))).
    expect(Math.abs(icc)).toBeLessThan(4 * Math.sqrt(2 / (groupsCount * 16 * 15)));
  });

  it('counts invalid groups instead of throwing, and merging equals recording everything in one', () => {
    const random = uniform(3);
    const groups = Array.from({ length: 60 }, () => modelGroup(random, 16, { t: 10, delta: 5, overhead: 7 }, 3));
    const whole = createSampledGroups();
    const a = createSampledGroups();
    const b = createSampledGroups();
    groups.forEach((g, i) => {
      recordSampledGroup(whole, g);
      recordSampledGroup(i % 3 === 0 ? a : b, g);
    });
    for (const bad of [
      { laneCounts: [1, 2], laneFinishTicks: [1], durationTicks: 3 },
      { laneCounts: [1, 2], laneFinishTicks: [1, 2], durationTicks: -1 },
      { laneCounts: [1, -2], laneFinishTicks: [1, 2], durationTicks: 3 },
      { laneCounts: [1, 2], laneFinishTicks: [1, Number.NaN], durationTicks: 3 },
      { laneCounts: [], laneFinishTicks: [], durationTicks: 3 },
    ]) {
      recordSampledGroup(whole, bad);
      recordSampledGroup(b, bad);
    }
    expect(whole.invalidGroups).toBe(5);
    const merged = mergeSampledGroups(a, b);
    const left = summarizeSampledGroups(merged, 16);
    const right = summarizeSampledGroups(whole, 16);
    expect(left?.groups).toBe(60);
    expect(left?.invalidGroups).toBe(5);
    expect(left?.lossMeasured).toBeCloseTo(right?.lossMeasured as number, 12);
    expect(left?.countIcc).toBeCloseTo(right?.countIcc as number, 10);
    expect(left?.divergence?.deltaTicks).toBeCloseTo(right?.divergence?.deltaTicks as number, 8);
    expect(summarizeSampledGroups(createSampledGroups(), 16)).toBeUndefined();
  });

  it('reports no fit when the issued iterations never vary', () => {
    const samples = createSampledGroups();
    for (let g = 0; g < 10; g += 1) recordSampledGroup(samples, { laneCounts: [5, 5, 5, 5], laneFinishTicks: [50, 50, 50, 50], durationTicks: 51 + g });
    const result = summarizeSampledGroups(samples, 4);
    expect(result?.divergence).toBeUndefined();
    expect(result?.countIcc).toBeUndefined(); // no variation in counts at all
  });

  it('gives the locality-aware loss of the sampled groups as runs, as model/localityLoss computes it from the raw lanes', () => {
    const random = createSeededRandom(31);
    const groups = Array.from({ length: 300 }, () => {
      const level = 1 + random.nextInt(20);
      return Array.from({ length: 32 }, () => level + random.nextInt(4));
    });
    const samples = createSampledGroups();
    for (const laneCounts of groups) recordSampledGroup(samples, { laneCounts, laneFinishTicks: laneCounts.map((w) => 10 * w), durationTicks: 10 * Math.max(...laneCounts) });
    // Merging two halves gives the same sums (windows merge their samples).
    const [a, b] = [createSampledGroups(), createSampledGroups()];
    groups.forEach((laneCounts, i) => recordSampledGroup(i % 2 === 0 ? a : b, { laneCounts, laneFinishTicks: laneCounts.map((w) => 10 * w), durationTicks: 10 * Math.max(...laneCounts) }));
    const reference = localityLoss(groups, [1, 2, 4, 8, 16, 32]);
    for (const summary of [summarizeSampledGroups(samples, 32), summarizeSampledGroups(mergeSampledGroups(a, b), 32)]) {
      expect(summary?.locality?.map((row) => row.groupSize)).toEqual([1, 2, 4, 8, 16, 32]);
      for (const row of summary?.locality ?? []) {
        const expected = reference.rows.find((r) => r.groupSize === row.groupSize)!;
        expect(row.loss).toBeCloseTo(expected.lossContiguous.value, 10);
        expect(row.standardError).toBeCloseTo(expected.lossContiguous.standardError, 10);
      }
    }
  });
});

describe('block runs (two levels, docs/model.md §11a)', () => {
  it('gives the same values and standard errors as model/blockLoss on the raw blocks, also after merging halves', () => {
    const random = createSeededRandom(77);
    const runs = Array.from({ length: 250 }, () => {
      const level = 1 + random.nextInt(30);
      return Array.from({ length: 8 * 32 }, () => level + random.nextInt(1 + random.nextInt(10)));
    });
    const all = createSampledGroups();
    const [a, b] = [createSampledGroups(), createSampledGroups()];
    runs.forEach((run, i) => {
      recordSampledBlock(all, run, 32);
      recordSampledBlock(i % 2 === 0 ? a : b, run, 32);
    });
    const reference = blockLoss(runs, 32);
    for (const samples of [all, mergeSampledGroups(a, b)]) {
      const blocks = summarizeSampledGroups({ ...samples, groups: 1 }, 32)?.blocks;
      for (const key of ['warpLoss', 'warpInBlockLoss', 'blockLoss'] as const) {
        expect(blocks?.[key].value).toBeCloseTo(reference[key].value, 10);
        expect(blocks?.[key].standardError).toBeCloseTo(reference[key].standardError, 8);
      }
    }
  });

  it('counts a malformed block as invalid and leaves it out', () => {
    const samples = createSampledGroups();
    recordSampledBlock(samples, [1, 2, 3], 2);
    recordSampledBlock(samples, [1, -2], 2);
    expect(samples.invalidGroups).toBe(2);
    expect(samples.blocks).toBeUndefined();
  });
});

describe('recordSampledGroup locality sums (pairwise levels)', () => {
  /** The sums lane by lane per sub-group size, as model.md §11 defines them: the reference. */
  function referenceLocality(groups: readonly (readonly number[])[]): Record<string, { sum: number; sumSquares: number }> {
    const locality: Record<string, { sum: number; sumSquares: number }> = {};
    for (const counts of groups) {
      const n = counts.length;
      const subs: number[] = [];
      for (let sub = 1; sub < n; sub *= 2) if (n % sub === 0) subs.push(sub);
      subs.push(n);
      for (const sub of subs) {
        let a = 0;
        for (let start = 0; start < n; start += sub) {
          const part = counts.slice(start, start + sub);
          const total = part.reduce((s, w) => s + w, 0);
          a += total === 0 ? 1 : (sub * Math.max(0, ...part)) / total;
        }
        const entry = (locality[String(sub)] ??= { sum: 0, sumSquares: 0 });
        entry.sum += a;
        entry.sumSquares += a * a;
      }
    }
    return locality;
  }

  it('gives the reference sums bit for bit for group sizes 1..136 (odd, even, powers of two; sums in the pass over the counts up to 64 lanes, lane by lane above), zeros and huge counts included (totals beyond 2^53 too)', () => {
    const random = createSeededRandom(77);
    for (let n = 1; n <= 136; n += 1) {
      const groups = Array.from({ length: 5 }, (_, g) =>
        Array.from({ length: n }, () => (g === 0 ? 0 : g === 4 ? random.nextInt(2 ** 30) * 1024 : g === 3 ? 2 ** 50 + random.nextInt(1000) : random.nextInt(g * 7))),
      );
      const samples = createSampledGroups();
      for (const laneCounts of groups) recordSampledGroup(samples, { laneCounts, laneFinishTicks: laneCounts.map((w) => w + 1), durationTicks: 100 });
      const expected = referenceLocality(groups);
      expect(Object.keys(samples.locality!)).toEqual(Object.keys(expected));
      for (const [sub, sums] of Object.entries(expected)) {
        expect(Object.is(samples.locality![sub]!.sum, sums.sum), `n=${n} sub=${sub} sum`).toBe(true);
        expect(Object.is(samples.locality![sub]!.sumSquares, sums.sumSquares), `n=${n} sub=${sub} sumSquares`).toBe(true);
      }
    }
  });
});

describe('recordSampledGroup divergence moments (closed-form single loop)', () => {
  it('equals addDivergenceObservation of the stack emulator\'s observation bit for bit, spilling groups (> 16 distinct counts) included', () => {
    const random = createSeededRandom(91);
    for (let n = 1; n <= 64; n += 1) {
      const samples = createSampledGroups();
      const reference = createDivergenceMoments();
      for (let g = 0; g < 12; g += 1) {
        // g = 0: all counts 0; odd g: as many distinct counts as lanes (up to 64: spills), counts
        // above 4096 for g = 3, 7, 11 (distinct counts by sorting); even g: few distinct counts.
        const laneCounts = Array.from({ length: n }, (_, lane) =>
          g === 0 ? 0 : g % 2 === 1 ? lane * 3 + random.nextInt(3) + (g % 4 === 3 ? 1_000_000 : 0) : random.nextInt(g),
        );
        const durationTicks = random.nextInt(1_000_000) + random.nextFloat();
        recordSampledGroup(samples, { laneCounts, laneFinishTicks: laneCounts.map((w) => w), durationTicks });
        addDivergenceObservation(reference, divergenceObservationOfGroup(laneCounts, durationTicks));
      }
      expect(samples.divergence.count).toBe(reference.count);
      samples.divergence.means.forEach((value, i) => expect(Object.is(value, reference.means[i]), `n=${n} mean ${i}`).toBe(true));
      samples.divergence.comoments.forEach((value, i) => expect(Object.is(value, reference.comoments[i]), `n=${n} comoment ${i}`).toBe(true));
    }
  });
});

describe('recordSampledGroupColumns (the estimator\'s columns)', () => {
  /** Every number of the accumulation, -0 and NaN told apart (Object.is), keyed by its path. */
  function bits(value: unknown, path = '', out: Record<string, unknown> = {}): Record<string, unknown> {
    if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) bits(inner, `${path}.${key}`, out);
    } else {
      out[path] = Object.is(value, -0) ? '-0' : Number.isNaN(value) ? 'NaN' : value;
    }
    return out;
  }

  it('records each group of the columns as recordSampledGroup records it, bit for bit: valid, invalid, counts-only, huge counts, n = 1..70', () => {
    const random = createSeededRandom(5);
    for (let n = 1; n <= 70; n += 1) {
      const groups: SampledGroupInput[] = Array.from({ length: 14 }, (_, g) => {
        const laneCounts = Array.from({ length: n }, (_, lane) =>
          g === 0 ? 0 : g === 5 ? 2 ** 50 + random.nextInt(1000) : g === 6 ? 5000 + lane : g === 7 && lane === n - 1 ? -1 : g === 8 && lane === 0 ? 1.5 : random.nextInt(g * 5),
        );
        const laneFinishTicks = laneCounts.map((w, lane) => (g === 9 && lane === n - 1 ? -3 : g === 10 && lane === 0 ? Number.POSITIVE_INFINITY : g === 11 ? 0 : Math.abs(w) * 7 + random.nextInt(5)));
        const durationTicks = g === 12 ? Number.NaN : g === 13 ? -1 : g === 11 ? 0 : Math.max(...laneFinishTicks.map((c) => (Number.isFinite(c) ? c : 0))) + random.nextInt(9);
        return { laneCounts, laneFinishTicks, durationTicks, ...(g === 11 ? { clocked: false } : {}) };
      });
      const byObject = createSampledGroups();
      for (const group of groups) recordSampledGroup(byObject, group);
      // Columns longer than the groups need, with stale values past the end (reused scratch).
      const byColumns = createSampledGroups();
      const laneCounts = new Float64Array(groups.length * n + 9).fill(3);
      const laneFinishTicks = new Float64Array(groups.length * n + 9).fill(-1);
      groups.forEach((group, g) => {
        laneCounts.set(group.laneCounts, g * n);
        laneFinishTicks.set(group.laneFinishTicks, g * n);
      });
      recordSampledGroupColumns(byColumns, {
        groups: groups.length,
        lanes: n,
        laneCounts,
        laneFinishTicks,
        durationTicks: Float64Array.from([...groups.map((g) => g.durationTicks), 1, 2]),
        clocked: Uint8Array.from([...groups.map((g) => (g.clocked === false ? 0 : 1)), 1, 1]),
      });
      expect(bits(byColumns), `n=${n}`).toEqual(bits(byObject));
      expect(byObject.invalidGroups, `n=${n}`).toBe(6);
    }
  });

  it('counts a group whose lanes are not numbers as invalid (recordSampledGroup), as the checks of each lane always did', () => {
    const samples = createSampledGroups();
    recordSampledGroup(samples, { laneCounts: [1, '2' as unknown as number], laneFinishTicks: [1, 2], durationTicks: 3 });
    recordSampledGroup(samples, { laneCounts: [1, 2], laneFinishTicks: [1, 2n as unknown as number], durationTicks: 3 });
    recordSampledGroup(samples, { laneCounts: [1, 2], laneFinishTicks: [1, 2], durationTicks: '3' as unknown as number });
    recordSampledGroup(samples, { laneCounts: [1, 2], laneFinishTicks: [1, 2], durationTicks: 3 });
    expect(samples.invalidGroups).toBe(3);
    expect(samples.groups).toBe(1);
  });
});
