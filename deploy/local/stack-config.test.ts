import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DeployError } from '../errors.ts';
import { kafkaLoggingBinding, LOCAL_STACK_DEFAULTS, resolveLocalStackConfig } from './stack-config.ts';

describe('resolveLocalStackConfig', () => {
  it('defaults to Kafka 127.0.0.1:19092/19093 and InfluxDB 127.0.0.1:18086/18088 under <repo>/.cache/warpwatch', () => {
    const config = resolveLocalStackConfig({});
    expect(config.kafka).toMatchObject({ managed: true, brokers: ['127.0.0.1:19092'], port: 19092, controllerPort: 19093, heapMebibytes: 512 });
    expect(config.influx).toMatchObject({ managed: true, url: 'http://127.0.0.1:18086', port: 18086, rpcPort: 18088, database: 'warpwatch' });
    expect(config.cacheDirectory).toBe(`${config.repositoryRoot}/.cache/warpwatch`);
    expect(config.kafka.instanceDirectory).toBe(`${config.cacheDirectory}/kafka/node-19092`);
    expect(Object.isFrozen(config) && Object.isFrozen(config.kafka) && Object.isFrozen(config.influx)).toBe(true);
  });

  it('runs Kafka 4.4.0 by default and the version WARPWATCH_STACK_KAFKA_VERSION names (3.9.x or 4.x.y), each with the SLF4J binding of its line', () => {
    expect(resolveLocalStackConfig({}).kafka).toMatchObject({ version: '4.4.0', authorizer: false });
    expect(resolveLocalStackConfig({ WARPWATCH_STACK_KAFKA_VERSION: '3.9.2' }).kafka.version).toBe('3.9.2');
    expect(kafkaLoggingBinding('3.9.2')).toMatchObject({ artifactId: 'slf4j-reload4j', log4j2: false });
    expect(kafkaLoggingBinding('4.4.0')).toMatchObject({ groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j-impl', log4j2: true });
    for (const bad of ['3.8.1', '5.0.0', '4.4', 'latest', '4.4.0; rm -rf /']) {
      expect(() => resolveLocalStackConfig({ WARPWATCH_STACK_KAFKA_VERSION: bad }), bad).toThrow(/WARPWATCH_STACK_KAFKA_VERSION.*3\.9\.x or 4\.x\.y/);
    }
  });

  it('runs local addresses given by env on their ports, deriving the companion ports', () => {
    const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: 'localhost:29092', WARPWATCH_INFLUX_URL: 'http://localhost:28086/', WARPWATCH_CACHE_DIR: '/tmp/ww-cache-x' });
    expect(config.kafka).toMatchObject({ managed: true, host: '127.0.0.1', port: 29092, controllerPort: 29093 });
    expect(config.influx).toMatchObject({ managed: true, host: '127.0.0.1', port: 28086, rpcPort: 28088, url: 'http://localhost:28086' });
    expect(config.cacheDirectory).toBe('/tmp/ww-cache-x');
  });

  it('names a cache folder reached through a symlink by its real path, also when its end does not exist yet', () => {
    const root = mkdtempSync(join(tmpdir(), 'ww-cache-link-'));
    try {
      const real = join(root, 'real');
      mkdirSync(join(real, 'warpwatch'), { recursive: true });
      symlinkSync(real, join(root, 'link'));
      const canonical = realpathSync(real);
      expect(resolveLocalStackConfig({ WARPWATCH_CACHE_DIR: join(root, 'link', 'warpwatch') }).cacheDirectory).toBe(join(canonical, 'warpwatch'));
      expect(resolveLocalStackConfig({ WARPWATCH_CACHE_DIR: join(root, 'link', 'new', 'cache') }).cacheDirectory).toBe(join(canonical, 'new', 'cache'));
      // The server command lines, by which the stack knows its own processes, then agree as well.
      const viaLink = resolveLocalStackConfig({ WARPWATCH_CACHE_DIR: join(root, 'link', 'warpwatch') });
      const direct = resolveLocalStackConfig({ WARPWATCH_CACHE_DIR: join(real, 'warpwatch') });
      expect(viaLink.influx.instanceDirectory).toBe(direct.influx.instanceDirectory);
      expect(viaLink.kafka.instanceDirectory).toBe(direct.kafka.instanceDirectory);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('treats remote or multi-broker addresses as external servers it only checks', () => {
    const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: 'k1:9092,k2:9092', WARPWATCH_INFLUX_URL: 'https://influx.example:8086' });
    expect(config.kafka.managed).toBe(false);
    expect(config.kafka.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(config.influx.managed).toBe(false);
  });

  it('reports every invalid variable together with code WW_ERR_STACK_CONFIG', () => {
    let caught: unknown;
    try {
      resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:99999', WARPWATCH_KAFKA_HEAP_MB: '12', WARPWATCH_INFLUX_URL: 'not a url', WARPWATCH_INFLUX_DATABASE: 'bad name' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DeployError);
    const error = caught as DeployError;
    expect(error.code).toBe('WW_ERR_STACK_CONFIG');
    for (const part of ['"99999"', 'WARPWATCH_KAFKA_HEAP_MB', 'WARPWATCH_INFLUX_URL', 'WARPWATCH_INFLUX_DATABASE']) expect(error.message).toContain(part);
  });

  it('rejects colliding local ports', () => {
    expect(() => resolveLocalStackConfig({ WARPWATCH_KAFKA_CONTROLLER_PORT: '19092' })).toThrow(/must differ from the broker port 19092/);
    expect(() => resolveLocalStackConfig({ WARPWATCH_INFLUX_URL: 'http://127.0.0.1:19093' })).toThrow(/five local ports must differ/);
    expect(() => resolveLocalStackConfig({ WARPWATCH_KAFKA_SASL_PORT: '19093' })).toThrow(/SASL_PORT must differ/);
    expect(resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092' }).kafka.saslPort).toBe(29094);
    expect(resolveLocalStackConfig({}).kafka.saslPort).toBe(19094);
  });

  it('keeps defaults in one frozen object', () => {
    expect(Object.isFrozen(LOCAL_STACK_DEFAULTS)).toBe(true);
  });
});
