// Partitions added to the frames topic while the estimator runs (docs/estimator.md § Adding
// partitions): the estimator sees the new count at its next offsets probe, says so in one coded
// line and keeps it on /healthz, rather than letting streams move partitions silently.
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { encodeFrame } from '../../protocol/index.ts';
import { createSeededRandom } from '../../model/index.ts';
import { freePort } from '../../deploy/local/index.ts';
import { brokers, cleanedUpAfterAll, createDatabase, createFramesTopic, estimatorEnv, healthOf, kafkaClient, launchFrame, spawnEstimator, uniqueId, waitUntil } from './estimator-support.ts';

const { children, databases } = cleanedUpAfterAll();

describe('the frames topic changed at run time (partitions added, topic deleted)', () => {
  it('logs WW_ERR_ESTIMATOR_PARTITIONS_CHANGED once with both counts, shows it on /healthz (degraded), then counts each stream that moves once (/healthz streamsMoved) with one line', async () => {
    const id = uniqueId('wwparts');
    databases.push(id);
    await createDatabase(id);
    await createFramesTopic(`${id}.frames`, 3);
    const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`), `${id}-0`);
    children.push(estimator);
    await estimator.waitForLog(/partition 2 restored/, 90_000);
    // Streams placed by producers that know 3 partitions (as the collectors did until the change).
    const random = createSeededRandom(11);
    const jobs = Array.from({ length: 40 }, (_, i) => `${id}-s${i}`);
    const placed = async (round: number): Promise<Map<string, number>> => {
      const producer = kafkaClient().producer({ idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      try {
        const where = new Map<string, number>();
        for (const [i, job] of jobs.entries()) {
          const frame = launchFrame(job, round * 1_000 + i, Date.now(), random);
          const [meta] = await producer.send({ topic: `${id}.frames`, acks: -1, messages: [{ key: `${job}/k`, value: Buffer.from(encodeFrame(frame)) }] });
          where.set(job, meta!.partition);
        }
        return where;
      } finally {
        await producer.disconnect();
      }
    };
    const before = await placed(1);
    expect(Math.max(...before.values())).toBeLessThan(3);
    const admin = new Kafka({ clientId: 'partitions-it', brokers: brokers().split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.createPartitions({ topicPartitions: [{ topic: `${id}.frames`, count: 6 }] });
    } finally {
      await admin.disconnect();
    }
    await estimator.waitForLog(/WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: \S+ has 6 partitions, 3 when this instance started/, 60_000);
    const health = (await healthOf(estimator)) as unknown as { status: string; reasons: string[] };
    expect(health.status).toBe('degraded');
    expect(health.reasons.some((reason) => reason.includes('WW_ERR_ESTIMATOR_PARTITIONS_CHANGED'))).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(estimator.log.filter((line) => line.includes('WW_ERR_ESTIMATOR_PARTITIONS_CHANGED'))).toHaveLength(1);

    // Producers that read the new count move most streams: each moved stream is counted once
    // (its window open at the move may be split), said in a line and on /healthz.
    const after = await placed(2);
    const movers = jobs.filter((job) => after.get(job) !== before.get(job));
    expect(movers.length).toBeGreaterThan(5);
    // The new partitions are assigned at the consumer's next metadata refresh (30 s), then read.
    await waitUntil(async () => ((await healthOf(estimator)) as unknown as { streamsMoved: number }).streamsMoved === movers.length, 90_000, `streamsMoved = ${movers.length}`);
    const moved = estimator.log.filter((line) => /WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: \d+ stream\(s\) of \S+ moved to another partition since this instance started with 3/.test(line));
    expect(moved).toHaveLength(1);
  }, 180_000);

  it('the frames topic deleted while it runs: one crash line, not one per restart, then exit 1 with WW_ERR_ESTIMATOR_KAFKA saying the topic is gone', async () => {
    const id = uniqueId('wwdeleted');
    databases.push(id);
    await createDatabase(id);
    await createFramesTopic(`${id}.frames`, 2);
    const port = await freePort();
    const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { WARPWATCH_METRICS_PORT: String(port) }), `${id}-0`);
    children.push(estimator);
    await estimator.waitForLog(/partition 1 restored/, 90_000);
    const admin = new Kafka({ clientId: 'partitions-it', brokers: brokers().split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: [`${id}.frames`] });
    } finally {
      await admin.disconnect();
    }
    await estimator.waitForLog(/WW_ERR_ESTIMATOR_KAFKA: the frames topic \S+ does not exist any more/, 60_000);
    expect(await estimator.exited).toBe('1');
    expect(estimator.log.filter((line) => line.includes('consumer crashed (restarting')).length).toBeLessThanOrEqual(1);
  }, 180_000);
});
