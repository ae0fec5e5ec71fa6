import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CategoricalDistribution, expectedLoss } from '../../model/index.ts';
import type { Advice } from '../advise/advice.ts';
import { main } from '../main.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-cli-'));

async function advise(...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const status = await main(['node', 'warpwatch', 'advise', ...args]);
    return { status, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

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
