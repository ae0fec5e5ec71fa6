import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../testing/run-cli.ts';
import { divergenceObservationOf, divergencePatternBounds } from '../../model/index.ts';
import { encodeFrame, type GroupSamplesFrame } from '../../protocol/index.ts';

/** Encodes one GroupSamples frame (job bound-test, kernel kernel) holding the given lane counts. */
export function encodeFrameForTest(groups: number[][]): Uint8Array {
  const frame: GroupSamplesFrame = {
    type: 'group-samples',
    job: 'bound-test',
    kernel: 'kernel',
    launchId: 1n,
    frameSequence: 0,
    source: 'cpu',
    groupSize: 4,
    sync: true,
    device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
    startUnixNanos: 0n,
    endUnixNanos: 1n,
    groupCount: groups.length,
    selection: 'stride',
    samplingStride: 1,
    groups: groups.map((laneCounts, groupIndex) => ({
      groupIndex,
      startClock: 0n,
      endClock: 100n,
      laneCounts,
      laneFinishClocks: laneCounts.map((c) => BigInt(c * 10)),
    })),
  };
  return encodeFrame(frame);
}

const dir = mkdtempSync(join(tmpdir(), 'ww-related-'));

describe('warpwatch divergence', () => {
  it('predict reports the stack counts and cycles', async () => {
    const result = await runCli('divergence', 'predict', '--k', '20', '--arch', 'kepler', '--iteration-cycles', '10', '--json');
    expect(result.status).toBe(0);
    const r = JSON.parse(result.stdout) as { trace: { spills: number; divergingExits: number }; totalCycles: number };
    expect(r.trace).toMatchObject({ divergingExits: 20, spills: 2 });
    expect(r.totalCycles).toBe(320 + 20 * 32 + 2 * 84);
  });
  it('fit recovers the parameters of an exact synthetic CSV', async () => {
    const lines = ['pattern,loop,k,bounds,cycles'];
    for (const loop of ['single', 'nested'] as const) {
      for (let k = 0; k <= 31; k += 1) {
        const o = divergenceObservationOf({ pattern: '', loop, k, bounds: divergencePatternBounds(k), innerBounds: undefined, cycles: 0, line: 0 });
        lines.push(`${loop}-k${k},${loop},${k},,${9 * o.issuedIterations + 26 * o.divergingExits + 176 * o.spills}`);
      }
    }
    const file = join(dir, 'divergence.csv');
    writeFileSync(file, lines.join('\n'));
    const json = await runCli('divergence', 'fit', file, '--json');
    expect(json.status).toBe(0);
    const fit = JSON.parse(json.stdout) as { iterationCycles: number; deltaCycles: number; spillCycles: number; rSquared: number };
    expect(fit.iterationCycles).toBeCloseTo(9, 6);
    expect(fit.deltaCycles).toBeCloseTo(26, 6);
    expect(fit.spillCycles).toBeCloseTo(176, 6);
    const table = await runCli('divergence', 'fit', file);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/δ \(cycles per diverging exit\)\s+= 26/);
    // 64 measurements: summarised, not dumped, unless asked.
    expect(table.stdout).toMatch(/residuals: 64, largest .* cycles \(.*\); --residuals lists them/);
    expect(table.stdout.split('\n').length).toBeLessThan(12);
    const listed = await runCli('divergence', 'fit', file, '--residuals');
    expect(listed.stdout.split('\n').filter((l) => /^ {4}(single|nested)-k\d+ /.test(l))).toHaveLength(64);
    const both = await runCli('divergence', 'fit', file, '--json', '--residuals');
    expect(both.status).toBe(2);
    expect(both.stderr).toBe('warpwatch: --residuals applies to the text output only (--json always lists every residual)\n');
  });
  it('fit takes the clock unit from the CSV: CPU-backend nanoseconds are not cycles', async () => {
    const lines = ['pattern,loop,k,bounds,cycles,clock_hz,source,repetition'];
    for (const loop of ['single', 'nested'] as const) {
      for (let k = 0; k <= 31; k += 1) {
        const o = divergenceObservationOf({ pattern: '', loop, k, bounds: divergencePatternBounds(k), innerBounds: undefined, cycles: 0, line: 0 });
        lines.push(`${loop}-k${k},${loop},${k},,${9 * o.issuedIterations + 26 * o.divergingExits + 176 * o.spills},1000000000,cpu,0`);
      }
    }
    const file = join(dir, 'divergence-cpu.csv');
    writeFileSync(file, lines.join('\n'));
    const table = await runCli('divergence', 'fit', file);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/clock in ns \(CPU backend: CPU SIMD lanes, not a GPU\)/);
    expect(table.stdout).toMatch(/δ \(ns per diverging exit\)\s+= 26/);
    expect(table.stdout).not.toMatch(/cycles/);
    writeFileSync(file, [...lines, 'single-k1,single,1,,500,1410000000,cuda,0'].join('\n'));
    const mixed = await runCli('divergence', 'fit', file);
    expect(mixed.status).toBe(2);
    expect(mixed.stderr).toMatch(/mixes clock units/);
  });
  it('exits 2 with one line on bad input', async () => {
    const badBounds = await runCli('divergence', 'predict', '--bounds', '3,x');
    expect(badBounds.status).toBe(2);
    expect(badBounds.stderr).toMatch(/--bounds must be a comma-separated list/);
    expect((await runCli('divergence', 'predict', '--k', '3', '--arch', 'volta')).status).toBe(2);
    expect((await runCli('divergence', 'fit', join(dir, 'missing.csv'))).status).toBe(2);
  });
});

