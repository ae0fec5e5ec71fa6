import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeployError } from '../errors.ts';

/**
 * Certificates and keys of the local stack's TLS listeners, all generated on this machine with
 * openssl (nothing downloaded): a test CA, the broker's certificate for `127.0.0.1`, the same
 * broker key certified for another host name and with validity in the past (the failure cases
 * of docs/security.md), a client certificate for mutual TLS, and a second CA nobody trusts.
 * Paths are absolute; private keys are mode 0600.
 */
export interface LocalTlsMaterial {
  readonly directory: string;
  /** PEM of the CA that signed every certificate below except `otherCaFile`'s. */
  readonly caFile: string;
  /** PEM of an unrelated CA (an "unknown CA" for clients that trust it instead). */
  readonly otherCaFile: string;
  /** PKCS#12 keystores of the broker (password `keystorePasswordFile`), one per server certificate. */
  readonly serverKeystore: string;
  /** Certified for `wrong-host.invalid` only: a client connecting to 127.0.0.1 must refuse it. */
  readonly wrongHostKeystore: string;
  /** Valid from 2020-01-01 to 2020-01-02: expired. */
  readonly expiredKeystore: string;
  /** Password of the keystores (random per directory). */
  readonly keystorePassword: string;
  /** PEM client certificate and its unencrypted PEM key (mode 0600), for mutual TLS. */
  readonly clientCertFile: string;
  readonly clientKeyFile: string;
}

const openssl = (args: readonly string[], cwd: string): void => {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n').at(-1) ?? '';
    const missing = (error as { code?: unknown }).code === 'ENOENT';
    throw new DeployError(
      missing ? 'WW_ERR_STACK_TOOL_MISSING' : 'WW_ERR_STACK_INSTALL',
      missing ? 'openssl is not installed; it generates the local TLS certificates' : `openssl ${args[0] ?? ''} failed in ${cwd}: ${stderr}`,
    );
  }
};

const CA_CONFIG = (directory: string): string =>
  [
    '[ ca ]',
    'default_ca = local',
    '[ local ]',
    `dir = ${directory}`,
    `database = ${join(directory, 'index.txt')}`,
    `new_certs_dir = ${join(directory, 'issued')}`,
    `serial = ${join(directory, 'serial')}`,
    'default_md = sha256',
    'policy = any',
    'copy_extensions = copy',
    'unique_subject = no',
    '[ any ]',
    'commonName = supplied',
    '',
  ].join('\n');

/**
 * Creates (once per `directory`; reused when complete) the TLS material of the local stack.
 * The server certificates name `IP:127.0.0.1` and `DNS:localhost`, except the wrong-host one.
 *
 * @throws DeployError WW_ERR_STACK_TOOL_MISSING without openssl, WW_ERR_STACK_INSTALL when it fails.
 * @example const tls = ensureLocalTlsMaterial('/tmp/ww/tls'); readFileSync(tls.caFile, 'utf8');
 */
export function ensureLocalTlsMaterial(directory: string): LocalTlsMaterial {
  const d = (name: string): string => join(directory, name);
  const passwordFile = d('keystore-password');
  const material = (password: string): LocalTlsMaterial => ({
    directory,
    caFile: d('ca.pem'),
    otherCaFile: d('other-ca.pem'),
    serverKeystore: d('server.p12'),
    wrongHostKeystore: d('wrong-host.p12'),
    expiredKeystore: d('expired.p12'),
    keystorePassword: password,
    clientCertFile: d('client.pem'),
    clientKeyFile: d('client.key'),
  });
  if (existsSync(d('complete'))) return material(readFileSync(passwordFile, 'utf8'));

  rmSync(directory, { recursive: true, force: true });
  mkdirSync(d('issued'), { recursive: true, mode: 0o700 });
  writeFileSync(d('index.txt'), '');
  writeFileSync(d('serial'), `${randomBytes(8).toString('hex')}\n`);
  writeFileSync(d('ca.cnf'), CA_CONFIG(directory));
  const password = randomBytes(18).toString('base64url');
  writeFileSync(passwordFile, password, { mode: 0o600 });

  const selfSigned = (name: string, subject: string): void =>
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.pem`, '-days', '3650', '-subj', subject, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'], directory);
  selfSigned('ca', '/CN=warpwatch local test CA');
  selfSigned('other-ca', '/CN=warpwatch unrelated CA');

  const issue = (name: string, subject: string, altNames: string, extendedUsage: string, dates: readonly string[]): void => {
    openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject, '-addext', `subjectAltName=${altNames}`, '-addext', `extendedKeyUsage=${extendedUsage}`], directory);
    openssl(['ca', '-batch', '-notext', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-in', `${name}.csr`, '-out', `${name}.pem`, ...dates], directory);
    chmodSync(d(`${name}.key`), 0o600);
  };
  const valid = ['-days', '825'];
  issue('server', '/CN=127.0.0.1', 'IP:127.0.0.1,DNS:localhost', 'serverAuth', valid);
  issue('wrong-host', '/CN=wrong-host.invalid', 'DNS:wrong-host.invalid', 'serverAuth', valid);
  issue('expired', '/CN=127.0.0.1', 'IP:127.0.0.1,DNS:localhost', 'serverAuth', ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z']);
  issue('client', '/CN=warpwatch-client', 'DNS:warpwatch-client', 'clientAuth', valid);

  for (const name of ['server', 'wrong-host', 'expired']) {
    openssl(['pkcs12', '-export', '-in', `${name}.pem`, '-inkey', `${name}.key`, '-certfile', 'ca.pem', '-name', 'broker', '-passout', `file:${passwordFile}`, '-out', `${name}.p12`], directory);
    chmodSync(d(`${name}.p12`), 0o600);
  }
  for (const key of ['ca.key', 'other-ca.key']) chmodSync(d(key), 0o600);
  writeFileSync(d('complete'), `${new Date().toISOString()}\n`);
  return material(password);
}
