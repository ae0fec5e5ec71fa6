/**
 * InfluxDB series names written by the estimator: measurement, tag and field names are
 * defined here once (contracts/, no dependencies); the estimator writes them, dashboards and
 * alert rules import them from here and never spell a string.
 *
 * Field names of `warpwatch_window` follow model.md §2c (`loss_predicted`, `loss_counts`,
 * `loss_measured`, `workload_loss_*`, relative errors `eta_*`).
 *
 * @example
 * import { MEASUREMENTS, FIELDS } from '../contracts/index.ts';
 * const query = `SELECT mean("${FIELDS.window.lossPredicted}") FROM "${MEASUREMENTS.window}"`;
 */
export const MEASUREMENTS = {
  window: 'warpwatch_window',
  sweep: 'warpwatch_sweep',
  histogram: 'warpwatch_histogram',
  fit: 'warpwatch_fit',
  samples: 'warpwatch_samples',
  alert: 'warpwatch_alert',
  pipeline: 'warpwatch_pipeline',
} as const;

/** A measurement name written by the estimator. */
export type MeasurementName = (typeof MEASUREMENTS)[keyof typeof MEASUREMENTS];

/**
 * Tag keys. `stream`, `job`, `kernel`, `device`, `n`, `source` are on every window-ish
 * measurement (window, sweep, histogram, fit, alert); the others belong to one measurement.
 *
 * - `stream`: `<job>/<kernel>`; `device`: device model name; `device_uuid`: the device's UUID
 *   (nil for the CPU backend); `host`: the collector's host; `n`: group size (lanes per group,
 *   as string); `source`: `cuda` | `cpu` (contracts/stream-identity.ts).
 * - Labels of the collector named in WARPWATCH_TAG_LABELS (default pod, namespace, node) are
 *   tags too, under their own name (`label_<name>` if the name is one of the tags above).
 * - `groupSize` (`group_size`, warpwatch_sweep): the what-if group size n' of the sweep row.
 * - `binLow` (`bin_low`, warpwatch_histogram): lower bound of the histogram bin, as string.
 * - `kind` (warpwatch_alert): `rising_imbalance` | `drift` | `stale`.
 * - `series` (warpwatch_alert): the series the alert is about (`loss_measured`, `loss_predicted`,
 *   `measured_over_predicted`, `frames`), so two alerts of one kind in one window do not overwrite each other.
 * - `service`, `instance` (warpwatch_pipeline): which process reports its own health.
 *
 * @example
 * point.tag(TAGS.stream, 'matpow/matpow16');
 */
export const TAGS = {
  stream: 'stream',
  job: 'job',
  kernel: 'kernel',
  device: 'device',
  deviceUuid: 'device_uuid',
  host: 'host',
  n: 'n',
  source: 'source',
  groupSize: 'group_size',
  binLow: 'bin_low',
  kind: 'kind',
  series: 'series',
  service: 'service',
  instance: 'instance',
} as const;

/**
 * Label tags the dashboards filter by: a collector label (ww-label-<name>) written as a tag
 * when WARPWATCH_TAG_LABELS names it (the default names pod, namespace and node). Present
 * only on streams whose collector has the label.
 */
export const LABEL_TAGS = {
  pod: 'pod',
  namespace: 'namespace',
  node: 'node',
} as const;

/** The tags present on every window-ish measurement, in the order they are written. */
export const STREAM_TAGS = [TAGS.stream, TAGS.job, TAGS.kernel, TAGS.device, TAGS.deviceUuid, TAGS.host, TAGS.n, TAGS.source] as const;

/**
 * Field keys per measurement. Units: losses are dimensionless ratios ≥ 1 (C_SIMT/C_MIMD);
 * `eta_*` are relative errors |(a − b)/a| (dimensionless); `groups`, `units`, `launches` are
 * counts in the window; `binning_error_bound` is the absolute bound on loss_predicted caused
 * by binning the support (0 while the distribution is exact); `window_latency_millis` is
 * milliseconds; `aic`, `log_likelihood` are in nats.
 *
 * @example
 * point.floatField(FIELDS.window.lossPredicted, 1.23);
 */