describe('warpwatch bound', () => {
  it('prints the published example', async () => {
    const result = await runCli('bound', '--threads', '64', '--rep-cnt', '3', '--simulate', '--json');
    expect(result.status).toBe(0);
    const r = JSON.parse(result.stdout) as { bounds: { cycles: number; publishedFormulaCycles: number; simulatedWorstCycles: number }[] };
    expect(r.bounds[0]).toMatchObject({ cycles: 30, publishedFormulaCycles: 30 });
    expect(r.bounds[0]?.simulatedWorstCycles).toBeLessThanOrEqual(30);
  });
  it('takes rep_cnt from the maximum observed count of a frame file', async () => {
    const file = join(dir, 'frames.bin');
    writeFileSync(file, encodeFrameForTest([[3, 7, 2, 5], [1, 1, 4, 0]]));
    const result = await runCli('bound', '--threads', '64', '--frame', file, '--json');
    expect(result.status).toBe(0);
    const r = JSON.parse(result.stdout) as { bounds: { stream: string; maxObservedCount: number; repCount: number; cycles: number }[] };
    expect(r.bounds).toHaveLength(1);
    expect(r.bounds[0]).toMatchObject({ stream: 'bound-test/kernel', maxObservedCount: 7, repCount: 7, cycles: 3 * 4 + 2 + 2 * 4 * 6 });
  });
  it('needs exactly one of --rep-cnt and --frame', async () => {
    const result = await runCli('bound', '--threads', '64');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/exactly one of --rep-cnt/);
  });
});

describe('warpwatch transit', () => {
  it('prints the class and writes the SVG', async () => {
    const svg = join(dir, 'transit.svg');
    const result = await runCli('transit', '--lanes', '32', '--peak', '1', '--latency', '100', '--intensity', '32', '--threads', '1024', '--loss', '2', '--svg', svg);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/balanced \(H = 1\): capacity-bound/);
    expect(result.stdout).toMatch(/H = 2 .*: compute-bound/);
    expect(readFileSync(svg, 'utf8')).toContain('id="shifted-operating-point"');
  });
  it('exits 2 on a non-positive parameter', async () => {
    const result = await runCli('transit', '--lanes', '0', '--peak', '1', '--latency', '1', '--intensity', '1', '--threads', '1');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/--lanes must be a decimal number > 0, got '0'/);
  });
});
