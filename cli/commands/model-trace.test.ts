// warpwatch model / advise --trace FILE: a per-unit counts trace in unit order
// gives the locality-aware loss of every n that divides its length with its interval, beside
// the independent-lanes figure. Expectations by brute force, as exact fractions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/run-cli.ts';
import type { ModelOutput } from './model.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-model-trace-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

const trace = [1, 3, 2, 2, 5, 1, 4, 4];

/** Brute force: consecutive groups of n, mean of n·max/Σ. */
function contiguous(units: readonly number[], n: number): number {
  let sum = 0;
  for (let g = 0; g < units.length / n; g++) {
    const group = units.slice(g * n, (g + 1) * n);
    sum += (n * Math.max(...group)) / group.reduce((a, b) => a + b, 0);
  }
  return sum / (units.length / n);
}

/** Independent lanes by enumeration: all 8^n ordered draws (with replacement) of the trace's units, n ≤ 3. */
function enumerated(units: readonly number[], n: number): number {
  let sum = 0;
  let count = 0;
  const walk = (prefix: number[]): void => {
    if (prefix.length === n) {
      sum += (n * Math.max(...prefix)) / prefix.reduce((a, b) => a + b, 0);
      count += 1;
      return;
    }
    for (const w of units) walk([...prefix, w]);
  };
  walk([]);
  return sum / count;
}

describe('warpwatch model --trace', () => {
  it('sweeps every n that divides the trace: layout loss by contiguous grouping, interval, independent-lanes figure', async () => {
    const run = await runCli('model', '--trace', file('t.csv', 'count\n1\n3\n2\n2\n\n# a comment\n5\n1\n4\n4\n'), '--json');
    expect(run.status, run.stderr).toBe(0);
    const output = JSON.parse(run.stdout) as ModelOutput;
    expect(output.results.map((row) => row.n)).toEqual([1, 2, 4, 8]);
    const rows = output.locality!.rows;
    expect(rows.map((row) => row.n)).toEqual([1, 2, 4, 8]);
    // By hand: n = 2 → (3/2 + 1 + 5/3 + 1)/4 = 31/24; n = 4 → (12/8 + 20/14)/2 = 41/28; n = 8 → 40/22.
    expect(rows[1]!.layoutLoss).toBeCloseTo(31 / 24, 14);
    expect(rows[2]!.layoutLoss).toBeCloseTo(41 / 28, 14);
    expect(rows[3]!.layoutLoss).toBeCloseTo(40 / 22, 14);
    for (const row of rows) expect(row.layoutLoss).toBeCloseTo(contiguous(trace, row.n), 14);
    // Workload loss of the layout at n = 4: Σ n·max / Σ w = (12 + 20)/22.
    expect(rows[2]!.layoutWorkloadLoss).toBeCloseTo(32 / 22, 14);
    // Interval at n = 2: four batches of one group, ratio estimator SE² = R/(R−1)·Σ(a − v)²/R².
    const a = [3 / 2, 1, 5 / 3, 1];
    const se = Math.sqrt((4 / 3) * a.reduce((s, x) => s + (x - 31 / 24) ** 2, 0)) / 4;
    expect(rows[1]!.standardError).toBeCloseTo(se, 14);
    expect(rows[3]!.standardError).toBeNull(); // one group: no interval
    // Independent lanes on the same units: enumeration of all 64 ordered pairs (fast method: within 1e-6).
    expect(Math.abs(rows[1]!.independentLoss - enumerated(trace, 2))).toBeLessThan(1e-6);
    expect(Math.abs(output.results[1]!.expectedLoss - enumerated(trace, 2))).toBeLessThan(1e-6);
    expect(rows[1]!.localityBenefit).toBeCloseTo(rows[1]!.independentLoss / (31 / 24), 12);
  });

  it('reads a JSON array; --n picks n and names those that do not divide the trace', async () => {
    const run = await runCli('model', '--trace', file('t.json', JSON.stringify(trace)), '--n', '2,3');
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/locality-aware loss of the trace's own layout/);
    expect(run.stdout).toMatch(/\n2 +4 +1\.291667/);
    expect(run.stdout).toMatch(/note: n = 3 do not divide the trace's 8 units/);
  });

  it.each([
    ['a fraction', '1\n2.5\n', /line 2: a count must be a non-negative decimal integer/],
    ['a sign', '1\n-2\n', /line 2: a count must be a non-negative decimal integer/],
    ['two fields', '1,2\n', /line 1: expected one count per line/],
    ['a JSON object', '{"1": 2}', /must hold a JSON array of per-unit counts/],
    ['a non-integer JSON element', '[1, 2.5]', /element 1 of the array must be a unit's iteration count/],
    ['nothing', 'count\n', /holds no unit counts/],
  ])('exits 2 with one line for %s', async (_name, text, message) => {
    const run = await runCli('model', '--trace', file('bad.csv', text));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('conflicts with the other inputs', async () => {
    const path = file('t2.csv', '1\n2\n');
    for (const other of [['--counts', path], ['--dist', 'geo(0.5)'], ['--pmf', path]]) {
      const run = await runCli('model', '--trace', path, ...other);
      expect(run.status).toBe(2);
      expect(run.stderr).toMatch(/^warpwatch: give exactly one of .*--trace FILE/);
    }
    const advise = await runCli('advise', '--trace', path, '--counts', path);
    expect(advise.status).toBe(2);
    expect(advise.stderr).toMatch(/^warpwatch: give exactly one input: .*--trace FILE/);
  });
});

describe('warpwatch advise --trace', () => {
  it('gives the same layout sweep and the what-ifs on the trace units', async () => {
    // 64 units: groups of 4 alike within, alternating low and high: the layout loses far less than random.
    const units = Array.from({ length: 16 }, (_, g) => (g % 2 === 0 ? [2, 2, 2, 3] : [20, 20, 20, 21])).flat();
    const run = await runCli('advise', '--trace', file('alike.json', JSON.stringify(units)), '--n', '4', '--json', '--bins', '2');
    expect(run.status, run.stderr).toBe(0);
    const advice = JSON.parse(run.stdout) as {
      locality: { n: number; expectedLoss: number }[];
      onRuns: { units: number; layoutLoss: number; sorting: { exact: number; estimated: number } };
      recommendation: string[];
      current: { expectedLoss: number };
    };
    // Divisors of 64 up to 32.
    expect(advice.locality.map((row) => row.n)).toEqual([1, 2, 4, 8, 16, 32]);
    const layout4 = (12 / 9 + 84 / 81) / 2;
    expect(advice.locality.find((row) => row.n === 4)!.expectedLoss).toBeCloseTo(layout4, 14);
    expect(advice.onRuns.units).toBe(64);
    expect(advice.onRuns.layoutLoss).toBeCloseTo(layout4, 14);
    // Exact sort: 24 × 2, 8 × 3, 24 × 20, 8 × 21 in groups of 4 → [2,2,2,2]×6, [3,3,3,3]×2, [20..]×6, [21..]×2: all 1.
    expect(advice.onRuns.sorting.exact).toBe(1);
    expect(advice.recommendation[0]).toMatch(
      new RegExp(`^in this kernel's layout groups of 4 lanes run \\d\\.\\d\\d× as long .*mean per-group loss ${layout4.toFixed(2)}×, locality-aware, from the trace, .*if work were assigned to lanes at random: .*\\(mean per-group loss ${advice.current.expectedLoss.toFixed(2)}×\\)`),
    );
  });
});
