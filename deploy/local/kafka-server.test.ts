import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createKafkaClusterId, localKafkaTls, renderKafkaServerProperties } from './kafka-server.ts';
import { resolveLocalStackConfig } from './stack-config.ts';

function parseProperties(text: string): Map<string, string> {
  const entries = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as [string, string]);
  return new Map(entries);
}

describe('createKafkaClusterId', () => {
  it('returns 16 random bytes in base64url (22 characters) that never start with "-"', () => {
    const ids = Array.from({ length: 2_000 }, () => createKafkaClusterId());
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{21}$/);
      expect(Buffer.from(id, 'base64url')).toHaveLength(16);
    }
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('renderKafkaServerProperties', () => {
  const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092', WARPWATCH_CACHE_DIR: '/tmp/ww-props' });
  const properties = parseProperties(renderKafkaServerProperties(config));

  it('describes one combined broker+controller KRaft node bound to 127.0.0.1 on the configured ports', () => {
    expect(properties.get('process.roles')).toBe('broker,controller');
    expect(properties.get('controller.quorum.voters')).toBe('1@127.0.0.1:29093');
    expect(properties.get('listeners')).toBe('PLAINTEXT://127.0.0.1:29092,CONTROLLER://127.0.0.1:29093,SASL_PLAINTEXT://127.0.0.1:29094');
    expect(properties.get('advertised.listeners')).toBe('PLAINTEXT://127.0.0.1:29092,SASL_PLAINTEXT://127.0.0.1:29094');
    expect(properties.get('listener.security.protocol.map')).toBe('CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT');
    expect(properties.get('sasl.enabled.mechanisms')).toBe('SCRAM-SHA-256,SCRAM-SHA-512');
    expect(properties.get('listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config')).toMatch(/ScramLoginModule required;$/);
    expect(properties.get('log.dirs')).toBe('/tmp/ww-props/kafka/node-29092/data-4.4.0');
    expect(properties.get('authorizer.class.name')).toBeUndefined();
  });

  it('keeps one data directory per Kafka version (WARPWATCH_STACK_KAFKA_VERSION), so a switch never reads the other line\'s metadata', () => {
    const older = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092', WARPWATCH_CACHE_DIR: '/tmp/ww-props', WARPWATCH_STACK_KAFKA_VERSION: '3.9.2' });
    expect(parseProperties(renderKafkaServerProperties(older)).get('log.dirs')).toBe('/tmp/ww-props/kafka/node-29092/data-3.9.2');
    expect(older.kafka.installDirectory).toBe('/tmp/ww-props/kafka/3.9.2');
  });

  it('turns the StandardAuthorizer on with WARPWATCH_STACK_KAFKA_AUTHORIZER: ACLs only, the loopback admin path and `warpwatch` as super users', () => {
    const locked = parseProperties(renderKafkaServerProperties(resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092', WARPWATCH_CACHE_DIR: '/tmp/ww-props', WARPWATCH_STACK_KAFKA_AUTHORIZER: 'true' })));
    expect(locked.get('authorizer.class.name')).toBe('org.apache.kafka.metadata.authorizer.StandardAuthorizer');
    expect(locked.get('super.users')).toBe('User:ANONYMOUS;User:warpwatch');
    expect(locked.get('allow.everyone.if.no.acl.found')).toBe('false');
  });

  it('uses replication 1 and no rebalance delay, as a single node needs', () => {
    for (const key of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr', 'min.insync.replicas', 'default.replication.factor']) {
      expect(properties.get(key), key).toBe('1');
    }
    expect(properties.get('group.initial.rebalance.delay.ms')).toBe('0');
    expect(properties.get('auto.create.topics.enable')).toBe('true');
  });
});

describe('renderKafkaServerProperties with TLS listeners (WARPWATCH_STACK_KAFKA_TLS_PORT)', () => {
  const cache = mkdtempSync(join(tmpdir(), 'ww-tls-props-'));
  afterAll(() => rmSync(cache, { recursive: true, force: true }));
  const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092', WARPWATCH_STACK_KAFKA_TLS_PORT: '29095', WARPWATCH_CACHE_DIR: cache });

  it('adds five TLS listeners, client certificates required on MTLS only, SCRAM on SASL_SSL, and keeps the keystore password out of sight (mode 0600)', () => {
    const properties = parseProperties(renderKafkaServerProperties(config));
    expect(properties.get('listener.security.protocol.map')).toBe(
      'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,WRONGHOST:SSL,EXPIRED:SSL',
    );
    expect(properties.get('advertised.listeners')).toBe(
      'PLAINTEXT://127.0.0.1:29092,SASL_PLAINTEXT://127.0.0.1:29094,SSL://127.0.0.1:29095,MTLS://127.0.0.1:29096,SASL_SSL://127.0.0.1:29097,WRONGHOST://127.0.0.1:29098,EXPIRED://127.0.0.1:29099',
    );
    expect(properties.get('listener.name.mtls.ssl.client.auth')).toBe('required');
    expect(properties.get('listener.name.ssl.ssl.client.auth')).toBeUndefined();
    expect(properties.get('listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config')).toMatch(/ScramLoginModule required;$/);
    const tls = localKafkaTls(config);
    expect(tls?.brokers).toEqual({ ssl: '127.0.0.1:29095', mtls: '127.0.0.1:29096', saslSsl: '127.0.0.1:29097', wrongHost: '127.0.0.1:29098', expired: '127.0.0.1:29099' });
    expect(properties.get('listener.name.expired.ssl.keystore.location')).toBe(tls?.expiredKeystore);
    for (const secret of [tls?.clientKeyFile, tls?.serverKeystore, join(tls?.directory ?? '', 'ca.key')]) expect(statSync(secret ?? '').mode & 0o077, secret).toBe(0);
  });

  it('has none by default', () => {
    expect(localKafkaTls(resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092', WARPWATCH_CACHE_DIR: cache }))).toBeUndefined();
  });
});
