import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { DemoResults } from '../report/demo-results.ts';
import { renderDemoReport } from '../report/html-report.ts';
import { demoHeadlines, type WorkloadHeadline } from '../report/summary-columns.ts';
import { DemoError } from './errors.ts';

/** Where a demo wrote its files. */
export interface DemoOutputPaths {
  readonly directory: string;
  readonly htmlPath: string;
  readonly jsonPath: string;
}

/**
 * The default output directory `out/demo-<UTC timestamp>` under `baseDirectory`, with a
 * numeric suffix when it exists already.
 *
 * @example defaultDemoOutputDirectory(process.cwd(), new Date()) // '/repo/out/demo-20250101-120000'
 */
export function defaultDemoOutputDirectory(baseDirectory: string, now: Date): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const first = resolve(baseDirectory, 'out', `demo-${stamp}`);
  let candidate = first;
  for (let i = 2; existsSync(candidate); i += 1) candidate = `${first}-${i}`;
  return candidate;
}

/**
 * Writes results.json and report.html into `directory` (created if needed).
 *
 * @param headlines the report's headlines (computed from results.runs when omitted).
 * @throws DemoError WW_ERR_DEMO_OUTPUT when the directory or a file cannot be written.
 * @example const { htmlPath } = writeDemoOutputs('out/demo-x', results);
 */
export function writeDemoOutputs(directory: string, results: DemoResults, headlines: readonly WorkloadHeadline[] = demoHeadlines(results.runs)): DemoOutputPaths {
  const absolute = resolve(directory);
  const htmlPath = join(absolute, 'report.html');
  const jsonPath = join(absolute, 'results.json');
  try {
    mkdirSync(absolute, { recursive: true });
    writeFileSync(jsonPath, `${JSON.stringify(results, null, 2)}\n`);
    writeFileSync(htmlPath, renderDemoReport(results, headlines));
  } catch (error) {
    throw new DemoError('WW_ERR_DEMO_OUTPUT', `cannot write the demo report into ${absolute}: ${(error as Error).message}`, { cause: error });
  }
  return { directory: absolute, htmlPath, jsonPath };
}
