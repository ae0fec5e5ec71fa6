import { BALANCED_LOSS, computeAdvice, type Advice } from '../../analysis/index.ts';
import { CategoricalDistribution, idleLaneShare } from '../../model/index.ts';
import { sampledRunsKey, type DemoRun } from './demo-results.ts';

/**
 * The demo summary's columns and headlines, defined once for the terminal summary
 * (cli/demo/demo-summary.ts) and the HTML report (html-report.ts): the same header, the
 * same formatting, the same order. Columns marked `htmlOnly` appear in the report only (the
 * terminal stays narrow); every other number is in results.json.
 */

/** 4 decimals, or 'n/a' for a non-finite value. */
export function fixedOrNa(value: number, digits = 4): string {
  return Number.isFinite(value) ? value.toFixed(digits) : 'n/a';
}

/** 0.0123 → '1.23%', or 'n/a' for a non-finite value. */
export function percentOrNa(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${(value * 100).toFixed(digits)}%` : 'n/a';
}

/**
 * The one plain sentence that says why the two predictions differ (terminal summary and HTML
 * report; docs/model.md §11).
 */
export const PREDICTIONS_DIFFER =
  'loss_locality predicts from recorded runs of neighbouring units, grouped as the kernel groups them; "indep. lanes (ref.)" (loss_predicted) assumes every lane\'s work is drawn at random, so where neighbours get similar work (escape\'s neighbouring pixels) it is far too high, and where work is independent (matpow) the two agree.';

/** Why escape's independent-lanes figure peaks near n = 14 and then falls (terminal summary, HTML report, docs/demo.md). */
export const ESCAPE_BUMP =
  "escape's independent-lanes reference peaks near n = 14 and then falls: about two thirds of the pixels escape within 10 iterations and about a quarter run to the 256-iteration cap, so the loss grows while more random groups catch a capped pixel (1 − 0.76^14 ≈ 98 % at n = 14); beyond that every group waits for the cap anyway, and more lanes only share the wait, so n·max/Σw falls towards 256 / mean count.";

/** η(loss_locality, loss_measured) = |(a − b)/a|; NaN without a locality-aware prediction. */
export function etaLocalityMeasured(run: DemoRun): number {
  const a = run.lossLocality?.value;
  return a === undefined || a === 0 ? Number.NaN : Math.abs((a - run.lossMeasured) / a);
}

/**
 * The headline's plain words for the measured workload loss, the symbol after: 'lanes are held
 * 1.300× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)'. Idle lane time is
 * 1 − 1/that, so the two numbers reconcile.
 *
 * @example HELD_AS_LONG(2) // 'lanes are held 2.000× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)'
 */
export const HELD_AS_LONG = (workloadLossMeasured: number): string =>
  `lanes are held ${fixedOrNa(workloadLossMeasured, 3)}× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)`;

/** One column of the demo summary table. */
export interface SummaryColumn {
  /** Header text (the §2c quantity names). */
  readonly header: string;
  /** Left-aligned (text) rather than right-aligned (numbers). */
  readonly text: boolean;
  /** Shown only in the HTML report. */
  readonly htmlOnly: boolean;
  /** The cell for one run (plain text; the HTML report escapes it). */
  readonly cell: (run: DemoRun) => string;
}

/**
 * The summary columns, in order: what the run is, how much its lanes idle, then the measured,
 * counted and predicted loss, the agreement of counts and clocks, and the ICC of sampled groups.
 *
 * @example SUMMARY_COLUMNS.map((c) => c.header) // ['workload', 'variant', 'n', 'idle lane time', ...]
 */
export const SUMMARY_COLUMNS: readonly SummaryColumn[] = [
  { header: 'workload', text: true, htmlOnly: false, cell: (r) => r.workload },
  { header: 'variant', text: true, htmlOnly: false, cell: (r) => r.variant },
  { header: 'n', text: false, htmlOnly: false, cell: (r) => String(r.n) },
  { header: 'groups', text: false, htmlOnly: true, cell: (r) => String(r.groups) },
  { header: 'idle lane time', text: false, htmlOnly: false, cell: (r) => percentOrNa(idleLaneShare(r.workloadLossMeasured), 1) },
  { header: 'workload_loss_meas', text: false, htmlOnly: true, cell: (r) => fixedOrNa(r.workloadLossMeasured) },
  { header: 'loss_measured', text: false, htmlOnly: false, cell: (r) => fixedOrNa(r.lossMeasured) },
  { header: 'loss_counts', text: false, htmlOnly: false, cell: (r) => fixedOrNa(r.lossCounts) },
  { header: 'loss_locality', text: false, htmlOnly: false, cell: (r) => (r.lossLocality === undefined ? '–' : fixedOrNa(r.lossLocality.value)) },
  { header: '95% interval', text: false, htmlOnly: true, cell: (r) => (r.lossLocality === undefined ? '–' : `${fixedOrNa(r.lossLocality.low, 3)}–${fixedOrNa(r.lossLocality.high, 3)}`) },
  { header: 'indep. lanes (ref.)', text: false, htmlOnly: false, cell: (r) => fixedOrNa(r.lossPredicted) },
  { header: 'indep. 95% interval', text: false, htmlOnly: true, cell: (r) => `${fixedOrNa(r.lossPredictedLow, 3)}–${fixedOrNa(r.lossPredictedHigh, 3)}` },
  { header: 'η(counts,meas)', text: false, htmlOnly: true, cell: (r) => percentOrNa(r.etaCountsMeasured) },
  { header: 'ICC(counts)', text: false, htmlOnly: false, cell: (r) => (r.sampled?.countIcc === undefined ? '–' : fixedOrNa(r.sampled.countIcc, 3)) },
];

/** The headline of one workload variant: its run at the largest group size, and what advise says. */
export interface WorkloadHeadline {
  readonly workload: DemoRun['workload'];
  readonly variant: string;
  /** The run the headline describes (the largest n of this variant). */
  readonly run: DemoRun;
  /** idleLaneShare(run.workloadLossMeasured): the idle share of all lane time the run held. */
  readonly idleShare: number;
  /** 'matpow pois(30), n = 32: warps idle 23.1% of lane time: lanes are held 1.300× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)'. */
  readonly text: string;
  /** advise on the run's observed counts at its n (null when it could not be computed). */
  readonly advice: Advice | null;
  /** The top recommendation: advise's best option, or that no change is worth its cost. */
  readonly topRecommendation: string;
}

function topRecommendationOf(advice: Advice | null): string {
  if (advice === null) return 'no recommendation (advise could not run on these counts)';
  // With the run's sampled groups, advise starts from the layout's own loss where it differs
  // from random grouping (docs/advise.md): its best option, as `advise --frames` prints it.
  if (advice.onRuns !== null) {
    const now = advice.headline.expectedLoss;
    const best = advice.options[0];
    const which = advice.headline.basis === 'layout' ? 'this layout loses' : 'predicted loss';
    if (now <= BALANCED_LOSS) return `the work is balanced (${which} ${now.toFixed(2)}×): no change is worth its cost.`;
    if (best === undefined || best.expectedLoss >= now) return `no option advise knows cuts the loss (${which} ${now.toFixed(2)}×).`;
    return `${best.sentence}.`;
  }
  const now = advice.current.expectedLoss;
  const best = advice.options[0];
  const observed = advice.current.observedLossCounts;
  // Lanes of a group that are not independent (neighbouring pixels): advise's what-ifs assume
  // random grouping, so say first that the measured groups already lose far less.
  if (observed !== null && Math.abs(now - observed) > 0.1 * now) {
    const icc = advice.current.observedCountIcc === null ? '' : `, ICC(counts) ${advice.current.observedCountIcc.toFixed(2)}`;
    const lead = `lanes of a group already have ${observed < now ? 'similar' : 'dissimilar'} work (loss_counts ${observed.toFixed(2)}× vs ${now.toFixed(2)}× if work were assigned at random${icc}); advise's what-ifs assume random grouping`;
    return best === undefined || now <= BALANCED_LOSS ? `${lead}.` : `${lead}, so its best option (${best.kind}${best.parameter === undefined ? '' : ` ${best.parameter}`}: ${now.toFixed(2)}× → ${best.expectedLoss.toFixed(2)}×) overstates the gain.`;
  }
  if (now <= BALANCED_LOSS || best === undefined) return `the work is balanced (predicted loss ${now.toFixed(2)}×): no change is worth its cost.`;
  return `${best.sentence}.`;
}

