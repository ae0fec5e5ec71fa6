// Partitions added to the frames topic while the estimator runs (docs/estimator.md § Adding
// partitions): the estimator sees the new count at its next offsets probe, says so in one coded
// line and keeps it on /healthz, rather than letting streams move partitions silently.
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { brokers, cleanedUpAfterAll, createDatabase, createFramesTopic, estimatorEnv, healthOf, spawnEstimator, uniqueId } from './estimator-support.ts';

const { children, databases } = cleanedUpAfterAll();

describe('frames topic partitions added at run time', () => {
  it('logs WW_ERR_ESTIMATOR_PARTITIONS_CHANGED once with both counts and shows it on /healthz (degraded)', async () => {
    const id = uniqueId('wwparts');
    databases.push(id);
    await createDatabase(id);
    await createFramesTopic(`${id}.frames`, 3);
    const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`), `${id}-0`);
    children.push(estimator);
    await estimator.waitForLog(/partition 2 restored/, 90_000);
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
  }, 180_000);
});
