import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { emulateReconvergenceStack, singleLoopSpills, type LoopSpec } from './reconvergence-stack.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { divergencePatternBounds } from './divergence-cost.ts';

// Independent reference: an instruction-level SIMT machine with a GPGPU-Sim style PDOM stack
// (entries {pc, rpc, mask}); SSY pushes the loop-exit token, a diverging loop branch sets the top
// entry's pc to the reconvergence point and pushes the continuing lanes. Spills are tracked with
// explicit arrays standing for the on-chip stack and memory.
type Instruction =
  | { op: 'ssy'; target: number }
  | { op: 'init'; loop: number }
  | { op: 'exit-if-done'; loop: number; target: number }
  | { op: 'count' }
  | { op: 'inc'; loop: number }
  | { op: 'jump'; target: number }
  | { op: 'halt' };

function compile(loops: readonly LoopSpec[], program: Instruction[], boundsOf: (readonly number[])[]): void {
  for (const loop of loops) {
    const id = boundsOf.length;
    boundsOf.push(loop.bounds);
    const ssy = program.length;
    program.push({ op: 'ssy', target: -1 });
    program.push({ op: 'init', loop: id });
    const head = program.length;
    program.push({ op: 'exit-if-done', loop: id, target: -1 });
    program.push({ op: 'count' });
    compile(loop.body ?? [], program, boundsOf);
    program.push({ op: 'inc', loop: id });
    program.push({ op: 'jump', target: head });
    const exit = program.length;
    (program[ssy] as { target: number }).target = exit;
    (program[head] as { target: number }).target = exit;
  }
}

function bruteForce(loops: readonly LoopSpec[], physicalEntries = 16, chunk = 4) {
  const program: Instruction[] = [];
  const boundsOf: (readonly number[])[] = [];
  compile(loops, program, boundsOf);
  program.push({ op: 'halt' });
  const lanes = (loops[0] as LoopSpec).bounds.length;
  const counters = boundsOf.map(() => new Array<number>(lanes).fill(0));
  const stack: { pc: number; rpc: number; mask: boolean[] }[] = [{ pc: 0, rpc: -1, mask: new Array<boolean>(lanes).fill(true) }];
  const onChip: number[] = [];
  const inMemory: number[] = [];
  const r = { pushes: 0, pops: 0, maxDepth: 0, divergingExits: 0, issuedIterations: 0, spills: 0, reloads: 0 };
  const push = (entry: { pc: number; rpc: number; mask: boolean[] }) => {
    stack.push(entry);
    r.pushes += 1;
    if (onChip.length === physicalEntries) {
      inMemory.push(...onChip.splice(0, chunk));
      r.spills += 1;
    }
    onChip.push(stack.length);
    r.maxDepth = Math.max(r.maxDepth, stack.length - 1);
  };
  const pop = () => {
    stack.pop();
    r.pops += 1;
    onChip.pop();
    if (onChip.length === 0 && inMemory.length > 0) {
      onChip.push(...inMemory.splice(inMemory.length - chunk, chunk));
      r.reloads += 1;
    }
  };
  for (let steps = 0; steps < 1e7; steps += 1) {
    const top = stack[stack.length - 1] as { pc: number; rpc: number; mask: boolean[] };
    if (top.pc === top.rpc) {
      pop();
      continue;
    }
    const ins = program[top.pc] as Instruction;
    const active = top.mask.map((m, i) => (m ? i : -1)).filter((i) => i >= 0);
    switch (ins.op) {
      case 'halt':
        return r;
      case 'ssy': {
        const next = top.pc + 1;
        top.pc = ins.target;
        push({ pc: next, rpc: ins.target, mask: [...top.mask] });
        break;
      }
      case 'init':
        for (const i of active) (counters[ins.loop] as number[])[i] = 0;
        top.pc += 1;
        break;
      case 'exit-if-done': {
        const done = active.filter((i) => ((counters[ins.loop] as number[])[i] as number) >= ((boundsOf[ins.loop] as number[])[i] as number));
        if (done.length === 0) top.pc += 1;
        else if (done.length === active.length) top.pc = ins.target;
        else {
          r.divergingExits += 1;
          const stay = top.mask.map((m, i) => m && !done.includes(i));
          const next = top.pc + 1;
          top.pc = ins.target; // the reconvergence point of the loop branch is the loop exit
          push({ pc: next, rpc: ins.target, mask: stay });
        }
        break;
      }
      case 'count':
        r.issuedIterations += 1;
        top.pc += 1;
        break;
      case 'inc':
        for (const i of active) (counters[ins.loop] as number[])[i] = ((counters[ins.loop] as number[])[i] as number) + 1;
        top.pc += 1;
        break;
      case 'jump':
        top.pc = ins.target;
        break;
    }
  }
  throw new Error('brute force did not halt');
}

