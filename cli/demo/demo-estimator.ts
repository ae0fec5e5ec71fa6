import type { EstimatorConfig } from '../../estimator/index.ts';
import { loadEstimatorConfig } from '../../estimator/index.ts';
import type { DistributionRecord } from '../../estimator/index.ts';
import type { ParametricFitter } from '../../estimator/index.ts';
import { fitParametric } from '../../model/index.ts';

/**
 * The estimator configuration of the demo: the service's own config loader, with the
 * settings that make one window per run (a day-long event-time window closed by the end
 * of the run), predictions from the stream's whole history (one run = one stream), a full
 * granularity sweep 1..32, and no metrics port. Brokers and InfluxDB come from the
 * environment as for the services (WARPWATCH_KAFKA_BROKERS, WARPWATCH_INFLUX_URL, ...).
 */

/** Environment values the demo always sets (they win over the caller's environment). */
export const DEMO_ESTIMATOR_ENV = Object.freeze({
  WARPWATCH_WINDOW_MILLIS: String(86_400_000),
  WARPWATCH_IDLE_CLOSE_MILLIS: '1000',
  WARPWATCH_PREDICTION_BASIS: 'cumulative',
  WARPWATCH_SWEEP_GROUP_SIZES: Array.from({ length: 32 }, (_, i) => i + 1).join(','),
  WARPWATCH_METRICS_PORT: 'off',
  WARPWATCH_ESTIMATOR_FROM_BEGINNING: 'false',
  WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '1000',
});

/**
 * Builds the estimator config of a demo.
 *
 * @param env the process environment (only WARPWATCH_* names are read by the loader).
 * @param options influx: write points to InfluxDB (else the sink is off); job: the demo's job,
 *   which names the consumer group and instance so that demos never share Kafka state.
 * @throws EstimatorConfigError when the environment holds an invalid WARPWATCH_* value.
 * @example
 * const config = demoEstimatorConfig(process.env, { influx: false, job: 'demo-20250101T120000' });
 */
export function demoEstimatorConfig(env: Readonly<Record<string, string | undefined>>, options: { readonly influx: boolean; readonly job: string }): EstimatorConfig {
  return loadEstimatorConfig({
    env: {
      ...env,
      ...DEMO_ESTIMATOR_ENV,
      WARPWATCH_ESTIMATOR_GROUP_ID: `warpwatch-demo-${options.job}`,
      WARPWATCH_INSTANCE: options.job,
      ...(options.influx ? {} : { WARPWATCH_INFLUX_URL: 'off' }),
    },
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
