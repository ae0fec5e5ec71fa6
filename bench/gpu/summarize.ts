/**
 * Summarises the output directory of bench/gpu/run-on-device.sh on the development machine:
 * model vs counts vs measured loss per matpow run, probe overhead from the CUDA-event kernel
 * times, the divergence-cost fit of the micro-benchmark and escape plain vs sorted against the
 * advise prediction, and beside each matpow run the loss its groups would measure if each ended
 * with its warp (bench/gpu/warp-tied.ts). Writes bench/results/gpu-<device>.json (or --json FILE) and prints the
 * Markdown tables for docs/validation.md.
 *
 * Usage: npx tsx bench/gpu/summarize.ts DIR [--json FILE]
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeFrames, computeAdvice, type StreamAnalysis } from '../../analysis/index.ts';
import { CategoricalDistribution, createFamilySampler, createSeededRandom, divergenceObservationOf, fitDivergenceCost, parseDistributionSpec } from '../../model/index.ts';
import { parseDivergenceCsv } from '../../cli/divergence-csv.ts';
import { decodeFrames, histogramToCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { exitReport, median } from './run-files.ts';
import { specOfRunTag, warpTiedLoss, type WarpTiedLoss } from './warp-tied.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

function analyzeFile(file: string): { analysis: StreamAnalysis; frames: ReturnType<typeof decodeFrames> } {
  const frames = decodeFrames(readFileSync(file));
  const [analysis] = analyzeFrames(frames);
  if (analysis === undefined) throw new Error(`${file}: no LaunchSummary frames`);
  return { analysis, frames };
}

const pct = (x: number | null | undefined, digits = 3): string => (x === null || x === undefined || !Number.isFinite(x) ? '–' : `${(100 * x).toFixed(digits)} %`);
const num = (x: number | null | undefined, digits = 4): string => (x === null || x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits));

function main(argv: readonly string[]): number {
  const dir = argv.find((a) => !a.startsWith('--'));
  const jsonAt = argv.indexOf('--json');
  if (dir === undefined || !existsSync(dir)) {
    process.stderr.write('usage: npx tsx bench/gpu/summarize.ts DIR [--json FILE]   (DIR: the output of bench/gpu/run-on-device.sh)\n');
    return 2;
  }
  const deviceText = existsSync(join(dir, 'device.txt')) ? readFileSync(join(dir, 'device.txt'), 'utf8') : '';

  // matpow: one stream per file.
  const matpowDir = join(dir, 'matpow');
  const matpow = (existsSync(matpowDir) ? readdirSync(matpowDir) : [])
    .filter((f) => f.endsWith('.wwf'))
    .sort()
    .map((f) => {
      const { analysis } = analyzeFile(join(matpowDir, f));
      const match = /^matpow_(.+)_n(\d+)_sync(on|off)$/.exec(basename(f, '.wwf'));
      return {
        run: basename(f, '.wwf'),
        family: match?.[1] ?? '?',
        n: analysis.n,
        sync: match?.[3] === 'on',
        groups: analysis.groups,
        lossPredicted: analysis.lossPredicted,
        lossCounts: analysis.lossCounts,
        lossMeasured: analysis.lossMeasured,
        etaPredictedCounts: analysis.etaPredictedCounts,
        etaCountsMeasured: analysis.etaCountsMeasured,
        etaPredictedMeasured: analysis.etaPredictedMeasured,
        workloadLossPredicted: analysis.workloadLossPredicted,
        workloadLossMeasured: analysis.workloadLossMeasured,
        sampledGroups: analysis.sampledGroups,
        countIcc: analysis.countIcc,
        deltaTicks: analysis.divergence?.deltaCycles ?? null,
        lossExtended: analysis.lossExtended,
        device: analysis.device,
        source: analysis.source,
      };
    });
  const device = matpow[0]?.device ?? 'unknown device';

  // The first effect of docs/validation.md §4: what sub-warp groups would measure if each ended
  // with its warp's deepest lane, every iteration costing the same (Monte Carlo, seed 1, 2^16 warps per family).
  const warpTied = new Map<string, WarpTiedLoss[]>();
  for (const tag of new Set(matpow.map((r) => r.family))) {
    const spec = specOfRunTag(tag);
    if (spec === undefined) continue;
    const sizes = [...new Set(matpow.filter((r) => r.family === tag).map((r) => r.n))].filter((n) => 32 % n === 0);
    warpTied.set(tag, warpTiedLoss(createFamilySampler(parseDistributionSpec(spec)), createSeededRandom(1), sizes, 1 << 16));
  }
  const matpowRows = matpow.map((r) => {
    const mc = warpTied.get(r.family)?.find((w) => w.n === r.n);
    return { ...r, lossOwnMonteCarlo: mc?.own ?? null, lossWarpTied: mc?.tied ?? null, lossWarpTiedStandardError: mc?.tiedStandardError ?? null, measuredOverWarpTied: mc === undefined || r.lossMeasured === undefined ? null : r.lossMeasured / mc.tied };
  });

  // Probe overhead: kernelMillis per (workload, n, variant), median over repeats.
  const overheadDir = join(dir, 'overhead');
  const timings = new Map<string, Map<string, number[]>>();
  for (const f of existsSync(overheadDir) ? readdirSync(overheadDir) : []) {
    // Only the exit reports: the frame files (.wwf) beside them are binary.
    const match = /^(.+)_n(\d+)_(off|on|sampled)_r\d+\.json$/.exec(f);
    if (match === null) continue;
    const millis = Number(exitReport(join(overheadDir, f))?.['kernelMillis']);
    if (!Number.isFinite(millis) || millis <= 0) continue;
    const key = `${match[1]} n=${match[2]}`;
    const byVariant = timings.get(key) ?? new Map<string, number[]>();
    byVariant.set(match[3] as string, [...(byVariant.get(match[3] as string) ?? []), millis]);
    timings.set(key, byVariant);
  }
  const overhead = [...timings].map(([key, byVariant]) => {
    const off = median(byVariant.get('off') ?? [Number.NaN]);
    const on = median(byVariant.get('on') ?? [Number.NaN]);
    const sampled = median(byVariant.get('sampled') ?? [Number.NaN]);
    return { run: key, repeats: byVariant.get('off')?.length ?? 0, kernelMillisOff: off, kernelMillisOn: on, kernelMillisSampled: sampled, overhead: on / off - 1, overheadSampled: sampled / off - 1 };
  });

  // Divergence micro-benchmark: fit T, δ, spill cost (model.md §4) from the CSV.
  const csvFile = join(dir, 'divergence', 'divergence.csv');
  let divergence: Record<string, unknown> | null = null;
  if (existsSync(csvFile)) {
    const measurements = parseDivergenceCsv(readFileSync(csvFile, 'utf8'));
    const fit = fitDivergenceCost(measurements.map((m) => divergenceObservationOf(m)));
    divergence = { rows: measurements.length, iterationCycles: fit.iterationCycles, deltaCycles: fit.deltaCycles, spillCycles: fit.spillCycles ?? null, standardErrors: fit.standardErrors ?? null, rSquared: fit.rSquared };
  }

  // escape: measured plain vs sorted, and the advise prediction for sorting.
  const escapeDir = join(dir, 'escape');
  const escape = [8, 32].flatMap((n) => {
    const plainFile = join(escapeDir, `escape_n${n}_plain.wwf`);
    const sortedFile = join(escapeDir, `escape_n${n}_sorted.wwf`);
    if (!existsSync(plainFile) || !existsSync(sortedFile)) return [];
    const plain = analyzeFile(plainFile);
    const sorted = analyzeFile(sortedFile).analysis;
    const summaries = plain.frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
    const counts = new Map<number, number>();
    for (const s of summaries) for (const [v, c] of histogramToCounts(s.histogram)) counts.set(v, (counts.get(v) ?? 0) + c);
    const unitsPerLaunch = Math.round(summaries.reduce((sum, s) => sum + s.groupCount * s.groupSize, 0) / summaries.length);
    const advice = computeAdvice({ distribution: CategoricalDistribution.fromCounts(counts), source: 'escape', groupSize: n, unitsPerLaunch, binCounts: [4] });
    return [
      {
        n,
        plainLossCounts: plain.analysis.lossCounts,
        plainLossMeasured: plain.analysis.lossMeasured,
        sortedLossCounts: sorted.lossCounts,
        sortedLossMeasured: sorted.lossMeasured,
        predictedRandomGrouping: plain.analysis.lossPredicted,
        predictedSorted: advice.sorting.expectedLoss,
        plainCountIcc: plain.analysis.countIcc,
      },
    ];
  });

  const summary = { device, deviceInfo: deviceText.trim().split('\n'), createdAt: new Date().toISOString(), source: dir, matpow: matpowRows, overhead, divergence, escape };
  const slug = device.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  const jsonFile = jsonAt >= 0 && argv[jsonAt + 1] !== undefined ? (argv[jsonAt + 1] as string) : join(root, 'bench', 'results', `gpu-${slug}.json`);
  mkdirSync(dirname(jsonFile), { recursive: true });
  writeFileSync(jsonFile, `${JSON.stringify(summary, null, 2)}\n`);

  const out: string[] = [`## ${device}`, '', '| run | n | sync | groups | loss_predicted | loss_counts | loss_measured | η(pred,counts) | η(counts,meas) | η(pred,meas) | ICC | δ (ticks) | warp-tied (MC) | measured / warp-tied |', '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'];
  for (const r of matpowRows) {
    out.push(`| ${r.family} | ${r.n} | ${r.sync ? 'on' : 'off'} | ${r.groups} | ${num(r.lossPredicted)} | ${num(r.lossCounts)} | ${num(r.lossMeasured)} | ${pct(r.etaPredictedCounts)} | ${pct(r.etaCountsMeasured)} | ${pct(r.etaPredictedMeasured)} | ${num(r.countIcc, 3)} | ${num(r.deltaTicks, 1)} | ${num(r.lossWarpTied)} ± ${num(r.lossWarpTiedStandardError)} | ${num(r.measuredOverWarpTied, 3)} |`);
  }
  if (overhead.length > 0) {
    out.push('', '| probe overhead | repeats | kernel ms, no probe | probe | probe + sampling | overhead | overhead with sampling |', '|---|---|---|---|---|---|---|');
    for (const o of overhead) out.push(`| ${o.run} | ${o.repeats} | ${num(o.kernelMillisOff, 3)} | ${num(o.kernelMillisOn, 3)} | ${num(o.kernelMillisSampled, 3)} | ${pct(o.overhead, 2)} | ${pct(o.overheadSampled, 2)} |`);
  }
  if (divergence !== null) out.push('', `divergence fit (${String(divergence['rows'])} rows): ${JSON.stringify(divergence)}`);
  if (escape.length > 0) {
    out.push('', '| escape | loss_counts plain → sorted | loss_measured plain → sorted | predicted random → sorted (advise) | ICC plain |', '|---|---|---|---|---|');
    for (const e of escape) out.push(`| n=${e.n} | ${num(e.plainLossCounts)} → ${num(e.sortedLossCounts)} | ${num(e.plainLossMeasured)} → ${num(e.sortedLossMeasured)} | ${num(e.predictedRandomGrouping)} → ${num(e.predictedSorted)} | ${num(e.plainCountIcc, 3)} |`);
  }
  process.stdout.write(`${out.join('\n')}\n\nwritten: ${jsonFile}\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
