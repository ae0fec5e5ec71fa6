import { writeFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { EstimatorConfigError, loadEstimatorKafkaConfig } from '../../estimator/index.ts';
import {
  adviseInputFromCounts,
  adviseInputFromFrames,
  adviseInputFromSpec,
  adviseInputFromStream,
  adviseInputFromTrace,
  adviseInputFromWorkload,
  type AdviseInput,
  type DistributionBasis,
} from '../advise/advise-input.ts';
import { computeAdvice } from '../../analysis/index.ts';
import { formatAdviceText } from '../advise/advice-text.ts';
import { renderAdviceReport } from '../report/advice-report.ts';
import { writeCountsFile } from '../counts-file.ts';
import { parseDeviceSelector, parseGroupSize, parseHost, parseStreamName } from '../../contracts/index.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, frameFileJson } from '../frame-file.ts';
import { UsageError } from '../usage-error.ts';
import { parseIntegerListOption, parseNumberOption } from './numeric-options.ts';
import { createAdviseProgress } from './advise-progress.ts';

interface AdviseFlags {
  counts?: string;
  pmf?: string;
  exportCounts?: string;
  frames?: string;
  trace?: string;
  stream?: string;
  device?: string;
  host?: string;
  workload?: 'matpow' | 'escape';
  dist?: string;
  sorted?: boolean;
  groups?: string;
  seed?: string;
  n?: string;
  units?: string;
  prepassStride?: string;
  bins: string;
  basis: DistributionBasis;
  json?: boolean;
  html?: string;
  acceptDamage?: boolean;
}

/** What decides whether an `advise` flag applies: the kind of input. */
interface AdviseContext {
  readonly workload: 'matpow' | 'escape' | undefined;
  /** --stream alone: the latest record of warpwatch.distributions (Kafka). */
  readonly kafka: boolean;
  /** --frames or --trace: units in their launch order (runs). */
  readonly runs: boolean;
  /** --frames: a recorded frame file. */
  readonly frames: boolean;
}

/** The flags of `warpwatch advise` that apply to some inputs only (an error elsewhere). */
export const ADVISE_FLAG_RULES: readonly FlagRule<AdviseContext>[] = [
  { flag: '--groups', applies: (c) => c.workload !== undefined, only: '--workload' },
  { flag: '--seed', applies: (c) => c.workload !== undefined, only: '--workload' },
  { flag: '--sorted', applies: (c) => c.workload === 'escape', only: '--workload escape' },
  { flag: '--basis', applies: (c) => c.kafka, only: '--stream read from Kafka' },
  { flag: '--device', applies: (c) => c.kafka, only: '--stream read from Kafka' },
  { flag: '--host', applies: (c) => c.kafka, only: '--stream read from Kafka' },
  { flag: '--prepass-stride', applies: (c) => c.runs, only: '--frames or --trace' },
  { flag: ACCEPT_DAMAGE_FLAG, applies: (c) => c.frames, only: '--frames' },
];

/** The identity arguments of advise, read with the rules of contracts/stream-identity.ts (WW_ERR_STREAM_IDENTITY). */
interface AdviseIdentity {
  readonly stream: string | undefined;
  readonly groupSize: number | undefined;
  readonly device: string | undefined;
  readonly host: string | undefined;
}

function identityOf(flags: AdviseFlags): AdviseIdentity {
  return {
    stream: flags.stream === undefined ? undefined : parseStreamName('--stream', flags.stream).stream,
    groupSize: flags.n === undefined ? undefined : parseGroupSize('--n', flags.n),
    device: flags.device === undefined ? undefined : parseDeviceSelector('--device', flags.device),
    host: flags.host === undefined ? undefined : parseHost('--host', flags.host),
  };
}

async function readInput(flags: AdviseFlags, identity: AdviseIdentity): Promise<AdviseInput> {
  const sources = [
    flags.counts !== undefined,
    flags.pmf !== undefined,
    flags.frames !== undefined,
    flags.trace !== undefined,
    flags.workload !== undefined,
    flags.stream !== undefined && flags.frames === undefined,
  ];
  const fromSpec = flags.dist !== undefined && flags.workload === undefined;
  if (sources.filter(Boolean).length + (fromSpec ? 1 : 0) !== 1) {
    throw new UsageError('give exactly one input: --counts FILE, --pmf FILE, --frames FILE [--stream ID], --trace FILE, --stream ID (Kafka), --workload matpow|escape, or --dist SPEC');
  }
  if (flags.counts !== undefined) return adviseInputFromCounts(flags.counts, 'counts');
  if (flags.trace !== undefined) return adviseInputFromTrace(flags.trace);
  if (flags.pmf !== undefined) return adviseInputFromCounts(flags.pmf, 'pmf');
  if (flags.frames !== undefined) return adviseInputFromFrames(flags.frames, identity.stream);
  if (fromSpec) return adviseInputFromSpec(flags.dist ?? '');
  if (flags.workload !== undefined) {
    if (flags.workload === 'escape' && flags.dist !== undefined) throw new UsageError('--dist applies to --workload matpow only (escape takes its counts from the image)');
    if (flags.dist !== undefined) adviseInputFromSpec(flags.dist); // validates the spec before the run (UsageError)
    const n = identity.groupSize ?? 32;
    const groups = flags.groups === undefined ? 512 : parseNumberOption('--groups', flags.groups, { min: 1, max: 1 << 24, integer: true });
    const args = [
      ...(flags.workload === 'matpow' ? ['--dist', flags.dist ?? 'pois(30)'] : []),
      '--n',
      String(n),
      '--groups',
      String(groups),
      '--seed',
      flags.seed ?? '1',
      '--job',
      'advise',
      // About 2048 sampled groups (all of them up to 2048), chosen by hash: the observed ICC then
      // rests on a large unbiased sample, not on the 1-in-64 default (8 groups of 512).
      '--sample-rate',
      String(Math.min(1, 2048 / groups)),
      '--selection',
      'hash',
      ...(flags.sorted === true ? ['--sorted'] : []),
    ];
    return adviseInputFromWorkload({ workload: flags.workload, args });
  }
  // Only the Kafka slices: brokers and the distributions topic, and SASL/TLS.
  let kafka;
  try {
    kafka = loadEstimatorKafkaConfig({ env: process.env });
  } catch (error) {
    if (error instanceof EstimatorConfigError) throw new UsageError(error.message, { cause: error, code: error.code });
    throw error;
  }
  // With --stream from Kafka, --n, --device and --host pick one of the stream's runs (n, device, host).
  const selection = { stream: identity.stream ?? '', groupSize: identity.groupSize, device: identity.device, host: identity.host };
  return adviseInputFromStream({ brokers: kafka.brokers, topic: kafka.distributionsTopic, security: kafka.security }, selection, flags.basis);
}

async function runAdvise(flags: AdviseFlags, command: Command): Promise<void> {
  const binCounts = parseIntegerListOption('--bins', flags.bins);
  if (binCounts.some((k) => k < 1 || k > 1024)) throw new UsageError(`--bins must list bin counts 1..1024, got '${flags.bins}'`);
  rejectFlagsThatDoNotApply(command, { workload: flags.workload, kafka: flags.stream !== undefined && flags.frames === undefined, runs: flags.frames !== undefined || flags.trace !== undefined, frames: flags.frames !== undefined }, ADVISE_FLAG_RULES);
  const identity = identityOf(flags);
  if (flags.exportCounts !== undefined && (flags.pmf !== undefined || (flags.dist !== undefined && flags.workload === undefined))) {
    throw new UsageError('--export-counts writes observed counts; --dist and --pmf inputs have none');
  }
  const input = await readInput(flags, identity);
  if (flags.exportCounts !== undefined) writeCountsFile(flags.exportCounts, input.distribution);
  const groupSize = identity.groupSize ?? input.groupSize ?? 32;
  if (groupSize > 32) throw new UsageError(`the input was recorded with groups of ${groupSize} lanes; advise covers 1..32, give --n`);
  const unitsPerLaunch = flags.units === undefined ? Math.max(input.unitsPerLaunch ?? 1 << 20, groupSize) : parseNumberOption('--units', flags.units, { min: groupSize, max: 2 ** 40, integer: true });
  const observedLossCounts = groupSize === input.groupSize ? input.observedLossCounts : undefined;
  const observedCountIcc = groupSize === input.groupSize ? input.observedCountIcc : undefined;
  // Large supports take seconds: progress on stderr (docs/advise.md).
  const progress = createAdviseProgress(process.stderr, input.distribution.size);
  let advice;
  try {
    const runs = groupSize === input.groupSize ? input.runs : undefined;
    const runsByLaunch = groupSize === input.groupSize ? input.runsByLaunch : undefined;
    const blocks = groupSize === input.groupSize ? input.blocks : undefined;
    advice = computeAdvice({
      distribution: input.distribution,
      source: input.source,
      groupSize,
      unitsPerLaunch,
      binCounts,
      observedLossCounts,
      observedCountIcc,
      runs,
      runsByLaunch,
      trace: input.trace,
      prepassStride: flags.prepassStride === undefined ? undefined : parseNumberOption('--prepass-stride', flags.prepassStride, { min: 1, max: 1024, integer: true }),
      blocks,
      onProgress: progress.onProgress,
    });
  } finally {
    progress.done();
  }
  if (flags.html !== undefined) {
    try {
      writeFileSync(flags.html, renderAdviceReport(advice));
    } catch (error) {
      throw new UsageError(`cannot write --html file '${flags.html}': ${(error as Error).message}`);
    }
  }
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ ...advice, html: flags.html ?? null, ...(input.frameFile === undefined ? {} : { input: frameFileJson(input.frameFile) }) }, null, 2)}\n`);
  } else {
    const lines = formatAdviceText(advice);
    if (flags.html !== undefined) lines.push('', `page: ${flags.html}`);
    process.stdout.write(`${lines.join('\n')}\n`);
  }
  if (input.frameFile !== undefined) failOnFrameFileDamage([input.frameFile], flags.acceptDamage === true);
}

/**
 * Registers `warpwatch advise`: design what-ifs (docs/model.md §2d) for one
 * distribution — loss per group size 1..32, sorting, binning, parametric fit, and a
 * plain-language recommendation.
 *
 * @example registerAdviseCommand(program)
 */
export function registerAdviseCommand(program: Command): void {
  program
    .command('advise')
    .description('Design advice for a work distribution: predicted loss for group sizes 1..32, sorting, binning into k bins, best parametric fit, and a recommendation (docs/model.md §2d).')
    .option('--counts <file>', 'observed counts: JSON {"value": count}, a JSON array of per-unit counts, or CSV lines value,count (integers)')
    .option('--pmf <file>', 'probabilities or relative weights per value (e.g. a published table): JSON {"value": weight} or CSV value,weight')
    .option('--frames <file>', 'a recorded frame file (LaunchSummary histograms are merged; GroupSamples are contiguous runs: the layout loss and the what-ifs on their units)')
    .option('--trace <file>', 'a per-unit counts trace in unit order: CSV one count per line (optional header) or a JSON array of integers; the layout loss of every n that divides its length (docs/model.md §11c)')
    .option('--stream <id>', 'stream id job/kernel (split at the first /; each part 1..255 UTF-8 bytes): picks a stream of --frames, or alone reads its latest record from warpwatch.distributions (WARPWATCH_KAFKA_BROKERS)')
    .addOption(new Option('--workload <name>', 'run a CPU workload and use its counts').choices(['matpow', 'escape']))
    .option('--dist <spec>', 'a family spec (hypothetical work), or the distribution of --workload matpow (default pois(30))')
    .option('--sorted', 'with --workload escape: sort pixels by estimated work')
    .option('--groups <g>', 'with --workload: groups to run (default 512)')
    .option('--seed <s>', 'with --workload: seed (default 1)')
    .option('--n <n>', 'group size the kernel uses now, 1..32 (default: from the input, else 32); with --stream from Kafka, picks the stream run at this n')
    .option('--device <id>', 'with --stream from Kafka: the device of the stream to pick, its UUID (any case, GPU- prefix allowed) or model name')
    .option('--host <name>', 'with --stream from Kafka: the host of the stream to pick')
    .option('--units <N>', 'units per launch that would be sorted or binned together (default: from the input, else 2^20)')
    .option('--bins <list>', 'bin counts k to evaluate', '2,4,8')
    .option('--prepass-stride <s>', 'with runs (--frames with GroupSamples, --trace): units per block of the coarse pre-pass work estimate that sorting and binning use (default 4; docs/model.md §11b)')
    .addOption(new Option('--basis <which>', 'with --stream from Kafka: which distribution of the record').choices(['window', 'current', 'cumulative']).default('cumulative'))
    .option('--json', 'print one JSON object instead of the table')
    .option('--html <file>', 'also write a self-contained HTML page')
    .option('--export-counts <file>', 'also write the observed distribution as a --counts CSV (value,count)')
    .option(ACCEPT_DAMAGE_FLAG, `with --frames: ${ACCEPT_DAMAGE_HELP}`)
    .action((flags: AdviseFlags, command: Command) => runAdvise(flags, command));
}
