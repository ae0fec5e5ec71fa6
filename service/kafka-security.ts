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
 * here only, to be handed to kafkajs. Its one caller is the Kafka client factory
 * (kafka-client.ts `createKafkaClient`), which makes every kafkajs client of the project.
 *
 * @example kafkaClientSecurity(config.kafka) // { ssl: { ca: [...], rejectUnauthorized: true }, sasl: { mechanism: 'scram-sha-512', username, password } }
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

/** What a failed TLS handshake with a broker means, as Node's and OpenSSL's messages say it. */
const TLS_FAILURES: readonly { readonly pattern: RegExp; readonly reason: string }[] = [
  {
    pattern: /SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT|self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate/i,
    reason: "the broker's certificate is not signed by a CA this client trusts: set WARPWATCH_KAFKA_TLS_CA_FILE to the PEM of the CA that signed it",
  },
  {
    pattern: /ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate's altnames/i,
    reason: "the broker's certificate does not name the host this client connected to: use a broker address the certificate names (WARPWATCH_KAFKA_BROKERS, and the broker's advertised.listeners)",
  },
  { pattern: /CERT_HAS_EXPIRED|certificate has expired|CERT_NOT_YET_VALID|certificate is not yet valid/i, reason: "the broker's certificate has expired or is not valid yet: the broker needs a new certificate" },
  {
    pattern: /alert bad certificate|alert certificate required|alert handshake failure|alert unknown ca|ALERT_BAD_CERTIFICATE|ALERT_CERTIFICATE_REQUIRED|ALERT_UNKNOWN_CA/i,
    reason:
      'the broker refused this client during the TLS handshake (mutual TLS: no client certificate, or one it does not trust): set WARPWATCH_KAFKA_TLS_CERT_FILE and WARPWATCH_KAFKA_TLS_KEY_FILE to a certificate signed by a CA the broker trusts',
  },
  { pattern: /wrong version number|packet length too long|ERR_SSL_WRONG_VERSION_NUMBER/i, reason: 'the listener does not speak TLS: check the port, or set WARPWATCH_KAFKA_TLS=false for a PLAINTEXT listener' },
];

/**
 * Why a Kafka connection failed in its TLS handshake (untrusted CA, wrong host name, expired
 * certificate, client certificate refused, no TLS on the port), with what to change, or
 * undefined for any other error. Reads Node's error codes and messages along kafkajs'
 * `cause`/`originalError` chain, or a log line's text. The collector and the estimator report
 * it as WW_ERR_KAFKA_TLS (docs/security.md); nothing falls back to plaintext.
 *
 * @example kafkaTlsFailure(new Error('Connection error: certificate has expired')); // "the broker's certificate has expired ..."
 */
export function kafkaTlsFailure(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const text = typeof e === 'object' ? `${String((e as { message?: unknown }).message ?? '')} ${String((e as { code?: unknown }).code ?? '')}` : String(e);
    const found = TLS_FAILURES.find((failure) => failure.pattern.test(text));
    if (found !== undefined) return found.reason;
    e = typeof e === 'object' ? ((e as { cause?: unknown }).cause ?? (e as { originalError?: unknown }).originalError) : undefined;
  }
  return undefined;
}
