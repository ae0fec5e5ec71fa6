import type { Command } from 'commander';
import {
  PUBLISHED_FINISHING_TIME_MACHINE,
  PUBLISHED_SUB_BLOCK_SHAPE,
  finishingTimeBound,
  simulateFinishingTime,
  type FinishingTimeProblem,
} from '../../model/index.ts';
import { histogramBinRange, streamIdOf } from '../../protocol/index.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, frameFileJson, readFrameFile, type FrameFileRead } from '../frame-file.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { parseNumberOption } from './numeric-options.ts';

interface BoundFlags {
  threads: string;
  repCnt?: string;
  frame?: string;
  groupWidth?: string;
  aluLanes?: string;
  ldstUnits?: string;
  preAlu?: string;
  loads?: string;
  aluPerSubBlock?: string;
  stores?: string;
  simulate?: boolean;
  json?: boolean;
  acceptDamage?: boolean;
}

/**
 * Largest iteration count per stream seen in a frame file (histogram bins give their upper end).
 * Damaged stretches are skipped and said on stderr (cli/frame-file.ts); `read` counts them.
 */
function maxCountsOfFrameFile(file: string): { read: FrameFileRead; counts: Map<string, { maxCount: number; fromHistogram: boolean }> } {
  const read = readFrameFile(file, `--frame file '${file}'`);
  const result = new Map<string, { maxCount: number; fromHistogram: boolean }>();
  for (const frame of read.frames) {
    const id = streamIdOf(frame);
    const entry = result.get(id) ?? { maxCount: 0, fromHistogram: false };
    if (frame.type === 'group-samples') {
      for (const group of frame.groups) for (const c of group.laneCounts) entry.maxCount = Math.max(entry.maxCount, c);
    } else {
      for (const { bin } of frame.histogram) {
        const high = histogramBinRange(bin).high;
        if (high > entry.maxCount) {
          entry.maxCount = high;
          entry.fromHistogram = bin >= 1024;
        }
      }
    }
    result.set(id, entry);
  }
  if (result.size === 0) throw new UsageError(`frame file '${file}' holds no frames`);
  return { read, counts: result };
}

function describe(problem: Required<Pick<FinishingTimeProblem, 'threads' | 'repCount'>> & FinishingTimeProblem, simulate: boolean) {
  const bound = finishingTimeBound(problem);
  const simulated = simulate
    ? Math.max(...(['least-progress', 'round-robin', 'greedy'] as const).map((policy) => simulateFinishingTime(problem, { policy }).cycles))
    : undefined;
  return { threads: problem.threads, repCount: problem.repCount, ...bound, simulatedWorstCycles: simulated };
}

/** The flags of `warpwatch bound` that apply to some inputs only. */
export const BOUND_FLAG_RULES: readonly FlagRule<{ readonly frame: boolean }>[] = [{ flag: ACCEPT_DAMAGE_FLAG, applies: (c) => c.frame, only: '--frame' }];

