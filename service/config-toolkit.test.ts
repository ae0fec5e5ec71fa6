import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { ConfigFields } from '../contracts/index.ts';
import { ConfigReader, describeAccepted, formatByteSize, formatConfigProblem, readSecretFile } from './config-toolkit.ts';
import { Secret } from './secret.ts';

const FIELDS = {
  count: { kind: 'integer', env: 'WW_T_COUNT', flag: '--count', min: 1, max: 10, default: 3, doc: 'a count' },
  port: { kind: 'integer', env: 'WW_T_PORT', min: 0, max: 65_535, default: 80, offWord: true, doc: 'a port' },
  ratio: { kind: 'number', env: 'WW_T_RATIO', min: 0, max: 1, doc: 'a ratio' },
  size: { kind: 'bytes', env: 'WW_T_SIZE', min: 1024, max: 1024 ** 3, default: 4096, doc: 'a size' },
  mode: { kind: 'octal', env: 'WW_T_MODE', default: 0o600, doc: 'a mode' },
  on: { kind: 'boolean', env: 'WW_T_ON', default: false, doc: 'a switch' },
  pick: { kind: 'choice', env: 'WW_T_PICK', flag: '--pick', values: ['a', 'b'], default: 'a', doc: 'a choice' },
  name: { kind: 'text', env: 'WW_T_NAME', pattern: /^[a-z]{1,8}$/, patternText: 'a lower-case name of 1..8 letters', doc: 'a name' },
  url: { kind: 'url', env: 'WW_T_URL', offWord: true, default: 'http://localhost:1', doc: 'a URL' },
  hosts: { kind: 'list', env: 'WW_T_HOSTS', item: /^[a-z]+:\d+$/, itemText: 'host:port', minItems: 1, default: ['a:1'], doc: 'hosts' },
  sizes: { kind: 'integer-list', env: 'WW_T_SIZES', min: 1, max: 32, default: [1, 2], offWord: true, doc: 'sizes' },
  token: { kind: 'secret', env: 'WW_T_TOKEN', fileEnv: 'WW_T_TOKEN_FILE', doc: 'a token' },
  cert: { kind: 'file', env: 'WW_T_CERT', doc: 'a certificate' },
  tags: { kind: 'family', env: 'WW_T_TAG_<NAME>', prefix: 'WW_T_TAG_', doc: 'tags' },
} as const satisfies ConfigFields;

const files: Record<string, string> = { '/run/token': 'tok-file\n', '/run/cert.pem': 'CERT\n' };
const readTextFile = (path: string): string => {
  const text = files[path];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return text;
};

