import type { DemoRun } from './demo-results.ts';

/** Median and largest of a relative error over runs, with the run of the largest. */
export interface Agreement {
  readonly median: number;
  readonly max: number;
  readonly worst: DemoRun | undefined;
  /** Runs with a finite value. */
  readonly count: number;
}

/**
 * Summarises one relative error η (docs/model.md §2c) over runs: its median and its largest
 * value with the run where it occurs. Non-finite values are left out.
 *
 * @example agreementOf(results.runs, (run) => run.etaPredictedCounts).median
 */
export function agreementOf(runs: readonly DemoRun[], eta: (run: DemoRun) => number): Agreement {
  let worst: DemoRun | undefined;
  const values: number[] = [];
  for (const run of runs) {
    const value = eta(run);
    if (!Number.isFinite(value)) continue;
    values.push(value);
    if (worst === undefined || value > eta(worst)) worst = run;
  }
  values.sort((a, b) => a - b);
  const mid = Math.floor(values.length / 2);
  const median =
    values.length === 0 ? Number.NaN : values.length % 2 === 1 ? (values[mid] ?? Number.NaN) : ((values[mid - 1] ?? 0) + (values[mid] ?? 0)) / 2;
  return { median, max: worst === undefined ? Number.NaN : eta(worst), worst, count: values.length };
}
