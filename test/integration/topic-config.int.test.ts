// Kafka topics are created as contracts/topics.ts defines them, whichever service starts first,
// and each service says when an existing topic cannot take what it sends or reads
// (WW_ERR_KAFKA_TOPIC_CONFIG, a `topic-config: …` reason on /healthz). Real Kafka and InfluxDB of
// the shared stack; every topic, group and database is unique to this file.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigResourceTypes } from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEstimatorConfig, startEstimator } from '../../estimator/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { encodeFrame, histogramOfCounts, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { brokers, createDatabase, dropDatabase, estimatorEnv, influxQuery, kafkaClient, uniqueId, waitUntil } from './estimator-support.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-topic-config-'));
const databases: string[] = [];
const TOPIC_RESOURCE = 2 as ConfigResourceTypes; // ConfigResourceTypes.TOPIC
const BROKER_DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024;
const SAMPLED_GROUPS = 3000;

afterAll(async () => {
  for (const db of databases) await dropDatabase(db).catch(() => {});
  rmSync(directory, { recursive: true, force: true });
});

/** The max.message.bytes of each topic, as the broker reports it. */
async function maxMessageBytes(topics: readonly string[]): Promise<Record<string, string | undefined>> {
  const admin = kafkaClient().admin();
  await admin.connect();
  try {
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: topics.map((name) => ({ type: TOPIC_RESOURCE, name, configNames: ['max.message.bytes'] })) });
    return Object.fromEntries(described.resources.map((r) => [r.resourceName, r.configEntries.find((e) => e.configName === 'max.message.bytes')?.configValue]));
  } finally {
    await admin.disconnect();
  }
}

