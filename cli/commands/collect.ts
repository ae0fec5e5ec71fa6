import { existsSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { CollectorConfigError, loadCollectorConfig, startCollectorService, type CollectorConfig } from '../../collector/index.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, readFrameFile } from '../frame-file.ts';
import { COLLECTOR_FIELDS as F } from '../../contracts/index.ts';
import { stderrLineSink, stopWithinBound, waitForStopSignal } from '../../service/index.ts';
import { settingHint } from '../config-help.ts';
import { UsageError } from '../usage-error.ts';

/** What the collector's stop may take after its flush (closing Kafka, the health server and the metrics writer), ms. */
const COLLECTOR_CLOSE_MILLIS = 5_000;

interface CollectOptions {
  socket?: string;
  socketMode?: string;
  stdin?: boolean;
  replay?: string[];
  acceptDamage?: boolean;
  brokers?: string;
  partitions?: string;
  compression?: string;
  spoolDir?: string;
  spoolMaxBytes?: string;
  spoolPolicy?: string;
  label?: string[];
  metricsPort?: string;
  host?: string;
  influxUrl?: string;
  influxDatabase?: string;
  pipelineIntervalMillis?: string;
  instance?: string;
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * Registers `warpwatch collect`: the per-host agent that reads frames from a unix socket,
 * stdin or recorded files, validates them and forwards them to Kafka.
 *
 * @example registerCollectCommand(program)
 */
export function registerCollectCommand(program: Command): void {
  program
    .command('collect')
    .description(
      'Run the collector: read frames from a unix socket (default), stdin or recorded files, validate them, and forward the raw bytes to Kafka ' +
        '(topic warpwatch.frames, key <job>/<kernel>); invalid frames go to warpwatch.dlq. While Kafka is unreachable frames are spooled to disk ' +
        'and replayed in order. Runs until SIGTERM/SIGINT when serving a socket, otherwise until the inputs end. ' +
        'Every flag but --stdin and --replay has a WARPWATCH_* environment variable (table: docs/collector.md); flags win.',
    )
    .option('--socket <path>', `serve this unix socket; its directory must belong to the collector alone ${settingHint(F.socket)}`)
    .option('--socket-mode <octal>', `permission bits of the socket file ${settingHint(F.socketMode)}`)
    .option('--stdin', 'read frames from standard input (e.g. `job | warpwatch collect --stdin`)')
    .option('--replay <file...>', 'replay recorded frame files, in order (damaged stretches go to the DLQ, one record each, and make the exit code 1)')
    .option(ACCEPT_DAMAGE_FLAG, `with --replay: ${ACCEPT_DAMAGE_HELP}`)
    .option('--brokers <list>', `Kafka bootstrap brokers host:port,... ${settingHint(F.brokers)}`)
    .option('--partitions <n>', `partitions of warpwatch.frames when the collector creates it ${settingHint(F.partitions)}`)
    .option('--compression <name>', `Kafka compression none|gzip ${settingHint(F.compression)}`)
    .option('--spool-dir <dir>', `disk spool directory ${settingHint(F.spoolDir)}`)
    .option('--spool-max-bytes <size>', `spool bound, e.g. 512MiB ${settingHint(F.spoolMaxBytes)}`)
    .option('--spool-policy <policy>', `when the spool is full: drop-oldest|drop-newest ${settingHint(F.spoolPolicy)}`)
    .option('--label <name=value>', 'job label sent as Kafka header ww-label-<name> (repeatable; env WARPWATCH_LABELS=a=1,b=2)', collect)
    .option('--metrics-port <n>', `port of /metrics and /healthz; 0 = any free port, off = none ${settingHint(F.metricsPort)}`)
    .option('--host <name>', `host name for the ww-host header ${settingHint(F.host)}`)
    .option(
      '--influx-url <url>',
      `write the collector's counters to this InfluxDB as warpwatch_pipeline points (service=collector) for the Pipeline health dashboard; "off" = none ${settingHint(F.influxUrl)}`,
    )
    .option('--influx-database <name>', `InfluxDB database; bucket <database>/<WARPWATCH_INFLUX_RETENTION_POLICY> ${settingHint(F.influxDatabase)}`)
    .option('--pipeline-interval-millis <ms>', `how often the counters are written to InfluxDB ${settingHint(F.pipelineIntervalMillis)}`)
    .option('--instance <name>', `tag instance of the warpwatch_pipeline points ${settingHint(F.instance)}`)
    .addHelpText(
      'after',
      '\nExamples:\n' +
        '  warpwatch collect --socket /run/warpwatch/collector.sock --label cluster=a100-east\n' +
        '  ./my-gpu-job | warpwatch collect --stdin --brokers kafka-1:9092,kafka-2:9092\n' +
        '  warpwatch collect --replay run1.wwf run2.wwf --metrics-port off\n' +
        '  warpwatch collect --influx-url http://127.0.0.1:18086 --instance gpu-node-3   # counters for the Pipeline health dashboard\n' +
        '\nFlags that do not apply are errors: --socket-mode without a served socket; --influx-database, --pipeline-interval-millis\n' +
        'and --instance without an InfluxDB. --host and --label follow the stream-identity rules (docs/errors.md).\n' +
        'Kafka or InfluxDB not answering is said once per outage with what to try (npm run stack -- up for the local stack\'s\n' +
        'addresses, else WARPWATCH_KAFKA_BROKERS / WARPWATCH_INFLUX_URL); the collector keeps spooling, /healthz says degraded.\n' +
        '\nA damaged --replay file is read like any stream: each damaged stretch is skipped up to the next valid frame and goes to\n' +
        'the DLQ as one record; each is also said on stderr before the run, with its offset and exact length, and the exit code\n' +
        'is then 1 (WW_ERR_FRAME_FILE_DAMAGED) unless --accept-damage is given. A cut-off last frame is a warning only.\n' +
        '\nExit: 0 after a clean stop (SIGTERM flushes within WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS, default 10 s; the rest stays spooled),\n' +
        '      2 for invalid flags or environment, 1 for a runtime failure.',
    )
    .action(async (options: CollectOptions, command: Command) => {
      await runCollect(options, command);
    });
}

/** What decides whether a `collect` flag applies: the configuration (flags and WARPWATCH_* variables). */
interface CollectContext {
  readonly servesSocket: boolean;
  readonly influx: boolean;
  readonly replay: boolean;
}

/** The flags of `warpwatch collect` that apply to some configurations only (an error elsewhere). */
export const COLLECT_FLAG_RULES: readonly FlagRule<CollectContext>[] = [
  { flag: '--socket-mode', applies: (c) => c.servesSocket, only: 'a served socket', instead: () => 'the sources are --stdin/--replay without --socket' },
  { flag: '--influx-database', applies: (c) => c.influx, only: '--influx-url', instead: () => 'no InfluxDB is written' },
  { flag: '--pipeline-interval-millis', applies: (c) => c.influx, only: '--influx-url', instead: () => 'no InfluxDB is written' },
  { flag: '--instance', applies: (c) => c.influx, only: '--influx-url', instead: () => 'no InfluxDB is written' },
  { flag: ACCEPT_DAMAGE_FLAG, applies: (c) => c.replay, only: '--replay' },
];

async function runCollect(options: CollectOptions, command: Command): Promise<void> {
  let config: CollectorConfig;
  try {
    config = loadCollectorConfig({ env: process.env, flags: options });
  } catch (error) {
    if (error instanceof CollectorConfigError) throw new UsageError(error.message, { cause: error, code: error.code });
    throw error;
  }
  rejectFlagsThatDoNotApply(
    command,
    { servesSocket: config.sources.socketPath !== undefined, influx: config.influx !== undefined, replay: config.sources.replayFiles.length > 0 },
    COLLECT_FLAG_RULES,
  );
  for (const file of config.sources.replayFiles) {
    if (!existsSync(file) || !statSync(file).isFile()) throw new UsageError(`--replay needs readable frame files, "${file}" is not a file`);
  }
  // The damage of each replay file, said before the run with the same reader as `analyze`
  // (cli/frame-file.ts): the collector's splitter skips exactly these stretches to the DLQ.
  const replayDamage = config.sources.replayFiles.map((file) => {
    const read = readFrameFile(file, `--replay file '${file}'`);
    return { file, damaged: read.damaged, damagedBytes: read.damagedBytes };
  });

  const service = await startCollectorService(config, stderrLineSink(process.stderr), { stdin: config.sources.stdin ? process.stdin : undefined });
  const stop = waitForStopSignal();
  const signal = await Promise.race([stop.received, service.finished.then(() => undefined)]);
  stop.dispose();
  // Exits within WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS (the flush) + 5 s (closing Kafka and the metrics
  // writer) whatever Kafka did before; what is not delivered stays in the spool (docs/collector.md).
  const sink = stderrLineSink(process.stderr);
  await stopWithinBound(() => service.stop(signal), { boundMillis: config.shutdownTimeoutMillis + COLLECTOR_CLOSE_MILLIS, code: 'WW_ERR_COLLECTOR_SHUTDOWN_TIMEOUT', log: (line) => sink(`warpwatch collect: ${line}`) });
  failOnFrameFileDamage(replayDamage, options.acceptDamage === true);
}
