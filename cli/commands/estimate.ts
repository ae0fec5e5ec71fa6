import type { Command } from 'commander';
import { EstimatorConfigError, loadEstimatorConfig, startEstimator, type EstimatorConfig } from '../../estimator/index.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { ESTIMATOR_FIELDS as F } from '../../contracts/index.ts';
import { stderrLineSink, stopWithinBound, waitForStopSignal } from '../../service/index.ts';
import { settingHint } from '../config-help.ts';
import { UsageError } from '../usage-error.ts';

interface EstimateOptions {
  brokers?: string;
  groupId?: string;
  windowMillis?: string;
  influxUrl?: string;
  influxDatabase?: string;
  metricsPort?: string;
  current?: string;
  halfLifeLaunches?: string;
  lastLaunches?: string;
  predictionBasis?: string;
  bootstrapReplicates?: string;
  latest?: boolean;
  instance?: string;
}

/**
 * Registers `warpwatch estimate`: the estimator service — Kafka consumer group on
 * warpwatch.frames → windowed distributions, predictions vs measurements, alerts →
 * InfluxDB, warpwatch.distributions, warpwatch.alerts.
 *
 * @example registerEstimateCommand(program)
 */
export function registerEstimateCommand(program: Command): void {
  program
    .command('estimate')
    .description(
      'Run the estimator: consume frames from Kafka (topic warpwatch.frames, consumer group), keep per-stream event-time windows and ' +
        'distributions, compute loss_predicted / loss_counts / loss_measured and the what-ifs per window, write them to InfluxDB, publish the ' +
        'latest distribution per stream to warpwatch.distributions (compacted) and alerts to warpwatch.alerts. Scale out by running more ' +
        'instances with the same --group-id. Runs until SIGTERM/SIGINT. Every flag has a WARPWATCH_* variable (docs/estimator.md); flags win.',
    )
    .option('--brokers <list>', `Kafka bootstrap brokers host:port,... ${settingHint(F.brokers)}`)
    .option('--group-id <id>', `Kafka consumer group ${settingHint(F.groupId)}`)
    .option('--window-millis <ms>', `event-time tumbling window length ${settingHint(F.windowMillis)}`)
    .option('--influx-url <url>', `InfluxDB URL, or "off" ${settingHint(F.influxUrl)}`)
    .option('--influx-database <name>', `InfluxDB 1.8 database / v2 bucket prefix ${settingHint(F.influxDatabase)}`)
    .option('--metrics-port <n>', `port of /metrics and /healthz; 0 = any free port, off = none ${settingHint(F.metricsPort)}`)
    .option('--current <mode>', `"current" distribution: decay|last-n ${settingHint(F.current)}`)
    .option('--half-life-launches <n>', `decay half-life in launches ${settingHint(F.halfLifeLaunches)}`)
    .option('--last-launches <n>', `launches kept in last-n mode ${settingHint(F.lastLaunches)}`)
    .option('--prediction-basis <basis>', `loss_predicted from the window|current|cumulative distribution ${settingHint(F.predictionBasis)}`)
    .option('--bootstrap-replicates <n>', `Poisson-bootstrap replicates for the loss_predicted interval, 0 = off ${settingHint(F.bootstrapReplicates)}`)
    .option('--latest', `a group without committed offsets starts at the latest frames instead of the earliest (env ${F.fromBeginning.env}=false)`)
    .option('--instance <name>', `instance name for telemetry ${settingHint(F.instance)}`)
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  warpwatch estimate\n' +
        '  warpwatch estimate --brokers kafka-1:9092 --influx-url http://influx:8086 --window-millis 5000\n' +
        '  WARPWATCH_ALERT_LOSS_THRESHOLD=1.8 warpwatch estimate --metrics-port 0\n' +
        '\nFlags that do not apply are errors: --half-life-launches outside --current decay, --last-launches outside\n' +
        '--current last-n, --influx-database with --influx-url off. Kafka or InfluxDB not answering is said once per outage\n' +
        'with what to try (npm run stack -- up for the local stack\'s addresses, else WARPWATCH_KAFKA_BROKERS / WARPWATCH_INFLUX_URL).\n' +
        '\nExit: 0 after a clean stop (SIGTERM: last checkpoint and commit within WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS),\n' +
        '      1 when a Kafka client stopped for good (an unsupported codec, an authorization error; docs/errors.md) or the stop\n' +
        '      did not finish within that bound,\n' +
        '      2 for invalid flags or environment, 1 for a runtime failure.',
    )
    .action(async (options: EstimateOptions, command: Command) => {
      await runEstimate(options, command);
    });
}

/** What decides whether an `estimate` flag applies: the configuration (flags and WARPWATCH_* variables). */
interface EstimateContext {
  readonly currentMode: EstimatorConfig['window']['current']['mode'];
  readonly influx: boolean;
}

/** The flags of `warpwatch estimate` that apply to some configurations only (an error elsewhere). */
export const ESTIMATE_FLAG_RULES: readonly FlagRule<EstimateContext>[] = [
  { flag: '--half-life-launches', applies: (c) => c.currentMode === 'decay', only: '--current decay', instead: (c) => `the current mode is ${c.currentMode}` },
  { flag: '--last-launches', applies: (c) => c.currentMode === 'last-n', only: '--current last-n', instead: (c) => `the current mode is ${c.currentMode}` },
  { flag: '--influx-database', applies: (c) => c.influx, only: 'an InfluxDB in use', instead: () => 'the InfluxDB URL is off' },
];

async function runEstimate(options: EstimateOptions, command: Command): Promise<void> {
  let config: EstimatorConfig;
  try {
    const { latest, ...rest } = options;
    config = loadEstimatorConfig({ env: process.env, flags: { ...rest, fromBeginning: latest === true ? false : undefined } });
  } catch (error) {
    if (error instanceof EstimatorConfigError) throw new UsageError(error.message, { cause: error, code: error.code });
    throw error;
  }
  rejectFlagsThatDoNotApply(command, { currentMode: config.window.current.mode, influx: config.influx !== undefined }, ESTIMATE_FLAG_RULES);
  const estimator = await startEstimator(config, stderrLineSink(process.stderr));
  // The listeners stay: a second signal during the final checkpoint is ignored, as the first one's stop runs.
  // A stop signal, or a failure the service cannot recover from (docs/errors.md, Kafka failures): then it stops and exits 1.
  const outcome = await Promise.race([waitForStopSignal().received.then((signal) => ({ signal })), estimator.failed.then((error) => ({ error }))]);
  // Exits within WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS whatever Kafka did before (docs/estimator.md § Fault tolerance).
  const sink = stderrLineSink(process.stderr);
  const signal = 'signal' in outcome ? outcome.signal : undefined;
  await stopWithinBound(() => estimator.stop(signal), { boundMillis: config.shutdownTimeoutMillis, code: 'WW_ERR_ESTIMATOR_SHUTDOWN_TIMEOUT', log: (line) => sink(`warpwatch estimate: ${line}`) });
  if ('error' in outcome) throw outcome.error;
}
