import { describe, expect, it } from 'vitest';
import { ESTIMATOR_FIELDS } from '../contracts/index.ts';
import { loadEstimatorConfig } from './config.ts';
import { EstimatorConfigError } from './errors.ts';

describe('config', () => {
  describe('loadEstimatorConfig', () => {
    it('uses the defaults when nothing is set, and freezes the result', () => {
      const config = loadEstimatorConfig({ env: {} });
      expect(config.kafka.brokers).toEqual(['127.0.0.1:19092']);
      expect(config.kafka.groupId).toBe('warpwatch-estimator');
      expect(config.kafka.checkpointTopic).toBe('warpwatch.estimator.checkpoints');
      expect(config.window.windowMillis).toBe(10_000);
      expect(config.window.idleCloseMillis).toBe(10_000);
      expect(config.window.current).toEqual({ mode: 'decay', halfLifeLaunches: 32 });
      expect(config.influx).toMatchObject({ url: 'http://127.0.0.1:18086', database: 'warpwatch', retentionPolicy: 'autogen', org: '-', token: '' });
      expect(config.metricsPort).toBe(ESTIMATOR_FIELDS.metricsPort.default);
      expect(Object.isFrozen(config)).toBe(true);
      expect(Object.isFrozen(config.window)).toBe(true);
      expect(Object.isFrozen(config.compute.sweepGroupSizes)).toBe(true);
    });

    it('lets flags win over the environment', () => {
      const config = loadEstimatorConfig({
        env: { WARPWATCH_WINDOW_MILLIS: '5000', WARPWATCH_KAFKA_BROKERS: 'a:1', WARPWATCH_CURRENT: 'decay' },
        flags: { windowMillis: '2000', brokers: 'b:2,c:3', current: 'last-n', lastLaunches: '7', influxUrl: 'off', metricsPort: 'off' },
      });
      expect(config.window.windowMillis).toBe(2000);
      expect(config.kafka.brokers).toEqual(['b:2', 'c:3']);
      expect(config.window.current).toEqual({ mode: 'last-n', launches: 7 });
      expect(config.influx).toBeUndefined();
      expect(config.metricsPort).toBeUndefined();
    });

    it('reports every problem at once, naming what was set and what is allowed', () => {
      let caught: unknown;
      try {
        loadEstimatorConfig({
          env: { WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '20000', WARPWATCH_SWEEP_GROUP_SIZES: '1,64', WARPWATCH_PREDICTION_BASIS: 'tomorrow' },
          flags: { windowMillis: '0', brokers: 'nohostport', influxUrl: 'ftp://x' },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(EstimatorConfigError);
      const problems = (caught as EstimatorConfigError).problems;
      expect(problems).toHaveLength(6);
      expect(problems.join('\n')).toContain('--window-millis must be an integer 10..86400000, got "0"');
      expect(problems.join('\n')).toContain('--brokers entries must be host:port, got "nohostport"');
      expect(problems.join('\n')).toContain('WARPWATCH_PREDICTION_BASIS must be one of window|current|cumulative, got "tomorrow"');
      expect((caught as EstimatorConfigError).code).toBe('WW_ERR_ESTIMATOR_CONFIG');
    });
  });
});
