// Entry point of `npm run stack -- up|down|status|logs`: local Kafka and InfluxDB without containers.
// Like cli/, this file is an entry point: it alone reads argv and sets the exit code.
import { Command, CommanderError } from 'commander';
import { DeployError } from '../errors.ts';
import { localKafkaSaslCredentials } from './kafka-server.ts';
import { bringDownStack, bringUpStack, createStackServers, stackEndpoints, stackStatus } from './local-stack.ts';
import { tailFile } from './process-control.ts';
import { createStepReporter, formatDuration } from './progress.ts';
import { resolveLocalStackConfig } from './stack-config.ts';

const out = (line: string): void => {
  process.stdout.write(`${line}\n`);
};
const progress = createStepReporter((line) => process.stderr.write(`${line}\n`));

function envLines(): string[] {
  const endpoints = stackEndpoints(resolveLocalStackConfig());
  return [
    `export WARPWATCH_KAFKA_BROKERS=${endpoints.kafkaBrokers}`,
    `export WARPWATCH_INFLUX_URL=${endpoints.influxUrl}`,
    `export WARPWATCH_INFLUX_DATABASE=${endpoints.influxDatabase}`,
  ];
}

function createStackProgram(): Command {
  const program = new Command('stack')
    .description('Local Kafka 4.4 (KRaft; WARPWATCH_STACK_KAFKA_VERSION for another) and InfluxDB 1.8 for warpwatch, without containers. Settings: WARPWATCH_* variables (docs/stack.md).')
    .exitOverride();

  program
    .command('up')
    .description('install on first use (Maven, Go), start both servers detached, wait until they answer')
    .action(async () => {
      const config = resolveLocalStackConfig();
      const started = Date.now();
      progress.note(`cache: ${config.cacheDirectory}`);
      const { servers } = await bringUpStack(config, { owner: 'stack', reporter: progress });
      for (const server of servers) out(`${server.name.padEnd(9)} ${server.address.padEnd(24)} ${server.action} (${server.detail})`);
      if (config.kafka.managed) {
        const sasl = localKafkaSaslCredentials(config);
        out(`${'kafka'.padEnd(9)} ${sasl.brokers.join(',').padEnd(24)} SASL_PLAINTEXT, SCRAM-SHA-256/512, user ${sasl.username}, password in ${sasl.passwordFile}`);
      }
      out(`stack up in ${formatDuration(Date.now() - started)}; for other shells:`);
      for (const line of envLines()) out(`  ${line}`);
    });

  program
    .command('down')
    .description('stop the servers deploy/local started (SIGTERM, then SIGKILL after 30 s)')
    .action(async () => {
      const results = await bringDownStack(resolveLocalStackConfig(), { reporter: progress });
      for (const result of results) out(`${result.name.padEnd(9)} ${result.address.padEnd(24)} ${result.action} (${result.detail})`);
    });

  program
    .command('status')
    .description('probe both servers; exit code 0 only when both answer')
    .action(async () => {
      const statuses = await stackStatus(resolveLocalStackConfig());
      for (const s of statuses) {
        const process_ = s.pid === undefined ? (s.managed ? 'no process of deploy/local' : 'external') : `pid ${s.pid}, started by ${s.owner ?? 'unknown'}`;
        out(`${s.name.padEnd(9)} ${s.address.padEnd(24)} ${s.ready ? 'up  ' : 'DOWN'} ${s.detail} [${process_}]`);
      }
      if (statuses.every((s) => s.ready)) {
        for (const line of envLines()) out(line);
      } else {
        process.exitCode = 1;
      }
    });

  program
    .command('logs')
    .description('print the last lines of the server logs')
    .argument('[server]', 'kafka or influxdb (default: both)')
    .option('-n, --lines <count>', 'lines per log', '50')
    .action((name: string | undefined, options: { lines: string }) => {
      const lines = Number(options.lines);
      if (!Number.isInteger(lines) || lines < 1) throw new DeployError('WW_ERR_STACK_CONFIG', `--lines must be a positive integer, got "${options.lines}"`);
      const servers = createStackServers(resolveLocalStackConfig()).filter(({ server }) => name === undefined || server.name === name);
      if (servers.length === 0) throw new DeployError('WW_ERR_STACK_CONFIG', `server must be kafka or influxdb, got "${name}"`);
      for (const { server } of servers) {
        for (const file of new Set([server.logFile, server.outputFile])) {
          out(`==> ${file} <==`);
          out(tailFile(file, lines) || '(empty or missing)');
        }
      }
    });
  return program;
}

try {
  await createStackProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) {
    process.exitCode = error.exitCode === 0 ? 0 : 2;
  } else {
    process.stderr.write(`stack: ${error instanceof DeployError ? `[${error.code}] ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
