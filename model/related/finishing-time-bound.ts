/**
 * Finishing-time upper bound of a group of threads on one SM (docs/model.md §5, after Raravi &
 * Andersson), parameterised by the machine (threads per scheduling group, ALU lanes, LD/ST
 * units) and the program shape (pre ALU, rep_cnt × {LOAD…, ALU…}, STORE…).
 */

/** Functional unit an instruction needs. */
export type FinishingTimeInstruction = 'alu' | 'load' | 'store';

/** The SM as the bound sees it. */
export interface FinishingTimeMachine {
  /** Threads scheduled together as one group (16 in the published case). */
  readonly groupWidthThreads: number;
  /** ALU lanes (32). */
  readonly aluLanes: number;
  /** Load/store units (16). */
  readonly ldstUnits: number;
}

/** Program: `preAluInstructions` ALU, then rep_cnt × (loads then ALUs), then stores. */
export interface SubBlockShape {
  readonly preAluInstructions: number;
  readonly loadsPerSubBlock: number;
  readonly aluPerSubBlock: number;
  readonly storeInstructions: number;
}

/** The published machine: 16-thread groups, 32 ALU lanes, 16 LD/ST units. */
export const PUBLISHED_FINISHING_TIME_MACHINE: FinishingTimeMachine = Object.freeze({ groupWidthThreads: 16, aluLanes: 32, ldstUnits: 16 });

/** The published program: ALU, rep_cnt × {LOAD, LOAD, ALU}, STORE. */
export const PUBLISHED_SUB_BLOCK_SHAPE: SubBlockShape = Object.freeze({ preAluInstructions: 1, loadsPerSubBlock: 2, aluPerSubBlock: 1, storeInstructions: 1 });

/** Input of {@link finishingTimeBound} and the simulation. */
export interface FinishingTimeProblem {
  /** Threads on the SM, n ≥ 1. */
  readonly threads: number;
  /** Sub-block repetitions rep_cnt ≥ 1 (e.g. the maximum observed iteration count of a block). */
  readonly repCount: number;
  readonly machine?: FinishingTimeMachine;
  readonly shape?: SubBlockShape;
}

/** The bound and its parts, in cycles. */
export interface FinishingTimeBound {
  /** The bound: max(critical path, bottleneck terms). */
  readonly cycles: number;
  /** Scheduling groups ⌈n / groupWidth⌉. */
  readonly groups: number;
  /** 3·⌈n/16⌉ + 2 + 2·⌈n/16⌉·(rep_cnt − 1), only for the published machine and shape. */
  readonly publishedFormulaCycles: number | undefined;
  /** One group alone, in program order. */
  readonly criticalPathCycles: number;
  /** LD/ST busy time of all groups plus the ALU runs it cannot hide. */
  readonly memoryBottleneckCycles: number;
  /** ALU busy time of all groups plus the memory runs it cannot hide. */
  readonly aluBottleneckCycles: number;
  /**
   * True when the machine and shape lie in the domain where the cycle-level simulation of
   * fair work-conserving schedules was checked never to exceed the bound
   * (ldstUnits ≤ groupWidth, aluLanes ≥ ldstUnits, pre ALU ≤ 1, 2..3 loads and ≤ 1 ALU per
   * sub-block, one store). Outside it the formula is an unchecked generalisation.
   */
  readonly withinCheckedDomain: boolean;
}