describe('ConfigReader', () => {
  it('reads every kind from the environment, with typed values', () => {
    const reader = new ConfigReader({
      env: {
        WW_T_COUNT: ' 7 ',
        WW_T_PORT: 'off',
        WW_T_RATIO: '0.25',
        WW_T_SIZE: '2MiB',
        WW_T_MODE: '0640',
        WW_T_ON: 'yes',
        WW_T_PICK: 'B',
        WW_T_NAME: 'abc',
        WW_T_URL: 'https://x:8086',
        WW_T_HOSTS: 'x:1, y:2',
        WW_T_SIZES: '4,8',
        WW_T_TOKEN_FILE: '/run/token',
        WW_T_CERT: '/run/cert.pem',
        WW_T_TAG_POD: 'p-0',
        WW_T_TAG_NODE: 'n-1',
      },
      readTextFile,
    });
    const values = reader.read(FIELDS);
    expect(reader.problems).toEqual([]);
    const { token, ...plain } = values;
    expect(plain).toEqual({
      count: 7,
      port: undefined,
      ratio: 0.25,
      size: 2 * 1024 * 1024,
      mode: 0o640,
      on: true,
      pick: 'b',
      name: 'abc',
      url: 'https://x:8086',
      hosts: ['x:1', 'y:2'],
      sizes: [4, 8],
      cert: 'CERT\n',
      tags: [
        { env: 'WW_T_TAG_NODE', name: 'node', value: 'n-1' },
        { env: 'WW_T_TAG_POD', name: 'pod', value: 'p-0' },
      ],
    });
    expect(token?.reveal()).toBe('tok-file');
  });

  it('uses the defaults when nothing is set, an empty or blank variable counting as unset', () => {
    const reader = new ConfigReader({ env: { WW_T_COUNT: '', WW_T_PICK: '  ' } });
    const values = reader.read(FIELDS);
    expect(reader.problems).toEqual([]);
    expect(values).toMatchObject({ count: 3, port: 80, ratio: undefined, size: 4096, mode: 0o600, on: false, pick: 'a', name: undefined, url: 'http://localhost:1' });
    expect(values.hosts).toEqual(['a:1']);
    expect(Object.isFrozen(values.hosts)).toBe(true);
    expect(values.token).toBeUndefined();
    expect(values.tags).toEqual([]);
  });

  it('lets a flag win over the variable and names the flag in its problem', () => {
    const reader = new ConfigReader({ env: { WW_T_COUNT: '2', WW_T_PICK: 'b' }, flags: { count: '9', pick: 'c' } });
    expect(reader.readField('count', FIELDS.count)).toBe(9);
    expect(reader.readField('pick', FIELDS.pick)).toBe('a');
    expect(reader.problems).toEqual([{ name: '--pick', value: 'c', why: 'must be one of a|b' }]);
  });

  it('reports every bad field together, each with its name, value and why, and falls back to the default', () => {
    const reader = new ConfigReader({
      env: {
        WW_T_COUNT: '11',
        WW_T_PORT: '1.5',
        WW_T_RATIO: 'NaN',
        WW_T_SIZE: '1 TB',
        WW_T_MODE: '999',
        WW_T_ON: 'maybe',
        WW_T_NAME: 'ABC',
        WW_T_URL: 'ftp://x',
        WW_T_HOSTS: 'x:1,nope',
        WW_T_SIZES: '1,64',
        WW_T_TOKEN: 'direct',
        WW_T_TOKEN_FILE: '/run/token',
        WW_T_CERT: '/missing.pem',
      },
      readTextFile,
    });
    const values = reader.read(FIELDS);
    expect(reader.problems).toEqual([
      { name: 'WW_T_COUNT', value: '11', why: 'must be an integer 1..10' },
      { name: 'WW_T_PORT', value: '1.5', why: 'must be an integer 0..65535 or "off"' },
      { name: 'WW_T_RATIO', value: 'NaN', why: 'must be a number 0..1' },
      { name: 'WW_T_SIZE', value: '1 TB', why: 'must be a size 1 KiB..1 GiB (suffixes KiB, MiB, GiB, kB, MB, GB allowed)' },
      { name: 'WW_T_MODE', value: '999', why: 'must be octal permission bits like 0660' },
      { name: 'WW_T_ON', value: 'maybe', why: 'must be true or false' },
      { name: 'WW_T_NAME', value: 'ABC', why: 'must be a lower-case name of 1..8 letters' },
      { name: 'WW_T_URL', value: 'ftp://x', why: 'must be an http(s) URL or "off"' },
      { name: 'WW_T_HOSTS', value: 'nope', why: 'entries must be host:port' },
      { name: 'WW_T_SIZES', value: '1,64', why: 'must be a comma list of integers 1..32 or "off"' },
      { name: 'WW_T_TOKEN', why: 'and WW_T_TOKEN_FILE are both set; set only one' },
      { name: 'WW_T_CERT', value: '/missing.pem', why: 'names a file that cannot be read (ENOENT)' },
    ]);
    expect(values).toMatchObject({ count: 3, port: 80, size: 4096, mode: 0o600, on: false, url: 'http://localhost:1' });
    expect(values.hosts).toEqual(['a:1']);
    expect(values.sizes).toEqual([1, 2]);
  });

  it('never puts a credential into a problem or a printout', () => {
    const reader = new ConfigReader({ env: { WW_T_TOKEN: 's3cret', WW_T_TOKEN_FILE: '/run/token' }, readTextFile });
    reader.read({ token: FIELDS.token });
    expect(reader.problems.map(formatConfigProblem).join('\n')).not.toContain('s3cret');
    const ok = new ConfigReader({ env: { WW_T_TOKEN: 's3cret' } }).read({ token: FIELDS.token });
    expect([JSON.stringify(ok), inspect(ok, { depth: 5 })].join('\n')).not.toContain('s3cret');
  });

  it('reads "off" as the empty list for lists that take it', () => {
    expect(new ConfigReader({ env: { WW_T_SIZES: 'OFF' } }).readField('sizes', FIELDS.sizes)).toEqual([]);
    const reader = new ConfigReader({ env: { WW_T_HOSTS: ' , ' } });
    expect(reader.readField('hosts', FIELDS.hosts)).toEqual(['a:1']);
    expect(reader.problems).toEqual([{ name: 'WW_T_HOSTS', value: ' , ', why: 'must list at least 1 host:port' }]);
  });

  it('applies a text field\'s own rule (check) to the trimmed value, after pattern and length, and says it in describeAccepted', () => {
    const host = { kind: 'text', env: 'WW_T_HOST', flag: '--host', check: (v: string) => (v.includes('|') ? 'must not contain |' : undefined), checkText: 'a name without |', doc: 'host' } as const;
    const reader = new ConfigReader({ env: { WW_T_HOST: ' a|b ' } });
    expect(reader.readField('host', host)).toBeUndefined(); // the default (none) after a problem
    expect(reader.problems).toEqual([{ name: 'WW_T_HOST', value: ' a|b ', why: 'must not contain |' }]);
    expect(new ConfigReader({ env: {}, flags: { host: ' node7 ' } }).readField('host', host)).toBe('node7');
    expect(describeAccepted(host)).toBe('a name without |');
  });

  it('says whether a field is set and which name a problem would carry', () => {
    const reader = new ConfigReader({ env: { WW_T_TOKEN_FILE: '/x', WW_T_COUNT: '' }, flags: { count: '4' } });
    expect(reader.isSet('token', FIELDS.token)).toBe(true);
    expect(reader.isSet('name', FIELDS.name)).toBe(false);
    expect(reader.nameOf('count', FIELDS.count)).toBe('--count');
    expect(reader.nameOf('port', FIELDS.port)).toBe('WW_T_PORT');
  });
});

