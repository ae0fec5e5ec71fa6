/**
 * What the in-process drivers (estimator-engine-driver.ts, basis-model-driver.ts,
 * estimator-bookkeeping-driver.ts) share: their command-line options, CPU timing and medians,
 * and loading a module from another checkout (the baseline tree they compare against).
 */
import { pathToFileURL } from 'node:url';

/**
 * The value after `name` on the command line, or `fallback` when absent.
 *
 * @example argument('--rounds', '7') // '5' for `... --rounds 5`
 */
export function argument(name: string, fallback: string): string {
  const at = process.argv.indexOf(name);
  return at > 0 && process.argv[at + 1] !== undefined ? process.argv[at + 1]! : fallback;
}

/**
 * CPU time (user + system, microseconds) this process spent running `fn`.
 *
 * @example cpuMicros(() => work()) // 1234
 */
export function cpuMicros(fn: () => void): number {
  const before = process.cpuUsage();
  fn();
  const used = process.cpuUsage(before);
  return used.user + used.system;
}

/**
 * The median of `values` (the upper one of an even count); throws on an empty list.
 *
 * @throws Error when `values` is empty.
 * @example median([3, 1, 2]) // 2
 */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Imports `path` (relative to a checkout's root, e.g. 'estimator/index.ts') from the checkout at
 * `root`: this tree's or a baseline's (`git archive <commit> | tar -x -C <root>` with a
 * node_modules link in it).
 *
 * @example const estimator = await importFromTree<typeof EstimatorModule>('/tmp/ww-base', 'estimator/index.ts');
 */
export async function importFromTree<T>(root: string, path: string): Promise<T> {
  return (await import(pathToFileURL(`${root}/${path}`).href)) as T;
}