function checkPositiveInteger(name: string, value: number, max: number, min = 1): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer ${min}..${max}, got ${String(value)}`);
  }
}

/**
 * Validates a problem and fills defaults (the published machine and shape).
 *
 * @throws RangeError for non-integer or out-of-range values
 * @example normaliseFinishingTimeProblem({ threads: 64, repCount: 3 }).machine.aluLanes // → 32
 */
export function normaliseFinishingTimeProblem(problem: FinishingTimeProblem): Required<FinishingTimeProblem> {
  const machine = problem.machine ?? PUBLISHED_FINISHING_TIME_MACHINE;
  const shape = problem.shape ?? PUBLISHED_SUB_BLOCK_SHAPE;
  checkPositiveInteger('threads', problem.threads, 1 << 20);
  checkPositiveInteger('repCount', problem.repCount, 1 << 20);
  checkPositiveInteger('groupWidthThreads', machine.groupWidthThreads, 1024);
  checkPositiveInteger('aluLanes', machine.aluLanes, 4096);
  checkPositiveInteger('ldstUnits', machine.ldstUnits, 4096);
  checkPositiveInteger('preAluInstructions', shape.preAluInstructions, 64, 0);
  checkPositiveInteger('loadsPerSubBlock', shape.loadsPerSubBlock, 64, 0);
  checkPositiveInteger('aluPerSubBlock', shape.aluPerSubBlock, 64, 0);
  checkPositiveInteger('storeInstructions', shape.storeInstructions, 64, 0);
  if (shape.loadsPerSubBlock + shape.aluPerSubBlock === 0) throw new RangeError('a sub-block needs at least one instruction, got 0 loads and 0 ALU');
  if (problem.repCount * (shape.loadsPerSubBlock + shape.aluPerSubBlock) > 1 << 22) {
    throw new RangeError(`program too long: repCount × sub-block length must be ≤ ${1 << 22}, got ${problem.repCount * (shape.loadsPerSubBlock + shape.aluPerSubBlock)}`);
  }
  return { threads: problem.threads, repCount: problem.repCount, machine, shape };
}

/**
 * The instruction sequence every thread runs: pre ALU, rep_cnt × (loads, ALUs), stores.
 *
 * @example finishingTimeProgram(PUBLISHED_SUB_BLOCK_SHAPE, 1) // → ['alu', 'load', 'load', 'alu', 'store']
 */
export function finishingTimeProgram(shape: SubBlockShape, repCount: number): FinishingTimeInstruction[] {
  const program: FinishingTimeInstruction[] = [];
  for (let i = 0; i < shape.preAluInstructions; i += 1) program.push('alu');
  for (let r = 0; r < repCount; r += 1) {
    for (let i = 0; i < shape.loadsPerSubBlock; i += 1) program.push('load');
    for (let i = 0; i < shape.aluPerSubBlock; i += 1) program.push('alu');
  }
  for (let i = 0; i < shape.storeInstructions; i += 1) program.push('store');
  return program;
}

type Unit = 'alu' | 'ldst';
const unitOf = (instruction: FinishingTimeInstruction): Unit => (instruction === 'alu' ? 'alu' : 'ldst');

/**
 * Upper bound on the finishing time (cycles) of n threads running the sub-block program on
 * one SM under a work-conserving scheduler that keeps groups within one sub-block of each other.
 *
 * With g = ⌈n/w⌉ groups, c_u = ⌈w/lanes_u⌉ cycles per group instruction on unit u and
 * τ_u = ⌈g/max(1, ⌊lanes_u/w⌋)⌉·c_u cycles for all groups to pass one instruction of u:
 * bound = max(critical path of one group, N_u·τ_u + exposed_u for u ∈ {LD/ST, ALU}), where N_u
 * counts the program's instructions on u and exposed_u is the single-group time of the
 * instructions on the other unit before the first, after the last, and between the last two
 * instructions on u. For the published machine and shape and n > 16 this is exactly
 * FT = 3·⌈n/16⌉ + 2 + 2·⌈n/16⌉·(rep_cnt − 1); for n ≤ 16 (one group) the published form is
 * below the strictly in-order time 3·rep_cnt + 2 when rep_cnt ≥ 2, and the bound returns the latter.
 *
 * @throws RangeError for invalid input (see normaliseFinishingTimeProblem)
 * @example finishingTimeBound({ threads: 64, repCount: 3 }).cycles // → 30
 */
export function finishingTimeBound(problem: FinishingTimeProblem): FinishingTimeBound {
  const { threads, repCount, machine, shape } = normaliseFinishingTimeProblem(problem);
  const width = machine.groupWidthThreads;
  const groups = Math.ceil(threads / width);
  const lanes: Record<Unit, number> = { alu: machine.aluLanes, ldst: machine.ldstUnits };
  const cyclesPerGroup = (u: Unit): number => Math.ceil(width / lanes[u]);
  const groupsPerCycle = (u: Unit): number => Math.max(1, Math.floor(lanes[u] / width));
  const allGroupsCycles = (u: Unit): number => Math.ceil(groups / groupsPerCycle(u)) * cyclesPerGroup(u);
  const program = finishingTimeProgram(shape, repCount);
  const criticalPathCycles = program.reduce((sum, instruction) => sum + cyclesPerGroup(unitOf(instruction)), 0);

  const bottleneck = (u: Unit): number => {
    const positions: number[] = [];
    program.forEach((instruction, index) => {
      if (unitOf(instruction) === u) positions.push(index);
    });
    if (positions.length === 0) return 0;
    const first = positions[0] as number;
    const last = positions[positions.length - 1] as number;
    const runCycles = (from: number, to: number): number => {
      let sum = 0;
      for (let i = from; i < to; i += 1) sum += cyclesPerGroup(unitOf(program[i] as FinishingTimeInstruction));
      return sum;
    };
    let exposed = runCycles(0, first) + runCycles(last + 1, program.length);
    if (positions.length > 1) exposed += runCycles((positions[positions.length - 2] as number) + 1, last);
    return positions.length * allGroupsCycles(u) + exposed;
  };
  const memoryBottleneckCycles = bottleneck('ldst');
  const aluBottleneckCycles = bottleneck('alu');
  const isPublished =
    machine.groupWidthThreads === 16 &&
    machine.aluLanes === 32 &&
    machine.ldstUnits === 16 &&
    shape.preAluInstructions === 1 &&
    shape.loadsPerSubBlock === 2 &&
    shape.aluPerSubBlock === 1 &&
    shape.storeInstructions === 1;
  const g16 = Math.ceil(threads / 16);
  const withinCheckedDomain =
    machine.ldstUnits <= machine.groupWidthThreads &&
    machine.aluLanes >= machine.ldstUnits &&
    shape.preAluInstructions <= 1 &&
    shape.loadsPerSubBlock >= 2 &&
    shape.loadsPerSubBlock <= 3 &&
    shape.aluPerSubBlock <= 1 &&
    shape.storeInstructions === 1;
  return {
    cycles: Math.max(criticalPathCycles, memoryBottleneckCycles, aluBottleneckCycles),
    groups,
    publishedFormulaCycles: isPublished ? 3 * g16 + 2 + 2 * g16 * (repCount - 1) : undefined,
    criticalPathCycles,
    memoryBottleneckCycles,
    aluBottleneckCycles,
    withinCheckedDomain,
  };
}
