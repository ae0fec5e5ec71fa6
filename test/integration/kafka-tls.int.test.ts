// Kafka over TLS against a real broker (docs/security.md), the paths that work: one Kafka node
// private to this file (kafka-tls-support.ts) with five TLS listeners; the collector delivers and
// the estimator consumes over each good one (server verified, mutual TLS, SASL_SSL). The faults
// (bad certificates, wrong passwords, secrets in the output) are kafka-tls-faults.int.test.ts.
// This file is in the Kafka 3.9 compatibility subset (docs/stack.md § Kafka versions).
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { consumeTopic } from './collector-kafka-helpers.ts';
import { estimatorEnv, spawnEstimator, stopChild } from './estimator-support.ts';
import { collect, directory, expectDelivered, framesFile, kafka, mutual, saslSsl, serverVerified, useTlsBroker } from './kafka-tls-support.ts';

useTlsBroker(29392);

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
        const windows = await consumeTopic(kafka.brokers, `${id}.distributions`, 3, 60_000);
        expect(windows.length, estimator.log.join('\n')).toBeGreaterThanOrEqual(3);
      } finally {
        await stopChild(estimator);
      }
      expect(frames).toHaveLength(30);
      // advise --stream reads the windows back over the same listener and settings.
      const advise = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'advise', '--stream', `${id}/k0`, '--json'], {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, ...estimatorEnv(id, id, `${id}-group`, { ...settings(), WARPWATCH_INFLUX_URL: 'off' }) },
      });
      expect(advise.status, advise.stderr).toBe(0);
      expect((JSON.parse(advise.stdout) as { groupSize: number }).groupSize).toBe(32);
    });
  }
});
