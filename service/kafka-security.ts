import type { SASLOptions } from 'kafkajs';
import { KAFKA_SECURITY_FIELDS } from '../contracts/index.ts';
import type { ConfigReader } from './config-toolkit.ts';
import type { Secret } from './secret.ts';

/** SASL mechanisms supported by kafkajs without plugins. */
export type SaslMechanism = (typeof KAFKA_SECURITY_FIELDS.saslMechanism.values)[number];

/** The Kafka SASL and TLS settings of every warpwatch Kafka client (the KAFKA_SECURITY_FIELDS slice). */
export interface KafkaSecurityConfig {
  /** SASL login, or undefined for none. */
  readonly sasl: { readonly mechanism: SaslMechanism; readonly username: string; readonly password: Secret } | undefined;
  /** TLS (certificate contents, not paths), or undefined for plaintext. */
  readonly tls:
    | { readonly ca: string | undefined; readonly cert: string | undefined; readonly key: Secret | undefined; readonly rejectUnauthorized: boolean }
    | undefined;
}

/**
 * Reads the Kafka security slice (WARPWATCH_KAFKA_SASL_*, WARPWATCH_KAFKA_TLS*) and nothing
 * else: with a SASL mechanism the user and password are required; TLS is on when
 * WARPWATCH_KAFKA_TLS says so, or by default when a TLS file is given (files are read only
 * then). Problems are added to the reader; credentials are held as Secrets.
 *
 * @example
 * const reader = new ConfigReader({ env: process.env });
 * const security = readKafkaSecurity(reader); // { sasl: undefined, tls: undefined } when nothing is set
 */
export function readKafkaSecurity(reader: ConfigReader): KafkaSecurityConfig {
  const f = KAFKA_SECURITY_FIELDS;
  let sasl: KafkaSecurityConfig['sasl'];
  if (reader.isSet('saslMechanism', f.saslMechanism)) {
    const mechanism = reader.readField('saslMechanism', f.saslMechanism) ?? 'scram-sha-512';
    const username = reader.readField('saslUsername', f.saslUsername) ?? '';
    const password = reader.readField('saslPassword', f.saslPassword);
    if (username === '') reader.report({ name: f.saslUsername.env, why: `must be set when ${f.saslMechanism.env} is set` });
    if (password === undefined && !reader.isSet('saslPassword', f.saslPassword)) {
      reader.report({ name: `${f.saslPassword.env} or ${f.saslPassword.fileEnv}`, why: `must be set when ${f.saslMechanism.env} is set` });
    }
    sasl = password === undefined ? undefined : Object.freeze({ mechanism, username, password });
  }
  const filesGiven = reader.isSet('tlsCaFile', f.tlsCaFile) || reader.isSet('tlsCertFile', f.tlsCertFile) || reader.isSet('tlsKey', f.tlsKey);
  const tlsEnabled = reader.readField('tls', f.tls) ?? filesGiven;
  const tls = tlsEnabled
    ? Object.freeze({
        ca: reader.readField('tlsCaFile', f.tlsCaFile),
        cert: reader.readField('tlsCertFile', f.tlsCertFile),
        key: reader.readField('tlsKey', f.tlsKey),
        rejectUnauthorized: reader.readField('tlsRejectUnauthorized', f.tlsRejectUnauthorized),
      })
    : undefined;
  return Object.freeze({ sasl, tls });
}

/** SASL and TLS options of a kafkajs client; empty = plaintext without login. */
export interface KafkaClientSecurity {
  readonly sasl?: SASLOptions;
  readonly ssl?: { ca?: string[]; cert?: string; key?: string; rejectUnauthorized: boolean };
}

/**
 * The kafkajs client options (`sasl`, `ssl`) for a Kafka security config; secrets are revealed
 * here only, to be handed to kafkajs. The collector's producer, the estimator and the CLI's
 * Kafka readers all use it.
 *
 * @example new Kafka({ clientId, brokers, ...kafkaClientSecurity(config.kafka) })
 */
export function kafkaClientSecurity(config: KafkaSecurityConfig): KafkaClientSecurity {
  return {
    ...(config.tls === undefined ? {} : { ssl: tlsOptions(config.tls) }),
    ...(config.sasl === undefined ? {} : { sasl: saslOptions(config.sasl) }),
  };
}

function tlsOptions(tls: NonNullable<KafkaSecurityConfig['tls']>): { ca?: string[]; cert?: string; key?: string; rejectUnauthorized: boolean } {
  return {
    ...(tls.ca === undefined ? {} : { ca: [tls.ca] }),
    ...(tls.cert === undefined ? {} : { cert: tls.cert }),
    ...(tls.key === undefined ? {} : { key: tls.key.reveal() }),
    rejectUnauthorized: tls.rejectUnauthorized,
  };
}

function saslOptions(sasl: NonNullable<KafkaSecurityConfig['sasl']>): SASLOptions {
  const credentials = { username: sasl.username, password: sasl.password.reveal() };
  switch (sasl.mechanism) {
    case 'plain':
      return { mechanism: 'plain', ...credentials };
    case 'scram-sha-256':
      return { mechanism: 'scram-sha-256', ...credentials };
    case 'scram-sha-512':
      return { mechanism: 'scram-sha-512', ...credentials };
  }
}