function runBound(flags: BoundFlags, command: Command): void {
  rejectFlagsThatDoNotApply(command, { frame: flags.frame !== undefined }, BOUND_FLAG_RULES);
  const threads = parseNumberOption('--threads', flags.threads, { min: 1, max: 1 << 20, integer: true });
  const machine = {
    groupWidthThreads: flags.groupWidth === undefined ? PUBLISHED_FINISHING_TIME_MACHINE.groupWidthThreads : parseNumberOption('--group-width', flags.groupWidth, { min: 1, max: 1024, integer: true }),
    aluLanes: flags.aluLanes === undefined ? PUBLISHED_FINISHING_TIME_MACHINE.aluLanes : parseNumberOption('--alu-lanes', flags.aluLanes, { min: 1, max: 4096, integer: true }),
    ldstUnits: flags.ldstUnits === undefined ? PUBLISHED_FINISHING_TIME_MACHINE.ldstUnits : parseNumberOption('--ldst-units', flags.ldstUnits, { min: 1, max: 4096, integer: true }),
  };
  const count = (flag: string, text: string | undefined, fallback: number) => (text === undefined ? fallback : parseNumberOption(flag, text, { min: 0, max: 64, integer: true }));
  const shape = {
    preAluInstructions: count('--pre-alu', flags.preAlu, PUBLISHED_SUB_BLOCK_SHAPE.preAluInstructions),
    loadsPerSubBlock: count('--loads', flags.loads, PUBLISHED_SUB_BLOCK_SHAPE.loadsPerSubBlock),
    aluPerSubBlock: count('--alu-per-sub-block', flags.aluPerSubBlock, PUBLISHED_SUB_BLOCK_SHAPE.aluPerSubBlock),
    storeInstructions: count('--stores', flags.stores, PUBLISHED_SUB_BLOCK_SHAPE.storeInstructions),
  };
  if ((flags.repCnt === undefined) === (flags.frame === undefined)) throw new UsageError('bound needs exactly one of --rep-cnt N or --frame FILE');
  let frameFile: FrameFileRead | undefined;
  const rows: { stream?: string; maxObservedCount?: number; fromHistogram?: boolean; result: ReturnType<typeof describe> }[] = [];
  if (flags.repCnt !== undefined) {
    const repCount = parseNumberOption('--rep-cnt', flags.repCnt, { min: 1, max: 1 << 20, integer: true });
    rows.push({ result: describe({ threads, repCount, machine, shape }, flags.simulate === true) });
  } else {
    const { read, counts } = maxCountsOfFrameFile(flags.frame as string);
    frameFile = read;
    for (const [stream, { maxCount, fromHistogram }] of counts) {
      // rep_cnt = the maximum observed iteration count (at least one sub-block).
      rows.push({ stream, maxObservedCount: maxCount, fromHistogram, result: describe({ threads, repCount: Math.max(1, maxCount), machine, shape }, flags.simulate === true) });
    }
  }
  if (flags.json === true) {
    const input = frameFile === undefined ? {} : { input: frameFileJson(frameFile) };
    process.stdout.write(`${JSON.stringify({ machine, shape, ...input, bounds: rows.map((r) => ({ ...(r.stream === undefined ? {} : { stream: r.stream, maxObservedCount: r.maxObservedCount, maxFromHistogramBin: r.fromHistogram }), ...r.result })) }, null, 2)}\n`);
    if (frameFile !== undefined) failOnFrameFileDamage([frameFile], flags.acceptDamage === true);
    return;
  }
  const lines = [
    `finishing-time bound (groups of ${machine.groupWidthThreads} threads, ${machine.aluLanes} ALU lanes, ${machine.ldstUnits} LD/ST units; program ${shape.preAluInstructions} ALU, rep_cnt × {${shape.loadsPerSubBlock} LOAD, ${shape.aluPerSubBlock} ALU}, ${shape.storeInstructions} STORE)`,
  ];
  for (const row of rows) {
    const r = row.result;
    const head = row.stream === undefined ? '' : `${row.stream}: max observed count ${row.maxObservedCount}${row.fromHistogram ? ' (upper end of its histogram bin)' : ''} → `;
    lines.push(`  ${head}n=${r.threads}, rep_cnt=${r.repCount}: FT ≤ ${r.cycles} cycles (${r.groups} group${r.groups === 1 ? "" : "s"})`);
    if (r.publishedFormulaCycles !== undefined && r.publishedFormulaCycles !== r.cycles) {
      lines.push(`    published form 3⌈n/16⌉+2+2⌈n/16⌉(rep_cnt−1) = ${r.publishedFormulaCycles} is below one group's in-order time ${r.criticalPathCycles}; the bound uses the latter`);
    }
    if (!r.withinCheckedDomain) lines.push('    note: machine/shape outside the domain checked against the simulation; the bound is an unchecked generalisation');
    if (r.simulatedWorstCycles !== undefined) lines.push(`    simulated (worst of least-progress, round-robin, greedy): ${r.simulatedWorstCycles} cycles`);
  }
  process.stdout.write(lines.join('\n') + '\n');
  // A bound from a damaged file may miss the largest count: exit 1 unless accepted.
  if (frameFile !== undefined) failOnFrameFileDamage([frameFile], flags.acceptDamage === true);
}

/**
 * Registers `warpwatch bound` (docs/model.md §5).
 *
 * @example registerBoundCommand(program)
 */
export function registerBoundCommand(program: Command): void {
  program
    .command('bound')
    .description('Finishing-time upper bound of n threads on one SM (Raravi & Andersson, docs/model.md §5); rep_cnt given or taken as the maximum observed count of a frame file.')
    .requiredOption('--threads <n>', 'threads on the SM')
    .option('--rep-cnt <n>', 'sub-block repetitions')
    .option('--frame <file>', 'frame file: rep_cnt = maximum observed iteration count, per stream')
    .option('--group-width <n>', 'threads per scheduling group (default 16)')
    .option('--alu-lanes <n>', 'ALU lanes (default 32)')
    .option('--ldst-units <n>', 'load/store units (default 16)')
    .option('--pre-alu <n>', 'ALU instructions before the sub-blocks (default 1)')
    .option('--loads <n>', 'LOAD instructions per sub-block (default 2)')
    .option('--alu-per-sub-block <n>', 'ALU instructions per sub-block (default 1)')
    .option('--stores <n>', 'STORE instructions after the sub-blocks (default 1)')
    .option('--simulate', 'also run the cycle-level scheduler simulation')
    .option('--json', 'print JSON')
    .option(ACCEPT_DAMAGE_FLAG, `with --frame: ${ACCEPT_DAMAGE_HELP}`)
    .action((flags: BoundFlags, command: Command) => runBound(flags, command));
}
