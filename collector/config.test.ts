import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_FIELDS, hostProblem } from '../contracts/index.ts';
import { defaultSocketPath, describeCollectorConfig, loadCollectorConfig, loadCollectorKafkaConfig } from './config.ts';
import { CollectorConfigError } from './errors.ts';

describe('loadCollectorConfig', () => {
  describe('defaults', () => {
    it('serves the default socket and uses documented defaults when nothing is set', () => {
      const config = loadCollectorConfig({ env: {} });
      expect(config.sources.socketPath).toBe(defaultSocketPath({}));
      expect(config.sources.socketMode).toBe(0o660);
      expect(config.kafka.brokers).toEqual(['127.0.0.1:19092']);
      expect(config.kafka.framesTopic).toBe('warpwatch.frames');
      expect(config.kafka.dlqTopic).toBe('warpwatch.dlq');
      expect(config.kafka.partitions).toBe(6);
      expect(config.spool.policy).toBe('drop-oldest');
      expect(config.metricsPort).toBe(9464);
      expect(config.kafka.sasl).toBeUndefined();
      expect(config.kafka.tls).toBeUndefined();
    });

    it('serves no socket when only stdin or replay files are asked for', () => {
      expect(loadCollectorConfig({ env: {}, flags: { stdin: true } }).sources.socketPath).toBeUndefined();
      expect(loadCollectorConfig({ env: {}, flags: { replay: ['a.wwf'] } }).sources.replayFiles).toEqual(['a.wwf']);
    });
  });

  describe('precedence', () => {
    it('prefers flags over environment variables', () => {
      const config = loadCollectorConfig({
        env: { WARPWATCH_KAFKA_BROKERS: 'a:1', WARPWATCH_KAFKA_PARTITIONS: '3', WARPWATCH_SPOOL_POLICY: 'drop-newest', WARPWATCH_LABELS: 'team=x,zone=eu' },
        flags: { brokers: 'b:2,c:3', partitions: '12', label: ['team=y'] },
      });
      expect(config.kafka.brokers).toEqual(['b:2', 'c:3']);
      expect(config.kafka.partitions).toBe(12);
      expect(config.spool.policy).toBe('drop-newest');
      expect(config.labels).toEqual({ team: 'y', zone: 'eu' });
    });

    it('takes one label per WARPWATCH_LABEL_<NAME> (the Kubernetes downward API), below --label', () => {
      const config = loadCollectorConfig({
        env: { WARPWATCH_LABEL_POD: 'trainer-0', WARPWATCH_LABEL_NAMESPACE: 'ml', WARPWATCH_LABEL_NODE: 'gpu-7', WARPWATCH_LABELS: 'pod=old' },
        flags: { label: ['namespace=override'] },
      });
      expect(config.labels).toEqual({ pod: 'trainer-0', namespace: 'override', node: 'gpu-7' });
      expect(() => loadCollectorConfig({ env: { 'WARPWATCH_LABEL_BAD NAME': 'x' } })).toThrow(/WARPWATCH_LABEL_BAD NAME label must be name=value/);
    });

    it('parses sizes with binary and decimal suffixes', () => {
      const config = loadCollectorConfig({ env: { WARPWATCH_SPOOL_MAX_BYTES: '512MiB', WARPWATCH_QUEUE_MAX_BYTES: '2MB' } });
      expect(config.spool.maxBytes).toBe(512 * 1024 * 1024);
      expect(config.maxQueueBytes).toBe(2_000_000);
      expect(config.spool.segmentBytes).toBe(16 * 1024 * 1024);
    });

    it('accepts "off" for the metrics port', () => {
      expect(loadCollectorConfig({ env: { WARPWATCH_METRICS_PORT: 'off' } }).metricsPort).toBeUndefined();
      expect(loadCollectorConfig({ env: {}, flags: { metricsPort: '0' } }).metricsPort).toBe(0);
    });
  });

  describe('validation', () => {
    it('reports every problem together', () => {
      let caught: unknown;
      try {
        loadCollectorConfig({
          env: { WARPWATCH_KAFKA_COMPRESSION: 'brotli', WARPWATCH_KAFKA_MAX_IN_FLIGHT: '6' },
          flags: { partitions: '0', spoolPolicy: 'drop-middle', brokers: 'nohost', label: ['=x'], socketMode: '999' },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CollectorConfigError);
      const problems = (caught as CollectorConfigError).problems;
      expect(problems).toHaveLength(7);
      expect(problems).toContain('--partitions must be an integer 1..10000, got "0"');
      expect(problems).toContain('--spool-policy must be one of drop-oldest|drop-newest, got "drop-middle"');
      expect(problems).toContain('WARPWATCH_KAFKA_COMPRESSION must be one of none|gzip|snappy|lz4|zstd, got "brotli"');
      expect(problems).toContain('WARPWATCH_KAFKA_MAX_IN_FLIGHT must be an integer 1..5, got "6"');
      expect(problems).toContain('--brokers entries must be host:port, got "nohost"');
      expect((caught as CollectorConfigError).code).toBe('WW_ERR_COLLECTOR_CONFIG');
    });

    it('gives every bad field as name, value and why, in one coded error; a credential\'s value never', () => {
      let caught: unknown;
      try {
        loadCollectorConfig({
          env: { WARPWATCH_SPOOL_SEGMENT_BYTES: '64MiB', WARPWATCH_SPOOL_MAX_BYTES: '1MiB', WARPWATCH_KAFKA_SASL_PASSWORD: 'pw-1', WARPWATCH_KAFKA_SASL_PASSWORD_FILE: '/x', WARPWATCH_KAFKA_SASL_MECHANISM: 'plain' },
          flags: { partitions: 'many' },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CollectorConfigError);
      const error = caught as CollectorConfigError;
      expect(error.fields).toEqual([
        { name: '--partitions', value: 'many', why: 'must be an integer 1..10000' },
        { name: 'WARPWATCH_KAFKA_SASL_PASSWORD', why: 'and WARPWATCH_KAFKA_SASL_PASSWORD_FILE are both set; set only one' },
        { name: 'WARPWATCH_KAFKA_SASL_USERNAME', why: 'must be set when WARPWATCH_KAFKA_SASL_MECHANISM is set' },
        { name: 'WARPWATCH_SPOOL_SEGMENT_BYTES', value: String(64 * 1024 ** 2), why: `must not exceed the spool bound (${1024 ** 2})` },
      ]);
      expect(error.problems).toHaveLength(4);
      expect(error.message).toBe(error.problems.join('; '));
      expect(error.message).not.toContain('pw-1');
    });

    it('checks the host and labels with the stream-identity rules of contracts/, reported with every other problem', () => {
      // The host field's rule is the contracts function itself (no second copy of the rule).
      expect(COLLECTOR_FIELDS.host.check).toBe(hostProblem);
      let caught: unknown;
      try {
        loadCollectorConfig({
          env: { WARPWATCH_HOST: 'gpu 7', WARPWATCH_LABELS: 'team=a,9x=b', WARPWATCH_LABEL_POD: 'p\u0001q', WARPWATCH_KAFKA_PARTITIONS: '0' },
          flags: { label: ['zone'] },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CollectorConfigError);
      expect((caught as CollectorConfigError).fields).toEqual([
        { name: 'WARPWATCH_HOST', value: 'gpu 7', why: 'must not contain whitespace, control characters or |' },
        { name: 'WARPWATCH_KAFKA_PARTITIONS', value: '0', why: 'must be an integer 1..10000' },
        { name: 'WARPWATCH_LABELS', value: '9x=b', why: 'label must be name=value: its name must match [A-Za-z_][A-Za-z0-9_.-]{0,63}' },
        { name: 'WARPWATCH_LABEL_POD', value: 'pod=p\u0001q', why: 'label must be name=value: its value must not contain control characters (U+0001 at character 2)' },
        { name: '--label', value: 'zone', why: 'label must be name=value' },
      ]);
      // A host of 255 UTF-8 bytes is allowed, 256 are not (é is 2 bytes).
      expect(loadCollectorConfig({ env: { WARPWATCH_HOST: 'é'.repeat(127) + 'a' } }).hostName).toHaveLength(128);
      expect(() => loadCollectorConfig({ env: { WARPWATCH_HOST: 'é'.repeat(128) } })).toThrow(/WARPWATCH_HOST must be at most 255 UTF-8 bytes \(it has 256\)/);
    });

    it('requires a username and a password when SASL is on', () => {
      expect(() => loadCollectorConfig({ env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'scram-sha-256' } })).toThrow(/WARPWATCH_KAFKA_SASL_USERNAME must be set.*PASSWORD/);
    });
  });

  describe('Kafka slice', () => {
    it('reads only the Kafka settings: a bad setting elsewhere does not stop it, a bad Kafka one does', () => {
      const kafka = loadCollectorKafkaConfig({
        env: { WARPWATCH_SPOOL_POLICY: 'nonsense', WARPWATCH_METRICS_PORT: '-1', WARPWATCH_KAFKA_COMPRESSION: 'gzip', WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD: 'p' },
        flags: { brokers: 'k1:9092' },
      });
      expect(kafka).toMatchObject({ brokers: ['k1:9092'], compression: 'gzip', framesTopic: 'warpwatch.frames', maxMessageBytes: 8 * 1024 * 1024 });
      expect(kafka.sasl?.password.reveal()).toBe('p');
      expect(() => loadCollectorConfig({ env: { WARPWATCH_SPOOL_POLICY: 'nonsense' } })).toThrow(CollectorConfigError);
      expect(() => loadCollectorKafkaConfig({ env: { WARPWATCH_KAFKA_RETRIES: '0', WARPWATCH_SPOOL_POLICY: 'nonsense' } })).toThrow(
        /^WARPWATCH_KAFKA_RETRIES must be an integer 1\.\.100, got "0"$/,
      );
    });

    it('is the same slice loadCollectorConfig reads', () => {
      const env = { WARPWATCH_KAFKA_BROKERS: 'a:1,b:2', WARPWATCH_DLQ_TOPIC: 'my.dlq', WARPWATCH_KAFKA_TLS: 'true', WARPWATCH_KAFKA_TLS_REJECT_UNAUTHORIZED: 'false' };
      expect(loadCollectorKafkaConfig({ env })).toEqual(loadCollectorConfig({ env }).kafka);
    });
  });

  describe('result', () => {
    it('is deeply frozen', () => {
      const config = loadCollectorConfig({ env: {}, flags: { label: ['a=b'] } });
      expect(Object.isFrozen(config)).toBe(true);
      expect(Object.isFrozen(config.kafka)).toBe(true);
      expect(Object.isFrozen(config.kafka.brokers)).toBe(true);
      expect(Object.isFrozen(config.labels)).toBe(true);
      expect(Object.isFrozen(config.spool)).toBe(true);
    });

    it('reads credentials from files and never prints them', () => {
      const files: Record<string, string> = { '/secrets/pw': 's3cret-pw\n', '/secrets/key.pem': 'PRIVATE-KEY', '/secrets/ca.pem': 'CA-CERT' };
      const config = loadCollectorConfig({
        env: {
          WARPWATCH_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
          WARPWATCH_KAFKA_SASL_USERNAME: 'collector',
          WARPWATCH_KAFKA_SASL_PASSWORD_FILE: '/secrets/pw',
          WARPWATCH_KAFKA_TLS_CA_FILE: '/secrets/ca.pem',
          WARPWATCH_KAFKA_TLS_KEY_FILE: '/secrets/key.pem',
        },
        readTextFile: (path) => {
          const text = files[path];
          if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
          return text;
        },
      });
      expect(config.kafka.sasl?.mechanism).toBe('scram-sha-512');
      expect(config.kafka.sasl?.password.reveal()).toBe('s3cret-pw');
      expect(config.kafka.tls?.ca).toBe('CA-CERT');
      expect(config.kafka.tls?.key?.reveal()).toBe('PRIVATE-KEY');
      const printed = [JSON.stringify(config), inspect(config, { depth: 10 }), describeCollectorConfig(config), String(config.kafka.sasl?.password)].join('\n');
      expect(printed).not.toContain('s3cret-pw');
      expect(printed).not.toContain('PRIVATE-KEY');
      expect(printed).toContain('[redacted]');
    });

    it('names an unreadable credential file without showing content', () => {
      expect(() =>
        loadCollectorConfig({
          env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD_FILE: '/nope' },
          readTextFile: () => {
            throw Object.assign(new Error('missing'), { code: 'ENOENT' });
          },
        }),
      ).toThrow('WARPWATCH_KAFKA_SASL_PASSWORD_FILE names a file that cannot be read (ENOENT), got "/nope"');
    });
  });

  describe('InfluxDB self-metrics', () => {
    it('is off unless a URL is configured, and "off" switches it off', () => {
      const config = loadCollectorConfig({ env: {}, flags: { host: 'gpu-7' } });
      expect(config.influx).toBeUndefined();
      expect(config.pipelineIntervalMillis).toBe(10_000);
      expect(config.instance).toBe(`gpu-7:${process.pid}`);
      expect(describeCollectorConfig(config)).toContain('influx=off');
      expect(loadCollectorConfig({ env: { WARPWATCH_INFLUX_URL: 'off' } }).influx).toBeUndefined();
      expect(loadCollectorConfig({ env: { WARPWATCH_INFLUX_URL: 'http://x:8086' }, flags: { influxUrl: 'off' } }).influx).toBeUndefined();
    });

    it('reads the estimator\'s variable names, flags first', () => {
      const config = loadCollectorConfig({
        env: {
          WARPWATCH_INFLUX_URL: 'http://influx-env:8086',
          WARPWATCH_INFLUX_DATABASE: 'envdb',
          WARPWATCH_INFLUX_RETENTION_POLICY: 'week',
          WARPWATCH_INFLUX_ORG: 'ops',
          WARPWATCH_INFLUX_TOKEN: 'tok-123',
          WARPWATCH_COLLECTOR_INFLUX_MAX_BUFFER_POINTS: '50',
          WARPWATCH_PIPELINE_INTERVAL_MILLIS: '30000',
          WARPWATCH_INSTANCE: 'env-instance',
        },
        flags: { influxUrl: 'https://influx-flag:8086', influxDatabase: 'flagdb', pipelineIntervalMillis: '5000', instance: 'flag-instance' },
      });
      expect(config.influx).toMatchObject({ url: 'https://influx-flag:8086', database: 'flagdb', retentionPolicy: 'week', org: 'ops', maxBufferPoints: 50 });
      expect(config.influx?.token.reveal()).toBe('tok-123');
      expect(config.pipelineIntervalMillis).toBe(5_000);
      expect(config.instance).toBe('flag-instance');
      const printed = [JSON.stringify(config), inspect(config, { depth: 10 }), describeCollectorConfig(config)].join('\n');
      expect(printed).not.toContain('tok-123');
      expect(describeCollectorConfig(config)).toContain('influx=https://influx-flag:8086 bucket=flagdb/week instance=flag-instance every 5000 ms');
    });

    it('bounds its point queue by its own variable, not the estimator\'s WARPWATCH_INFLUX_MAX_BUFFER_LINES (one ConfigMap feeds both)', () => {
      const shared = { WARPWATCH_INFLUX_URL: 'http://x:8086', WARPWATCH_INFLUX_MAX_BUFFER_LINES: '500000' };
      expect(loadCollectorConfig({ env: shared }).influx?.maxBufferPoints).toBe(1_000);
      expect(loadCollectorConfig({ env: { ...shared, WARPWATCH_COLLECTOR_INFLUX_MAX_BUFFER_POINTS: '20' } }).influx?.maxBufferPoints).toBe(20);
    });

    it('defaults to InfluxDB 1.8 settings and reads the token from a file', () => {
      const config = loadCollectorConfig({
        env: { WARPWATCH_INFLUX_URL: 'http://127.0.0.1:18086', WARPWATCH_INFLUX_TOKEN_FILE: '/secrets/influx' },
        readTextFile: (path) => (path === '/secrets/influx' ? 'file-token\n' : ''),
      });
      expect(config.influx).toMatchObject({ database: 'warpwatch', retentionPolicy: 'autogen', org: '-', maxBufferPoints: 1_000 });
      expect(config.influx?.token.reveal()).toBe('file-token');
      expect(config.influx?.tokenFile).toBe('/secrets/influx');
      const printed = [JSON.stringify(config), inspect(config, { depth: 10 }), inspect(config.influx), String(config.influx?.token), describeCollectorConfig(config)].join('\n');
      expect(printed).toContain('[redacted]');
      expect(printed).not.toContain('file-token');
    });

    it('rejects a bad URL, database, interval or instance together, naming the setting', () => {
      let caught: unknown;
      try {
        loadCollectorConfig({
          env: { WARPWATCH_INFLUX_URL: 'ftp://x', WARPWATCH_INFLUX_DATABASE: 'bad db', WARPWATCH_PIPELINE_INTERVAL_MILLIS: '10' },
          flags: { instance: 'x'.repeat(300) },
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(CollectorConfigError);
      const problems = (caught as CollectorConfigError).problems;
      expect(problems).toContain('WARPWATCH_INFLUX_URL must be an http(s) URL or "off", got "ftp://x"');
      expect(problems).toContain('WARPWATCH_INFLUX_DATABASE must be a name matching [A-Za-z0-9._-]{1,128}, got "bad db"');
      expect(problems).toContain('WARPWATCH_PIPELINE_INTERVAL_MILLIS must be an integer 100..3600000, got "10"');
      expect(problems).toContain(`--instance must be at most 256 characters, got "${'x'.repeat(200)}…" (300 characters)`);
    });

    it('never logs credentials embedded in the URL', () => {
      const config = loadCollectorConfig({ env: { WARPWATCH_INFLUX_URL: 'http://admin:hunter2@influx:8086' } });
      expect(describeCollectorConfig(config)).not.toContain('hunter2');
      expect(describeCollectorConfig(config)).toContain('influx=http://influx:8086/');
    });
  });
});
