import type { Command } from 'commander';
import { CPU_WORKLOAD_TARGETS, ensureKernelsBuilt } from '../../kernels/index.ts';
import { ensureInfluxDatabase } from '../../estimator/index.ts';
import { DemoError } from '../demo/errors.ts';
import { resolveDemoSettings } from '../demo/demo-plan.ts';
import { demoEstimatorConfig, demoFitter } from '../demo/demo-estimator.ts';
import { defaultDemoOutputDirectory, writeDemoOutputs } from '../demo/demo-output.ts';
import { formatDemoSummary } from '../demo/demo-summary.ts';
import { demoHeadlines } from '../report/summary-columns.ts';
import type { DemoTransport } from '../demo/demo-transport.ts';
import { createInProcessTransport } from '../demo/in-process-transport.ts';
import { createKafkaDemoTransport } from '../demo/kafka-transport.ts';
import { runDemo } from '../demo/run-demo.ts';
import { createTerminalProgress } from '../demo/terminal-progress.ts';
import { parseGroupSize } from '../../contracts/index.ts';
import { anyTcpReachable, unreachableServerHint } from '../../service/index.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';
import { parseNumberOption } from './numeric-options.ts';

interface DemoFlags {
  quick?: boolean;
  out?: string;
  kafka?: boolean;
  influx?: boolean;
  sizes?: string;
  seed?: string;
  launches?: string;
  buildDir?: string;
  progress: boolean;
}

function utcStamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

/** The flags of `warpwatch demo` that apply in some combinations only (an error elsewhere). */
export const DEMO_FLAG_RULES: readonly FlagRule<{ readonly sizes: boolean; readonly launches: boolean }>[] = [
  // --quick sets the group sizes and the launches (the units per launch are the same): with both given it changes nothing.
  { flag: '--quick', applies: (c) => !(c.sizes && c.launches), only: 'group sizes or launches not given by --sizes and --launches', instead: () => 'both are given: --quick would change nothing' },
];

