// ensureInfluxDatabase's decisions, with an injected HTTP client (the real InfluxDB is in
// test/integration/estimator-influx-database.int.test.ts).
import { describe, expect, it } from 'vitest';
import { Secret } from '../../service/index.ts';
import { EstimatorError } from '../errors.ts';
import { ensureInfluxDatabase } from './influx-writer.ts';

const options = { url: 'http://influx.test:8086', database: 'warpwatch', token: new Secret(''), requestTimeoutMillis: 1000 };

/** A fake fetch answering SHOW DATABASES with `databases` and CREATE DATABASE with `create`; records the queries. */
function fakeInflux(databases: string[], create: { status: number; body: string }, seen: string[] = []): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const q = url.searchParams.get('q') ?? '';
    seen.push(`${init?.method ?? 'GET'} ${q} ${(init?.headers as Record<string, string> | undefined)?.['Authorization'] ?? ''}`.trim());
    if (q === 'SHOW DATABASES') return new Response(JSON.stringify({ results: [{ statement_id: 0, series: [{ name: 'databases', columns: ['name'], values: databases.map((d) => [d]) }] }] }), { status: 200 });
    return new Response(create.body, { status: create.status });
  }) as typeof fetch;
}

describe('ensureInfluxDatabase', () => {
  it('finds an existing database without creating anything', async () => {
    const seen: string[] = [];
    expect(await ensureInfluxDatabase(options, fakeInflux(['_internal', 'warpwatch'], { status: 500, body: '' }, seen))).toBe('exists');
    expect(seen).toEqual(['GET SHOW DATABASES']);
  });
  it('creates a missing database', async () => {
    const seen: string[] = [];
    expect(await ensureInfluxDatabase(options, fakeInflux(['_internal'], { status: 200, body: '{"results":[{"statement_id":0}]}' }, seen))).toBe('created');
    expect(seen).toEqual(['GET SHOW DATABASES', 'POST CREATE DATABASE "warpwatch"']);
  });
  it('creates it with the retention duration and policy name when given', async () => {
    const seen: string[] = [];
    await ensureInfluxDatabase({ ...options, retentionPolicy: 'autogen', retentionDuration: '30d' }, fakeInflux([], { status: 200, body: '{"results":[{"statement_id":0}]}' }, seen));
    expect(seen).toEqual(['GET SHOW DATABASES', 'POST CREATE DATABASE "warpwatch" WITH DURATION 30d NAME "autogen"']);
  });

  it('refuses with WW_ERR_ESTIMATOR_INFLUX_DATABASE when creating is not permitted', async () => {
    const attempt = ensureInfluxDatabase(options, fakeInflux([], { status: 403, body: '{"error":"user is not authorized to create databases"}' }));
    await expect(attempt).rejects.toBeInstanceOf(EstimatorError);
    await expect(attempt).rejects.toMatchObject({ code: 'WW_ERR_ESTIMATOR_INFLUX_DATABASE', message: expect.stringMatching(/"warpwatch" .* could not be created: HTTP 403 .*not authorized/) });
  });
  it('refuses when CREATE answers 200 with an error (InfluxDB 2.x has no CREATE DATABASE)', async () => {
    await expect(ensureInfluxDatabase(options, fakeInflux([], { status: 200, body: '{"results":[{"error":"not implemented: CREATE DATABASE"}]}' }))).rejects.toMatchObject({ code: 'WW_ERR_ESTIMATOR_INFLUX_DATABASE' });
  });
  it('sends user:password as basic auth and a 2.x token as a token', async () => {
    const seen: string[] = [];
    await ensureInfluxDatabase({ ...options, token: new Secret('admin:secret') }, fakeInflux(['warpwatch'], { status: 500, body: '' }, seen));
    await ensureInfluxDatabase({ ...options, token: new Secret('abc123') }, fakeInflux(['warpwatch'], { status: 500, body: '' }, seen));
    expect(seen).toEqual([`GET SHOW DATABASES Basic ${Buffer.from('admin:secret').toString('base64')}`, 'GET SHOW DATABASES Token abc123']);
  });
  it('reports wrong credentials (401) without refusing to start, refuses a forbidden check (403), and starts anyway when InfluxDB does not answer', async () => {
    const unauthorized = (async () => new Response('{"error":"authorization failed"}', { status: 401 })) as unknown as typeof fetch;
    expect(await ensureInfluxDatabase(options, unauthorized)).toBe('unauthorized');
    const forbidden = (async () => new Response('{"error":"forbidden"}', { status: 403 })) as unknown as typeof fetch;
    await expect(ensureInfluxDatabase(options, forbidden)).rejects.toMatchObject({ code: 'WW_ERR_ESTIMATOR_INFLUX_DATABASE' });
    const down = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    expect(await ensureInfluxDatabase(options, down)).toBe('unreachable');
  });
});
