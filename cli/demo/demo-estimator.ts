import type { EstimatorConfig } from '../../estimator/index.ts';
import { loadEstimatorConfig } from '../../estimator/index.ts';
import type { DistributionRecord } from '../../contracts/index.ts';
import type { ParametricFitter } from '../../estimator/index.ts';
import { fitParametric } from '../../model/index.ts';

/** The settings every demo gets, whatever the environment says: one window per run, predictions from the whole history, a full sweep 1..32, no metrics port. */
export const DEMO_ESTIMATOR_SETTINGS = Object.freeze({
  /** A day-long event-time window, closed by the end of the run. */
  windowMillis: 86_400_000,
  idleCloseMillis: 1_000,
  /** One run = one stream: predict from its whole history. */
  predictionBasis: 'cumulative' as const,
  sweepGroupSizes: Object.freeze(Array.from({ length: 32 }, (_, i) => i + 1)),
  /** A demo's consumer group starts at the end of warpwatch.frames (kafka-transport.ts sets its offsets). */
  fromBeginning: false,
  checkpointIntervalMillis: 1_000,
});

/**
 * Builds the estimator configuration of a demo: the service's own config loader reads the
 * environment (brokers, InfluxDB, alerts, ... as for the service: WARPWATCH_KAFKA_BROKERS,
 * WARPWATCH_INFLUX_URL, ...), then the demo's settings ({@link DEMO_ESTIMATOR_SETTINGS}, its own
 * consumer group and instance, InfluxDB on or off) are set on the config object.
 *
 * @param env the process environment (only WARPWATCH_* names are read by the loader).
 * @param options influx: write points to InfluxDB (else the sink is off); job: the demo's job,
 *   which names the consumer group and instance so that demos never share Kafka state.
 * @throws EstimatorConfigError when the environment holds an invalid WARPWATCH_* value.
 * @example
 * const config = demoEstimatorConfig(process.env, { influx: false, job: 'demo-20250101T120000' });
 */
export function demoEstimatorConfig(env: Readonly<Record<string, string | undefined>>, options: { readonly influx: boolean; readonly job: string }): EstimatorConfig {
  const base = loadEstimatorConfig({ env });
  const demo = DEMO_ESTIMATOR_SETTINGS;
  return Object.freeze({
    ...base,
    instanceId: options.job,
    kafka: Object.freeze({ ...base.kafka, groupId: `warpwatch-demo-${options.job}`, fromBeginning: demo.fromBeginning }),
    influx: options.influx ? base.influx : undefined,
    window: Object.freeze({ ...base.window, windowMillis: demo.windowMillis, idleCloseMillis: demo.idleCloseMillis, predictionBasis: demo.predictionBasis }),
    compute: Object.freeze({ ...base.compute, sweepGroupSizes: demo.sweepGroupSizes }),
    metricsPort: undefined,
    checkpointIntervalMillis: demo.checkpointIntervalMillis,
  });
}

/** Where a demo's window results go before they become a DemoRun. */
export type DemoWindowRecord = DistributionRecord;

/**
 * The parametric fitter the demo hands to the estimator (docs/model.md §2d): the model's
 * fitParametric, best (smallest AIC) first, in the estimator's ParametricFit shape.
 *
 * @example demoFitter(CategoricalDistribution.fromCounts({ 3: 5, 4: 2 }))[0]?.family
 */
export const demoFitter: ParametricFitter = (distribution) =>
  fitParametric(distribution).map((fit) => ({ family: fit.family, parameters: fit.parameters, logLikelihood: fit.logLikelihood, aic: fit.aic }));
