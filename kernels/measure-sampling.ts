// Sampling error of group selection on escape (docs/kernels.md, "Group sampling"): runs the
// CPU escape program once with every group sampled (the population), then prints, as JSON,
// the all-groups loss_counts and ICC, what stride selects, and the spread of an ideal random
// 1-in-k draw (fixed-seed Monte Carlo) and of the hash selection over many launch ids.
//
//   npx tsx kernels/measure-sampling.ts [--width 256] [--height 256] [--n 32] [--stride 64]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { decodeFrames } from '../protocol/index.ts';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from './index.ts';
import { groupStats, idealSelection, sampleStatistics, splitmix64, type GroupStats, type Moments } from './sampling-statistics.ts';

const { values } = parseArgs({ options: { width: { type: 'string', default: '256' }, height: { type: 'string', default: '256' }, n: { type: 'string', default: '32' }, stride: { type: 'string', default: '64' } } });
const n = Number(values.n);
const stride = Number(values.stride);

const { binDir } = await ensureKernelsBuilt({ targets: [workloadBinaryName('escape', 'cpu')] });
const scratch = mkdtempSync(join(tmpdir(), 'ww-measure-sampling-'));
try {
  const out = join(scratch, 'all.bin');
  const args = ['--width', values.width, '--height', values.height, '--n', String(n), '--sample-rate', '1', '--sample-capacity', String(1 << 24), '--remeasure', '0', '--out', out];
  await runWorkload({ binDir, workload: 'escape', backend: 'cpu', args });
  const population: GroupStats[] = [];
  for (const frame of decodeFrames(new Uint8Array(readFileSync(out)))) {
    if (frame.type === 'group-samples') for (const g of frame.groups) population[g.groupIndex] = groupStats(g.laneCounts);
  }
  const indices = population.map((_, g) => g);
  const pick = (keep: (g: number) => boolean): GroupStats[] => indices.filter(keep).map((g) => population[g] as GroupStats);
  const strideGroups = pick((g) => g % stride === 0);
  const hashLosses: number[] = [];
  const hashIccs: number[] = [];
  for (let r = 0; r < 2000; ++r) {
    const launchId = splitmix64(BigInt(r) + 0x5eedn);
    const s = sampleStatistics(pick((g) => splitmix64(launchId ^ BigInt(g)) % BigInt(stride) === 0n), n);
    if (Number.isNaN(s.icc)) continue;
    hashLosses.push(s.lossCounts);
    hashIccs.push(s.icc);
  }
  const moments = (v: readonly number[]): Moments => {
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    return { mean, sd: Math.sqrt(v.reduce((a, x) => a + (x - mean) ** 2, 0) / (v.length - 1)) };
  };
  const result = {
    image: `${values.width}x${values.height}`,
    n,
    stride,
    groups: population.length,
    allGroups: sampleStatistics(population, n),
    strideSelection: { groups: strideGroups.length, ...sampleStatistics(strideGroups, n) },
    idealOneLaunch: idealSelection(population, n, stride, 1, 4000, 1),
    idealThirtyTwoLaunches: idealSelection(population, n, stride, 32, 2000, 2),
    hashOverLaunchIds: { launchIds: hashLosses.length, lossCounts: moments(hashLosses), icc: moments(hashIccs) },
  };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
