import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, expectedLoss } from '../../model/index.ts';
import type { Advice } from '../../analysis/index.ts';
import { runCli, type CliRun } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-cli-'));

const advise = (...args: string[]): Promise<CliRun> => runCli('advise', ...args);

describe('warpwatch advise', () => {
  it('reads a counts CSV, prints the table and a recommendation', async () => {
    const file = join(directory, 'counts.csv');
    writeFileSync(file, 'value,count\n1,50\n2,30\n10,15\n40,5\n');
    const result = await advise('--counts', file, '--n', '32');
    expect(result.status, result.stderr).toBe(0);
    const expected = expectedLoss(CategoricalDistribution.fromCounts({ 1: 50, 2: 30, 10: 15, 40: 5 }), 32);
    expect(result.stdout).toMatch(new RegExp(`\\n32\\s+${expected.toFixed(4)}\\s+\\d\\.\\d{4}\\s+← now`));
    expect(result.stdout).toMatch(/recommendation:\n {2}- groups of 32 lanes are predicted to run \d+\.\d\d× as long as a machine that never idles/);
    expect(result.stdout).toMatch(/sorted by work/);
    expect(result.stdout).toMatch(/binned, k = 8/);
  });

  it('--stream with no Kafka answering: one line, the failure said once, and what to try', async () => {
    const before = process.env.WARPWATCH_KAFKA_BROKERS;
    process.env.WARPWATCH_KAFKA_BROKERS = '127.0.0.1:1'; // a closed port
    try {
      const started = Date.now();
      const result = await advise('--stream', 'job/k');
      // Within 3 s (a refused connection is known at once; the Kafka client alone retried for 13 s).
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(result.status).toBe(1);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^warpwatch: WW_ERR_ADVISE_KAFKA: cannot read warpwatch\.distributions on 127\.0\.0\.1:1: no broker accepts a connection; check WARPWATCH_KAFKA_BROKERS: nothing answers at 127\.0\.0\.1:1\n$/);
      expect(result.stderr.match(/cannot read/g)).toHaveLength(1);
    } finally {
      if (before === undefined) delete process.env.WARPWATCH_KAFKA_BROKERS;
      else process.env.WARPWATCH_KAFKA_BROKERS = before;
    }
  }, 60_000);

  it('prints JSON and writes a self-contained HTML page', async () => {
    const html = join(directory, 'advice.html');
    const result = await advise('--dist', 'nbinom(5,0.3)', '--n', '16', '--bins', '3', '--json', '--html', html);
    expect(result.status, result.stderr).toBe(0);
    const advice = JSON.parse(result.stdout) as Advice & { html: string };
    expect(advice.groupSize).toBe(16);
    expect(advice.binning.map((b) => b.k)).toEqual([3]);
    expect(advice.html).toBe(html);
    const page = readFileSync(html, 'utf8');
    expect(page.match(/<svg [^>]*class="ww-chart"/g)).toHaveLength(3);
    expect(page).not.toMatch(/<script|\ssrc=|\shref=|@import|url\(/);
    expect(advice.fits[0]?.family).toBe('nbinom');
  });

  it('exits 2 with one line when no input or two inputs are given', async () => {
    for (const args of [[], ['--counts', 'x.csv', '--dist', 'pois(3)']]) {
      const result = await advise(...args);
      expect(result.status).toBe(2);
      expect(result.stderr).toBe('warpwatch: give exactly one input: --counts FILE, --pmf FILE, --frames FILE [--stream ID], --trace FILE, --stream ID (Kafka), --workload matpow|escape, or --dist SPEC\n');
    }
  });

  it('exits 2 for bad bin counts and a missing counts file', async () => {
    expect((await advise('--dist', 'pois(3)', '--bins', '0')).stderr).toMatch(/--bins must list bin counts 1\.\.1024, got '0'/);
    const missing = await advise('--counts', join(directory, 'nope.json'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --counts file/);
  });

  it('--workload: flags the program refuses (its exit 2) are a usage error, one line with the program’s words', async () => {
    const result = await advise('--workload', 'matpow', '--seed', 'abc');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^warpwatch: warpwatch-matpow-cpu --dist pois\(30\) .*--seed abc .*--out - ended with exit 2: \S*warpwatch-matpow-cpu: --seed must be an integer 0\.\.18446744073709551615, got 'abc'\n$/);
  });

  it('refuses flags that do not apply to the input and stream ids that are not job/kernel', async () => {
    const cases: [string[], RegExp][] = [
      [['--dist', 'pois(3)', '--basis', 'window'], /^warpwatch: --basis applies to --stream read from Kafka only\n$/],
      [['--dist', 'pois(3)', '--groups', '8'], /^warpwatch: --groups applies to --workload only\n$/],
      [['--dist', 'pois(3)', '--seed', '8'], /^warpwatch: --seed applies to --workload only\n$/],
      [['--dist', 'pois(3)', '--sorted'], /^warpwatch: --sorted applies to --workload escape only\n$/],
      [['--stream', 'noslash'], /^warpwatch: WW_ERR_STREAM_IDENTITY: --stream must be '<job>\/<kernel>' \(no '\/' found\), got 'noslash'\n$/],
      [['--dist', 'pois(3)', '--units', '1e3'], /--units must be a decimal integer ≥ 32/],
      [['--dist', 'pois(3)', '--export-counts', join(directory, 'x.csv')], /--export-counts writes observed counts; --dist and --pmf inputs have none/],
    ];
    for (const [args, message] of cases) {
      const result = await advise(...args);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    }
  });

  it('--export-counts writes the observed distribution in the --counts format (round trip)', async () => {
    const input = join(directory, 'units.json');
    writeFileSync(input, JSON.stringify([1, 1, 2, 9, 9, 9, 0]));
    const exported = join(directory, 'exported.csv');
    const result = await advise('--counts', input, '--n', '4', '--export-counts', exported, '--json');
    expect(result.status, result.stderr).toBe(0);
    expect(readFileSync(exported, 'utf8')).toBe('value,count\n0,1\n1,2\n2,1\n9,3\n');
    const again = await advise('--counts', exported, '--n', '4', '--json');
    expect((JSON.parse(again.stdout) as Advice).current.expectedLoss).toBe((JSON.parse(result.stdout) as Advice).current.expectedLoss);
  });
});
