// The private TLS Kafka node of the TLS test files (docs/security.md) and what they share:
// deploy/local with WARPWATCH_STACK_KAFKA_TLS_PORT (CA and certificates made by openssl at set-up),
// five TLS listeners: SSL (server verified), MTLS (client certificate required), SASL_SSL (SCRAM),
// and two that present a wrong-host and an expired certificate.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, expect } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { localKafkaSaslCredentials, localKafkaTls, type LocalKafkaTls } from '../../deploy/local/index.ts';
import { consumeTopic, createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';

export const FAST = {
  WARPWATCH_RETRY_BACKOFF_MILLIS: '200',
  WARPWATCH_KAFKA_RETRIES: '1',
  WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '2000',
  WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS: '5000',
  WARPWATCH_PRODUCE_TIMEOUT_MILLIS: '8000',
  WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '3000',
};

// Set by useTlsBroker's beforeAll; read by the tests (live bindings).
export let kafka: PrivateKafka;
export let tls: LocalKafkaTls;
export let directory: string;
export let sasl: { username: string; passwordFile: string; password: string };

/** Starts the file's private TLS node on `port` (controller port + 1, SASL + 2, TLS listeners port + 3 .. + 7) before its tests and removes it after. */
export function useTlsBroker(port: number): void {
  beforeAll(async () => {
    kafka = createPrivateKafka(port, { WARPWATCH_STACK_KAFKA_TLS_PORT: String(port + 3) });
    await kafka.start();
    const material = localKafkaTls(kafka.config);
    if (material === undefined) throw new Error('the private node has no TLS listeners');
    tls = material;
    sasl = localKafkaSaslCredentials(kafka.config);
    directory = mkdtempSync(join(tmpdir(), 'ww-kafka-tls-'));
  }, 180_000);

  afterAll(async () => {
    await kafka?.destroy();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  }, 60_000);
}

export function framesFile(name: string, count: number): { file: string; frames: Buffer[] } {
  const frames = Array.from({ length: count }, (_, sequence) => Buffer.from(fixtureFrameBytes({ job: name, kernel: `k${sequence % 3}`, sequence })));
  const file = join(directory, `${name}.wwf`);
  writeFileSync(file, Buffer.concat(frames));
  return { file, frames };
}

/** Client settings of each listener, as a user sets them (files, not values). */
export const serverVerified = (): Record<string, string> => ({ WARPWATCH_KAFKA_BROKERS: tls.brokers.ssl, WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile });
export const mutual = (): Record<string, string> => ({
  WARPWATCH_KAFKA_BROKERS: tls.brokers.mtls,
  WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile,
  WARPWATCH_KAFKA_TLS_CERT_FILE: tls.clientCertFile,
  WARPWATCH_KAFKA_TLS_KEY_FILE: tls.clientKeyFile,
});
export const saslSsl = (): Record<string, string> => ({
  WARPWATCH_KAFKA_BROKERS: tls.brokers.saslSsl,
  WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile,
  WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-512',
  WARPWATCH_KAFKA_SASL_USERNAME: sasl.username,
  WARPWATCH_KAFKA_SASL_PASSWORD_FILE: sasl.passwordFile,
});

export function collect(file: string, topic: string, spool: string, env: Record<string, string>): { status: number | null; stderr: string; stdout: string } {
  return spawnSync(process.execPath, ['bin/warpwatch.mjs', 'collect', '--replay', file, '--spool-dir', spool, '--metrics-port', 'off'], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: `${topic}.dlq`, WARPWATCH_INFLUX_URL: 'off', ...FAST, ...env },
  });
}

/** Records in `topic` as the broker's plaintext listener reports them (0 when the topic does not exist). */
export async function recordCount(topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'ww-tls-it', brokers: [kafka.brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    if (!(await admin.listTopics()).includes(topic)) return 0;
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  } finally {
    await admin.disconnect();
  }
}

export async function expectDelivered(topic: string, frames: readonly Buffer[]): Promise<void> {
  const messages = await consumeTopic(kafka.brokers, topic, frames.length);
  expect(messages).toHaveLength(frames.length);
  expect(new Set(messages.map((m) => m.value.toString('base64')))).toEqual(new Set(frames.map((f) => f.toString('base64'))));
  expect(await recordCount(topic)).toBe(frames.length);
}

export const codedLines = (stderr: string, code: string): string[] => stderr.split('\n').filter((line) => line.includes(code));

