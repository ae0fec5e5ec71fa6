/**
 * The raw results of `warpwatch demo`, written as JSON next to the HTML report. Field names
 * follow docs/model.md §2c in camelCase (lossPredicted = loss_predicted, ...). Version 1.
 */
export interface DemoRun {
  /** Reference workload: 'matpow' (chosen distribution) or 'escape' (data-driven counts). */
  readonly workload: 'matpow' | 'escape';
  /** The distribution spec for matpow ('pois(30)'), 'plain' or 'sorted' for escape. */
  readonly variant: string;
  /** Stream id `<job>/<kernel>` the estimator saw. */
  readonly stream: string;
  /** Group size (lanes in lockstep). */
  readonly n: number;
  readonly launches: number;
  readonly groups: number;
  readonly units: number;
  /**
   * The independent-lanes reference: E[X_W(n)] of the observed distribution (model, fast
   * method), i.e. the loss if each lane's work were drawn at random from it. Correlated work
   * (escape's neighbouring pixels) loses far less; see lossLocality.
   */
  readonly lossPredicted: number;
  /** Interval of loss_predicted (Poisson bootstrap, 95 %, widened by the binning bound). */
  readonly lossPredictedLow: number;
  readonly lossPredictedHigh: number;
  /**
   * The locality-aware prediction (docs/model.md §11): the estimator's loss_locality at n from
   * the run's sampled groups, each a contiguous run of n units in the kernel's own layout, with
   * its 95 % interval (low = high = value with fewer than 2 sampled groups). Absent without
   * sampled groups (and in results written before it existed).
   */
  readonly lossLocality?: { readonly value: number; readonly low: number; readonly high: number } | undefined;
  /** Mean H over groups from their actual counts. */
  readonly lossCounts: number;
  /** Mean H over groups from CPU steady-clock timings (CPU lockstep lanes, not a GPU). */
  readonly lossMeasured: number;
  /** E[max]/E[W] of the observed distribution. */
  readonly workloadLossPredicted: number;
  /** Σ C_SIMT / Σ C_MIMD measured. */
  readonly workloadLossMeasured: number;
  /** η(loss_predicted, loss_counts). */
  readonly etaPredictedCounts: number;
  /** η(loss_counts, loss_measured). */
  readonly etaCountsMeasured: number;
  /** η(loss_predicted, loss_measured). */
  readonly etaPredictedMeasured: number;
  /** Quantiles 0.5/0.9/0.99 of the predicted per-group loss X_W(n), when computed. */
  readonly lossQuantiles: { readonly q50: number; readonly q90: number; readonly q99: number } | undefined;
  /** Best parametric fit of the observed counts, when a fitter was available. */
  readonly fit: { readonly family: string; readonly parameters: Readonly<Record<string, number>>; readonly aic: number } | undefined;
  /** Observed iteration-count histogram: [value, number of lanes]. */
  readonly histogram: readonly (readonly [number, number])[];
  /** Predicted loss for n = 1..32 from the observed distribution (the granularity sweep). */
  readonly sweep: readonly { readonly n: number; readonly expectedLoss: number; readonly workloadLoss: number }[];
  /**
   * What the estimator made of the run's GroupSamples (sampled groups): how many, the
   * intra-group correlation of iteration counts (≈ 0: independent lanes as the model assumes;
   * > 0: neighbouring lanes get similar work) and the idle share of lane time. Absent when the
   * run had no samples (or in results written before samples were used).
   */
  readonly sampled?: { readonly groups: number; readonly countIcc: number | undefined; readonly laneIdleFraction: number | undefined } | undefined;
  /** Wall time of the workload program, seconds. */
  readonly seconds: number;
  /** CPU groups re-measured because the thread was descheduled, and groups still disturbed after all attempts. */
  readonly groupsRemeasured: number;
  readonly groupsDisturbed: number;
}

/** Everything `warpwatch demo` measured, plus where and how. */
export interface DemoResults {
  readonly version: 1;
  readonly createdAt: string;
  readonly durationMillis: number;
  readonly transport: 'in-process' | 'kafka';
  /** Whether the estimator's points were also written to InfluxDB. */
  readonly influx: boolean;
  readonly machine: { readonly cpu: string; readonly cores: number; readonly os: string; readonly node: string };
  readonly settings: {
    readonly quick: boolean;
    readonly job: string;
    readonly groupSizes: readonly number[];
    readonly launches: number;
    readonly matpowUnitsPerLaunch: number;
    readonly escapeUnitsPerLaunch: number;
    readonly seed: number;
  };
  /** Time spent building the kernels (0 when up to date), ms. */
  readonly buildMillis: number;
  readonly runs: readonly DemoRun[];
  readonly notes: readonly string[];
}

/**
 * The key of one demo run in the map of its sampled runs (runDemo's `sampledRuns`, the input of
 * the demo's advice; not part of results.json).
 *
 * @example sampledRunsKey('demo-x/escape', 32) // 'demo-x/escape n=32'
 */
export function sampledRunsKey(stream: string, n: number): string {
  return `${stream} n=${n}`;
}
