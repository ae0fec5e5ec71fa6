/**
 * The raw results of `warpwatch demo`, written as JSON next to the HTML report. Field names
 * follow model.md §2c in camelCase (lossPredicted = loss_predicted, ...). Version 1.
 */
export interface DemoRun {
  /** Reference workload: 'matpow' (chosen distribution) or 'escape' (data-driven counts). */
  readonly workload: 'matpow' | 'escape';
  /** The distribution spec for matpow ('pois(30)'), 'plain' or 'sorted' for escape. */
  readonly variant: string;
  /** Group size (lanes in lockstep). */
  readonly n: number;
  readonly groups: number;
  readonly units: number;
  /** E[X_W(n)] of the observed distribution (model, fast method). */
  readonly lossPredicted: number;
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
  /** Observed iteration-count histogram: [value, number of lanes]. */
  readonly histogram: readonly (readonly [number, number])[];
  /** Predicted loss for n = 1, 2, 4, 8, 16, 32 from the observed distribution. */
  readonly sweep: readonly { readonly n: number; readonly expectedLoss: number }[];
}

/** Everything `warpwatch demo` measured, plus where and how. */
export interface DemoResults {
  readonly version: 1;
  readonly createdAt: string;
  readonly durationMillis: number;
  readonly transport: 'in-process' | 'kafka';
  readonly machine: { readonly cpu: string; readonly cores: number; readonly os: string; readonly node: string };
  readonly settings: { readonly quick: boolean; readonly groups: number; readonly groupSizes: readonly number[]; readonly seed: number };
  readonly runs: readonly DemoRun[];
  readonly notes: readonly string[];
}
