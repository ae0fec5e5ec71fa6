/**
 * Benchmark runner: `npm run bench` runs every bench/*.bench.ts, `npm run bench -- model` only
 * those whose name contains "model"; `--quick` takes fewer runs; `--wall` checks targets on
 * elapsed instead of CPU time. Each bench exports
 * `run(ctx: BenchContext): Promise<BenchResult>`. Results go to bench/results/<name>.json with
 * machine info; a table of medians and targets is printed. Exit code 1 when a target fails.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createBenchContext, type BenchContext, type BenchResult } from './bench-context.ts';
import { machineInfo } from './machine-info.ts';

const benchDirectory = fileURLToPath(new URL('.', import.meta.url));

function formatMillis(value: number): string {
  return value >= 100 ? value.toFixed(0) : value >= 1 ? value.toFixed(2) : value.toFixed(4);
}

function printTable(name: string, ctx: BenchContext): void {
  const header = ['case', 'median ms (cpu)', 'min ms (cpu)', 'median ms (wall)', 'min ms (wall)', 'runs', `vs baseline (${ctx.timeBasis})`];
  const rows = ctx.cases.map((c) => [
    c.name,
    formatMillis(c.medianCpuMillis),
    formatMillis(c.minCpuMillis),
    formatMillis(c.medianMillis),
    formatMillis(c.minMillis),
    String(c.runs),
    c.ratioToBaseline === undefined ? '' : `${c.ratioToBaseline.toPrecision(3)}x ${c.baseline}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const last = header.length - 1;
  const line = (cells: string[]): string => cells.map((cell, i) => (i === 0 || i === last ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  process.stdout.write(`\n${name}\n${line(header)}\n${rows.map(line).join('\n')}\n`);
  for (const t of ctx.targets) {
    const measured =
      t.kind === 'max-millis' ? `${formatMillis(t.measured)} ms (${t.timeBasis}) <= ${t.limit} ms` : `${t.measured.toPrecision(4)}x (${t.timeBasis}) >= ${t.limit}x`;
    process.stdout.write(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.description}: ${measured}\n`);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const quick = argv.includes('--quick');
  const timeBasis = argv.includes('--wall') ? 'wall' : 'cpu';
  const filters = argv.filter((a) => !a.startsWith('--'));
  const all = readdirSync(benchDirectory)
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
  const names = new Set(all.map((f) => basename(f, '.bench.ts')));
  // A filter that names a bench exactly runs that bench only ('estimator' is not also 'estimator-detector');
  // otherwise it matches every bench whose name contains it.
  const files = all.filter((f) => {
    const name = basename(f, '.bench.ts');
    return filters.length === 0 || filters.some((filter) => (names.has(filter) ? name === filter : name.includes(filter)));
  });
  if (files.length === 0) {
    process.stderr.write(`bench: no bench/*.bench.ts matches ${filters.join(', ') || '(all)'}\n`);
    return 2;
  }
  mkdirSync(join(benchDirectory, 'results'), { recursive: true });
  let failed = 0;
  for (const file of files) {
    const name = basename(file, '.bench.ts');
    process.stderr.write(`bench ${name}${quick ? ' (quick)' : ''}\n`);
    const module = (await import(pathToFileURL(join(benchDirectory, file)).href)) as { run?: (ctx: BenchContext) => Promise<BenchResult> };
    if (typeof module.run !== 'function') {
      process.stderr.write(`bench: ${file} does not export run(ctx)\n`);
      failed++;
      continue;
    }
    const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
    const ctx = createBenchContext({ quick, timeBasis, log: (text) => process.stderr.write(`${text}\n`) });
    const result = (await module.run(ctx)) ?? {};
    const output = {
      bench: name,
      quick,
      timeBasis,
      machine: { ...machineInfo(), loadAverageAtStart1m: loadAtStart },
      cases: ctx.cases,
      targets: ctx.targets,
      notes: [...ctx.notes, ...(result.notes ?? [])],
      metrics: result.metrics ?? {},
    };
    // Quick (smoke) runs are not a measurement: they never overwrite the recorded results.
    if (!quick) writeFileSync(join(benchDirectory, 'results', `${name}.json`), `${JSON.stringify(output, null, 2)}\n`);
    printTable(name, ctx);
    failed += ctx.targets.filter((t) => !t.pass).length;
  }
  if (failed > 0) process.stdout.write(`\n${failed} target(s) failed\n`);
  return failed > 0 ? 1 : 0;
}

process.exitCode = await main(process.argv.slice(2));
