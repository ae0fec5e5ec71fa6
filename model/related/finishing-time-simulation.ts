/**
 * Cycle-level simulation of groups of threads sharing an SM's ALU lanes and LD/ST units,
 * used to check the finishing-time bound (docs/model.md §5).
 */
import { finishingTimeProgram, normaliseFinishingTimeProblem, type FinishingTimeInstruction, type FinishingTimeProblem } from './finishing-time-bound.ts';

/**
 * Which ready group a unit serves first when more are ready than it can take:
 * `least-progress` (fewest instructions done), `round-robin` (longest since last issue),
 * `greedy` (most instructions done: deliberately unfair), `random` (uniform, needs `random`).
 */
export type FinishingTimePolicy = 'least-progress' | 'round-robin' | 'greedy' | 'random';

/** Options of {@link simulateFinishingTime}. */
export interface FinishingTimeSimulationOptions {
  readonly policy?: FinishingTimePolicy;
  /** Uniform [0, 1) generator for the `random` policy (pass a seeded one). */
  readonly random?: () => number;
  /**
   * `sub-block` (default): a group may not issue an instruction of sub-block j while another
   * unfinished group has not yet issued any instruction of sub-block j − 1 (groups stay within
   * one sub-block of each other); `none`: no fairness constraint.
   */
  readonly fairness?: 'sub-block' | 'none';
}

/** Simulated outcome. */
export interface FinishingTimeSimulation {
  /** Cycle in which the last instruction of the last group completed (cycles counted from 1). */
  readonly cycles: number;
  readonly groups: number;
  /** Lane-cycles used per unit. */
  readonly busyLaneCycles: { readonly alu: number; readonly ldst: number };
}

/**
 * Simulates the program of {@link finishingTimeBound} cycle by cycle. Each group runs its
 * instructions strictly in order; an instruction of a group of m threads on a unit with L
 * lanes occupies min(m, L) lanes for ⌈m/L⌉ cycles and the group's next instruction may start
 * in the cycle after. Every cycle each unit takes ready groups in policy order while lanes
 * remain (work-conserving). Cost O(cycles × groups).
 *
 * @throws RangeError for invalid problems, or `random` policy without a generator
 * @example simulateFinishingTime({ threads: 64, repCount: 3 }, { policy: 'round-robin' }).cycles // ≤ 30
 */
export function simulateFinishingTime(problem: FinishingTimeProblem, options: FinishingTimeSimulationOptions = {}): FinishingTimeSimulation {
  const { threads, repCount, machine, shape } = normaliseFinishingTimeProblem(problem);
  const policy = options.policy ?? 'least-progress';
  const fair = (options.fairness ?? 'sub-block') === 'sub-block';
  if (policy === 'random' && options.random === undefined) throw new RangeError("policy 'random' needs options.random (a seeded generator)");
  const program = finishingTimeProgram(shape, repCount);
  const width = machine.groupWidthThreads;
  const groups = Math.ceil(threads / width);
  if (groups * program.length > 1 << 24) throw new RangeError(`simulation too large: groups × program length must be ≤ ${1 << 24}, got ${groups * program.length}`);
  const subBlockLength = shape.loadsPerSubBlock + shape.aluPerSubBlock;
  const blockOf = (pc: number): number =>
    pc < shape.preAluInstructions ? 0 : pc < shape.preAluInstructions + repCount * subBlockLength ? 1 + Math.floor((pc - shape.preAluInstructions) / subBlockLength) : repCount + 1;
  const sizeOf = (group: number): number => Math.min(width, threads - group * width);
  const pc = new Array<number>(groups).fill(0);
  const readyAt = new Array<number>(groups).fill(1);
  const lastIssue = new Array<number>(groups).fill(0);
  const busy: Record<'alu' | 'ldst', Map<number, number>> = { alu: new Map(), ldst: new Map() };
  const used = { alu: 0, ldst: 0 };
  let finished = 0;
  let finishCycle = 0;
  const slowestBlock = (): number => {
    let slowest = Number.POSITIVE_INFINITY;
    for (let g = 0; g < groups; g += 1) if ((pc[g] as number) < program.length) slowest = Math.min(slowest, blockOf(pc[g] as number));
    return slowest;
  };
  const unitOf = (instruction: FinishingTimeInstruction): 'alu' | 'ldst' => (instruction === 'alu' ? 'alu' : 'ldst');
  for (let cycle = 1; finished < groups; cycle += 1) {
    busy.alu.delete(cycle - 1);
    busy.ldst.delete(cycle - 1);
    for (const unit of ['alu', 'ldst'] as const) {
      const capacity = unit === 'alu' ? machine.aluLanes : machine.ldstUnits;
      const ready: number[] = [];
      for (let g = 0; g < groups; g += 1) {
        const at = pc[g] as number;
        if (at >= program.length || (readyAt[g] as number) > cycle || unitOf(program[at] as FinishingTimeInstruction) !== unit) continue;
        ready.push(g);
      }
      if (policy === 'least-progress') ready.sort((a, b) => (pc[a] as number) - (pc[b] as number) || (lastIssue[a] as number) - (lastIssue[b] as number) || a - b);
      else if (policy === 'round-robin') ready.sort((a, b) => (lastIssue[a] as number) - (lastIssue[b] as number) || a - b);
      else if (policy === 'greedy') ready.sort((a, b) => (pc[b] as number) - (pc[a] as number) || a - b);
      else {
        const random = options.random as () => number;
        for (let i = ready.length - 1; i > 0; i -= 1) {
          const j = Math.floor(random() * (i + 1));
          [ready[i], ready[j]] = [ready[j] as number, ready[i] as number];
        }
      }
      for (const g of ready) {
        // Fairness is judged at issue time, so an instruction issued earlier in this cycle
        // (units are served ALU first, then LD/ST) already counts as progress.
        if (fair && blockOf(pc[g] as number) > slowestBlock() + 1) continue;
        const size = sizeOf(g);
        const need = Math.min(size, capacity);
        const duration = Math.ceil(size / capacity);
        let fits = true;
        for (let c = cycle; c < cycle + duration && fits; c += 1) if ((busy[unit].get(c) ?? 0) + need > capacity) fits = false;
        if (!fits) continue;
        for (let c = cycle; c < cycle + duration; c += 1) busy[unit].set(c, (busy[unit].get(c) ?? 0) + need);
        used[unit] += need * duration;
        pc[g] = (pc[g] as number) + 1;
        readyAt[g] = cycle + duration;
        lastIssue[g] = cycle;
        if (pc[g] === program.length) {
          finished += 1;
          finishCycle = Math.max(finishCycle, cycle + duration - 1);
        }
      }
    }
  }
  return { cycles: finishCycle, groups, busyLaneCycles: { alu: used.alu, ldst: used.ldst } };
}
