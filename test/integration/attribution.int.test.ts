// Attribution end to end on the real servers: frames of one job through the real
// `warpwatch collect` (host, --label, WARPWATCH_LABEL_POD as the downward API sets it) into
// Kafka, the real `warpwatch estimate` into InfluxDB (tags checked with InfluxQL), and
// `warpwatch advise --stream` reading warpwatch.distributions. One kernel runs at n = 8 and
// n = 32 on GPU A, and at n = 32 on GPU B of the same model: three streams, kept apart.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { generateLaunches } from '../../estimator/testing/test-support.ts';
import { encodeFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { brokers, createDatabase, createTopic, dropDatabase, estimatorEnv, influxQuery, spawnEstimator, stopChild, uniqueId, waitUntil, type EstimatorChild } from './estimator-support.ts';

const GPU_A = '11111111-aaaa-4aaa-8aaa-111111111111';
const GPU_B = '22222222-bbbb-4bbb-8bbb-222222222222';
const children: EstimatorChild[] = [];
const databases: string[] = [];
const directory = mkdtempSync(join(tmpdir(), 'ww-attribution-'));
afterAll(async () => {
  await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
  await Promise.all(databases.map((db) => dropDatabase(db).catch(() => undefined)));
  rmSync(directory, { recursive: true, force: true });
});

/** The same lanes regrouped into groups of `groupSize` on device `uuid`. */
function variant(frame: LaunchSummaryFrame, groupSize: number, uuid: string): LaunchSummaryFrame {
  const scale = frame.groupSize / groupSize;
  return { ...frame, job: 'attr', kernel: 'matpow', groupSize, groupCount: frame.groupCount * scale, groupsCounted: frame.groupsCounted * scale, device: { ...frame.device, name: 'NVIDIA H100 80GB HBM3', uuid } };
}

describe('attribution end to end (real collector, Kafka, estimator, InfluxDB)', () => {
  it('carries host, labels, device UUID and n into InfluxDB tags and distributions, and advise --stream picks each run', async () => {
    const id = uniqueId('wwattr');
    const database = `${id}db`;
    databases.push(database);
    await createDatabase(database);
    await createTopic(`${id}.frames`, 2);
    const estimator = spawnEstimator(estimatorEnv(id, database, `${id}-g`, { WARPWATCH_TAG_LABELS: 'pod,cluster' }), 'attr');
    children.push(estimator);
    await estimator.waitForLog(/assigned partitions \[0, 1\] of/, 60_000);

    const start = Math.floor((Date.now() - 60_000) / 1000) * 1000;
    const base = generateLaunches({ streams: 1, launchesPerStream: 20, launchIntervalMillis: 100, startMillis: start, groups: 32, groupSize: 32, seed: 3 }).map((l) => l.frame);
    const runs = [
      { groupSize: 8, uuid: GPU_A },
      { groupSize: 32, uuid: GPU_A },
      { groupSize: 32, uuid: GPU_B },
    ];
    const file = join(directory, 'frames.wwf');
    writeFileSync(file, Buffer.concat(runs.flatMap((run, r) => base.map((frame) => Buffer.from(encodeFrame({ ...variant(frame, run.groupSize, run.uuid), launchId: frame.launchId + BigInt(r) * 1_000_000n }))))));
    const collected = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'collect', '--replay', file, '--brokers', brokers(), '--host', 'gpu-node-7', '--label', 'cluster=a100-east', '--spool-dir', join(directory, 'spool'), '--metrics-port', 'off'], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_LABEL_POD: 'trainer-0', WARPWATCH_INFLUX_URL: 'off' },
    });
    expect(collected.status, collected.stderr).toBe(0);
    expect(collected.stderr).toMatch(/read 60 \(frames 60, rejected 0\) = delivered 60 /);

    // 20 launches 100 ms apart = 2 one-second windows per stream, 3 streams.
    await waitUntil(async () => {
      const series = await influxQuery(database, `SELECT count(loss_counts) FROM "${MEASUREMENTS.window}" GROUP BY *`);
      return series.length === 3 && series.every((s) => Number(s.values[0]?.[1]) >= 2);
    }, 90_000, 'two windows of each of the three streams');
    const series = await influxQuery(database, `SELECT count(loss_counts) FROM "${MEASUREMENTS.window}" GROUP BY *`);
    const tags = series.map((s) => s.tags ?? {});
    expect(tags.map((t) => `${t['n']}|${t['device_uuid']}`).sort()).toEqual([`32|${GPU_A}`, `32|${GPU_B}`, `8|${GPU_A}`]);
    for (const t of tags) {
      expect(t['host']).toBe('gpu-node-7');
      expect(t['pod']).toBe('trainer-0');
      expect(t['cluster']).toBe('a100-east');
      expect(t['device']).toBe('NVIDIA H100 80GB HBM3');
      expect(t['stream']).toBe('attr/matpow');
    }
    const tagKeys = (await influxQuery(database, `SHOW TAG KEYS FROM "${MEASUREMENTS.window}"`))[0]?.values.map((v) => String(v[0])) ?? [];
    expect(tagKeys).toEqual(expect.arrayContaining(['host', 'device_uuid', 'pod', 'cluster']));

    // advise --stream reads warpwatch.distributions: ambiguous alone, each run by --n/--device.
    const advise = (...args: string[]) =>
      spawnSync(process.execPath, ['bin/warpwatch.mjs', 'advise', '--stream', 'attr/matpow', ...args, '--json'], {
        encoding: 'utf8',
        timeout: 120_000,
        env: { ...process.env, WARPWATCH_KAFKA_BROKERS: brokers(), WARPWATCH_DISTRIBUTIONS_TOPIC: `${id}.distributions` },
      });
    await waitUntil(async () => advise('--n', '8').status === 0, 60_000, 'the n = 8 distributions record');
    const ambiguous = advise();
    expect(ambiguous.status).not.toBe(0);
    expect(ambiguous.stderr).toMatch(/WW_ERR_ADVISE_STREAM_AMBIGUOUS/);
    expect(ambiguous.stderr).toContain(`--n 8 --device ${GPU_A}`);
    for (const [args, n] of [[['--n', '8'], 8], [['--n', '32', '--device', GPU_B], 32], [['--n', '32', '--device', GPU_A, '--host', 'gpu-node-7'], 32]] as const) {
      const result = advise(...args);
      expect(result.status, result.stderr).toBe(0);
      expect((JSON.parse(result.stdout) as { groupSize: number }).groupSize).toBe(n);
    }
  }, 300_000);
});
