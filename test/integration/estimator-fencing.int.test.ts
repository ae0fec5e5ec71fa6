// Fencing (docs/estimator.md § Fault tolerance, Fencing), on a Kafka node private to this file with
// the shared InfluxDB: the real collector and two real estimators of one group, the second one
// behind a relay (kafka-relay.ts) that cuts it off from the group coordinator and from fetching
// while its producer, commits and admin requests still reach the broker — the member that lost
// its group membership without knowing it, while its streams go idle and come back. The group gives its partitions to the first estimator;
// the cut one must stop acting as their owner (no checkpoint over the new owner's, no window
// closed), say so on /healthz, and every window must come out exact in InfluxDB once it is
// back. Then SIGTERM ends each process within the documented 10 s: one cut off from the broker,
// one in the middle of a rebalance.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';
import { finishLoad, killPipelines, PARTITIONS, startLoad, startPipeline, timedStop, windowCount, type Agent } from './estimator-pipeline.ts';
import { estimatorEnv, healthOf, spawnEstimator, uniqueId, waitUntil, windowsOf, type EstimatorChild } from './estimator-support.ts';
import { KAFKA_API, startKafkaRelay, type KafkaRelay } from './kafka-relay.ts';

const BROKER_PORT = 29892;
const RELAY_LISTENER_PORT = 29896;
const WINDOW_MILLIS = 2_000;
/** Half the session timeout of estimatorEnv (6 s): how long a member acts after its last confirmed heartbeat. */
const LEASE_MILLIS = 3_000;
/**
 * Longer than the session timeout: the streams go idle at the cut, so a member that does not
 * know it lost its partitions would close their windows by idleness after its session expired,
 * then try to checkpoint that state for as long as its commits are refused.
 */
const IDLE_CLOSE_MILLIS = 7_000;

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

/** One record of the checkpoint topic, in log order. */
interface CheckpointRecord {
  readonly key: string;
  readonly value: string | null;
  readonly timestampMillis: number;
}

/** Every record of `topic` on `brokers`, per partition in log order (read to the end as at the call). */
async function checkpointLog(brokers: string, topic: string): Promise<CheckpointRecord[]> {
  const kafka = new Kafka({ clientId: 'fencing-it-reader', brokers: [brokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const highs = new Map((await admin.fetchTopicOffsets(topic)).map((o) => [o.partition, BigInt(o.high)]));
  await admin.disconnect();
  const records: CheckpointRecord[] = [];
  const positions = new Map<number, bigint>();
  const consumer = kafka.consumer({ groupId: uniqueId('fencing-it-reader') });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      records.push({ key: message.key?.toString('utf8') ?? '', value: message.value === null ? null : message.value.toString('utf8'), timestampMillis: Number(message.timestamp) });
      positions.set(partition, BigInt(message.offset));
      await Promise.resolve();
    },
  });
  await waitUntil(() => Promise.resolve([...highs].every(([p, high]) => (positions.get(p) ?? -1n) + 1n >= high)), 30_000, `${topic} read to its end`);
  await consumer.disconnect();
  return records;
}

/**
 * The partition markers of `prefix` (`<group>|<frames topic>|`) that went back: a marker whose
 * nextOffset is below one written before it for the same partition, with its write time.
 */
function markerRegressions(records: readonly CheckpointRecord[], prefix: string): { partition: number; nextOffset: bigint; highest: bigint; timestampMillis: number }[] {
  const highest = new Map<number, bigint>();
  const regressions: { partition: number; nextOffset: bigint; highest: bigint; timestampMillis: number }[] = [];
  for (const record of records) {
    if (!record.key.startsWith(prefix) || record.value === null) continue;
    const rest = record.key.slice(prefix.length);
    if (!/^\d+$/.test(rest)) continue; // stream records and dedupe bases: `<partition>|…`, `<partition>#d|…`
    const partition = Number(rest);
    const nextOffset = BigInt((JSON.parse(record.value) as { nextOffset: string }).nextOffset);
    const before = highest.get(partition);
    if (before !== undefined && nextOffset < before) regressions.push({ partition, nextOffset, highest: before, timestampMillis: record.timestampMillis });
    if (before === undefined || nextOffset > before) highest.set(partition, nextOffset);
  }
  return regressions;
}

