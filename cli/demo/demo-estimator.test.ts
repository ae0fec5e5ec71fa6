import { describe, expect, it } from 'vitest';
import { loadEstimatorConfig } from '../../estimator/index.ts';
import { DEMO_ESTIMATOR_SETTINGS, demoEstimatorConfig } from './demo-estimator.ts';

describe('demoEstimatorConfig', () => {
  const env = { WARPWATCH_KAFKA_BROKERS: 'k1:9092', WARPWATCH_WINDOW_MILLIS: '5000', WARPWATCH_METRICS_PORT: '1234', WARPWATCH_ALERT_THRESHOLD_SIGMAS: '4', WARPWATCH_INFLUX_DATABASE: 'mine' };

  it('is the config the service loader builds from the environment with the demo settings set on the object', () => {
    // Independently: the same settings given to the loader as environment values (how the demo configured the estimator before).
    const viaEnv = loadEstimatorConfig({
      env: {
        ...env,
        WARPWATCH_WINDOW_MILLIS: '86400000',
        WARPWATCH_IDLE_CLOSE_MILLIS: '1000',
        WARPWATCH_PREDICTION_BASIS: 'cumulative',
        WARPWATCH_SWEEP_GROUP_SIZES: '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32',
        WARPWATCH_METRICS_PORT: 'off',
        WARPWATCH_ESTIMATOR_FROM_BEGINNING: 'false',
        WARPWATCH_CHECKPOINT_INTERVAL_MILLIS: '1000',
        WARPWATCH_ESTIMATOR_GROUP_ID: 'warpwatch-demo-demo-1',
        WARPWATCH_INSTANCE: 'demo-1',
      },
    });
    expect(demoEstimatorConfig(env, { influx: true, job: 'demo-1' })).toEqual(viaEnv);
  });

  it('keeps the caller\'s environment where the demo has no setting of its own, and switches InfluxDB off unless asked', () => {
    const config = demoEstimatorConfig(env, { influx: false, job: 'demo-2' });
    expect(config.kafka.brokers).toEqual(['k1:9092']);
    expect(config.alerts.thresholdSigmas).toBe(4);
    expect(config.window.windowMillis).toBe(DEMO_ESTIMATOR_SETTINGS.windowMillis);
    expect(config.metricsPort).toBeUndefined();
    expect(config.influx).toBeUndefined();
    expect(config.kafka.groupId).toBe('warpwatch-demo-demo-2');
    expect(Object.isFrozen(config) && Object.isFrozen(config.window) && Object.isFrozen(config.kafka) && Object.isFrozen(config.compute.sweepGroupSizes)).toBe(true);
  });
});
