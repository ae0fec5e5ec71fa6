// ensureInfluxDatabase against the real InfluxDB of the local stack: a missing
// database is created, an existing one is left alone; and `warpwatch estimate` pointed at a
// database that does not exist starts and creates it instead of dropping every write.
import { describe, expect, it } from 'vitest';
import { ensureInfluxDatabase } from '../../estimator/index.ts';
import { Secret } from '../../service/index.ts';
import { cleanedUpAfterAll, estimatorEnv, influxQuery, influxUrl, spawnEstimator, uniqueId } from './estimator-support.ts';

const { children, databases } = cleanedUpAfterAll();

async function databaseNames(): Promise<string[]> {
  const series = await influxQuery('_internal', 'SHOW DATABASES');
  return (series[0]?.values ?? []).map((row) => String(row[0]));
}

describe('the InfluxDB database at start (real InfluxDB)', () => {
  it('creates a missing database, then finds it', async () => {
    const database = uniqueId('wwdbcheck');
    databases.push(database);
    const options = { url: influxUrl(), database, token: new Secret(''), requestTimeoutMillis: 10_000 };
    expect(await databaseNames()).not.toContain(database);
    expect(await ensureInfluxDatabase(options)).toBe('created');
    expect(await databaseNames()).toContain(database);
    expect(await ensureInfluxDatabase(options)).toBe('exists');
  });

  it('creates a missing database with the deployment retention default (30d) on its retention policy', async () => {
    const database = uniqueId('wwdbret');
    databases.push(database);
    expect(await ensureInfluxDatabase({ url: influxUrl(), database, token: new Secret(''), requestTimeoutMillis: 10_000, retentionPolicy: 'autogen', retentionDuration: '30d' })).toBe('created');
    const policies = await influxQuery(database, `SHOW RETENTION POLICIES ON "${database}"`);
    const columns = policies[0]?.columns ?? [];
    const rows = (policies[0]?.values ?? []).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i]])));
    expect(rows).toEqual([expect.objectContaining({ name: 'autogen', duration: '720h0m0s', default: true })]);
  });

  it('`warpwatch estimate` on a database that does not exist creates it and starts', async () => {
    const id = uniqueId('wwdbest');
    const database = `${id}db`;
    databases.push(database);
    const child = spawnEstimator(estimatorEnv(id, database, `${id}-g`), 'dbcheck');
    children.push(child);
    await child.waitForLog(new RegExp(`created InfluxDB database "${database}"`), 60_000);
    await child.waitForLog(/assigned partitions/, 60_000);
    expect(await databaseNames()).toContain(database);
  }, 120_000);
});