/** A LaunchSummary of 3,000 groups of 32 lanes and the GroupSamples of all of them: over 1 MiB. */
function bigLaunch(job: string): Uint8Array[] {
  const now = BigInt(Date.now()) * 1_000_000n;
  const identity = {
    job,
    kernel: 'big',
    launchId: 1n,
    frameSequence: 0,
    source: 'cpu' as const,
    groupSize: 32,
    sync: true,
    device: { name: 'test-cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
    startUnixNanos: now - 1_000_000n,
    endUnixNanos: now,
  };
  const groups = Array.from({ length: SAMPLED_GROUPS }, (_, g) => Array.from({ length: 32 }, (_, lane) => ((lane * 7 + g * 13) % 61) + 1));
  const loss = groups.reduce((sum, g) => sum + (32 * Math.max(...g)) / g.reduce((a, b) => a + b, 0), 0);
  const summary: LaunchSummaryFrame = {
    ...identity,
    type: 'launch-summary',
    groupCount: SAMPLED_GROUPS,
    groupsCounted: SAMPLED_GROUPS,
    sumSimtClocks: 1_000_000n,
    sumMimdClocks: 900_000n,
    sumMeasuredLoss: loss,
    sumCountsLoss: loss,
    sumMaxCounts: groups.reduce((sum, g) => sum + Math.max(...g), 0),
    sumCounts: groups.reduce((sum, g) => sum + g.reduce((a, b) => a + b, 0), 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(groups.flat()),
  };
  const samples: GroupSamplesFrame = {
    ...identity,
    frameSequence: 1,
    type: 'group-samples',
    groupCount: SAMPLED_GROUPS,
    selection: 'stride',
    samplingStride: 1,
    groups: groups.map((laneCounts, g) => ({ groupIndex: g, startClock: 0n, endClock: 1000n, laneCounts, laneFinishClocks: laneCounts.map((c) => BigInt(c * 10)) })),
  };
  return [encodeFrame(summary), encodeFrame(samples)];
}

/** The estimator's /healthz body. */
async function healthz(port: number | undefined): Promise<{ status: string; reasons: string[]; counters: Record<string, number> }> {
  const response = await fetch(`http://127.0.0.1:${port}/healthz`);
  return (await response.json()) as { status: string; reasons: string[]; counters: Record<string, number> };
}

/** `warpwatch collect --replay FILE` on the given topics; resolves with its exit code and stderr. */
function collect(file: string, framesTopic: string, dlqTopic: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(
    process.execPath,
    ['bin/warpwatch.mjs', 'collect', '--replay', file, '--brokers', brokers(), '--partitions', '1', '--spool-dir', join(directory, `spool-${framesTopic}`), '--metrics-port', 'off'],
    { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: framesTopic, WARPWATCH_DLQ_TOPIC: dlqTopic }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

describe('Kafka topic configuration (contracts/topics.ts)', () => {
  it('the estimator started first creates the frames topic to take 8 MiB records; a GroupSamples frame over 1 MiB goes collector → Kafka → estimator and is counted in its window', async () => {
    const id = uniqueId('wwtopics');
    const db = `${id}db`;
    databases.push(db);
    await createDatabase(db);
    const log: string[] = [];
    const config = loadEstimatorConfig({ env: estimatorEnv(id, db, `${id}-g`) });
    const estimator = await startEstimator(config, (line) => log.push(line));
    try {
      expect(await maxMessageBytes([`${id}.frames`])).toEqual({ [`${id}.frames`]: String(8 * 1024 * 1024) });
      const frames = bigLaunch(id);
      expect(frames[1]!.length).toBeGreaterThan(BROKER_DEFAULT_MAX_MESSAGE_BYTES);
      const file = join(directory, `${id}.wwf`);
      writeFileSync(file, Buffer.concat(frames));
      const collected = await collect(file, `${id}.frames`, `${id}.dlq`);
      expect(collected.code, collected.stderr).toBe(0);
      expect(collected.stderr).toContain('read 2 (frames 2, rejected 0) = delivered 2 (frames 2, DLQ 0)');
      expect(collected.stderr).not.toContain('WW_ERR_KAFKA_TOPIC_CONFIG');
      // Counted in its window: the warpwatch_samples point of the window holds every sampled group.
      let sampled = 0;
      await waitUntil(
        async () => {
          const series = await influxQuery(db, `SELECT sum("groups") FROM "${MEASUREMENTS.samples}" WHERE "job" = '${id}'`);
          sampled = Number(series[0]?.values[0]?.[1] ?? 0);
          return sampled >= SAMPLED_GROUPS;
        },
        30_000,
        `the window with the ${SAMPLED_GROUPS} sampled groups in InfluxDB (estimator log: ${log.join(' | ')})`,
      );
      expect(sampled).toBe(SAMPLED_GROUPS);
      const health = await healthz(estimator.metricsPort);
      expect(health.counters).toMatchObject({ framesIn: 2, framesOut: 2, framesRejected: 0 });
      expect(health.reasons.filter((r) => r.startsWith('topic-config'))).toEqual([]);
    } finally {
      await estimator.stop();
    }
  }, 90_000);

  it('a frames topic pre-created with the broker default (1 MiB) is reported by the estimator (log line, /healthz reason) and by the collector', async () => {
    const id = uniqueId('wwtopicsmall');
    const db = `${id}db`;
    databases.push(db);
    await createDatabase(db);
    const admin = kafkaClient().admin();
    await admin.connect();
    try {
      await admin.createTopics({
        waitForLeaders: true,
        topics: [`${id}.frames`, `${id}.dlq`].map((topic) => ({ topic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: String(BROKER_DEFAULT_MAX_MESSAGE_BYTES) }] })),
      });
    } finally {
      await admin.disconnect();
    }
    const expected = `topic ${id}.frames has max.message.bytes=${BROKER_DEFAULT_MAX_MESSAGE_BYTES}, it must take records of 4259856 bytes`;
    const expectedDlq = `topic ${id}.dlq has max.message.bytes=${BROKER_DEFAULT_MAX_MESSAGE_BYTES}, it must take records of 4259856 bytes`;
    const log: string[] = [];
    const estimator = await startEstimator(loadEstimatorConfig({ env: estimatorEnv(id, db, `${id}-g`) }), (line) => log.push(line));
    try {
      // The estimator reads the frames topic and writes quarantined frames to the DLQ topic: both are checked.
      expect(log.filter((line) => line.includes('WW_ERR_KAFKA_TOPIC_CONFIG'))).toEqual([
        expect.stringContaining(`warpwatch estimate: WW_ERR_KAFKA_TOPIC_CONFIG: ${expected}`),
        expect.stringContaining(`warpwatch estimate: WW_ERR_KAFKA_TOPIC_CONFIG: ${expectedDlq}`),
      ]);
      const { reasons } = await healthz(estimator.metricsPort);
      expect(reasons).toEqual([expect.stringContaining(`topic-config: ${expected}`), expect.stringContaining(`topic-config: ${expectedDlq}`)]);
      expect(reasons[0]).toContain(`--add-config max.message.bytes=${8 * 1024 * 1024}`);
    } finally {
      await estimator.stop();
    }
    // The collector says it for both of its topics; a small frame still gets through.
    const file = join(directory, `${id}.wwf`);
    writeFileSync(file, Buffer.from(bigLaunch(id)[0]!));
    const collected = await collect(file, `${id}.frames`, `${id}.dlq`);
    expect(collected.code, collected.stderr).toBe(0);
    expect(collected.stderr).toContain(`warn: WW_ERR_KAFKA_TOPIC_CONFIG: ${expected}`);
    expect(collected.stderr).toContain(`warn: WW_ERR_KAFKA_TOPIC_CONFIG: topic ${id}.dlq has max.message.bytes=${BROKER_DEFAULT_MAX_MESSAGE_BYTES}`);
    expect(collected.stderr.match(/WW_ERR_KAFKA_TOPIC_CONFIG/g)).toHaveLength(2);
  }, 90_000);
});
