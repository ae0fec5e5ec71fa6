/**
 * Reading what the GPU workload programs leave behind (bench/gpu/summarize.ts and
 * bench/gpu/lane-clock-summary.ts): their exit reports and the medians of repeated timings.
 */
import { existsSync, readFileSync } from 'node:fs';

/**
 * The last JSON line a workload program printed on stderr (its exit report), from the file its
 * stderr went to.
 *
 * @returns the report, or undefined when the file is missing or holds no JSON line.
 * @throws SyntaxError when that line is not valid JSON.
 * @example exitReport('overhead/pois_30_n8_off_r1.json')?.['kernelMillis'] // e.g. 259.7
 */
export function exitReport(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .pop();
  return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
}

/**
 * The median of repeated timings: the middle value, or the mean of the two middle ones for an
 * even count; NaN for none (a table then shows '–').
 *
 * @example median([3, 1, 2, 10]) // 2.5
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
