// Kafka over TLS against a real broker (docs/security.md): one Kafka node private to this file
// (deploy/local with WARPWATCH_STACK_KAFKA_TLS_PORT, CA and certificates made by openssl at
// set-up) with five TLS listeners: SSL (server verified), MTLS (client certificate required),
// SASL_SSL (SCRAM), and two that present a wrong-host and an expired certificate. The collector
// and the estimator deliver over each good one; every failure gives one coded line, sends
// nothing (never plaintext), and the collector keeps the frames in its spool and delivers them,
// exactly, once the configuration is fixed and it is restarted.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/frame-fixtures.ts';
import { localKafkaSaslCredentials, localKafkaTls, type LocalKafkaTls } from '../../deploy/local/index.ts';
import { consumeTopic, createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';
import { estimatorEnv, spawnEstimator, stopChild } from './estimator-support.ts';

const FAST = {
  WARPWATCH_RETRY_BACKOFF_MILLIS: '200',
  WARPWATCH_KAFKA_RETRIES: '1',
  WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '2000',
  WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS: '5000',
  WARPWATCH_PRODUCE_TIMEOUT_MILLIS: '8000',
  WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '3000',
};

let kafka: PrivateKafka;
let tls: LocalKafkaTls;
let directory: string;
let sasl: { username: string; passwordFile: string; password: string };

beforeAll(async () => {
  kafka = createPrivateKafka(29392, { WARPWATCH_STACK_KAFKA_TLS_PORT: '29395' });
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

function framesFile(name: string, count: number): { file: string; frames: Buffer[] } {
  const frames = Array.from({ length: count }, (_, sequence) => Buffer.from(fixtureFrameBytes({ job: name, kernel: `k${sequence % 3}`, sequence })));
  const file = join(directory, `${name}.wwf`);
  writeFileSync(file, Buffer.concat(frames));
  return { file, frames };
}

/** Client settings of each listener, as a user sets them (files, not values). */
const serverVerified = (): Record<string, string> => ({ WARPWATCH_KAFKA_BROKERS: tls.brokers.ssl, WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile });
const mutual = (): Record<string, string> => ({
  WARPWATCH_KAFKA_BROKERS: tls.brokers.mtls,
  WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile,
  WARPWATCH_KAFKA_TLS_CERT_FILE: tls.clientCertFile,
  WARPWATCH_KAFKA_TLS_KEY_FILE: tls.clientKeyFile,
});
const saslSsl = (): Record<string, string> => ({
  WARPWATCH_KAFKA_BROKERS: tls.brokers.saslSsl,
  WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile,
  WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-512',
  WARPWATCH_KAFKA_SASL_USERNAME: sasl.username,
  WARPWATCH_KAFKA_SASL_PASSWORD_FILE: sasl.passwordFile,
});

function collect(file: string, topic: string, spool: string, env: Record<string, string>): { status: number | null; stderr: string; stdout: string } {
  return spawnSync(process.execPath, ['bin/warpwatch.mjs', 'collect', '--replay', file, '--spool-dir', spool, '--metrics-port', 'off'], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: `${topic}.dlq`, WARPWATCH_INFLUX_URL: 'off', ...FAST, ...env },
  });
}

/** Records in `topic` as the broker's plaintext listener reports them (0 when the topic does not exist). */
async function recordCount(topic: string): Promise<number> {
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

async function expectDelivered(topic: string, frames: readonly Buffer[]): Promise<void> {
  const messages = await consumeTopic(kafka.brokers, topic, frames.length);
  expect(messages).toHaveLength(frames.length);
  expect(new Set(messages.map((m) => m.value.toString('base64')))).toEqual(new Set(frames.map((f) => f.toString('base64'))));
  expect(await recordCount(topic)).toBe(frames.length);
}

const codedLines = (stderr: string, code: string): string[] => stderr.split('\n').filter((line) => line.includes(code));

describe('collector over TLS (real broker)', () => {
  const good: [string, () => Record<string, string>][] = [
    ['TLS with server verification', serverVerified],
    ['mutual TLS', mutual],
    ['SASL_SSL (SCRAM-SHA-512, password from a file)', saslSsl],
  ];
  for (const [name, settings] of good) {
    it(`delivers every frame byte-identical over ${name}`, async () => {
      const topic = `ww-tls-${randomUUID().slice(0, 8)}`;
      const { file, frames } = framesFile(topic, 25);
      const run = collect(file, topic, join(directory, `spool-${topic}`), settings());
      expect(run.status, run.stderr).toBe(0);
      await expectDelivered(topic, frames);
    });
  }

  // Each failure: its settings, the fix, the code and the words of its one line.
  const failures: [string, () => Record<string, string>, () => Record<string, string>, string, RegExp][] = [
    ['unknown CA', () => ({ ...serverVerified(), WARPWATCH_KAFKA_TLS_CA_FILE: tls.otherCaFile }), serverVerified, 'WW_ERR_KAFKA_TLS', /not signed by a CA this client trusts: set WARPWATCH_KAFKA_TLS_CA_FILE/],
    ['wrong host name', () => ({ ...serverVerified(), WARPWATCH_KAFKA_BROKERS: tls.brokers.wrongHost }), serverVerified, 'WW_ERR_KAFKA_TLS', /does not name the host this client connected to/],
    ['expired certificate', () => ({ ...serverVerified(), WARPWATCH_KAFKA_BROKERS: tls.brokers.expired }), serverVerified, 'WW_ERR_KAFKA_TLS', /certificate has expired/],
    ['no client certificate where mTLS is required', () => ({ WARPWATCH_KAFKA_BROKERS: tls.brokers.mtls, WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile }), mutual, 'WW_ERR_KAFKA_TLS', /refused this client during the TLS handshake .*WARPWATCH_KAFKA_TLS_CERT_FILE/],
    ['wrong SASL password over TLS', () => ({ ...saslSsl(), WARPWATCH_KAFKA_SASL_PASSWORD_FILE: join(directory, 'wrong-password') }), saslSsl, 'WW_ERR_KAFKA_AUTH', /refused the SASL login of user '[^']+' with scram-sha-512/],
  ];
  for (const [name, broken, fixed, code, words] of failures) {
    it(`${name}: one ${code} line, nothing sent, frames spooled and delivered exactly once fixed`, async () => {
      writeFileSync(join(directory, 'wrong-password'), `wrong-${randomUUID()}`, { mode: 0o600 });
      const topic = `ww-tls-fail-${randomUUID().slice(0, 8)}`;
      const spool = join(directory, `spool-${topic}`);
      const { file, frames } = framesFile(topic, 12);
      const failed = collect(file, topic, spool, broken());
      expect(failed.status, failed.stderr).toBe(1);
      const lines = codedLines(failed.stderr, code);
      expect(lines, failed.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(words);
      expect(failed.stderr).toMatch(/WW_ERR_COLLECTOR_UNDELIVERED: 12 record\(s\) did not reach Kafka and stay in the spool/);
      // Never plaintext: the broker holds nothing of it.
      expect(await recordCount(topic)).toBe(0);
      expect(`${failed.stdout}${failed.stderr}`).not.toContain(sasl.password);
      expect(`${failed.stdout}${failed.stderr}`).not.toContain(readFileSync(tls.clientKeyFile, 'utf8').split('\n')[1]);

      // Fixed and restarted with the same spool (no new input): the 12 frames arrive, once.
      const empty = join(directory, `${topic}-empty.wwf`);
      writeFileSync(empty, '');
      const again = collect(empty, topic, spool, fixed());
      expect(again.status, again.stderr).toBe(0);
      await expectDelivered(topic, frames);
    });
  }
});

describe('estimator over TLS (real broker)', () => {
  const good: [string, () => Record<string, string>][] = [
    ['TLS with server verification', serverVerified],
    ['mutual TLS', mutual],
    ['SASL_SSL (SCRAM-SHA-512)', saslSsl],
  ];
  for (const [name, settings] of good) {
    it(`consumes frames and publishes windows over ${name}`, async () => {
      const id = `wwtlsest${randomUUID().slice(0, 8)}`;
      const { file, frames } = framesFile(id, 30);
      const sent = collect(file, `${id}.frames`, join(directory, `spool-${id}`), settings());
      expect(sent.status, sent.stderr).toBe(0);
      const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { ...settings(), WARPWATCH_INFLUX_URL: 'off' }), name.slice(0, 8));
      try {
        await estimator.waitForLog(/group .* on /, 60_000);
        const windows = await consumeTopic(kafka.brokers, `${id}.distributions`, 1, 60_000);
        expect(windows.length, estimator.log.join('\n')).toBeGreaterThanOrEqual(1);
      } finally {
        await stopChild(estimator);
      }
      expect(frames).toHaveLength(30);
    });
  }

  const failures: [string, () => Record<string, string>, string, RegExp][] = [
    ['unknown CA', () => ({ ...serverVerified(), WARPWATCH_KAFKA_TLS_CA_FILE: tls.otherCaFile }), 'WW_ERR_KAFKA_TLS', /not signed by a CA this client trusts/],
    ['wrong host name', () => ({ ...serverVerified(), WARPWATCH_KAFKA_BROKERS: tls.brokers.wrongHost }), 'WW_ERR_KAFKA_TLS', /does not name the host/],
    ['expired certificate', () => ({ ...serverVerified(), WARPWATCH_KAFKA_BROKERS: tls.brokers.expired }), 'WW_ERR_KAFKA_TLS', /certificate has expired/],
    ['no client certificate where mTLS is required', () => ({ WARPWATCH_KAFKA_BROKERS: tls.brokers.mtls, WARPWATCH_KAFKA_TLS_CA_FILE: tls.caFile }), 'WW_ERR_KAFKA_TLS', /refused this client during the TLS handshake/],
    ['wrong SASL password over TLS', () => {
        const { WARPWATCH_KAFKA_SASL_PASSWORD_FILE: _file, ...rest } = saslSsl();
        return { ...rest, WARPWATCH_KAFKA_SASL_PASSWORD: `wrong-${randomUUID()}` };
      }, 'WW_ERR_ESTIMATOR_KAFKA', /SASL .*authentication failed/],
  ];
  for (const [name, broken, code, words] of failures) {
    it(`${name}: one ${code} line naming the cause, and nothing consumed`, async () => {
      const id = `wwtlsbad${randomUUID().slice(0, 8)}`;
      const settings = broken();
      const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { ...settings, WARPWATCH_INFLUX_URL: 'off' }), 'broken');
      try {
        await estimator.waitForLog(new RegExp(code), 90_000);
        // Give it time to repeat itself if it would.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
      } finally {
        await stopChild(estimator);
      }
      const lines = estimator.log.filter((line) => line.includes(code));
      expect(lines, estimator.log.join('\n')).toHaveLength(1);
      expect(lines[0]).toMatch(words);
      expect(estimator.log.join('\n')).not.toMatch(/group .* on /);
      expect(estimator.log.join('\n')).not.toContain(sasl.password);
      expect(settings['WARPWATCH_KAFKA_SASL_PASSWORD'] === undefined || !estimator.log.join('\n').includes(settings['WARPWATCH_KAFKA_SASL_PASSWORD'])).toBe(true);
    });
  }
});
