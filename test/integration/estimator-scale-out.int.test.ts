// Scale-out of `warpwatch estimate` on real Kafka and InfluxDB (docs/estimator.md, "Sizing"):
// three instances in one consumer group on a 6-partition frames topic hold two partitions each
// (as the broker's group description and each instance's /healthz say); one of them SIGKILLed
// mid-stream, its partitions are served by the two survivors within the failover bound, and
// every window of every stream is in InfluxDB exactly once with exactly the launches and groups
// sent in it (a window counted twice or partly lost would show as other counts).
import { describe, expect, it } from 'vitest';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import {
  addToTable,
  cleanedUpAfterAll,
  connectedProducer,
  createDatabase,
  createFramesTopic,
  defaultsEnv,
  frameOutcomes,
  groupAssignment,
  healthOf,
  launchesOf,
  launchFrame,
  spawnEstimator,
  uniqueId,
  waitUntil,
  windowsOf,
  writtenWindows,
  type EstimatorChild,
  type WindowTable,
} from './estimator-support.ts';

const PARTITIONS = 6;
const STREAMS = 12;
const WINDOW_MILLIS = 1_000;
const LAUNCH_INTERVAL_MILLIS = 100;
/** docs/estimator.md, "Sizing": a SIGKILLed instance's partitions are served again within 10 s with the default session timeout (6 s) and heartbeat (1 s). */
const FAILOVER_BOUND_MILLIS = 10_000;
const ALL_PARTITIONS = Array.from({ length: PARTITIONS }, (_, p) => p);

const { children, databases } = cleanedUpAfterAll();

/** Partitions per instance, from /healthz, when every instance is `ok` (assigned and restored); undefined otherwise. */
async function healthyPartitions(group: readonly EstimatorChild[]): Promise<number[][] | undefined> {
  const health = await Promise.all(group.map((child) => healthOf(child).catch(() => undefined)));
  if (health.some((h) => h?.status !== 'ok')) return undefined;
  return health.map((h) => [...(h?.partitions ?? [])].sort((a, b) => a - b));
}

/** Whether the broker's view of the group is stable with `members` members, each holding `each` partitions, all partitions held. */
async function groupShares(groupId: string, topic: string, members: number, each: number): Promise<boolean> {
  const group = await groupAssignment(groupId, topic);
  const held = [...group.members.values()];
  return group.state === 'Stable' && held.length === members && held.every((p) => p.length === each) && sameSet(held.flat(), ALL_PARTITIONS);
}

function sameSet(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && [...a].sort((x, y) => x - y).every((value, i) => value === [...b].sort((x, y) => x - y)[i]);
}