describe('fencing: a member cut off from the group coordinator never writes for partitions another member took (private Kafka node, relay, real collector and estimators)', () => {
  let kafka: PrivateKafka;
  let relay: KafkaRelay;
  let directory: string;
  const cleanup = { databases: [] as string[], estimators: [] as EstimatorChild[], agents: [] as Agent[] };

  beforeAll(async () => {
    kafka = createPrivateKafka(BROKER_PORT, { WARPWATCH_STACK_KAFKA_RELAY_PORT: String(RELAY_LISTENER_PORT) });
    await kafka.start();
    relay = await startKafkaRelay(RELAY_LISTENER_PORT + 1, RELAY_LISTENER_PORT);
    directory = mkdtempSync(join(tmpdir(), 'ww-estimator-fencing-it-'));
  }, 180_000);
  afterAll(async () => {
    await killPipelines(cleanup);
    await relay.close();
    await kafka.destroy();
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  it('stops the cut-off member within its lease (no checkpoint behind the new owner, /healthz degraded), writes every window exactly, and each SIGTERM ends its process within 10 s', async () => {
    const env = { WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS), WARPWATCH_IDLE_CLOSE_MILLIS: String(IDLE_CLOSE_MILLIS), WARPWATCH_HISTOGRAM_POINTS: 'false', WARPWATCH_FIT: 'false', WARPWATCH_QUANTILES: 'false', WARPWATCH_SWEEP_GROUP_SIZES: 'off' };
    const pipeline = await startPipeline({
      name: 'wwfence',
      brokers: kafka.brokers,
      estimatorBrokers: [kafka.brokers, `127.0.0.1:${relay.port}`],
      directory,
      estimators: 2,
      cleanup,
      env: { ...env, WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000' },
    });
    const { id, group, socket } = pipeline;
    const [direct, cutOff] = group as [EstimatorChild, EstimatorChild];
    const jobs = Array.from({ length: 30 }, (_, s) => `${id}s${s}`);
    const load = await startLoad(socket, jobs, { everyMillis: 250, windowMillis: WINDOW_MILLIS, seed: 52 });
    await waitUntil(async () => (await healthOf(direct)).partitions.length > 0 && (await healthOf(cutOff)).partitions.length > 0, 30_000, 'both estimators holding partitions');
    await sleep(6_000);
    const cutPartitions = (await healthOf(cutOff)).partitions;

    // The member's heartbeats, joins and fetches stop reaching the broker; its producer, its
    // commits and its admin requests go on. The streams pause for 12 s from the cut.
    relay.cut([KAFKA_API.fetch, KAFKA_API.joinGroup, KAFKA_API.heartbeat, KAFKA_API.leaveGroup, KAFKA_API.syncGroup]);
    const cutAt = Date.now();
    load.pause();
    await waitUntil(async () => (await healthOf(direct)).partitions.length === PARTITIONS, 40_000, 'the direct estimator holding every partition');
    const takenOverAfter = Date.now() - cutAt;
    let cutHealth: { status: string; reasons?: string[]; consumerLag?: unknown } | undefined;
    await waitUntil(
      async () => {
        cutHealth = (await healthOf(cutOff)) as unknown as typeof cutHealth;
        return cutHealth?.status === 'degraded' && (cutHealth.reasons ?? []).some((reason) => reason.startsWith('membership: '));
      },
      20_000,
      "the cut-off estimator's /healthz to say it is not confirmed",
    );
    await sleep(Math.max(0, cutAt + 12_000 - Date.now()));
    load.resume();
    await sleep(Math.max(0, cutAt + 22_000 - Date.now()));
    relay.heal();
    const healedAt = Date.now();
    await waitUntil(async () => (await healthOf(cutOff)).partitions.length > 0, 60_000, 'the cut-off estimator to join again');
    await sleep(6_000);
    const { written, late } = await finishLoad(pipeline, load, jobs);
    const prefix = `${id}-group|${id}.frames|`;
    const regressions = markerRegressions(await checkpointLog(kafka.brokers, `${id}.checkpoints`), prefix);
    // A marker behind an earlier one is a write of a member that no longer owned the partition; the
    // fence stops the cut-off member at most one lease after its last confirmed heartbeat (≤ the cut).
    const afterLease = regressions.filter((r) => r.timestampMillis >= cutAt + LEASE_MILLIS + 1_000 && r.timestampMillis <= healedAt);
    process.stderr.write(
      `[estimator fencing] cut-off member held [${cutPartitions.join(', ')}]; all partitions with the other ${takenOverAfter} ms after the cut; held back ${JSON.stringify(Object.fromEntries(relay.held))}; ` +
        `cut-off /healthz ${JSON.stringify(cutHealth)}; marker regressions ${regressions.length} (${afterLease.length} after the lease); ${windowCount(load.sent, jobs)} windows sent, ${windowCount(written, jobs)} written; late ${late}\n`,
    );
    expect(cutPartitions.length).toBeGreaterThan(0);
    expect(cutHealth?.consumerLag).toBeDefined();
    expect(cutOff.log.some((line) => line.includes('WW_ERR_ESTIMATOR_FENCED'))).toBe(true);
    expect(afterLease).toEqual([]);
    for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(load.sent, job));
    expect(late).toBe(0);

    // SIGTERM while cut off from the broker altogether (every request held): exits within 10 s.
    relay.cut(Array.from({ length: 100 }, (_, key) => key));
    await sleep(1_000);
    const unreachableStop = await timedStop(cutOff);
    relay.heal();
    // SIGTERM in the middle of a rebalance (a third member joining): exits within 10 s.
    const joining = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { ...env, WARPWATCH_KAFKA_BROKERS: kafka.brokers }), `${id}-2`);
    cleanup.estimators.push(joining);
    await joining.waitForLog(/group .* on /, 60_000);
    const rebalancingStop = await timedStop(direct);
    process.stderr.write(`[estimator fencing] SIGTERM cut off: exit ${unreachableStop.exit} in ${unreachableStop.millis} ms; SIGTERM while a member joins: exit ${rebalancingStop.exit} in ${rebalancingStop.millis} ms\n`);
    expect(unreachableStop.millis).toBeLessThanOrEqual(10_500);
    expect(rebalancingStop.millis).toBeLessThanOrEqual(10_500);
    expect(rebalancingStop.exit).toBe('0');
  }, 400_000);
});
