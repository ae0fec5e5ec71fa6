import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { kafkaClientSecurity, Secret } from '../service/index.ts';
import { loadEstimatorConfig, loadEstimatorKafkaConfig } from './config.ts';
import { EstimatorConfigError } from './errors.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-kafka-security-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The kafkajs options the estimator's Kafka clients get (service/kafka-client.ts applies them). */
const clientSecurity = (env: Record<string, string>): ReturnType<typeof kafkaClientSecurity> => {
  const security = loadEstimatorKafkaConfig({ env }).security;
  if (security === undefined) throw new Error('the estimator config has no security slice');
  return kafkaClientSecurity(security);
};

describe('the estimator config reads the Kafka security slice', () => {
  it('is empty without security variables, whatever else the environment holds', () => {
    expect(clientSecurity({ WARPWATCH_SPOOL_POLICY: 'nonsense', PATH: '/bin' })).toEqual({});
    expect(loadEstimatorConfig({ env: {} }).kafka.security).toEqual({ sasl: undefined, tls: undefined });
  });

  it('builds kafkajs SASL options from the collector variables, password from a file', () => {
    const file = join(directory, 'password');
    writeFileSync(file, 's3cret\n');
    const security = clientSecurity({ WARPWATCH_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', WARPWATCH_KAFKA_SASL_USERNAME: 'svc', WARPWATCH_KAFKA_SASL_PASSWORD_FILE: file });
    expect(security.sasl).toEqual({ mechanism: 'scram-sha-256', username: 'svc', password: 's3cret' });
    expect(security.ssl).toBeUndefined();
  });

  it('builds TLS options with the CA file and rejects unauthorised certificates by default', () => {
    const ca = join(directory, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(clientSecurity({ WARPWATCH_KAFKA_TLS_CA_FILE: ca }).ssl).toEqual({ ca: [expect.stringContaining('BEGIN CERTIFICATE')], rejectUnauthorized: true });
  });

  it('reports every invalid security setting with the other config problems (WW_ERR_ESTIMATOR_CONFIG, exit 2)', () => {
    const call = (): unknown => loadEstimatorConfig({ env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'kerberos', WARPWATCH_KAFKA_TLS: 'maybe', WARPWATCH_WINDOW_MILLIS: '0' } });
    expect(call).toThrow(EstimatorConfigError);
    expect(call).toThrow(/WARPWATCH_KAFKA_SASL_MECHANISM must be one of scram-sha-256\|scram-sha-512\|plain, got "kerberos".*WARPWATCH_KAFKA_SASL_USERNAME must be set.*WARPWATCH_KAFKA_TLS must be true or false/);
    expect(call).toThrow(/WARPWATCH_WINDOW_MILLIS/);
    expect(() => loadEstimatorKafkaConfig({ env: { WARPWATCH_KAFKA_TLS: 'maybe' } })).toThrow(/WARPWATCH_KAFKA_TLS must be true or false/);
  });

  it('reads its own slice: the collector-only Kafka settings, good or bad, are not read', () => {
    expect(clientSecurity({ WARPWATCH_KAFKA_RETRIES: '0', WARPWATCH_KAFKA_COMPRESSION: 'zstd', WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD: 'p' })).toEqual({
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
    });
    // It runs no loader of another service: only the shared reader of the slice.
    const source = readFileSync(fileURLToPath(new URL('./config.ts', import.meta.url)), 'utf8');
    expect(source).not.toMatch(/from '\.\.\/collector\/|loadCollectorConfig/);
  });

  it('never shows the password in the error, and names an unreadable password file', () => {
    const call = (): unknown => loadEstimatorKafkaConfig({ env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_PASSWORD: 'hunter2', WARPWATCH_KAFKA_TLS_CA_FILE: join(directory, 'missing.pem') } });
    expect(call).toThrow(/WARPWATCH_KAFKA_SASL_USERNAME must be set when WARPWATCH_KAFKA_SASL_MECHANISM is set; WARPWATCH_KAFKA_TLS_CA_FILE names a file that cannot be read \(ENOENT\), got ".*missing\.pem"$/);
    expect(call).not.toThrow(/hunter2/);
  });

  it('keeps the credentials as Secrets in the config (revealed only by the Kafka client factory)', () => {
    const config = loadEstimatorConfig({ env: { WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD: 'hunter2', WARPWATCH_KAFKA_BROKERS: 'k:9093' } });
    expect(config.kafka.security?.sasl?.password).toBeInstanceOf(Secret);
    expect(config.kafka.security?.sasl?.password.reveal()).toBe('hunter2');
    expect(JSON.stringify(config)).not.toContain('hunter2');
    expect(config.kafka.brokers).toEqual(['k:9093']);
    expect(Object.isFrozen(config.kafka.security)).toBe(true);
  });
});
