// Least privilege on a real broker: a private Kafka node with the KRaft StandardAuthorizer
// (WARPWATCH_STACK_KAFKA_AUTHORIZER), the collector and the estimator each with its own SCRAM
// user holding exactly the ACLs docs/security.md § Kafka ACLs lists (read from the page itself),
// on topics an administrator created. With all of them the pipeline runs end to end; then each
// ACL is taken away in turn: the service it belongs to says one WW_ERR_KAFKA_AUTHORIZATION line
// naming that ACL and its grant command, /healthz carries it, and once granted again every
// launch of every phase reaches InfluxDB exactly (the collector spooled; the estimator committed
// nothing it had not processed).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, localKafkaSaslCredentials } from '../../deploy/local/index.ts';
import { ensureServiceTopics } from '../../service/index.ts';
import { createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';
import { delivered, killPipelines, PARTITIONS, settledPipeline, startAgent, startLoad, type Agent, type Load } from './estimator-pipeline.ts';
import { createDatabase, estimatorEnv, launchesOf, spawnEstimator, stopChild, uniqueId, waitUntil, type EstimatorChild, type WindowTable } from './estimator-support.ts';

const KAFKA_PORT = 29992;
const SASL_BROKERS = `127.0.0.1:${KAFKA_PORT + 2}`;
const WINDOW_MILLIS = 1_000;

/** One row of the docs' ACL table, one operation of it. */
interface AclRow {
  readonly service: 'collector' | 'estimator';
  readonly resourceType: 'Topic' | 'Group';
  readonly name: string;
  readonly pattern: 'LITERAL' | 'PREFIXED';
  readonly operation: 'Read' | 'Write' | 'DescribeConfigs';
}

/** The table between the kafka-acls markers of docs/security.md, one entry per operation. */
function documentedAcls(): AclRow[] {
  const page = readFileSync('docs/security.md', 'utf8');
  const table = page.slice(page.indexOf('<!-- kafka-acls'), page.indexOf('<!-- /kafka-acls -->'));
  const rows: AclRow[] = [];
  for (const line of table.split('\n').filter((l) => /^\| (collector|estimator) \|/.test(l))) {
    const [service, resourceType, name, pattern, operations] = line.split('|').slice(1, 6).map((cell) => cell.trim().replace(/`/g, ''));
    for (const operation of operations!.split(',').map((o) => o.trim())) {
      rows.push({ service: service as AclRow['service'], resourceType: resourceType as AclRow['resourceType'], name: name!, pattern: pattern as AclRow['pattern'], operation: operation as AclRow['operation'] });
    }
  }
  return rows;
}

// kafkajs' ACL enums (types/index.d.ts), as numbers: its ESM build does not export them by name.
const RESOURCE = { Topic: 2, Group: 3 } as const;
const OPERATION = { Read: 3, Write: 4, DescribeConfigs: 10 } as const;
const PATTERN = { LITERAL: 3, PREFIXED: 4 } as const;
const ALLOW = 3;

describe('least privilege (StandardAuthorizer, one SCRAM user per service, the ACLs of docs/security.md)', () => {
  let kafka: PrivateKafka;
  let admin: Admin;
  let directory: string;
  const cleanup = { databases: [] as string[], estimators: [] as EstimatorChild[], agents: [] as Agent[] };
  const id = uniqueId('acl');
  // Job names start with the id: settledPipeline reads back the jobs of this prefix.
  const JOBS = [`${id}-a`, `${id}-b`, `${id}-c`];
  /** The docs' default names as this test's topics and group. */
  const nameOf = (row: Pick<AclRow, 'service' | 'name'>): string =>
    ({
      'warpwatch.frames': `${id}.frames`,
      'warpwatch.dlq': row.service === 'collector' ? `${id}.frames.dlq` : `${id}.dlq`,
      'warpwatch.distributions': `${id}.distributions`,
      'warpwatch.alerts': `${id}.alerts`,
      'warpwatch.estimator.checkpoints': `${id}.checkpoints`,
      'warpwatch-estimator': `${id}-group`,
    })[row.name] ?? row.name;
  const rows = documentedAcls();
  let logins: ReturnType<typeof localKafkaSaslCredentials>['services'];
  const principalOf = (row: AclRow): string => `User:${logins[row.service].username}`;
  const aclOf = (row: AclRow) => ({
    resourceType: RESOURCE[row.resourceType],
    resourceName: nameOf(row),
    resourcePatternType: PATTERN[row.pattern],
    principal: principalOf(row),
    host: '*',
    operation: OPERATION[row.operation],
    permissionType: ALLOW,
  });
  const sent: WindowTable = new Map();

  const saslEnv = (service: 'collector' | 'estimator'): Record<string, string> => ({
    WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-512',
    WARPWATCH_KAFKA_SASL_USERNAME: logins[service].username,
    WARPWATCH_KAFKA_SASL_PASSWORD_FILE: logins[service].passwordFile,
  });
  const startEstimator = (instance: string, metricsPort = 0): EstimatorChild => {
    const child = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { WARPWATCH_KAFKA_BROKERS: SASL_BROKERS, WARPWATCH_METRICS_PORT: String(metricsPort), ...saslEnv('estimator') }), instance);
    cleanup.estimators.push(child);
    return child;
  };
  const startCollector = async (): Promise<Agent> => {
    const agent = await startAgent(join(directory, 'collector.sock'), join(directory, 'spool'), SASL_BROKERS, `${id}.frames`, [], saslEnv('collector'));
    cleanup.agents.push(agent);
    return agent;
  };
  /** Writes launches for `millis` (launch sequences after every earlier phase's), counted into `sent`; returns how many. */
  const sendFor = async (millis: number, seed: number): Promise<number> => {
    const load: Load = await startLoad(join(directory, 'collector.sock'), JOBS, { everyMillis: 100, windowMillis: WINDOW_MILLIS, seed, firstSequence: read });
    await new Promise((resolve) => setTimeout(resolve, millis));
    await load.stop();
    for (const [job, windows] of load.sent) {
      let merged = sent.get(job);
      if (merged === undefined) sent.set(job, (merged = new Map()));
      for (const [start, cell] of windows) {
        const held = merged.get(start) ?? { launches: 0, groups: 0 };
        merged.set(start, { launches: held.launches + cell.launches, groups: held.groups + cell.groups });
      }
    }
    return load.total();
  };
  let read = 0;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'ww-acl-'));
    kafka = createPrivateKafka(KAFKA_PORT, { WARPWATCH_STACK_KAFKA_AUTHORIZER: 'true' });
    await kafka.start();
    logins = localKafkaSaslCredentials(kafka.config).services;
    // The administrator (ANONYMOUS on the loopback PLAINTEXT listener is a super user) creates the topics.
    admin = new Kafka({ clientId: 'acl-it-admin', brokers: [kafka.brokers], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await ensureServiceTopics(
      admin,
      [
        { role: 'frames', name: `${id}.frames` },
        { role: 'dlq', name: `${id}.frames.dlq` },
        { role: 'dlq', name: `${id}.dlq` },
        { role: 'distributions', name: `${id}.distributions` },
        { role: 'alerts', name: `${id}.alerts` },
        { role: 'estimatorCheckpoints', name: `${id}.checkpoints` },
      ],
      { partitions: PARTITIONS, replicationFactor: -1 },
    );
    await admin.createAcls({ acl: rows.map(aclOf) });
    cleanup.databases.push(id);
    await createDatabase(id);
  }, 240_000);

  afterAll(async () => {
    await killPipelines(cleanup);
    await admin?.disconnect().catch(() => undefined);
    await kafka?.destroy();
    rmSync(directory, { recursive: true, force: true });
  }, 120_000);

  it('reads one ACL table from docs/security.md: the collector writes its two topics, the estimator reads frames and checkpoints, writes its outputs, and holds a prefixed group', () => {
    const text = (service: AclRow['service']) => rows.filter((r) => r.service === service).map((r) => `${r.operation} ${r.resourceType} ${r.name} ${r.pattern}`);
    expect(text('collector')).toEqual(['Write Topic warpwatch.frames LITERAL', 'DescribeConfigs Topic warpwatch.frames LITERAL', 'Write Topic warpwatch.dlq LITERAL', 'DescribeConfigs Topic warpwatch.dlq LITERAL']);
    expect(text('estimator')).toContain('Read Group warpwatch-estimator PREFIXED');
    expect(text('estimator')).toContain('Read Topic warpwatch.frames LITERAL');
    expect(rows.some((r) => r.resourceType !== 'Topic' && r.resourceType !== 'Group')).toBe(false);
  });

  it('with exactly those ACLs, frames from the collector reach InfluxDB windows exactly through the estimator', async () => {
    const estimator = startEstimator('acl-0');
    await estimator.waitForLog(/assigned partitions \[\d/, 90_000);
    const agent = await startCollector();
    read += await sendFor(3_000, 1);
    const health = await delivered(agent, read);
    expect(health.accounting).toMatchObject({ read, delivered: read, dropped: 0, held: 0, balanced: true });
    const { written, late } = await settledPipeline(id, id, JOBS, sent, [estimator]);
    expect(late).toBe(0);
    for (const job of JOBS) expect(launchesOf(written, job), job).toBe(launchesOf(sent, job));
    await stopChild(estimator);
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    expect(estimator.log.join('\n')).not.toMatch(/WW_ERR_KAFKA_AUTHORIZATION/);
  }, 240_000);

  it('each collector ACL taken away: one line naming it, /healthz says it, the frames wait in the spool and go once it is granted again', async () => {
    for (const row of rows.filter((r) => r.service === 'collector')) {
      const what = `${row.operation} on ${row.resourceType} ${nameOf(row)}`;
      await admin.deleteAcls({ filters: [aclOf(row)] });
      const agent = await startCollector();
      const before = read;
      read += await sendFor(1_000, read + 1);
      const line = await waitUntil(async () => agent.stderr().includes('WW_ERR_KAFKA_AUTHORIZATION'), 30_000, `the collector to say ${what} is missing`).then(() =>
        agent
          .stderr()
          .split('\n')
          .filter((l) => l.includes('WW_ERR_KAFKA_AUTHORIZATION')),
      );
      expect(line, what).toHaveLength(1);
      expect(line[0], what).toContain(`User:${logins.collector.username} lacks ALLOW ${what}`);
      expect(line[0], what).toContain(`kafka-acls.sh --bootstrap-server <broker> --add --allow-principal User:${logins.collector.username} --operation ${row.operation} --topic ${nameOf(row)}`);
      const health = (await agent.health()) as unknown as { status: string; reasons: string[]; accounting: { held: number; read: number } };
      expect(health.status, what).toBe('degraded');
      expect(health.reasons.some((r) => r.startsWith('kafka: WW_ERR_KAFKA_AUTHORIZATION') && r.includes(what)), `${what}: ${health.reasons.join('; ')}`).toBe(true);
      expect(health.accounting.read, what).toBe(read - before);
      expect(health.accounting.held, what).toBe(read - before);
      await admin.createAcls({ acl: [aclOf(row)] });
      await delivered(agent, read - before, 60_000);
      agent.child.kill('SIGTERM');
      expect(await agent.exited, what).toBe(0);
    }
  }, 400_000);

  it('each estimator ACL taken away, at its start and (the frames topic) while it runs: one line naming it and a /healthz reason or exit 1 for the supervisor, nothing committed; granted again, every launch of every phase is in InfluxDB exactly once', async () => {
    for (const row of rows.filter((r) => r.service === 'estimator')) {
      const what = `${row.operation} on ${row.resourceType} ${nameOf(row)}${row.pattern === 'PREFIXED' ? '* (prefixed)' : ''}`;
      await admin.deleteAcls({ filters: [aclOf(row)] });
      const port = await freePort();
      const estimator = startEstimator(`acl-${row.operation}-${nameOf(row)}`, port);
      await estimator.waitForLog(/WW_ERR_KAFKA_AUTHORIZATION/, 60_000);
      const lines = estimator.log.filter((l) => l.includes('WW_ERR_KAFKA_AUTHORIZATION'));
      expect(lines[0], what).toContain(`User:${logins.estimator.username} lacks ALLOW ${what}`);
      // Either it ends at once (exit 1, for its supervisor), or it goes on, /healthz naming the refusal.
      const exit = await Promise.race([estimator.exited, new Promise<undefined>((resolve) => setTimeout(resolve, 15_000))]);
      if (exit === undefined) {
        const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as { status: string; reasons: string[] };
        expect(['degraded', 'failed'], what).toContain(health.status);
        expect(health.reasons.some((r) => r.includes('WW_ERR_KAFKA_AUTHORIZATION') && r.includes(what)), `${what}: ${health.reasons.join('; ')}`).toBe(true);
        await stopChild(estimator);
      } else {
        expect(exit, `${what}: ${estimator.log.join('\n')}`).toBe('1');
      }
      await admin.createAcls({ acl: [aclOf(row)] });
    }
    // Taken away while it runs: the frames consumer is refused and kafkajs stops it for good; the
    // estimator must not stay up without it (exit 1 with the line, /healthz failed until then).
    const frameRead = rows.find((r) => r.service === 'estimator' && r.resourceType === 'Topic' && r.name === 'warpwatch.frames' && r.operation === 'Read')!;
    const runningPort = await freePort();
    const running = startEstimator('acl-running', runningPort);
    await running.waitForLog(/assigned partitions \[\d/, 90_000);
    await admin.deleteAcls({ filters: [aclOf(frameRead)] });
    await running.waitForLog(/WW_ERR_KAFKA_AUTHORIZATION/, 90_000);
    expect(running.log.find((l) => l.includes('WW_ERR_KAFKA_AUTHORIZATION'))).toContain(`User:${logins.estimator.username} lacks ALLOW Read on Topic ${id}.frames`);
    expect(await running.exited).toBe('1');
    await admin.createAcls({ acl: [aclOf(frameRead)] });

    // Everything granted again: the frames the collector phases sent, and a last load, all exact.
    const estimator = startEstimator('acl-last');
    await estimator.waitForLog(/assigned partitions \[\d/, 90_000);
    const agent = await startCollector();
    const before = read;
    read += await sendFor(2_000, 7);
    await delivered(agent, read - before);
    const { written, late } = await settledPipeline(id, id, JOBS, sent, [estimator], 90_000);
    expect(late).toBe(0);
    for (const job of JOBS) expect(launchesOf(written, job), job).toBe(launchesOf(sent, job));
    expect(written).toEqual(sent);
  }, 600_000);
});