export const FIELDS = {
  window: {
    lossPredicted: 'loss_predicted',
    lossPredictedLow: 'loss_predicted_low',
    lossPredictedHigh: 'loss_predicted_high',
    lossCounts: 'loss_counts',
    lossMeasured: 'loss_measured',
    workloadLossPredicted: 'workload_loss_predicted',
    workloadLossMeasured: 'workload_loss_measured',
    etaPredictedCounts: 'eta_predicted_counts',
    etaCountsMeasured: 'eta_counts_measured',
    etaPredictedMeasured: 'eta_predicted_measured',
    /** Locality-aware loss (model.md §11) at the stream's n from the window's sampled groups, with its interval. */
    lossLocality: 'loss_locality',
    lossLocalityLow: 'loss_locality_low',
    lossLocalityHigh: 'loss_locality_high',
    /** loss_predicted / loss_locality: what the layout's locality saves against random assignment. */
    localityBenefit: 'locality_benefit',
    /** η(prediction, loss_measured) the drift alerts use: the locality-aware prediction where samples exist, else loss_predicted. */
    etaDrift: 'eta_drift',
    /** Block level (model.md §11a) from block runs: Σ K·n·T / Σ w (lane time a block holds until its slowest warp ends over lane work), with its interval. */
    lossBlock: 'loss_block',
    lossBlockLow: 'loss_block_low',
    lossBlockHigh: 'loss_block_high',
    /** Warps in blocks (model.md §11a): Σ K·T / Σ t, block time over the mean warp time of its warps (1 = warps of a block end together). */
    lossWarpInBlock: 'loss_warp_in_block',
    /** Warp level of the same block runs: Σ n·t / Σ w (loss_block = this × loss_warp_in_block). */
    lossBlockWarps: 'loss_block_warps',
    lossQ50: 'loss_q50',
    lossQ90: 'loss_q90',
    lossQ99: 'loss_q99',
    groups: 'groups',
    units: 'units',
    launches: 'launches',
    binningErrorBound: 'binning_error_bound',
    /** How many of the window's sums overflowed (docs/estimator.md, Overflow); written only when > 0, the fields derived from them are then absent. */
    overflowedSums: 'overflowed_sums',
  },
  sweep: {
    lossPredicted: 'loss_predicted',
    workloadLossPredicted: 'workload_loss_predicted',
    /** Locality-aware loss at this n′ from the window's sampled groups (n′ dividing n). */
    lossLocality: 'loss_locality',
  },
  histogram: {
    count: 'count',
    probability: 'probability',
  },
  fit: {
    family: 'family',
    parameters: 'parameters',
    aic: 'aic',
    logLikelihood: 'log_likelihood',
  },
  /**
   * warpwatch_samples (one point per window with GroupSamples): `groups` sampled groups,
   * `invalid_groups` left out; `loss_measured`/`loss_counts` are the means over the sampled
   * groups; `lane_idle_fraction` = 1 − ΣC_MIMD/ΣC_SIMT (0..1); `count_icc` the intra-group
   * correlation of iteration counts; the divergence-cost fit (model.md §4) in clock ticks of the
   * device (SM cycles on CUDA, ns on the CPU backend): `iteration_ticks` T, `divergence_delta_ticks`
   * δ with `divergence_delta_se_ticks`, `spill_ticks`, `overhead_ticks`, `divergence_r2`.
   */
  samples: {
    groups: 'groups',
    invalidGroups: 'invalid_groups',
    lossMeasured: 'loss_measured',
    lossCounts: 'loss_counts',
    laneIdleFraction: 'lane_idle_fraction',
    countIcc: 'count_icc',
    iterationTicks: 'iteration_ticks',
    deltaTicks: 'divergence_delta_ticks',
    deltaStandardError: 'divergence_delta_se_ticks',
    spillTicks: 'spill_ticks',
    overheadTicks: 'overhead_ticks',
    rSquared: 'divergence_r2',
  },
  alert: {
    oldLevel: 'old_level',
    newLevel: 'new_level',
    statistic: 'statistic',
    message: 'message',
  },
  pipeline: {
    framesIn: 'frames_in',
    framesOut: 'frames_out',
    framesRejected: 'frames_rejected',
    framesSpooled: 'frames_spooled',
    framesDropped: 'frames_dropped',
    consumerLag: 'consumer_lag',
    windowLatencyMillis: 'window_latency_millis',
    influxWriteErrors: 'influx_write_errors',
  },
} as const;

/** Values of the `kind` tag of `warpwatch_alert`. */
export const ALERT_KINDS = {
  risingImbalance: 'rising_imbalance',
  drift: 'drift',
  stale: 'stale',
} as const;

/** One alert kind. */
export type AlertKind = (typeof ALERT_KINDS)[keyof typeof ALERT_KINDS];

/** Values of the `service` tag of `warpwatch_pipeline`. */
export const PIPELINE_SERVICES = { collector: 'collector', estimator: 'estimator' } as const;

