import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli, type CliRun } from '../testing/run-cli.ts';
import { CategoricalDistribution, expectedLoss, lossQuantiles, workloadLoss } from '../../model/index.ts';
import type { ModelOutput } from './model.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function warpwatch(...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, ['bin/warpwatch.mjs', 'model', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Runs `warpwatch model ...args` in this process (same main() as the binary); much faster than spawning. */
const warpwatchInProcess = (...args: string[]): Promise<CliRun> => runCli('model', ...args);

const directory = mkdtempSync(join(tmpdir(), 'warpwatch-model-'));
function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

describe('warpwatch model', () => {
  it('--json prints the contract shape with the model values', () => {
    const run = warpwatch('--dist', 'nbinom(5,0.3)', '--n', '2,32', '--quantiles', '0.5,0.95', '--json');
    expect(run.status).toBe(0);
    const output = JSON.parse(run.stdout) as ModelOutput;
    const dist = CategoricalDistribution.fromFamily({ family: 'nbinom', r: 5, p: 0.3 });
    expect(output.distribution.spec).toEqual({ family: 'nbinom', r: 5, p: 0.3 });
    expect(output.distribution.truncation).toEqual({ ...dist.truncation });
    expect(output.distribution.support).toBe(dist.size);
    expect(output.results.map((row) => row.n)).toEqual([2, 32]);
    for (const row of output.results) {
      expect(Object.keys(row).sort()).toEqual(['expectedLoss', 'method', 'n', 'quantileMethod', 'quantiles', 'workloadLoss']);
      expect(row.method).toBe('fast');
      expect(row.expectedLoss).toBe(expectedLoss(dist, row.n));
      expect(row.workloadLoss).toBe(workloadLoss(dist, row.n));
      expect(row.quantiles).toEqual(lossQuantiles(dist, row.n, [0.5, 0.95]).quantiles);
    }
  });

  it('prints an aligned table with the truncation point and the exact method on request', async () => {
    const run = await warpwatchInProcess('--dist', 'geo(0.5)', '--n', '4,8', '--method', 'exact');
    expect(run.status).toBe(0);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^distribution: geo\(0\.5\): 20 values in \[1, 20\]/);
    expect(lines[1]).toMatch(/^\s*n\s+expected loss\s+workload loss\s+method\s+truncation$/);
    expect(lines).toHaveLength(4);
    const exact = expectedLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.5 }), 8, { method: 'exact' });
    expect(lines[3]).toMatch(new RegExp(`^\\s*8\\s+${exact.toFixed(6).replace('.', '\\.')}\\s+\\S+\\s+exact\\s+20$`));
  });

  it('reads --counts as JSON or CSV (with a header) to the same distribution', async () => {
    const json = await warpwatchInProcess('--counts', file('c.json', '{"1": 30, "4": 10, "0": 5}'), '--n', '32', '--json');
    const csv = await warpwatchInProcess('--counts', file('c.csv', 'value,count\n1,30\n# comment\n4,10\n0,5\n'), '--n', '32', '--json');
    expect(json.status).toBe(0);
    expect(csv.status).toBe(0);
    const a = JSON.parse(json.stdout) as ModelOutput;
    const b = JSON.parse(csv.stdout) as ModelOutput;
    expect(a.results).toEqual(b.results);
    expect(a.distribution.totalWeight).toBe(45);
    const dist = CategoricalDistribution.fromCounts({ 0: 5, 1: 30, 4: 10 });
    expect(a.results[0]!.expectedLoss).toBe(expectedLoss(dist, 32));
  });

  it('falls back to the fast method for an n the exact method refuses, with a note, and keeps the exact rows', async () => {
    const run = await warpwatchInProcess('--dist', 'unif(0,2000)', '--method', 'exact', '--n', '2,32', '--json');
    expect(run.status).toBe(0);
    const output = JSON.parse(run.stdout) as { results: { n: number; method: string; note?: string; expectedLoss: number }[] };
    expect(output.results[0]).toMatchObject({ n: 2, method: 'exact' });
    expect(output.results[0]!.note).toBeUndefined();
    expect(output.results[1]).toMatchObject({ n: 32, method: 'fast' });
    expect(output.results[1]!.note).toMatch(/exact method refused for n=32 .*; fast method used/);
    // Closed form for n = 2 of a discrete uniform on 0..M is not simple; enumerate it instead.
    let sum = 0;
    const size = 2001;
    for (let a = 0; a < size; a++) for (let b = 0; b < size; b++) sum += a + b === 0 ? 1 : (2 * Math.max(a, b)) / (a + b);
    expect(output.results[0]!.expectedLoss).toBeCloseTo(sum / (size * size), 10);
    const table = await warpwatchInProcess('--dist', 'unif(0,2000)', '--method', 'exact', '--n', '2,32');
    expect(table.stdout).toMatch(/note: exact method refused for n=32/);
  });

  it('reads a JSON array of per-unit counts and a --pmf table', async () => {
    const array = JSON.parse((await warpwatchInProcess('--counts', file('units.json', '[1, 1, 4, 0, 1]'), '--json')).stdout) as ModelOutput;
    expect(array.distribution.totalWeight).toBe(5);
    expect(array.distribution.mean).toBeCloseTo(7 / 5, 14);
    const pmf = JSON.parse((await warpwatchInProcess('--pmf', file('table.csv', 'value,probability\n1,0.6\n4,0.2\n0,0.2\n'), '--json')).stdout) as ModelOutput;
    expect(pmf.distribution.source).toMatch(/^pmf:/);
    expect(pmf.distribution.mean).toBeCloseTo(1.4, 14);
  });

  const bad: [string, string[], RegExp][] = [
    ['no distribution', ['--n', '4'], /give exactly one of --dist SPEC .*, --counts FILE .*, --pmf FILE .* or --trace FILE/],
    ['both sources', ['--dist', 'geo(0.5)', '--counts', 'x.json'], /give exactly one of --dist/],
    ['bad spec', ['--dist', 'geo(1.5)'], /--dist: geo\(p\): p must be a number in \(0, 1\], got 1\.5/],
    ['unknown family', ['--dist', 'normal(0,1)'], /--dist: unknown distribution family 'normal'; expected binom\(N,p\)/],
    ['n out of range', ['--dist', 'geo(0.5)', '--n', '2,2048'], /--n must be a comma-separated list of integers 1\.\.1024, got '2,2048'/],
    ['n not a list', ['--dist', 'geo(0.5)', '--n', 'a'], /--n must be a comma-separated list of integers 1\.\.1024/],
    ['bad method', ['--dist', 'geo(0.5)', '--method', 'slow'], /argument 'slow' is invalid\. Allowed choices are fast, exact/],
    ['bad quantile', ['--dist', 'geo(0.5)', '--quantiles', '0.5,1'], /--quantiles must be a comma-separated list of probabilities in \(0, 1\), got '0\.5,1'/],
    ['bad epsilon', ['--dist', 'geo(0.5)', '--epsilon', '2'], /--epsilon must be a number in \(0, 0\.5\), got '2'/],
    ['missing file', ['--counts', join(directory, 'none.json')], /cannot read --counts file '.*none\.json'/],
    ['bad CSV line', ['--counts', file('bad.csv', '1,2\n3;4\n')], /line 2: expected 'value,count' \(two fields\), got '3;4'/],
    ['negative value', ['--counts', file('neg.json', '{"-2": 3}')], /--counts file '.*neg\.json': key '-2': a value must be a non-negative decimal integer \(digits only\), got '-2'/],
    ['all zero', ['--counts', file('zero.csv', '1,0\n2,0\n')], /all weights are zero/],
    ['non-integer value', ['--counts', file('frac.json', '{"1.5": 3}')], /key '1\.5': a value must be a non-negative decimal integer/],
    ['negative count', ['--counts', file('negc.csv', '1,-2\n')], /line 1: a count must be a non-negative decimal integer \(units observed\), got '-2'/],
    ['non-numeric count', ['--counts', file('nan.json', '{"1": "abc"}')], /value 1: a count must be a JSON number, got "abc"/],
    ['empty file', ['--counts', file('empty.csv', '')], /distribution is empty/],
    ['JSON array of non-integers', ['--counts', file('array.json', '[1, 2.5]')], /element 1 of the array must be a unit's iteration count/],
    ['fractional count', ['--counts', file('frac.csv', '7,7.5\n')], /got '7\.5' \(fractional weights or probabilities: give the file with --pmf\)/],
    ['numeric first line with three fields', ['--counts', file('three.csv', '1,3,4\n2,5\n')], /line 1: expected 'value,count' \(two fields\), got '1,3,4'/],
    ['hexadecimal value', ['--counts', file('hex.csv', '0x10,1\n')], /line 1: the value must be a non-negative decimal integer \(digits only\), got '0x10'/],
    ['value above 2^53', ['--counts', file('big.csv', '9007199254740993,1\n')], /at most 2\^53−1 = 9007199254740991/],
    ['seed with a space', ['--dist', 'geo(0.5)', '--quantiles', '0.5', '--seed', ' 5'], /--seed must be a non-negative integer, got ' 5'/],
    ['seed without quantiles', ['--dist', 'geo(0.5)', '--seed', '5'], /^warpwatch: --seed applies to --quantiles only/],
    ['pmf and counts', ['--pmf', 'p.csv', '--counts', 'c.csv'], /give exactly one of/],
    ['bad JSON', ['--counts', file('broken.json', '{"1": 2')], /is not valid JSON/],
    ['unknown flag', ['--dist', 'geo(0.5)', '--bogus'], /unknown option '--bogus'/],
  ];
  it('the binary exits 2 with one line on stderr for a bad spec', () => {
    const run = warpwatch('--dist', 'geo(1.5)');
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe('warpwatch: --dist: geo(p): p must be a number in (0, 1], got 1.5\n');
  });

  for (const [name, args, message] of bad) {
    it(`exits 2 with one line for ${name}`, async () => {
      const run = await warpwatchInProcess(...args);
      expect(run.status).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(message);
    });
  }
});
