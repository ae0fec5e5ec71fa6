import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { DemoResults } from '../../cli/report/demo-results.ts';
import { influxQuery } from '../../deploy/local/index.ts';

// `warpwatch demo --kafka --influx` against the real servers of the global setup: frames go
// through Kafka to the estimator service, window points must arrive in InfluxDB, and the
// results read back from warpwatch.distributions must match what the points say.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'ww-demo-int-'));

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function runCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', ...args], { cwd: root, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface InfluxSeriesResult {
  results: { series?: { columns: string[]; values: (string | number)[][] }[] }[];
}

describe('warpwatch demo --kafka --influx', () => {
  it('sends a quick demo through Kafka and the estimator service into InfluxDB, and advise reads it back', async () => {
    const url = process.env.WARPWATCH_INFLUX_URL ?? '';
    const database = process.env.WARPWATCH_INFLUX_DATABASE ?? '';
    expect(url).not.toBe('');
    const out = join(scratch, 'demo');
    // Two group sizes: every kernel is two streams, so a query that groups by kernel alone would mix them.
    const run = await runCli(['demo', '--quick', '--sizes', '8,16', '--kafka', '--influx', '--no-progress', '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as DemoResults;
    expect(results.transport).toBe('kafka');
    expect(results.influx).toBe(true);
    expect(results.runs).toHaveLength(14);
    expect(run.stdout).toContain(`InfluxDB: points of job '${results.settings.job}'`);

    const answer = (await influxQuery(
      url,
      `SELECT "loss_predicted", "loss_counts", "groups" FROM "warpwatch_window" WHERE "job" = '${results.settings.job}' GROUP BY "kernel", "n"`,
      database,
    )) as InfluxSeriesResult;
    const series = answer.results[0]?.series ?? [];
    expect(series).toHaveLength(14);
    for (const s of series) {
      const { kernel, n } = (s as unknown as { tags: { kernel: string; n: string } }).tags;
      const demoRun = results.runs.find((r) => r.stream === `${results.settings.job}/${kernel}` && r.n === Number(n));
      expect(demoRun, kernel).toBeDefined();
      const [row] = s.values;
      expect(Number(row?.[1])).toBeCloseTo(demoRun?.lossPredicted ?? Number.NaN, 9);
      expect(Number(row?.[2])).toBeCloseTo(demoRun?.lossCounts ?? Number.NaN, 9);
      expect(Number(row?.[3])).toBe(demoRun?.groups);
    }

    // Every InfluxQL query of docs/querying.md, with $JOB the demo's job, runs and returns a
    // series per kernel and n (7 kernels × 2 sizes); the natural unquoted one the page warns about fails.
    const page = readFileSync(join(root, 'docs', 'querying.md'), 'utf8');
    const queries = [...page.matchAll(/```influxql\n([\s\S]*?)\n```/g)].map((m) => (m[1] ?? '').replaceAll('$JOB', results.settings.job));
    expect(queries.length).toBeGreaterThanOrEqual(3);
    for (const query of queries) {
      const answer = (await influxQuery(url, query, database)) as InfluxSeriesResult;
      expect(answer.results[0]?.series?.length, query).toBe(14);
    }
    const seriesOf = async (query: string): Promise<Map<string, (string | number)[] | undefined>> =>
      new Map(
        ((await influxQuery(url, query, database)) as InfluxSeriesResult).results[0]?.series?.map((s) => {
          const { kernel, n } = (s as unknown as { tags: { kernel: string; n: string } }).tags;
          return [`${kernel}/${n}`, s.values[0]];
        }) ?? [],
      );
    const latest = await seriesOf(queries[0] ?? '');
    const idle = await seriesOf(queries[1] ?? '');
    for (const size of [8, 16]) {
      // Each n answers with its own run's numbers (the demo computed them without InfluxDB).
      const escapeRun = results.runs.find((r) => r.workload === 'escape' && r.variant === 'plain' && r.n === size);
      const escapeRow = latest.get(`escape/${size}`);
      expect(Number(escapeRow?.[1])).toBeCloseTo(escapeRun?.lossMeasured ?? Number.NaN, 9);
      expect(Number(escapeRow?.[2])).toBeCloseTo(escapeRun?.lossLocality?.value ?? Number.NaN, 9);
      expect(Number(escapeRow?.[4])).toBe(escapeRun?.groups);
      expect(Number(idle.get(`escape/${size}`)?.[1])).toBeCloseTo(1 - 1 / (escapeRun?.workloadLossMeasured ?? Number.NaN), 9);
    }
    expect(Number(idle.get('escape/8')?.[1])).not.toBeCloseTo(Number(idle.get('escape/16')?.[1]), 3);
    await expect(influxQuery(url, `SELECT loss_measured, groups FROM warpwatch_window WHERE "job" = '${results.settings.job}'`, database)).rejects.toThrow(/found GROUPS, expected identifier/);

    // advise reads the same stream back from warpwatch.distributions: the job's kernel at two
    // group sizes is two streams, so without --n it says so with its code, and --n picks one.
    const pois = results.runs.find((r) => r.variant === 'pois(30)' && r.n === 8);
    const ambiguous = await runCli(['advise', '--stream', pois?.stream ?? '', '--json']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('WW_ERR_ADVISE_STREAM_AMBIGUOUS');
    expect(ambiguous.stderr).toContain('--n 16');
    const advise = await runCli(['advise', '--stream', pois?.stream ?? '', '--n', '8', '--json']);
    expect(advise.code, advise.stderr).toBe(0);
    const advice = JSON.parse(advise.stdout) as { groupSize: number; distribution: { totalWeight: number }; current: { expectedLoss: number } };
    expect(advice.groupSize).toBe(8);
    expect(advice.distribution.totalWeight).toBe(pois?.units);
    expect(advice.current.expectedLoss).toBeCloseTo(pois?.lossPredicted ?? Number.NaN, 9);
  });
});
