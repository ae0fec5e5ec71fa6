// SASL/SCRAM against the real broker's SASL_PLAINTEXT listener (the local node's, see
// deploy/local/kafka-server.ts). Collector: frames arrive byte-identical with both mechanisms
// and the password from a file; a wrong password is a clear, coded error that names no secret,
// and the frames stay in the spool (nothing lost). Whole pipeline: collector and estimator both
// log in with SCRAM, the windows reach InfluxDB, and advise reads the stream back over SCRAM.
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { consumeTopic } from './collector-kafka-helpers.ts';
import { createDatabase, dropDatabase, estimatorEnv, influxQuery, spawnEstimator, stopChild, uniqueId, waitUntil } from './estimator-support.ts';
import { requiredEnv } from './stack-env.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-collector-sasl-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function framesFile(name: string, count: number): { file: string; frames: Buffer[] } {
  const frames = Array.from({ length: count }, (_, sequence) => Buffer.from(fixtureFrameBytes({ job: 'sasl', kernel: `k${sequence % 3}`, sequence })));
  const file = join(directory, `${name}.wwf`);
  writeFileSync(file, Buffer.concat(frames));
  return { file, frames };
}

function collect(file: string, topic: string, spool: string, env: Record<string, string>) {
  return spawnSync(
    process.execPath,
    ['bin/warpwatch.mjs', 'collect', '--replay', file, '--brokers', requiredEnv('WARPWATCH_TEST_KAFKA_SASL_BROKERS'), '--spool-dir', spool, '--metrics-port', 'off'],
    {
      encoding: 'utf8',
      timeout: 120_000,
      env: {
        ...process.env,
        WARPWATCH_FRAMES_TOPIC: topic,
        WARPWATCH_DLQ_TOPIC: `${topic}.dlq`,
        WARPWATCH_INFLUX_URL: 'off',
        WARPWATCH_KAFKA_SASL_USERNAME: requiredEnv('WARPWATCH_TEST_KAFKA_SASL_USERNAME'),
        ...env,
      },
    },
  );
}

describe('collector with SASL/SCRAM (real broker)', () => {
  for (const mechanism of ['scram-sha-256', 'scram-sha-512'] as const) {
    it(`delivers every frame byte-identical over ${mechanism}, password from a file`, async () => {
      const topic = `ww-sasl-${mechanism}-${randomUUID().slice(0, 8)}`;
      const { file, frames } = framesFile(mechanism, 30);
      const run = collect(file, topic, join(directory, `spool-${mechanism}`), {
        WARPWATCH_KAFKA_SASL_MECHANISM: mechanism,
        WARPWATCH_KAFKA_SASL_PASSWORD_FILE: requiredEnv('WARPWATCH_TEST_KAFKA_SASL_PASSWORD_FILE'),
      });
      expect(run.status, run.stderr).toBe(0);
      // Read back through the plain listener of the same node.
      const messages = await consumeTopic(requiredEnv('WARPWATCH_KAFKA_BROKERS'), topic, frames.length);
      expect(messages).toHaveLength(frames.length);
      const sent = new Set(frames.map((f) => f.toString('base64')));
      for (const message of messages) expect(sent.has(message.value.toString('base64'))).toBe(true);
      const password = readFileSync(requiredEnv('WARPWATCH_TEST_KAFKA_SASL_PASSWORD_FILE'), 'utf8');
      expect(run.stderr).not.toContain(password);
      expect(run.stdout).not.toContain(password);
    });
  }

  it('with a wrong password fails with a coded error, never prints the password, and keeps the frames in the spool', () => {
    const topic = `ww-sasl-wrong-${randomUUID().slice(0, 8)}`;
    const { file } = framesFile('wrong', 12);
    const spool = join(directory, 'spool-wrong');
    const wrong = `not-the-password-${randomUUID()}`;
    const run = collect(file, topic, spool, {
      WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-512',
      WARPWATCH_KAFKA_SASL_PASSWORD: wrong,
      WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '5000',
    });
    expect(run.status, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/WW_ERR_KAFKA_AUTH: .*refused the SASL login of user '[^']+' with scram-sha-512/);
    expect(run.stderr).toMatch(/warpwatch: WW_ERR_COLLECTOR_UNDELIVERED: 12 record\(s\) did not reach Kafka and stay in the spool/);
    expect(run.stderr).not.toContain(wrong);
    const spooled = readdirSync(spool, { recursive: true })
      .map((name) => join(spool, String(name)))
      .filter((path) => statSync(path).isFile())
      .reduce((sum, path) => sum + statSync(path).size, 0);
    expect(spooled).toBeGreaterThan(0);
  });

  it('runs the whole pipeline over SCRAM: collector and estimator log in, windows reach InfluxDB, advise reads the stream', async () => {
    const id = uniqueId('wwsasl');
    await createDatabase(id);
    const scram = {
      WARPWATCH_KAFKA_BROKERS: requiredEnv('WARPWATCH_TEST_KAFKA_SASL_BROKERS'),
      WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-256',
      WARPWATCH_KAFKA_SASL_USERNAME: requiredEnv('WARPWATCH_TEST_KAFKA_SASL_USERNAME'),
      WARPWATCH_KAFKA_SASL_PASSWORD_FILE: requiredEnv('WARPWATCH_TEST_KAFKA_SASL_PASSWORD_FILE'),
    };
    const env = estimatorEnv(id, id, `${id}-group`, { ...scram, WARPWATCH_WINDOW_MILLIS: '600000' });
    const estimator = spawnEstimator(env, 'sasl');
    try {
      await estimator.waitForLog(/group .* on /, 60_000);
      const frames = join(directory, 'pipeline.wwf');
      const run = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'run', 'matpow', '--backend', 'cpu', '--dist', 'pois(20)', '--n', '16', '--groups', '256', '--launches', '2', '--job', 'sasljob', '--out', frames], {
        encoding: 'utf8',
        timeout: 240_000,
      });
      expect(run.status, run.stderr).toBe(0);
      const sent = collect(frames, `${id}.frames`, join(directory, 'spool-pipeline'), scram);
      expect(sent.status, sent.stderr).toBe(0);
      await waitUntil(
        async () => {
          const rows = await influxQuery(id, `SELECT sum("groups") FROM "warpwatch_window" WHERE stream = 'sasljob/matpow'`);
          return Number(rows[0]?.values[0]?.[1] ?? 0) === 512;
        },
        60_000,
        'the window of sasljob/matpow in InfluxDB',
      );
      const advise = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'advise', '--stream', 'sasljob/matpow', '--json'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, ...env },
      });
      expect(advise.status, advise.stderr).toBe(0);
      const advice = JSON.parse(advise.stdout) as { groupSize: number; distribution: { totalWeight: number } };
      expect(advice.groupSize).toBe(16);
      expect(advice.distribution.totalWeight).toBe(512 * 16);
    } finally {
      await stopChild(estimator);
      await dropDatabase(id).catch(() => undefined);
    }
  });
});