/**
 * One headline per workload variant, in the order the runs first appear: the run at its
 * largest group size, the idle share of its measured loss, and advise's top recommendation
 * computed from its observed iteration counts (units per launch = units / launches).
 *
 * @example demoHeadlines(results.runs)[0].text // 'matpow pois(30), n = 32: warps idle 23.1% of lane time: lanes are held 1.300× as long as their work needs (workload_loss_meas = ΣC_SIMT/ΣC_MIMD)'
 */
export function demoHeadlines(runs: readonly DemoRun[], sampledRuns?: ReadonlyMap<string, readonly (readonly (readonly number[])[])[]>): WorkloadHeadline[] {
  const ids = [...new Set(runs.map((r) => `${r.workload}\u0000${r.variant}`))];
  return ids.flatMap((id) => {
    const run = runs.filter((r) => `${r.workload}\u0000${r.variant}` === id).sort((a, b) => b.n - a.n)[0];
    if (run === undefined) return [];
    const idleShare = idleLaneShare(run.workloadLossMeasured);
    let advice: Advice | null = null;
    const runsByLaunch = sampledRuns?.get(sampledRunsKey(run.stream, run.n));
    try {
      const counts = run.histogram.filter(([, count]) => count > 0);
      if (counts.length > 0) {
        advice = computeAdvice({
          distribution: CategoricalDistribution.fromCounts(counts.map(([value, count]) => [value, count] as const)),
          source: `demo ${run.stream}`,
          groupSize: run.n,
          unitsPerLaunch: Math.max(run.n, Math.floor(run.units / Math.max(1, run.launches))),
          binCounts: [2, 4],
          observedLossCounts: Number.isFinite(run.lossCounts) ? run.lossCounts : undefined,
          observedCountIcc: run.sampled?.countIcc,
          // The runs-based analysis of `advise --frames` (docs/model.md §11, §11b) when the
          // demo kept the run's sampled groups.
          ...(runsByLaunch === undefined ? {} : { runs: runsByLaunch.flat(), runsByLaunch }),
          // escape --sorted already sorts its units: never recommend sorting to it.
          alreadyApplied: run.workload === 'escape' && run.variant === 'sorted' ? ['sorting'] : [],
        });
      }
    } catch {
      advice = null;
    }
    return [
      {
        workload: run.workload,
        variant: run.variant,
        run,
        idleShare,
        text: `${run.workload} ${run.variant}, n = ${run.n}: warps idle ${percentOrNa(idleShare, 1)} of lane time: ${HELD_AS_LONG(run.workloadLossMeasured)}`,
        advice,
        topRecommendation: topRecommendationOf(advice),
      },
    ];
  });
}
