import { describe, expect, it } from 'vitest';
import { kafkaTlsFailure } from './kafka-security.ts';
import { isUnreachableError } from './server-hint.ts';

/** kafkajs' errors as a real broker's bad listeners produced them (test/integration/kafka-tls.int.test.ts). */
const connectionError = (message: string, code: string): Error => Object.assign(new Error(`Connection error: ${message}`), { name: 'KafkaJSConnectionError', code });
const retriesExceeded = (cause: Error): Error => Object.assign(new Error(cause.message), { name: 'KafkaJSNumberOfRetriesExceeded', cause });

describe('kafkaTlsFailure', () => {
  it.each([
    ['self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN', /not signed by a CA this client trusts/],
    ['unable to verify the first certificate', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', /not signed by a CA this client trusts/],
    ["Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: ", 'ERR_TLS_CERT_ALTNAME_INVALID', /does not name the host/],
    ['certificate has expired', 'CERT_HAS_EXPIRED', /has expired/],
    ['error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:SSL alert number 42', 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE', /refused this client during the TLS handshake/],
    ['error:0A00010B:SSL routines::wrong version number', 'ERR_SSL_WRONG_VERSION_NUMBER', /does not speak TLS/],
  ])('names the cause of "%s" through kafkajs retry wrappers', (message, code, reason) => {
    expect(kafkaTlsFailure(retriesExceeded(connectionError(message, code)))).toMatch(reason);
    expect(kafkaTlsFailure(`Connection error: ${message}`)).toMatch(reason);
    expect(isUnreachableError(retriesExceeded(connectionError(message, code)))).toBe(false);
  });

  it('leaves other failures alone (an outage stays an outage)', () => {
    expect(kafkaTlsFailure(retriesExceeded(connectionError('connect ECONNREFUSED 127.0.0.1:19092', 'ECONNREFUSED')))).toBeUndefined();
    expect(kafkaTlsFailure(new Error('SASL SCRAM SHA512 authentication failed'))).toBeUndefined();
    expect(isUnreachableError(retriesExceeded(connectionError('connect ECONNREFUSED 127.0.0.1:19092', 'ECONNREFUSED')))).toBe(true);
  });
});
