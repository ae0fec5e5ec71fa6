/**
 * Summarises bench/gpu/lane-clock-experiment.sh: per workload and lane-clock variant, the median
 * kernel time (CUDA events, `kernelMillis` of the exit report) and the overhead against the
 * probe compiled out, and the measured loss two ways: from the launch summaries (every group)
 * and from the sampled groups' lane clocks (GroupSamples). Prints a Markdown table.
 *
 * Usage: npx tsx bench/gpu/lane-clock-summary.ts OUT_DIR [--json FILE]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyzeFrames } from '../../analysis/index.ts';
import { decodeFrames } from '../../protocol/index.ts';
import { exitReport, median } from './run-files.ts';

function kernelMillis(file: string): number {
  return Number(exitReport(file)?.['kernelMillis'] ?? Number.NaN);
}

const fmt = (x: number | undefined, digits: number): string => (x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));

function main(argv: readonly string[]): number {
  const dir = argv.find((a) => !a.startsWith('--'));
  const jsonAt = argv.indexOf('--json');
  const runs = dir === undefined ? '' : join(dir, 'runs');
  if (dir === undefined || !existsSync(runs)) {
    process.stderr.write('usage: npx tsx bench/gpu/lane-clock-summary.ts OUT_DIR [--json FILE]   (OUT_DIR: the output of bench/gpu/lane-clock-experiment.sh)\n');
    return 2;
  }
  // <tag>_n<n>_<variant>_r<k>.json, the variant being now|none|sampled|exit|off-now|off-exit.
  const millis = new Map<string, number[]>();
  for (const f of readdirSync(runs)) {
    const match = /^(.+_n\d+)_([a-z-]+)_r\d+\.json$/.exec(f);
    if (match === null) continue;
    const value = kernelMillis(join(runs, f));
    if (!Number.isFinite(value)) continue;
    const key = `${match[1] as string} ${match[2] as string}`;
    millis.set(key, [...(millis.get(key) ?? []), value]);
  }
  const workloads = [...new Set([...millis.keys()].map((k) => k.split(' ')[0] as string))].sort();
  const rows = workloads.flatMap((workload) =>
    ['now', 'none', 'sampled', 'exit'].map((variant) => {
      const baseline = median(millis.get(`${workload} off-${variant === 'exit' ? 'exit' : 'now'}`) ?? []);
      const times = millis.get(`${workload} ${variant}`) ?? [];
      const frames = readdirSync(runs)
        .filter((f) => f.startsWith(`${workload}_${variant}_r`) && f.endsWith('.wwf'))
        .sort()
        .slice(0, 1)
        .flatMap((f) => decodeFrames(readFileSync(join(runs, f))));
      const [analysis] = frames.length > 0 ? analyzeFrames(frames) : [];
      return {
        workload,
        variant,
        repeats: times.length,
        kernelMillisOff: baseline,
        kernelMillis: median(times),
        overhead: median(times) / baseline - 1,
        lossCounts: analysis?.lossCounts,
        lossMeasuredSummaries: analysis?.lossMeasured,
        lossMeasuredSamples: analysis?.divergence?.lossMeasured,
        sampledGroups: analysis?.sampledGroups,
      };
    }),
  );
  if (jsonAt >= 0 && argv[jsonAt + 1] !== undefined) writeFileSync(argv[jsonAt + 1] as string, `${JSON.stringify({ createdAt: new Date().toISOString(), source: dir, rows }, null, 2)}\n`);
  const out = ['| workload | lane clock | repeats | kernel ms, no probe | kernel ms | overhead | loss_counts | measured (summaries) | measured (sampled groups) |', '|---|---|---|---|---|---|---|---|---|'];
  for (const r of rows) {
    out.push(`| ${r.workload} | ${r.variant} | ${String(r.repeats)} | ${fmt(r.kernelMillisOff, 2)} | ${fmt(r.kernelMillis, 2)} | ${fmt(100 * r.overhead, 2)} % | ${fmt(r.lossCounts, 4)} | ${fmt(r.lossMeasuredSummaries, 4)} | ${fmt(r.lossMeasuredSamples, 4)} |`);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
