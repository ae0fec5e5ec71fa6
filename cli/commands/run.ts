import type { Command } from 'commander';
import { parseDistributionSpec } from '../../model/index.ts';
import {
  BACKEND_NAMES,
  KernelsError,
  WORKLOAD_NAMES,
  ensureKernelsBuilt,
  runWorkload,
  workloadBinaryName,
  type BackendName,
  type WorkloadName,
  type WorkloadReport,
} from '../../kernels/index.ts';
import { parseGroupSize, parseJob, parseKernel } from '../../contracts/index.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { parseNumberOption } from './numeric-options.ts';

interface RunFlags {
  backend: string;
  dist?: string;
  n?: string;
  groups?: string;
  launches?: string;
  seed?: string;
  sorted?: boolean;
  sync?: string;
  probe?: string;
  sampleRate?: string;
  selection?: string;
  blockGroups?: string;
  out?: string;
  socket?: string;
  job?: string;
  kernel?: string;
  csv?: string;
  repetitions?: string;
  maxIter?: string;
  width?: string;
  height?: string;
  clock?: string;
  json?: boolean;
}

/** What decides whether a `run` flag applies. */
interface RunContext {
  readonly workload: WorkloadName;
  readonly backend: BackendName;
  readonly selection: string | undefined;
  /** --sample-rate 0: no group is sampled. */
  readonly noSamples: boolean;
}

const theWorkload = (c: RunContext): string => `the workload is ${c.workload}`;

/**
 * The flags of `warpwatch run` that apply to some workloads or backends only (each workload
 * program reads only its own: workload-options.hpp); typed elsewhere they are usage errors.
 */
export const RUN_FLAG_RULES: readonly FlagRule<RunContext>[] = [
  { flag: '--dist', applies: (c) => c.workload === 'matpow', only: 'the matpow workload', instead: (c) => `${c.workload} takes its iteration counts from the workload itself` },
  { flag: '--seed', applies: (c) => ['matpow', 'relax', 'banded'].includes(c.workload), only: 'the matpow, relax and banded workloads', instead: (c) => `${c.workload} draws nothing at random` },
  { flag: '--launches', applies: (c) => c.workload !== 'divergence', only: 'the matpow, escape, relax and banded workloads', instead: () => 'divergence repeats each pattern --repetitions times' },
  { flag: '--sorted', applies: (c) => c.workload === 'escape' || c.workload === 'banded', only: 'the escape and banded workloads', instead: theWorkload },
  { flag: '--max-iter', applies: (c) => c.workload === 'escape' || c.workload === 'relax', only: 'the escape and relax workloads', instead: theWorkload },
  { flag: '--width', applies: (c) => c.workload === 'escape' || c.workload === 'relax', only: 'the escape and relax workloads', instead: theWorkload },
  { flag: '--height', applies: (c) => c.workload === 'escape' || c.workload === 'relax', only: 'the escape and relax workloads', instead: theWorkload },
  { flag: '--repetitions', applies: (c) => c.workload === 'divergence', only: 'the divergence workload', instead: theWorkload },
  { flag: '--csv', applies: (c) => c.workload === 'divergence', only: 'the divergence workload', instead: theWorkload },
  { flag: '--clock', applies: (c) => c.backend === 'cpu', only: '--backend cpu', instead: (c) => `the backend is ${c.backend}: the GPU clock is fixed` },
  { flag: '--probe', applies: (c) => c.workload === 'matpow' && c.backend === 'cuda', only: 'the matpow workload on --backend cuda', instead: (c) => `${c.workload} on ${c.backend}` },
  { flag: '--block-groups', applies: (c) => c.selection === 'block', only: '--selection block', instead: (c) => `the selection is ${c.selection ?? 'hash'}` },
  { flag: '--selection', applies: (c) => !c.noSamples, only: 'a --sample-rate above 0', instead: () => '--sample-rate 0 samples no group' },
];

