// vitest globalSetup of the `integration` project: real Kafka and InfluxDB for the tests.
// Servers given by WARPWATCH_KAFKA_BROKERS / WARPWATCH_INFLUX_URL elsewhere are only checked;
// local addresses (the defaults) are reused when running (`npm run stack -- up`, another test
// run) or installed and started through deploy/local. Teardown stops only what test runs
// started, and only when no other test run still holds the stack.
import type { TestProject } from 'vitest/node';
import { acquireStackLease, createStepReporter, localKafkaSaslCredentials, resolveLocalStackConfig, type StackLease } from '../../deploy/local/index.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** WARPWATCH_KAFKA_BROKERS of the running stack, e.g. '127.0.0.1:19092'. */
    warpwatchKafkaBrokers: string;
    /** WARPWATCH_INFLUX_URL of the running stack, e.g. 'http://127.0.0.1:18086'. */
    warpwatchInfluxUrl: string;
    /** WARPWATCH_INFLUX_DATABASE, e.g. 'warpwatch'. */
    warpwatchInfluxDatabase: string;
  }
}

let lease: StackLease | undefined;

/** Brings the stack up (or reuses it) and exports its addresses to the test workers. */
export async function setup(project: TestProject): Promise<void> {
  const reporter = createStepReporter((line) => process.stderr.write(`[stack] ${line}\n`));
  const started = Date.now();
  const config = resolveLocalStackConfig(process.env);
  lease = await acquireStackLease(config, reporter);
  const { kafkaBrokers, influxUrl, influxDatabase } = lease.endpoints;
  // The local node's SCRAM listener (an external cluster brings its own WARPWATCH_TEST_KAFKA_SASL_*).
  if (config.kafka.managed) {
    const sasl = localKafkaSaslCredentials(config);
    process.env['WARPWATCH_TEST_KAFKA_SASL_BROKERS'] = sasl.brokers.join(',');
    process.env['WARPWATCH_TEST_KAFKA_SASL_USERNAME'] = sasl.username;
    process.env['WARPWATCH_TEST_KAFKA_SASL_PASSWORD_FILE'] = sasl.passwordFile;
  }
  // Workers (forks pool) are spawned after global setup and inherit process.env.
  process.env['WARPWATCH_KAFKA_BROKERS'] = kafkaBrokers;
  process.env['WARPWATCH_INFLUX_URL'] = influxUrl;
  process.env['WARPWATCH_INFLUX_DATABASE'] = influxDatabase;
  project.provide('warpwatchKafkaBrokers', kafkaBrokers);
  project.provide('warpwatchInfluxUrl', influxUrl);
  project.provide('warpwatchInfluxDatabase', influxDatabase);
  const summary = lease.servers.map((s) => `${s.name} ${s.address} ${s.action}`).join(', ');
  process.stderr.write(`[stack] ready in ${((Date.now() - started) / 1000).toFixed(1)} s: ${summary}\n`);
}

/** Gives the lease back; the last test run out stops the servers test runs started. */
export async function teardown(): Promise<void> {
  if (lease === undefined) return;
  const results = await lease.release();
  lease = undefined;
  for (const result of results) {
    if (result.action === 'stopped' || result.action === 'killed') process.stderr.write(`[stack] ${result.name} ${result.action} (${result.detail})\n`);
  }
}