describe('formatConfigProblem', () => {
  it('writes name, why and the value, cutting long values', () => {
    expect(formatConfigProblem({ name: '--partitions', value: '0', why: 'must be an integer 1..10000' })).toBe('--partitions must be an integer 1..10000, got "0"');
    expect(formatConfigProblem({ name: 'X', why: 'must be set' })).toBe('X must be set');
    expect(formatConfigProblem({ name: 'X', value: 'y'.repeat(201), why: 'is long' })).toBe(`X is long, got "${'y'.repeat(200)}…" (201 characters)`);
  });
});

describe('describeAccepted and formatByteSize', () => {
  it('say sizes in binary units when they are whole', () => {
    expect(formatByteSize(64 * 1024)).toBe('64 KiB');
    expect(formatByteSize(3 * 1024 ** 3)).toBe('3 GiB');
    expect(formatByteSize(1000)).toBe('1000 B');
    expect(describeAccepted(FIELDS.size)).toBe('a size 1 KiB..1 GiB (suffixes KiB, MiB, GiB, kB, MB, GB allowed)');
    expect(describeAccepted(FIELDS.hosts)).toBe('a comma list of host:port');
  });
});

describe('readSecretFile', () => {
  it('reads the file again as a Secret without its trailing newline, and throws when it is gone', () => {
    const directory = mkdtempSync(join(tmpdir(), 'ww-secret-file-'));
    try {
      const file = join(directory, 'token');
      writeFileSync(file, 'user:first\n');
      const first = readSecretFile(file);
      expect(first).toBeInstanceOf(Secret);
      expect(first.reveal()).toBe('user:first');
      expect(inspect(first)).toBe('[redacted]');
      writeFileSync(file, 'user:second');
      expect(readSecretFile(file).reveal()).toBe('user:second');
      rmSync(file);
      expect(() => readSecretFile(file)).toThrow(/ENOENT/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