/** Turns the validated flags into the workload program's argv (workload-options.hpp). */
function workloadArgs(workload: WorkloadName, flags: RunFlags): string[] {
  const args: string[] = [];
  const pass = (flag: string, value: string | undefined): void => {
    if (value !== undefined) args.push(flag, value);
  };
  if (flags.dist !== undefined) {
    parseDistributionSpec(flags.dist); // same syntax as the model; RangeError → exit 2 with the model's message
    pass('--dist', flags.dist);
  }
  if (flags.n !== undefined) pass('--n', String(parseGroupSize('--n', flags.n)));
  if (flags.groups !== undefined) pass('--groups', String(parseNumberOption('--groups', flags.groups, { min: 1, max: 2 ** 40, integer: true })));
  if (flags.launches !== undefined) pass('--launches', String(parseNumberOption('--launches', flags.launches, { min: 1, max: 1e6, integer: true })));
  if (flags.seed !== undefined) {
    if (!/^\d{1,20}$/.test(flags.seed) || BigInt(flags.seed) > 2n ** 64n - 1n) throw new UsageError(`--seed must be an integer 0..2^64-1, got '${flags.seed}'`);
    pass('--seed', flags.seed);
  }
  if (flags.sync !== undefined) {
    if (flags.sync !== 'on' && flags.sync !== 'off') throw new UsageError(`--sync must be on or off, got '${flags.sync}'`);
    pass('--sync', flags.sync);
  }
  if (flags.probe !== undefined) {
    if (flags.probe !== 'on' && flags.probe !== 'off') throw new UsageError(`--probe must be on or off, got '${flags.probe}'`);
    pass('--probe', flags.probe);
  }
  if (flags.sampleRate !== undefined) pass('--sample-rate', String(parseNumberOption('--sample-rate', flags.sampleRate, { min: 0, max: 1 })));
  if (flags.selection !== undefined) {
    if (flags.selection !== 'stride' && flags.selection !== 'hash' && flags.selection !== 'block') throw new UsageError(`--selection must be hash or stride or block, got '${flags.selection}'`);
    pass('--selection', flags.selection);
  }
  if (flags.blockGroups !== undefined) {
    pass('--block-groups', String(parseNumberOption('--block-groups', flags.blockGroups, { min: 1, max: 65535, integer: true })));
  }
  if (flags.sorted === true) args.push('--sorted');
  if (flags.clock !== undefined) {
    if (flags.clock !== 'steady' && flags.clock !== 'thread') throw new UsageError(`--clock must be steady or thread, got '${flags.clock}'`);
    pass('--clock', flags.clock);
  }
  if (flags.maxIter !== undefined) pass('--max-iter', String(parseNumberOption('--max-iter', flags.maxIter, { min: 1, max: 2 ** 24, integer: true })));
  if (flags.width !== undefined) pass('--width', String(parseNumberOption('--width', flags.width, { min: 1, max: 65536, integer: true })));
  if (flags.height !== undefined) pass('--height', String(parseNumberOption('--height', flags.height, { min: 1, max: 65536, integer: true })));
  if (flags.repetitions !== undefined) pass('--repetitions', String(parseNumberOption('--repetitions', flags.repetitions, { min: 1, max: 100000, integer: true })));
  pass('--csv', flags.csv);
  // The stream identity follows the rules of contracts/stream-identity.ts (WW_ERR_STREAM_IDENTITY).
  if (flags.job !== undefined) pass('--job', parseJob('--job', flags.job));
  if (flags.kernel !== undefined) pass('--kernel', parseKernel('--kernel', flags.kernel));
  if (flags.out !== undefined && flags.socket !== undefined) throw new UsageError('give either --out FILE or --socket PATH, not both');
  if (flags.out === undefined && flags.socket === undefined) throw new UsageError('--out FILE (or --out - for stdout, or --socket PATH) is required: where should the frames go?');
  pass('--out', flags.out);
  pass('--socket', flags.socket);
  return args;
}

/**
 * The report's last line: where the frames went and what to do with them. A file can be
 * analysed; frames sent to a collector socket cannot (they are in Kafka), and frames the sink
 * dropped are said plainly.
 */
function framesLine(report: WorkloadReport, flags: RunFlags): string {
  const dropped = report.framesDropped ? `, ${report.framesDropped} dropped (not delivered)` : '';
  if (flags.socket !== undefined) {
    return `  ${report.framesWritten} frame(s) sent to the collector socket ${flags.socket}${dropped}${report.framesDropped ? '; is `warpwatch collect` serving that socket?' : ''}\n`;
  }
  const target = flags.out === '-' ? 'stdout' : (flags.out ?? '');
  return `  ${report.framesWritten} frame(s) written to ${target}${dropped}${flags.out === '-' ? '' : `; analyse with: warpwatch analyze ${target}`}\n`;
}

function describeReport(report: WorkloadReport, flags: RunFlags): string {
  const remeasured = report.groupsRemeasured ? `, ${report.groupsRemeasured} group measurements repeated after preemption (${report.groupsDisturbed ?? 0} still disturbed)` : '';
  return (
    `${report.workload} on ${report.backend} (n=${report.n}): ${report.groups} groups in ${report.launches} launch(es), ${report.seconds.toFixed(2)} s${remeasured}\n` +
    `  lossCounts ${report.lossCounts.toFixed(4)}  lossMeasured ${report.lossMeasured.toFixed(4)}` +
    `${report.backend === 'cpu' ? '  (CPU SIMD lanes, not a GPU measurement)' : ''}\n` +
    framesLine(report, flags)
  );
}

/**
 * Registers `warpwatch run <workload>`: builds kernels/ if needed, runs the workload program on
 * the chosen backend and records its frames to --out FILE (or stdout, or the collector socket).
 *
 * @example warpwatch run matpow --backend cpu --dist 'pois(30)' --n 32 --groups 4096 --seed 1 --out frames.bin
 */
