import type { DistributionRecord } from '../../contracts/index.ts';
import type { WorkloadReport } from '../../kernels/index.ts';
import { relativeError } from '../../model/index.ts';
import type { DemoRun } from '../report/demo-results.ts';
import type { DemoRunPlan } from './demo-plan.ts';
import { DemoError } from './errors.ts';

/** η(a, b) = |(a − b)/a| (model/loss/relative-error.ts, docs/model.md §2c); NaN in the demo's results when a is 0 (η undefined). */
function eta(a: number, b: number): number {
  return relativeError(a, b) ?? Number.NaN;
}

function required(value: number | null, what: string, stream: string): number {
  if (value === null) throw new DemoError('WW_ERR_DEMO_NO_RESULT', `the estimator reported no ${what} for ${stream}`);
  return value;
}

/**
 * Turns the estimator's window records of one run into a DemoRun. Normally a run is one
 * window; when a run straddles a window boundary (a day-long window, so only at midnight
 * UTC) the per-window means are combined weighted by groups, which is exact for
 * loss_counts and loss_measured (means over groups) and a groups-weighted approximation of
 * ΣC_SIMT/ΣC_MIMD. Predictions come from the last record, whose basis is the stream's whole
 * history (the demo runs the estimator with prediction basis 'cumulative').
 *
 * @throws DemoError WW_ERR_DEMO_NO_RESULT when there are no records or a required value is missing.
 * @example
 * const run = demoRunOf(plan, records, report);
 */
export function demoRunOf(plan: DemoRunPlan, records: readonly DistributionRecord[], report: WorkloadReport): DemoRun {
  const last = records[records.length - 1];
  if (last === undefined) throw new DemoError('WW_ERR_DEMO_NO_RESULT', `no window result for ${plan.kernel} n=${plan.n}`);
  const stream = last.stream;
  let groups = 0;
  let units = 0;
  let launches = 0;
  let sumCounts = 0;
  let sumMeasured = 0;
  let sumWorkloadMeasured = 0;
  for (const record of records) {
    const g = record.window.groups;
    groups += g;
    units += record.window.units;
    launches += record.window.launches;
    sumCounts += g * required(record.predictions.lossCounts, 'loss_counts', stream);
    sumMeasured += g * required(record.predictions.lossMeasured, 'loss_measured', stream);
    sumWorkloadMeasured += g * required(record.predictions.workloadLossMeasured, 'workload_loss_measured', stream);
  }
  const p = last.predictions;
  const lossPredicted = required(p.lossPredicted, 'loss_predicted', stream);
  const lossCounts = sumCounts / groups;
  const lossMeasured = sumMeasured / groups;
  // Sampled groups: counts add up; ICC and idle share from the window with the most samples
  // (a run is normally one window).
  const withSamples = records.filter((r) => (r.sampled?.groups ?? 0) > 0);
  const richest = withSamples.reduce<DistributionRecord | undefined>((best, r) => ((r.sampled?.groups ?? 0) > (best?.sampled?.groups ?? 0) ? r : best), undefined);
  const sampled =
    richest?.sampled == null
      ? undefined
      : {
          groups: withSamples.reduce((sum, r) => sum + (r.sampled?.groups ?? 0), 0),
          countIcc: richest.sampled.countIcc ?? undefined,
          laneIdleFraction: richest.sampled.laneIdleFraction ?? undefined,
        };
  // The locality-aware prediction from the window with the most sampled groups (a run is normally one window).
  const localityOf = richest?.predictions ?? last.predictions;
  const localityValue = localityOf.lossLocality ?? undefined;
  const lossLocality =
    localityValue === undefined ? undefined : { value: localityValue, low: localityOf.lossLocalityLow ?? localityValue, high: localityOf.lossLocalityHigh ?? localityValue };
  const histogram = last.cumulative.entries.map(([low, high, weight]) => [low === high ? low : Math.round((low + high) / 2), weight] as const);
  return {
    workload: plan.workload,
    variant: plan.variant,
    stream,
    n: plan.n,
    launches,
    groups,
    units,
    lossPredicted,
    lossPredictedLow: p.lossPredictedLow ?? lossPredicted,
    lossPredictedHigh: p.lossPredictedHigh ?? lossPredicted,
    lossLocality,
    lossCounts,
    lossMeasured,
    workloadLossPredicted: required(p.workloadLossPredicted, 'workload_loss_predicted', stream),
    workloadLossMeasured: sumWorkloadMeasured / groups,
    etaPredictedCounts: eta(lossPredicted, lossCounts),
    etaCountsMeasured: eta(lossCounts, lossMeasured),
    etaPredictedMeasured: eta(lossPredicted, lossMeasured),
    lossQuantiles: p.lossQuantiles === null ? undefined : { q50: p.lossQuantiles['0.5'], q90: p.lossQuantiles['0.9'], q99: p.lossQuantiles['0.99'] },
    fit: p.fit === null ? undefined : { family: p.fit.family, parameters: p.fit.parameters, aic: p.fit.aic },
    histogram,
    sweep: p.sweep.map((row) => ({ n: row.groupSize, expectedLoss: row.lossPredicted, workloadLoss: row.workloadLossPredicted })),
    sampled,
    seconds: report.seconds,
    groupsRemeasured: report.groupsRemeasured ?? 0,
    groupsDisturbed: report.groupsDisturbed ?? 0,
  };
}