describe('warpwatch estimate scale-out (three instances, one group, 6 partitions)', () => {
  it('shares the partitions 2/2/2, and after one instance is SIGKILLed the survivors serve its partitions within the failover bound with every window exact', async () => {
    const id = uniqueId('wwscale');
    const database = `${id}db`;
    const groupId = `${id}-g`;
    const topic = `${id}.frames`;
    databases.push(database);
    await createDatabase(database);
    await createFramesTopic(topic, PARTITIONS);
    // Default session timeout and heartbeat (the failover bound is stated for them); the model's
    // optional parts off, so three instances on a small shared machine keep up easily.
    const env = defaultsEnv(id, database, groupId, {
      WARPWATCH_HISTOGRAM_POINTS: 'false',
      WARPWATCH_FIT: 'false',
      WARPWATCH_QUANTILES: 'false',
      WARPWATCH_SWEEP_GROUP_SIZES: 'off',
    });
    const group = ['a', 'b', 'c'].map((name) => spawnEstimator(env, `${id}-${name}`));
    children.push(...group);

    // 2/2/2: the broker's group description, and each instance's own /healthz, after the rebalances of the three joins.
    let shares: number[][] | undefined;
    await waitUntil(
      async () => (await groupShares(groupId, topic, 3, 2)) && (shares = await healthyPartitions(group))?.every((p) => p.length === 2) === true,
      120_000,
      'the group to settle with 2 partitions per instance',
    ).catch(async (error: unknown) => {
      throw new Error(`${String(error)}; group ${JSON.stringify([...(await groupAssignment(groupId, topic)).members])}; /healthz ${JSON.stringify(await Promise.all(group.map((c) => healthOf(c).catch(String))))}\n${group.flatMap((c) => c.log).join('\n')}`);
    });
    const described = await groupAssignment(groupId, topic);
    expect([...described.members.values()].map((p) => p.length)).toEqual([2, 2, 2]);
    expect(sameSet(shares!.flat(), ALL_PARTITIONS)).toBe(true);
    // What each instance says it holds is what the broker assigned to some member.
    expect(shares!.map((p) => p.join(',')).sort()).toEqual([...described.members.values()].map((p) => p.join(',')).sort());

    // Live streams, each pinned to partition s % 6 (two per partition), a launch every 100 ms each.
    const jobs = Array.from({ length: STREAMS }, (_, s) => `${id}s${s}`);
    const random = createSeededRandom(606);
    const sent: WindowTable = new Map();
    const producer = await connectedProducer();
    let sequence = 0;
    let feeding = true;
    const feed = (async () => {
      while (feeding) {
        const tickStarted = Date.now();
        const messages = jobs.map((job, s) => {
          const frame = launchFrame(job, sequence++, Date.now(), random);
          addToTable(sent, job, Number(frame.endUnixNanos / 1_000_000n), frame.groupsCounted, WINDOW_MILLIS);
          return { key: `${job}/k`, partition: s % PARTITIONS, value: Buffer.from(encodeFrame(frame)) };
        });
        await producer.send({ topic, acks: -1, messages });
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, LAUNCH_INTERVAL_MILLIS - (Date.now() - tickStarted))));
      }
    })();

    // Mid-stream: windows of every stream written, then the instance holding partition 0 is SIGKILLed.
    await waitUntil(async () => (await writtenWindows(database, id, MEASUREMENTS.window)).size === STREAMS, 60_000, 'windows of every stream');
    const victimIndex = shares!.findIndex((p) => p.includes(0));
    const victim = group[victimIndex]!;
    const survivors = group.filter((_, i) => i !== victimIndex);
    const orphaned = shares![victimIndex]!;
    const killedAt = Date.now();
    victim.process.kill('SIGKILL');
    await victim.exited;
    let after: number[][] | undefined;
    await waitUntil(
      async () => (await groupShares(groupId, topic, 2, 3)) && (after = await healthyPartitions(survivors)) !== undefined && sameSet(after.flat(), ALL_PARTITIONS),
      60_000,
      'the two survivors to hold and serve all 6 partitions',
    );
    const failoverMillis = Date.now() - killedAt;
    for (const partition of orphaned) {
      const takers = survivors.filter((child) => child.log.some((line) => line.includes(`partition ${partition} restored`)));
      expect(takers.length, `a survivor restored partition ${partition}`).toBeGreaterThan(0);
    }

    // Keep the streams going for a while after the take-over, then stop; the last windows close by idleness.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    feeding = false;
    await feed;
    await producer.disconnect();
    const totalLaunches = jobs.reduce((n, job) => n + launchesOf(sent, job), 0);
    let written: WindowTable = new Map();
    await waitUntil(
      async () => {
        written = await writtenWindows(database, id, MEASUREMENTS.window);
        return jobs.every((job) => launchesOf(written, job) >= launchesOf(sent, job));
      },
      60_000,
      'every launch in InfluxDB',
    ).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    written = await writtenWindows(database, id, MEASUREMENTS.window);
    const outcomes = await Promise.all(survivors.map((child) => frameOutcomes(child)));
    const windowsSent = jobs.reduce((n, job) => n + (sent.get(job)?.size ?? 0), 0);
    const windowsWritten = jobs.reduce((n, job) => n + (written.get(job)?.size ?? 0), 0);
    process.stderr.write(
      `[scale-out] 2/2/2 ${JSON.stringify(shares)}; killed the holder of [${orphaned.join(', ')}]; survivors ${JSON.stringify(after)} serving ${failoverMillis} ms after SIGKILL; ` +
        `${totalLaunches} launches in ${windowsSent} windows sent, ${windowsWritten} windows written; survivors' outcomes ${JSON.stringify(outcomes)}\n`,
    );

    expect(failoverMillis).toBeLessThan(FAILOVER_BOUND_MILLIS);
    expect(after!.map((p) => p.length)).toEqual([3, 3]);
    // Every stream × window exactly once, with the launches and groups sent in it.
    for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(sent, job));
    expect(outcomes.reduce((n, o) => n + (o['late'] ?? 0), 0)).toBe(0);
  }, 300_000);
});
