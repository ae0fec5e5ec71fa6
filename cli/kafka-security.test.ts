import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { loadEstimatorConfig } from '../estimator/index.ts';
import { kafkaSecurityFromEnv, withKafkaSecurity } from './kafka-security.ts';
import { UsageError } from './usage-error.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-kafka-security-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('kafkaSecurityFromEnv', () => {
  it('is empty without security variables, whatever else the environment holds', () => {
    expect(kafkaSecurityFromEnv({ WARPWATCH_SPOOL_POLICY: 'nonsense', PATH: '/bin' })).toEqual({});
  });

  it('builds kafkajs SASL options from the collector variables, password from a file', () => {
    const file = join(directory, 'password');
    writeFileSync(file, 's3cret\n');
    const security = kafkaSecurityFromEnv({ WARPWATCH_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256', WARPWATCH_KAFKA_SASL_USERNAME: 'svc', WARPWATCH_KAFKA_SASL_PASSWORD_FILE: file });
    expect(security.sasl).toEqual({ mechanism: 'scram-sha-256', username: 'svc', password: 's3cret' });
    expect(security.ssl).toBeUndefined();
  });

  it('builds TLS options with the CA file and rejects unauthorised certificates by default', () => {
    const ca = join(directory, 'ca.pem');
    writeFileSync(ca, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
    expect(kafkaSecurityFromEnv({ WARPWATCH_KAFKA_TLS_CA_FILE: ca }).ssl).toEqual({ ca: [expect.stringContaining('BEGIN CERTIFICATE')], rejectUnauthorized: true });
  });

  it('reports every invalid security setting as a usage error (exit 2)', () => {
    const call = (): unknown => kafkaSecurityFromEnv({ WARPWATCH_KAFKA_SASL_MECHANISM: 'kerberos', WARPWATCH_KAFKA_TLS: 'maybe' });
    expect(call).toThrow(UsageError);
    expect(call).toThrow(/WARPWATCH_KAFKA_SASL_MECHANISM must be one of scram-sha-256\|scram-sha-512\|plain, got "kerberos".*WARPWATCH_KAFKA_SASL_USERNAME must be set.*WARPWATCH_KAFKA_TLS must be true or false/);
  });

  it('reads the security slice only: other Kafka settings of the collector, good or bad, are not read', () => {
    expect(kafkaSecurityFromEnv({ WARPWATCH_KAFKA_RETRIES: '0', WARPWATCH_KAFKA_BROKERS: 'not a broker', WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD: 'p' })).toEqual({
      sasl: { mechanism: 'plain', username: 'u', password: 'p' },
    });
    // It runs no loader of another service: only the shared reader of the slice.
    const source = readFileSync(fileURLToPath(new URL('./kafka-security.ts', import.meta.url)), 'utf8');
    expect(source).not.toMatch(/from '\.\.\/collector\/|loadCollectorConfig/);
  });

  it('never shows the password in the error, and names an unreadable password file', () => {
    const call = (): unknown => kafkaSecurityFromEnv({ WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_PASSWORD: 'hunter2', WARPWATCH_KAFKA_TLS_CA_FILE: join(directory, 'missing.pem') });
    expect(call).toThrow(/^WARPWATCH_KAFKA_SASL_USERNAME must be set when WARPWATCH_KAFKA_SASL_MECHANISM is set; WARPWATCH_KAFKA_TLS_CA_FILE names a file that cannot be read \(ENOENT\), got ".*missing\.pem"$/);
    expect(call).not.toThrow(/hunter2/);
  });

  it('adds the options to an estimator config and leaves it unchanged without them', () => {
    const base = loadEstimatorConfig({ env: {} });
    expect(withKafkaSecurity(base, {})).toBe(base);
    const secured = withKafkaSecurity(base, { WARPWATCH_KAFKA_SASL_MECHANISM: 'plain', WARPWATCH_KAFKA_SASL_USERNAME: 'u', WARPWATCH_KAFKA_SASL_PASSWORD: 'p' });
    expect(secured.kafka.security?.sasl).toEqual({ mechanism: 'plain', username: 'u', password: 'p' });
    expect(secured.kafka.brokers).toEqual(base.kafka.brokers);
  });
});
