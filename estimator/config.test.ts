import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ESTIMATOR_FIELDS } from '../contracts/index.ts';
import { Secret } from '../service/index.ts';
import { loadEstimatorConfig, loadEstimatorKafkaConfig } from './config.ts';
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
      expect(config.influx).toMatchObject({ url: 'http://127.0.0.1:18086', database: 'warpwatch', retentionPolicy: 'autogen', org: '-' });
      expect(config.influx?.token).toBeInstanceOf(Secret);
      expect(config.influx?.token.reveal()).toBe('');
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

  describe('backpressure marks', () => {
    it('defaults to 2 × (requests in flight + 1) × batch size InfluxDB lines (at most half the buffer) and 10,000 result records', () => {
      const config = loadEstimatorConfig({ env: {} });
      expect(config.influx?.highWaterLines).toBe(40_000);
      expect(config.resultsHighWaterRecords).toBe(10_000);
      expect(loadEstimatorConfig({ env: { WARPWATCH_INFLUX_BATCH_SIZE: '1000', WARPWATCH_INFLUX_MAX_IN_FLIGHT: '4' } }).influx?.highWaterLines).toBe(10_000);
      expect(loadEstimatorConfig({ env: { WARPWATCH_INFLUX_MAX_BUFFER_LINES: '30000' } }).influx?.highWaterLines).toBe(15_000);
      expect(loadEstimatorConfig({ env: { WARPWATCH_INFLUX_MAX_BUFFER_LINES: '1' } }).influx?.highWaterLines).toBe(1);
    });

    it('takes marks that are set, and refuses an InfluxDB mark at or above the buffer bound (points would be dropped before the pause)', () => {
      const config = loadEstimatorConfig({ env: { WARPWATCH_INFLUX_HIGH_WATER_LINES: '500', WARPWATCH_RESULTS_HIGH_WATER_RECORDS: '300' } });
      expect(config.influx?.highWaterLines).toBe(500);
      expect(config.resultsHighWaterRecords).toBe(300);
      let caught: unknown;
      try {
        loadEstimatorConfig({ env: { WARPWATCH_INFLUX_HIGH_WATER_LINES: '1000', WARPWATCH_INFLUX_MAX_BUFFER_LINES: '1000', WARPWATCH_RESULTS_HIGH_WATER_RECORDS: '50001' } });
      } catch (error) {
        caught = error;
      }
      expect((caught as EstimatorConfigError).fields).toEqual([
        { name: 'WARPWATCH_RESULTS_HIGH_WATER_RECORDS', value: '50001', why: 'must be an integer 1..50000' },
        {
          name: 'WARPWATCH_INFLUX_HIGH_WATER_LINES',
          value: '1000',
          why: 'must be below WARPWATCH_INFLUX_MAX_BUFFER_LINES (1000): the buffer would drop points before consumption pauses',
        },
      ]);
    });
  });

  describe('loadEstimatorKafkaConfig', () => {
    it('reads only the Kafka slice: a bad setting elsewhere does not stop it', () => {
      const kafka = loadEstimatorKafkaConfig({ env: { WARPWATCH_WINDOW_MILLIS: '0', WARPWATCH_DISTRIBUTIONS_TOPIC: 'd.t' }, flags: { brokers: 'k:1' } });
      expect(kafka).toEqual(loadEstimatorConfig({ env: { WARPWATCH_DISTRIBUTIONS_TOPIC: 'd.t' }, flags: { brokers: 'k:1' } }).kafka);
      expect(kafka.distributionsTopic).toBe('d.t');
      expect(() => loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '0' } })).toThrow(EstimatorConfigError);
    });

    it('reports bad Kafka settings together, as fields', () => {
      let caught: unknown;
      try {
        loadEstimatorKafkaConfig({ env: { WARPWATCH_ALERTS_TOPIC: 'bad topic', WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS: '6000', WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS: '2001' } });
      } catch (error) {
        caught = error;
      }
      expect((caught as EstimatorConfigError).fields).toEqual([
        { name: 'WARPWATCH_ALERTS_TOPIC', value: 'bad topic', why: 'must be a Kafka topic name ([A-Za-z0-9._-], 1..249 chars)' },
        { name: 'WARPWATCH_KAFKA_HEARTBEAT_INTERVAL_MILLIS', value: '2001', why: 'must be at most a third of WARPWATCH_KAFKA_SESSION_TIMEOUT_MILLIS (6000)' },
      ]);
    });
  });

  describe('InfluxDB settings shared with the collector', () => {
    it('reads the token from WARPWATCH_INFLUX_TOKEN_FILE too, and validates the retention policy', () => {
      const directory = mkdtempSync(join(tmpdir(), 'ww-estimator-config-'));
      try {
        const file = join(directory, 'token');
        writeFileSync(file, 'file-token\n');
        const config = loadEstimatorConfig({ env: { WARPWATCH_INFLUX_TOKEN_FILE: file } });
        expect(config.influx?.token).toBeInstanceOf(Secret);
        expect(config.influx?.token.reveal()).toBe('file-token');
        expect(config.influx?.tokenFile).toBe(file);
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
      expect(() => loadEstimatorConfig({ env: { WARPWATCH_INFLUX_RETENTION_POLICY: 'a b' } })).toThrow(
        'invalid estimator configuration: WARPWATCH_INFLUX_RETENTION_POLICY must be a name matching [A-Za-z0-9._-]{1,128}, got "a b"',
      );
    });

    it('keeps the token a Secret: the loaded config, stringified or inspected, never shows it (from the environment or a file)', () => {
      const fromEnv = loadEstimatorConfig({ env: { WARPWATCH_INFLUX_TOKEN: 'writer:env-pa55' } });
      expect(fromEnv.influx?.token.reveal()).toBe('writer:env-pa55');
      const directory = mkdtempSync(join(tmpdir(), 'ww-estimator-config-'));
      try {
        const file = join(directory, 'token');
        writeFileSync(file, 'writer:file-pa55\n');
        const fromFile = loadEstimatorConfig({ env: { WARPWATCH_INFLUX_TOKEN_FILE: file } });
        expect(fromFile.influx?.token.reveal()).toBe('writer:file-pa55');
        for (const config of [fromEnv, fromFile]) {
          const printed = [JSON.stringify(config), inspect(config, { depth: 10 }), inspect(config.influx), String(config.influx?.token), `${config.influx?.token}`].join('\n');
          expect(printed).toContain('[redacted]');
          for (const leak of ['pa55', 'writer:']) expect(printed).not.toContain(leak);
        }
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    });
  });
});
