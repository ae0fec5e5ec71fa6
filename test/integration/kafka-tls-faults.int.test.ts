// Kafka over TLS against a real broker (docs/security.md), the faults: one Kafka node private to
// this file (kafka-tls-support.ts) with five TLS listeners. Every failure gives one coded line,
// sends nothing (never plaintext), and the collector keeps the frames in its spool and delivers
// them, exactly, once the configuration is fixed and it is restarted; no secret appears in
// anything a service emits. Also the demo through the mutual-TLS listener.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { freePort } from '../../deploy/local/index.ts';
import { consumeTopic } from './collector-kafka-helpers.ts';
import { estimatorEnv, spawnEstimator, stopChild } from './estimator-support.ts';
import { codedLines, collect, directory, expectDelivered, FAST, framesFile, kafka, mutual, recordCount, sasl, saslSsl, serverVerified, tls, useTlsBroker } from './kafka-tls-support.ts';
import { startPrivateInflux, type PrivateInflux } from './private-influx.ts';

useTlsBroker(29492);

describe('collector over TLS (real broker), faults', () => {
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


describe('estimator over TLS (real broker), faults and the demo', () => {
  it('advise --stream over TLS to a broker with an unknown CA: one WW_ERR_ADVISE_KAFKA line naming the TLS cause', () => {
    const advise = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'advise', '--stream', 'nojob/k0', '--json'], {
      encoding: 'utf8',
      timeout: 90_000,
      env: { ...process.env, ...FAST, ...serverVerified(), WARPWATCH_KAFKA_TLS_CA_FILE: tls.otherCaFile, WARPWATCH_INFLUX_URL: 'off' },
    });
    expect(advise.status, advise.stderr).not.toBe(0);
    const lines = codedLines(advise.stderr, 'WW_ERR_');
    expect(lines, advise.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/WW_ERR_ADVISE_KAFKA: .*TLS handshake failed: the broker's certificate is not signed by a CA this client trusts/);
  });

  it('demo --kafka runs through the mutual-TLS listener', async () => {
    const out = join(directory, 'demo');
    // Asynchronous: a minute-long synchronous child would block this worker's event loop.
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'demo', '--quick', '--sizes', '8', '--kafka', '--no-progress', '--out', out], {
      env: { ...process.env, ...mutual(), WARPWATCH_INFLUX_URL: 'off' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const run = { status: await new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code))), stderr };
    expect(run.status, run.stderr).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as { transport: string; runs: unknown[] };
    expect(results.transport).toBe('kafka');
    expect(results.runs).toHaveLength(7);
    expect(await recordCount('warpwatch.frames')).toBeGreaterThan(0);
  }, 320_000);

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


// Secrets never leak (docs/security.md): each service runs with every secret set (the SASL
// password, the TLS client key, the InfluxDB token), first wrong (each failure path speaks),
// then right; everything it emits is searched for each secret's value: stderr/stdout, /healthz,
// /metrics, the DLQ records (value and headers). Zero hits.
describe('secrets never leak', () => {
  let influx: PrivateInflux;
  beforeAll(async () => {
    influx = await startPrivateInflux(28486, 'wwleak');
  }, 120_000);
  afterAll(async () => {
    await influx?.destroy();
  }, 60_000);

  /** Distinctive parts of each secret: the whole value, and each line of the key's body. */
  function needles(secrets: readonly string[]): string[] {
    const key = readFileSync(tls.clientKeyFile, 'utf8');
    const keyLines = key.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'));
    return [...secrets, key, ...keyLines];
  }

  const leaks = (emitted: string, secrets: readonly string[]): string[] => needles(secrets).filter((needle) => emitted.includes(needle));

  /** The service's whole environment of secrets: the SASL_SSL listener, the key as a value (not a file), the InfluxDB token. */
  const secretEnv = (password: string, influxToken: string): Record<string, string> => {
    const { WARPWATCH_KAFKA_SASL_PASSWORD_FILE: _file, ...rest } = saslSsl();
    return {
      ...rest,
      WARPWATCH_KAFKA_SASL_PASSWORD: password,
      WARPWATCH_KAFKA_TLS_CERT_FILE: tls.clientCertFile,
      WARPWATCH_KAFKA_TLS_KEY: readFileSync(tls.clientKeyFile, 'utf8'),
      WARPWATCH_INFLUX_URL: influx.url,
      WARPWATCH_INFLUX_DATABASE: influx.database,
      WARPWATCH_INFLUX_TOKEN: influxToken,
    };
  };

  async function runCollector(env: Record<string, string>, topic: string, input: Buffer): Promise<string> {
    const port = await freePort();
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--stdin', '--metrics-port', String(port), '--spool-dir', join(directory, `spool-${topic}`)], {
      env: { ...process.env, ...FAST, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: `${topic}.dlq`, WARPWATCH_PIPELINE_INTERVAL_MILLIS: '200', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let emitted = '';
    child.stdout.on('data', (chunk: Buffer) => (emitted += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (emitted += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdin.write(input);
    const deadline = Date.now() + 20_000;
    let health = '';
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      try {
        health = await (await fetch(`http://127.0.0.1:${port}/healthz`)).text();
        if (/"framesIn":\s*[1-9]/.test(health) && Date.now() > deadline - 14_000) break;
      } catch {
        // not listening yet
      }
    }
    emitted += health;
    emitted += await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    child.stdin.end();
    await exited;
    return emitted;
  }

  const inputFrames = (job: string): Buffer => {
    const good = Array.from({ length: 6 }, (_, sequence) => Buffer.from(fixtureFrameBytes({ job, kernel: 'k', sequence })));
    // A frame with a valid header and a corrupted body: rejected to the DLQ with its bytes.
    const bad = Buffer.from(fixtureFrameBytes({ job, kernel: 'k', sequence: 99 }));
    bad[bad.length - 3] = (bad[bad.length - 3] ?? 0) ^ 0xff;
    return Buffer.concat([...good, bad]);
  };

  it('collector: wrong secrets (every failure speaks), then right ones (DLQ records too): no secret in anything it emits', async () => {
    const canaryPassword = `ww-canary-sasl-${randomUUID()}`;
    const canaryToken = `${influx.credentials.writer.username}:ww-canary-influx-${randomUUID()}`;
    const topic = `ww-leak-${randomUUID().slice(0, 8)}`;
    const wrong = await runCollector(secretEnv(canaryPassword, canaryToken), `${topic}-wrong`, inputFrames(topic));
    expect(wrong).toMatch(/WW_ERR_KAFKA_AUTH/);
    expect(wrong).toMatch(/influx-auth/);
    expect(leaks(wrong, [canaryPassword, canaryToken, canaryToken.split(':')[1] ?? ''])).toEqual([]);

    const token = `${influx.credentials.writer.username}:${influx.credentials.writer.password}`;
    const right = await runCollector(secretEnv(sasl.password, token), topic, inputFrames(topic));
    const dlq = await consumeTopic(kafka.brokers, `${topic}.dlq`, 1, 30_000);
    expect(dlq.length, right).toBeGreaterThanOrEqual(1);
    const dlqText = dlq.map((m) => `${m.value.toString('latin1')} ${JSON.stringify(m.headers)} ${m.key ?? ''}`).join('\n');
    expect(leaks(`${right}\n${dlqText}`, [sasl.password, token, influx.credentials.writer.password])).toEqual([]);
  });

  it('estimator: wrong secrets, then right ones: no secret in its log, /healthz or /metrics', async () => {
    const canaryPassword = `ww-canary-sasl-${randomUUID()}`;
    const canaryToken = `${influx.credentials.writer.username}:ww-canary-influx-${randomUUID()}`;
    const token = `${influx.credentials.writer.username}:${influx.credentials.writer.password}`;
    for (const [password, influxToken, secrets] of [
      [canaryPassword, canaryToken, [canaryPassword, canaryToken, canaryToken.split(':')[1] ?? '']],
      [sasl.password, token, [sasl.password, token, influx.credentials.writer.password]],
    ] as const) {
      const id = `wwleakest${randomUUID().slice(0, 8)}`;
      const port = await freePort();
      const estimator = spawnEstimator(estimatorEnv(id, influx.database, `${id}-group`, { ...secretEnv(password, influxToken), WARPWATCH_METRICS_PORT: String(port) }), 'leak');
      let served = '';
      try {
        await estimator.waitForLog(password === canaryPassword ? /WW_ERR_/ : /group .* on /, 60_000);
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        for (const path of ['/healthz', '/metrics']) served += await fetch(`http://127.0.0.1:${port}${path}`).then((r) => r.text(), (error: unknown) => String(error));
      } finally {
        await stopChild(estimator);
      }
      const emitted = `${estimator.log.join('\n')}\n${served}`;
      expect(leaks(emitted, [...secrets]), emitted).toEqual([]);
    }
  });
});