describe('emulateReconvergenceStack', () => {
  describe('single loop, hand-worked cases', () => {
    it('counts one entry token and no divergence when all lanes agree', () => {
      expect(emulateReconvergenceStack({ bounds: [5, 5, 5, 5] })).toEqual({
        pushes: 1, pops: 1, maxDepth: 1, divergingExits: 0, issuedIterations: 5, spills: 0, reloads: 0,
      });
    });
    it('pushes one token per distinct exit below the maximum', () => {
      // bounds 4,4,3,2: lanes leave at t=2 (lane 3) and t=3 (lane 2) while others stay → 2 diverging exits.
      expect(emulateReconvergenceStack({ bounds: [4, 4, 3, 2] })).toEqual({
        pushes: 3, pops: 3, maxDepth: 3, divergingExits: 2, issuedIterations: 4, spills: 0, reloads: 0,
      });
    });
    it('counts lanes sharing an exit once and a zero-trip lane as an exit at t = 0', () => {
      const trace = emulateReconvergenceStack({ bounds: [0, 3, 3, 1, 1] });
      expect(trace.divergingExits).toBe(2);
      expect(trace.maxDepth).toBe(3);
    });
    it('spills for the first time when the 17th token is pushed, then every 4 more', () => {
      // k diverging exits → 1 + k tokens; spills = ceil((1 + k − 16)/4) for 1 + k > 16.
      const expected = (k: number) => (1 + k > 16 ? Math.ceil((1 + k - 16) / 4) : 0);
      for (let k = 0; k <= 31; k += 1) {
        const trace = emulateReconvergenceStack({ bounds: divergencePatternBounds(k) });
        expect(trace.divergingExits).toBe(k);
        expect(trace.spills).toBe(expected(k));
        expect(trace.reloads).toBe(trace.spills);
      }
      expect(emulateReconvergenceStack({ bounds: divergencePatternBounds(15) }).spills).toBe(0);
      expect(emulateReconvergenceStack({ bounds: divergencePatternBounds(16) }).spills).toBe(1);
      expect(emulateReconvergenceStack({ bounds: divergencePatternBounds(31) }).spills).toBe(4);
    });
    it('adds baseDepth to the depth and spills earlier', () => {
      const trace = emulateReconvergenceStack({ bounds: divergencePatternBounds(12) }, { baseDepth: 4 });
      expect(trace.maxDepth).toBe(17);
      expect(trace.spills).toBe(1);
    });
  });

  describe('nested loops, hand-worked case', () => {
    it('re-pushes the inner tokens in every outer iteration', () => {
      // outer bounds [2,2,1], inner bounds [3,2,2]:
      // t=0: lanes {0,1,2}: inner entry + 1 diverging exit (lane 0 stays past 2) → 2 pushes;
      // outer exit at t=1 (lane 2 leaves, others stay) → 1 push; t=1: lanes {0,1}: inner 2 pushes.
      const trace = emulateReconvergenceStack({ bounds: [2, 2, 1], body: [{ bounds: [3, 2, 2] }] });
      expect(trace).toEqual({ pushes: 1 + 2 + 1 + 2, pops: 6, maxDepth: 4, divergingExits: 3, issuedIterations: 2 + 3 + 3, spills: 0, reloads: 0 });
    });
  });

  describe('agreement with an instruction-level PDOM simulation', () => {
    const bounds = (lanes: number) => fc.array(fc.integer({ min: 0, max: 40 }), { minLength: lanes, maxLength: lanes });
    it('matches on random single loops of 1..32 lanes', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 32 }).chain((lanes) => bounds(lanes)), (b) => {
          expect(emulateReconvergenceStack({ bounds: b })).toEqual(bruteForce([{ bounds: b }]));
        }),
        { numRuns: 200, seed: 9 },
      );
    });
    it('matches on random nests and sequences (deep enough to spill)', () => {
      const nest = fc.integer({ min: 1, max: 32 }).chain((lanes) =>
        fc.record({
          outer: fc.array(fc.integer({ min: 0, max: 12 }), { minLength: lanes, maxLength: lanes }),
          inner: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: lanes, maxLength: lanes }),
          after: fc.array(fc.integer({ min: 0, max: 40 }), { minLength: lanes, maxLength: lanes }),
        }),
      );
      fc.assert(
        fc.property(nest, ({ outer, inner, after }) => {
          const loops: LoopSpec[] = [{ bounds: outer, body: [{ bounds: inner }, { bounds: after }] }, { bounds: after }];
          expect(emulateReconvergenceStack(loops)).toEqual(bruteForce(loops));
        }),
        { numRuns: 150, seed: 10 },
      );
    });
    it('matches on the nested micro-benchmark patterns k = 0..31', () => {
      for (let k = 0; k <= 31; k += 1) {
        const b = divergencePatternBounds(k);
        const loops = [{ bounds: b, body: [{ bounds: b }] }];
        expect(emulateReconvergenceStack(loops)).toEqual(bruteForce(loops));
      }
    });
  });

  describe('input checks', () => {
    it('rejects ragged, negative and fractional bounds', () => {
      expect(() => emulateReconvergenceStack({ bounds: [] })).toThrow(RangeError);
      expect(() => emulateReconvergenceStack({ bounds: [1, -1] })).toThrow(/non-negative integer/);
      expect(() => emulateReconvergenceStack({ bounds: [1, 1.5] })).toThrow(RangeError);
      expect(() => emulateReconvergenceStack({ bounds: [1, 2], body: [{ bounds: [1] }] })).toThrow(/one trip count per lane/);
      expect(() => emulateReconvergenceStack({ bounds: [1] }, { spillChunkEntries: 20 })).toThrow(/spillChunkEntries/);
    });
  });
});