async function runDemoCommand(flags: DemoFlags, command: Command): Promise<void> {
  rejectFlagsThatDoNotApply(command, { sizes: flags.sizes !== undefined, launches: flags.launches !== undefined }, DEMO_FLAG_RULES);
  const startedAtMillis = Date.now();
  const now = new Date(startedAtMillis);
  // Each size is the n of the demo's streams: the identity rule of contracts/ (WW_ERR_STREAM_IDENTITY).
  const groupSizes = flags.sizes === undefined ? undefined : flags.sizes.split(',').map((size) => parseGroupSize('--sizes', size));
  let settings;
  try {
    settings = resolveDemoSettings({
      quick: flags.quick === true,
      job: `demo-${utcStamp(now)}-${process.pid}`,
      ...(groupSizes === undefined ? {} : { groupSizes }),
      ...(flags.seed === undefined ? {} : { seed: parseNumberOption('--seed', flags.seed, { min: 0, integer: true }) }),
      ...(flags.launches === undefined ? {} : { launches: parseNumberOption('--launches', flags.launches, { min: 1, max: 1000, integer: true }) }),
    });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
  const outDirectory = flags.out ?? defaultDemoOutputDirectory(process.cwd(), now);
  const progress = createTerminalProgress(process.stderr, flags.progress);

  const config = demoEstimatorConfig(process.env, { influx: flags.influx === true, job: settings.job });
  // The servers first: a missing InfluxDB must not be found only after every workload ran.
  if (flags.influx === true && config.influx !== undefined) await requireInflux(config.influx);
  if (flags.kafka === true) await requireKafka(config.kafka.brokers);

  const buildStarted = Date.now();
  const { binDir } = await ensureKernelsBuilt({
    ...(flags.buildDir === undefined ? {} : { buildDir: flags.buildDir }),
    targets: CPU_WORKLOAD_TARGETS,
    tests: false,
    onProgress: (line) => progress.buildLine(line),
  });
  const buildMillis = Date.now() - buildStarted;
  progress.buildDone(buildMillis);

  const transport: DemoTransport =
    flags.kafka === true
      ? await createKafkaDemoTransport(config, demoFitter, (line) => {
          if (flags.progress) process.stderr.write(`${line}\n`);
        })
      : createInProcessTransport(config, demoFitter);
  let results;
  // Each run's sampled groups: the advice is the runs-based analysis of `advise --frames`.
  const sampledRuns = new Map<string, number[][][]>();
  try {
    results = await runDemo({ settings, binDir, transport, progress, influx: flags.influx === true, buildMillis, startedAtMillis, sampledRuns });
  } finally {
    await transport.close();
  }
  const headlines = demoHeadlines(results.runs, sampledRuns);
  const paths = writeDemoOutputs(outDirectory, results, headlines);
  const lines = [
    '',
    `warpwatch demo — ${results.runs.length} runs via the ${results.transport} transport${results.influx ? ' (+ InfluxDB)' : ''}, ${(results.durationMillis / 1000).toFixed(1)} s`,
    'CPU lockstep backend: n CPU SIMD lanes in lockstep timed with a steady clock — lockstep loss on this CPU, not GPU numbers.',
    '',
    ...formatDemoSummary(results, headlines),
    '',
    `report:  ${paths.htmlPath}`,
    `results: ${paths.jsonPath}`,
  ];
  if (results.influx) lines.push(`InfluxDB: points of job '${settings.job}' in database ${config.influx?.database ?? '?'} at ${config.influx?.url ?? '?'}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

/**
 * Checks that InfluxDB answers and has the demo's database (created when missing), before any
 * workload runs.
 *
 * @throws DemoError WW_ERR_DEMO_TRANSPORT when InfluxDB does not answer (says how to start the
 *   local stack); EstimatorError WW_ERR_ESTIMATOR_INFLUX_DATABASE when the database cannot be created
 */
/**
 * Checks that a Kafka broker of the list accepts TCP connections (2 s each), before any
 * workload runs; kafkajs itself would retry for most of a minute before saying so.
 *
 * @throws DemoError WW_ERR_DEMO_TRANSPORT naming the brokers and how to start the local stack
 */
async function requireKafka(brokers: readonly string[]): Promise<void> {
  if (await anyTcpReachable(brokers)) return;
  throw new DemoError(
    'WW_ERR_DEMO_TRANSPORT',
    `no Kafka broker answers at ${brokers.join(',')}; ${unreachableServerHint('kafka', brokers.join(','))}; or run the demo without --kafka`,
  );
}

async function requireInflux(influx: Parameters<typeof ensureInfluxDatabase>[0]): Promise<void> {
  if ((await ensureInfluxDatabase(influx)) === 'unreachable') {
    throw new DemoError(
      'WW_ERR_DEMO_TRANSPORT',
      `InfluxDB at ${influx.url} does not answer; ${unreachableServerHint('influx', influx.url)}; or run the demo without --influx`,
    );
  }
}

/**
 * Registers `warpwatch demo`: runs the reference workloads on the CPU backend,
 * estimates through the estimator's code, prints a summary and writes an HTML report.
 *
 * @example registerDemoCommand(program)
 */
export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description(
      'Run matpow (five reference distributions) and escape (plain, sorted) on the CPU lockstep backend, estimate with the estimator and model, print a summary and write an HTML report (no servers needed).',
    )
    .option('--quick', 'a ~15 s run: group sizes 8 and 32, one launch (an error with both --sizes and --launches)')
    .option('--out <dir>', 'output directory (default out/demo-<UTC timestamp>)')
    .option('--kafka', 'send frames through Kafka (WARPWATCH_KAFKA_BROKERS) to the estimator service instead of in-process')
    .option('--influx', 'also write the estimator points to InfluxDB (WARPWATCH_INFLUX_URL, WARPWATCH_INFLUX_DATABASE)')
    .option('--sizes <list>', 'group sizes, comma-separated (default 4,8,16,32; quick 8,32)')
    .option('--seed <n>', 'seed of the workloads (default 1)')
    .option('--launches <n>', 'launches per run (default 2; quick 1)')
    .option('--build-dir <dir>', 'workload build directory (default .cache/warpwatch/workloads-build; tests off)')
    .option('--no-progress', 'no progress output on stderr')
    .action((flags: DemoFlags, command: Command) => runDemoCommand(flags, command));
}
