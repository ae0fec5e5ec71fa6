import { describe, expect, it } from 'vitest';
import { createKafkaClusterId, renderKafkaServerProperties } from './kafka-server.ts';
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
    expect(properties.get('log.dirs')).toBe('/tmp/ww-props/kafka/node-29092/data');
  });

  it('uses replication 1 and no rebalance delay, as a single node needs', () => {
    for (const key of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr', 'min.insync.replicas', 'default.replication.factor']) {
      expect(properties.get(key), key).toBe('1');
    }
    expect(properties.get('group.initial.rebalance.delay.ms')).toBe('0');
    expect(properties.get('auto.create.topics.enable')).toBe('true');
  });
});