describe('emulateReconvergenceStack single-loop fast path', () => {
  it('equals the iteration-by-iteration emulation (same loop with an empty body) on random bounds and stack sizes', () => {
    const source = createSeededRandom(77);
    for (let trial = 0; trial < 400; trial += 1) {
      const lanes = 1 + source.nextInt(32);
      const spread = 1 + source.nextInt(64);
      const bounds = Array.from({ length: lanes }, () => source.nextInt(spread));
      const physicalEntries = 2 + source.nextInt(16);
      const options = { physicalEntries, spillChunkEntries: 1 + source.nextInt(physicalEntries), baseDepth: source.nextInt(20) };
      expect(emulateReconvergenceStack({ bounds }, options), JSON.stringify({ bounds, options })).toEqual(emulateReconvergenceStack({ bounds, body: [] }, options));
    }
  });
});

describe('singleLoopSpills', () => {
  it('gives the emulator\'s spills of a single loop with that many pushes, for any stack options', () => {
    for (const [physicalEntries, spillChunkEntries, baseDepth] of [[16, 4, 0], [16, 4, 13], [16, 4, 40], [4, 4, 0], [5, 2, 3], [1, 1, 0], [1, 1, 2]] as const) {
      for (let distinct = 1; distinct <= 70; distinct += 1) {
        const bounds = Array.from({ length: distinct }, (_, lane) => lane);
        const trace = emulateReconvergenceStack({ bounds }, { physicalEntries, spillChunkEntries, baseDepth });
        expect(singleLoopSpills(trace.pushes, physicalEntries, spillChunkEntries, baseDepth), `${physicalEntries}/${spillChunkEntries}/${baseDepth} ${distinct}`).toBe(trace.spills);
      }
    }
    expect(singleLoopSpills(16)).toBe(0);
    expect(singleLoopSpills(17)).toBe(1);
    expect(singleLoopSpills(21)).toBe(2);
  });
});
