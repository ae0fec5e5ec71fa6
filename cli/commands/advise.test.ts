import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CategoricalDistribution, expectedLoss } from '../../model/index.ts';
import type { Advice } from '../advise/advice.ts';
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
    expect(result.stdout).toMatch(/recommendation:\n {2}- groups of 32 lanes are predicted to lose/);
    expect(result.stdout).toMatch(/sorted by work/);
    expect(result.stdout).toMatch(/binned, k = 8/);
  });

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
      expect(result.stderr).toBe('warpwatch: give exactly one input: --counts FILE, --frames FILE [--stream ID], --stream ID (Kafka), --workload matpow|escape, or --dist SPEC\n');
    }
  });

  it('exits 2 for bad bin counts and a missing counts file', async () => {
    expect((await advise('--dist', 'pois(3)', '--bins', '0')).stderr).toMatch(/--bins must list bin counts 1\.\.1024, got '0'/);
    const missing = await advise('--counts', join(directory, 'nope.json'));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/cannot read --counts file/);
  });
});
