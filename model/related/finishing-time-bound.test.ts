import { describe, expect, it } from 'vitest';
import { finishingTimeBound, finishingTimeProgram, PUBLISHED_SUB_BLOCK_SHAPE } from './finishing-time-bound.ts';
import { simulateFinishingTime, type FinishingTimePolicy } from './finishing-time-simulation.ts';
import { mulberry32 } from '../distributions/random.ts';

// Published closed form (docs/model.md §5), evaluated here on its own.
const published = (n: number, rep: number) => 3 * Math.ceil(n / 16) + 2 + 2 * Math.ceil(n / 16) * (rep - 1);
const policies: FinishingTimePolicy[] = ['least-progress', 'round-robin', 'greedy', 'random'];

describe('finishingTimeBound', () => {
  it('reproduces the published worked examples with 64 threads', () => {
    // 64 threads = 4 groups of 16: one repetition 3·4 + 2 = 14 cycles; three repetitions 14 + 2·4·2 = 30.
    expect(published(64, 1)).toBe(14);
    expect(published(64, 3)).toBe(30);
    expect(finishingTimeBound({ threads: 64, repCount: 1 }).cycles).toBe(14);
    expect(finishingTimeBound({ threads: 64, repCount: 2 }).cycles).toBe(22);
    expect(finishingTimeBound({ threads: 64, repCount: 3 }).cycles).toBe(30);
    expect(finishingTimeBound({ threads: 64, repCount: 3 }).publishedFormulaCycles).toBe(30);
  });
  it('equals the published closed form for every n > 16 on the published machine', () => {
    for (let n = 17; n <= 300; n += 1) {
      for (let rep = 1; rep <= 8; rep += 1) expect(finishingTimeBound({ threads: n, repCount: rep }).cycles).toBe(published(n, rep));
    }
  });
  it('uses the in-order time of a single group, which exceeds the published form for rep_cnt ≥ 2', () => {
    // One group: ALU + rep·(LOAD, LOAD, ALU) + STORE strictly in order = 3·rep + 2 cycles.
    for (let rep = 1; rep <= 6; rep += 1) {
      const b = finishingTimeBound({ threads: 16, repCount: rep });
      expect(b.cycles).toBe(Math.max(3 * rep + 2, published(16, rep)));
      expect(simulateFinishingTime({ threads: 16, repCount: rep }).cycles).toBe(3 * rep + 2);
    }
  });
  it('builds the published program', () => {
    expect(finishingTimeProgram(PUBLISHED_SUB_BLOCK_SHAPE, 2)).toEqual(['alu', 'load', 'load', 'alu', 'load', 'load', 'alu', 'store']);
  });
  it('rejects bad input', () => {
    expect(() => finishingTimeBound({ threads: 0, repCount: 1 })).toThrow(/threads must be an integer/);
    expect(() => finishingTimeBound({ threads: 4, repCount: 1.5 })).toThrow(/repCount/);
  });
});

describe('simulateFinishingTime', () => {
  it('never exceeds the bound on the published machine (all policies, sub-block fairness)', () => {
    const random = mulberry32(3);
    let tight = 0;
    for (let n = 1; n <= 160; n += 3) {
      for (let rep = 1; rep <= 5; rep += 1) {
        const bound = finishingTimeBound({ threads: n, repCount: rep }).cycles;
        for (const policy of policies) {
          const simulated = simulateFinishingTime({ threads: n, repCount: rep }, { policy, random }).cycles;
          expect(simulated).toBeLessThanOrEqual(bound);
          if (simulated === bound) tight += 1;
        }
      }
    }
    expect(tight).toBeGreaterThan(0); // the bound is attained, not just loose
  });
  it('never exceeds the bound inside the checked domain of other machines and shapes', () => {
    const random = mulberry32(11);
    const pick = <T,>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T;
    for (let trial = 0; trial < 150; trial += 1) {
      const groupWidthThreads = pick([8, 16, 32]);
      const ldstUnits = pick([8, 16, 32].filter((v) => v <= groupWidthThreads));
      const aluLanes = pick([8, 16, 32, 64].filter((v) => v >= ldstUnits));
      const shape = { preAluInstructions: pick([0, 1]), loadsPerSubBlock: pick([2, 3]), aluPerSubBlock: pick([0, 1]), storeInstructions: 1 };
      const problem = { threads: 1 + Math.floor(random() * 160), repCount: 1 + Math.floor(random() * 5), machine: { groupWidthThreads, aluLanes, ldstUnits }, shape };
      const bound = finishingTimeBound(problem);
      expect(bound.withinCheckedDomain).toBe(true);
      for (const policy of policies) {
        expect(simulateFinishingTime(problem, { policy, random }).cycles, JSON.stringify({ problem, policy })).toBeLessThanOrEqual(bound.cycles);
      }
    }
  });
  it('can exceed the bound without fairness (why the fairness assumption matters)', () => {
    let exceeded = false;
    for (let n = 17; n <= 64 && !exceeded; n += 1) {
      for (let rep = 2; rep <= 5 && !exceeded; rep += 1) {
        const s = simulateFinishingTime({ threads: n, repCount: rep }, { policy: 'greedy', fairness: 'none' }).cycles;
        if (s > finishingTimeBound({ threads: n, repCount: rep }).cycles) exceeded = true;
      }
    }
    expect(exceeded).toBe(true);
  });
  it('keeps every unit within its lanes (busy lane-cycles equal the work)', () => {
    const s = simulateFinishingTime({ threads: 50, repCount: 3 });
    // 50 threads run 4 ALU and 7 memory instructions each.
    expect(s.busyLaneCycles).toEqual({ alu: 50 * 4, ldst: 50 * 7 });
  });
  it('needs a generator for the random policy', () => {
    expect(() => simulateFinishingTime({ threads: 4, repCount: 1 }, { policy: 'random' })).toThrow(/random/);
  });
});
