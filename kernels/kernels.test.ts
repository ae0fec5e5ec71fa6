import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames, histogramToCounts, type Frame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { CategoricalDistribution, expectedLoss, groupLoss } from '../model/index.ts';
import { ensureKernelsBuilt, runWorkload } from './index.ts';
import { groupStats, sampleStatistics } from './sampling-statistics.ts';

// Builds kernels/ with CMake (incremental; the first build takes about a minute) and runs the
// C++ tests and short CPU workloads, so `npm test` covers the C++ side too.
let binDir = '';
let scratch = '';

beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt());
  scratch = mkdtempSync(join(tmpdir(), 'ww-kernels-'));
}, 900_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

function summaries(frames: readonly Frame[]): LaunchSummaryFrame[] {
  return frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
}
function sampleFrames(frames: readonly Frame[]): GroupSamplesFrame[] {
  return frames.filter((f): f is GroupSamplesFrame => f.type === 'group-samples');
}

describe('kernels', () => {
  describe('ctest', () => {
    it('passes every C++ test (GoogleTest and the CPU smoke run)', () => {
      const result = spawnSync('ctest', ['--test-dir', binDir, '--output-on-failure', '--timeout', '120', '-LE', 'tsan|asan'], { encoding: 'utf8' });
      expect(result.status, result.stdout + result.stderr).toBe(0);
    }, 300_000);

    it('passes the recorder tests under ThreadSanitizer and AddressSanitizer/LeakSanitizer', () => {
      // kernels/CMakeLists.txt builds tests/recorder-test.cpp twice more, with -fsanitize=thread and
      // -fsanitize=address; --no-tests=error fails when those targets went missing.
      const result = spawnSync('ctest', ['--test-dir', binDir, '--output-on-failure', '--timeout', '120', '--no-tests=error', '-L', 'tsan|asan'], {
        encoding: 'utf8',
      });
      expect(result.status, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toMatch(/tsan\.Recorder\.InterleavedThreadsAndStreamsKeepEveryLaunchInItsOwnSlot \.+\s+Passed/);
      expect(result.stdout).toMatch(/asan\.RecorderSink\.AReaderThatGoesAwayNeverKillsTheJob \.+\s+Passed/);
    }, 300_000);
  });

  describe('matpow on the CPU backend', () => {
    const args = ['--dist', 'pois(30)', '--n', '8', '--groups', '2000', '--seed', '7', '--sample-rate', '0.01', '--selection', 'stride', '--job', 'test'];

    it('writes a summary whose histogram, sums and samples agree with each other and with the model', async () => {
      const out = join(scratch, 'matpow.bin');
      const report = await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: [...args, '--out', out] });
      const frames = decodeFrames(new Uint8Array(readFileSync(out)));
      const [summary, ...others] = summaries(frames);
      expect(others).toHaveLength(0);
      expect(summary).toBeDefined();
      if (summary === undefined) return;
      expect(summary).toMatchObject({ job: 'test', kernel: 'matpow', source: 'cpu', groupSize: 8, groupCount: 2000, groupsCounted: 2000, droppedSamples: 0 });
      expect(summary.device.clockHz).toBe(1e9);
      // Histogram: every lane once; pois(30) counts are < 1024, so bins are exact values.
      const counts = histogramToCounts(summary.histogram);
      let lanes = 0;
      let iterations = 0;
      for (const [value, count] of counts) {
        lanes += count;
        iterations += value * count;
      }
      expect(lanes).toBe(2000 * 8);
      expect(iterations).toBe(summary.sumCounts);
      // Stride 100 (asked for; the default is hash) selects groups 0, 100, ..., 1900; their counts are in the histogram.
      const samples = sampleFrames(frames).flatMap((f) => f.groups);
      expect(samples.map((g) => g.groupIndex)).toEqual(Array.from({ length: 20 }, (_, i) => i * 100));
      for (const g of samples) {
        expect(g.laneCounts).toHaveLength(8);
        for (const c of g.laneCounts) expect(counts.get(c) ?? 0).toBeGreaterThan(0);
        expect(groupLoss(g.laneCounts)).toBeGreaterThanOrEqual(1);
      }
      // Model vs counts: i.i.d. draws, so E[X_W(8)] on the observed distribution matches the
      // mean group loss within sampling error (sd of H ~0.08 here, SE ~0.002; tolerance 0.01).
      const lossCounts = summary.sumCountsLoss / summary.groupsCounted;
      const lossPredicted = expectedLoss(CategoricalDistribution.fromCounts(counts), 8);
      expect(Math.abs(lossPredicted - lossCounts)).toBeLessThan(0.01);
      expect(report.lossCounts).toBeCloseTo(lossCounts, 5);
      // Measured H is a timing; only its range is a property (agreement belongs in bench/).
      const lossMeasured = summary.sumMeasuredLoss / summary.groupsCounted;
      expect(lossMeasured).toBeGreaterThanOrEqual(1);
      expect(lossMeasured).toBeLessThanOrEqual(8);
    });

    it('draws the same counts for the same seed', async () => {
      const histograms = [];
      for (const name of ['a.bin', 'b.bin']) {
        const out = join(scratch, name);
        await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: [...args, '--groups', '200', '--out', out] });
        histograms.push(summaries(decodeFrames(new Uint8Array(readFileSync(out))))[0]?.histogram);
      }
      expect(histograms[0]).toEqual(histograms[1]);
    });

    it('rejects a bad distribution spec as a usage error', async () => {
      await expect(runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: ['--dist', 'zipf(2)'] })).rejects.toMatchObject({
        code: 'WW_ERR_KERNELS_WORKLOAD_USAGE',
      });
    });
  });

  describe('escape on the CPU backend', () => {
    it('sorting regroups the same units: identical histogram, lower loss from counts', async () => {
      const results = [];
      for (const sorted of [false, true]) {
        const out = join(scratch, `escape-${sorted}.bin`);
        const args = ['--n', '16', '--width', '128', '--height', '128', '--max-iter', '128', '--out', out];
        await runWorkload({ binDir, workload: 'escape', backend: 'cpu', args: sorted ? [...args, '--sorted'] : args });
        const [summary] = summaries(decodeFrames(new Uint8Array(readFileSync(out))));
        expect(summary?.groupsCounted).toBe((128 * 128) / 16);
        results.push(summary);
      }
      const [plain, sorted] = results;
      expect(plain?.kernel).toBe('escape');
      expect(sorted?.kernel).toBe('escape-sorted');
      expect(sorted?.histogram).toEqual(plain?.histogram);
      const keys = [...histogramToCounts(plain?.histogram ?? []).keys()];
      expect(Math.min(...keys)).toBeGreaterThanOrEqual(1);
      expect(Math.max(...keys)).toBe(128); // points inside the set hit the cap
      expect((sorted?.sumCountsLoss ?? 0) / (sorted?.groupsCounted ?? 1)).toBeLessThan((plain?.sumCountsLoss ?? 0) / (plain?.groupsCounted ?? 1));
    });
  });

  // relax and banded: data-driven counts whose neighbouring units do similar work.
  // Same seed → same frames; a new seed → new counts; and the layout's groups are far more
  // uniform than random ones: the loss from the counts lies well below §2's independent-lanes
  // model on the same histogram, and the ANOVA ICC of the lanes (every group sampled) is high.
  describe.each([
    { workload: 'relax' as const, n: 16, args: ['--width', '128', '--height', '128'], groups: (128 * 128) / 16, low: 10, high: 256 },
    { workload: 'banded' as const, n: 8, args: ['--groups', '512'], groups: 512, low: 3, high: 74 },
  ])('$workload on the CPU backend', ({ workload, n, args, groups, low, high }) => {
    async function summaryAndSamples(name: string, seed: number) {
      const out = join(scratch, `${name}.bin`);
      const report = await runWorkload({ binDir, workload, backend: 'cpu', args: [...args, '--n', String(n), '--seed', String(seed), '--sample-rate', '1', '--out', out] });
      const frames = decodeFrames(new Uint8Array(readFileSync(out)));
      const [summary] = summaries(frames);
      return { report, summary, samples: sampleFrames(frames).flatMap((f) => f.groups) };
    }

    it('records every group; neighbouring lanes do similar work, so the layout loses far less than random groups', async () => {
      const { report, summary, samples } = await summaryAndSamples(`${workload}-a`, 1);
      expect(summary).toMatchObject({ kernel: workload, source: 'cpu', groupSize: n, groupCount: groups, groupsCounted: groups, droppedSamples: 0 });
      const counts = histogramToCounts(summary?.histogram ?? []);
      const values = [...counts.keys()];
      expect(Math.min(...values)).toBeGreaterThanOrEqual(low);
      expect(Math.max(...values)).toBeLessThanOrEqual(high);
      expect(Math.max(...values) / Math.min(...values)).toBeGreaterThan(3); // work varies a lot across the grid
      // Every group sampled (rate 1): the samples hold every lane, so they reproduce the summary.
      expect(samples).toHaveLength(groups);
      expect(samples.reduce((s, g) => s + g.laneCounts.reduce((a, c) => a + c, 0), 0)).toBe(summary?.sumCounts);
      const lossCounts = (summary?.sumCountsLoss ?? 0) / groups;
      expect(report.lossCounts).toBeCloseTo(lossCounts, 5);
      const lossIndependent = expectedLoss(CategoricalDistribution.fromCounts(counts), n);
      expect(lossCounts).toBeGreaterThanOrEqual(1);
      expect(lossCounts - 1).toBeLessThan(0.5 * (lossIndependent - 1));
      const statistics = sampleStatistics(samples.map((g) => groupStats(g.laneCounts)), n);
      expect(statistics.lossCounts).toBeCloseTo(lossCounts, 9); // the lanes' own H, recomputed
      expect(statistics.icc).toBeGreaterThan(0.6);
    });

    it('draws the same work for the same seed and other work for another seed', async () => {
      const first = await summaryAndSamples(`${workload}-b`, 1);
      const again = await summaryAndSamples(`${workload}-c`, 1);
      const other = await summaryAndSamples(`${workload}-d`, 2);
      expect(again.summary?.histogram).toEqual(first.summary?.histogram);
      expect(again.samples.map((g) => g.laneCounts)).toEqual(first.samples.map((g) => g.laneCounts));
      expect(other.summary?.histogram).not.toEqual(first.summary?.histogram);
    });
  });

  describe('banded --sorted on the CPU backend', () => {
    it('regroups the same rows in order of length: identical histogram, non-decreasing lanes, loss near 1', async () => {
      const results = [];
      for (const sorted of [false, true]) {
        const out = join(scratch, `banded-${sorted}.bin`);
        const args = ['--n', '8', '--groups', '512', '--sample-rate', '1', '--out', out];
        await runWorkload({ binDir, workload: 'banded', backend: 'cpu', args: sorted ? [...args, '--sorted'] : args });
        const frames = decodeFrames(new Uint8Array(readFileSync(out)));
        results.push({ summary: summaries(frames)[0], samples: sampleFrames(frames).flatMap((f) => f.groups) });
      }
      const [plain, sorted] = results;
      expect(plain?.summary?.kernel).toBe('banded');
      expect(sorted?.summary?.kernel).toBe('banded-sorted');
      expect(sorted?.summary?.histogram).toEqual(plain?.summary?.histogram);
      // Every group sampled: in group order the lanes' lengths never decrease.
      const lanes = [...(sorted?.samples ?? [])].sort((a, b) => a.groupIndex - b.groupIndex).flatMap((g) => g.laneCounts);
      expect(lanes).toHaveLength(512 * 8);
      for (let i = 1; i < lanes.length; i += 1) expect(lanes[i]).toBeGreaterThanOrEqual(lanes[i - 1] ?? 0);
      // A group straddles at most one change of length, so few groups lose anything.
      const loss = (s: typeof plain) => (s?.summary?.sumCountsLoss ?? 0) / (s?.summary?.groupsCounted ?? 1);
      expect(loss(sorted)).toBeLessThan(loss(plain));
      expect(loss(sorted)).toBeLessThan(1.01);
    });

    it('rejects more rows than 32-bit CSR offsets hold as a usage error', async () => {
      // 3·2^20 groups of 32 rows = 3·2^25 rows, above the 2^26 limit: refused before any allocation.
      await expect(runWorkload({ binDir, workload: 'banded', backend: 'cpu', args: ['--groups', String(3 * 2 ** 20), '--n', '32'] })).rejects.toMatchObject({
        code: 'WW_ERR_KERNELS_WORKLOAD_USAGE',
        message: expect.stringMatching(/rows \(--groups × --n\) must be 1\.\.2\^26, got 100663296/),
      });
    });
  });

  describe('divergence on the CPU backend', () => {
    it('writes one launch per pattern and a CSV row per repetition', async () => {
      const out = join(scratch, 'divergence.bin');
      const csv = join(scratch, 'divergence.csv');
      await runWorkload({ binDir, workload: 'divergence', backend: 'cpu', args: ['--repetitions', '2', '--out', out, '--csv', csv] });
      const launches = summaries(decodeFrames(new Uint8Array(readFileSync(out))));
      expect(launches).toHaveLength(64);
      expect(launches.filter((l) => l.kernel === 'divergence-nested')).toHaveLength(32);
      // Pattern k = 3, single loop: bounds 32 x29, 31, 30, 29.
      const k3 = launches[3];
      expect([...histogramToCounts(k3?.histogram ?? [])]).toEqual([[29, 2], [30, 2], [31, 2], [32, 58]]);
      const rows = readFileSync(csv, 'utf8').trim().split('\n');
      expect(rows[0]).toBe('pattern,loop,k,bounds,cycles,clock_hz,source,repetition');
      expect(rows).toHaveLength(1 + 64 * 2);
      expect(rows[1]).toMatch(/^single-k0,single,0,,\d+,1000000000,cpu,0$/);
    });
  });
});