export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .description('Run an instrumented workload (matpow | escape | divergence | relax | banded) and record its frames')
    .argument('<workload>', `one of ${WORKLOAD_NAMES.join(', ')}`)
    .option('--backend <backend>', `where it runs: ${BACKEND_NAMES.join(' | ')} (cpu = the CPU lockstep backend)`, 'cpu')
    .option('--dist <spec>', "matpow: iteration-count distribution, e.g. 'pois(30)', 'geo(0.05)', 'cat(1:2,5:1)'")
    .option('--n <lanes>', 'lanes per group, an integer 1..32 (default 32)')
    .option('--groups <count>', 'groups per launch (default: matpow 2^18 on cuda, 1024 on cpu; escape, relax: the whole image/field; banded: all rows, 2^18 on cpu, 2^21 on cuda)')
    .option('--launches <count>', 'matpow, escape, relax, banded: launches, one LaunchSummary frame each (default 1)')
    .option('--seed <seed>', 'matpow, relax, banded: random seed, 0..2^64-1 (default 1)')
    .option('--sorted', 'escape: sort pixels by estimated work before grouping; banded: sort rows by length')
    .option('--sync <on|off>', 'synchronise the group before its end clock (default on)')
    .option('--probe <on|off>', 'matpow on cuda: off runs the same kernel with the probe compiled out (no frames; kernelMillis in the report is the overhead baseline)')
    .option('--sample-rate <fraction>', 'fraction of groups written as GroupSamples, 0..1 (default 1/64)')
    .option('--selection <hash|stride|block>', 'how sampled groups are chosen (with a --sample-rate above 0): hash (default; a pseudo-random 1 in 1/rate of the groups per launch, unbiased), stride (every k-th group, the same each launch: aliases with row-major 2-D layouts) or block (whole blocks of --block-groups consecutive groups, 1 in 1/rate of the blocks by hash: block runs for the two-level loss)')
    .option('--block-groups <K>', 'with --selection block: consecutive groups per block, 1..65535 (default 8)')
    .option('--out <file>', "frame file, or '-' for stdout")
    .option('--socket <path>', 'send frames to a collector unix socket instead (non-blocking, drops when slow)')
    .option('--job <name>', 'job name, the first part of the stream id: 1..255 UTF-8 bytes, no / (default local)')
    .option('--kernel <name>', 'kernel name, the second part of the stream id: 1..255 UTF-8 bytes (default the workload)')
    .option('--csv <file>', 'divergence: write cycles per pattern as CSV (docs/kernels.md)')
    .option('--repetitions <count>', 'divergence: repetitions per pattern (default 51)')
    .option('--max-iter <count>', 'escape, relax: iteration cap (default 256)')
    .option('--width <pixels>', 'escape, relax: image/field width')
    .option('--height <pixels>', 'escape, relax: image/field height')
    .option('--clock <steady|thread>', 'cpu: group clock, steady_clock (default) or thread CPU time')
    .option('--json', 'print the run report as JSON')
    .addHelpText('after', '\nFlags marked with a workload or backend apply there only; elsewhere they are an error (exit 2), never silently ignored.')
    .action(async (workloadText: string, flags: RunFlags, command: Command) => {
      if (!(WORKLOAD_NAMES as readonly string[]).includes(workloadText)) {
        throw new UsageError(`workload must be one of ${WORKLOAD_NAMES.join(', ')}, got '${workloadText}'`);
      }
      if (!(BACKEND_NAMES as readonly string[]).includes(flags.backend)) {
        throw new UsageError(`--backend must be one of ${BACKEND_NAMES.join(', ')}, got '${flags.backend}'`);
      }
      const workload = workloadText as WorkloadName;
      const backend = flags.backend as BackendName;
      const noSamples = flags.sampleRate !== undefined && flags.sampleRate.trim() !== '' && Number(flags.sampleRate) === 0;
      rejectFlagsThatDoNotApply(command, { workload, backend, selection: flags.selection, noSamples }, RUN_FLAG_RULES);
      const args = workloadArgs(workload, flags);
      // Only this program, tests off (no GTest needed); the compiler's output stays out of the
      // terminal (a failed build's error carries its last lines): docs/kernels.md.
      const target = workloadBinaryName(workload, backend);
      let announced = false;
      const { binDir } = await ensureKernelsBuilt({
        targets: [target],
        tests: false,
        onProgress: (line) => {
          if (announced || !/configuring|Building|Linking/.test(line)) return;
          announced = true;
          process.stderr.write(`warpwatch: building ${target} (kernels/; once) ...\n`);
        },
      });
      let report: WorkloadReport;
      try {
        report = await runWorkload({ binDir, workload, backend, args });
      } catch (error) {
        if (error instanceof KernelsError && error.code === 'WW_ERR_KERNELS_WORKLOAD_USAGE') throw new UsageError(error.message, { cause: error });
        throw error;
      }
      const text = flags.json === true ? `${JSON.stringify(report)}\n` : describeReport(report, flags);
      // With --out - the frames own stdout; the report goes to stderr.
      (flags.out === '-' ? process.stderr : process.stdout).write(text);
      // Frames that did not reach their sink are a failure of the run, whatever the workload did.
      if ((report.framesDropped ?? 0) > 0) {
        process.stderr.write(`warpwatch: ${report.framesDropped} of ${report.framesWritten + report.framesDropped} frame(s) were not delivered to ${flags.socket !== undefined ? `the collector socket ${flags.socket}` : (flags.out ?? '')}\n`);
        process.exitCode = 1;
      }
    });
}
