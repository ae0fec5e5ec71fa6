// The identity rules of contracts/stream-identity.ts: each concept checked once, and
// the parse functions the CLI uses raise WW_ERR_STREAM_IDENTITY with the flag, rule and value.
import { describe, expect, it } from 'vitest';
import {
  deviceNameProblem,
  deviceUuidProblem,
  groupSizeProblem,
  hostProblem,
  jobProblem,
  kernelProblem,
  labelProblem,
  labelValueProblem,
  parseDeviceSelector,
  parseGroupSize,
  parseHost,
  parseJob,
  parseKernel,
  parseLabel,
  parseSource,
  parseStreamName,
  streamNameProblem,
} from './stream-identity.ts';
import { StreamIdentityError } from './errors.ts';

describe('stream identity rules', () => {
  it('job: 1..255 UTF-8 bytes, no slash, well-formed', () => {
    expect(jobProblem('train-7')).toBeUndefined();
    expect(jobProblem('')).toBe('must not be empty');
    expect(jobProblem('a/b')).toBe("must not contain '/'");
    expect(jobProblem('x'.repeat(255))).toBeUndefined();
    expect(jobProblem('x'.repeat(256))).toBe('must be at most 255 UTF-8 bytes (it has 256)');
    // 'é' is 2 bytes, '€' 3, '𝄞' (a surrogate pair) 4: 127·2 + 1 = 255, 85·3 = 255, 64·4 = 256.
    expect(jobProblem('é'.repeat(127) + 'x')).toBeUndefined();
    expect(jobProblem('é'.repeat(128))).toBe('must be at most 255 UTF-8 bytes (it has 256)');
    expect(jobProblem('€'.repeat(85))).toBeUndefined();
    expect(jobProblem('𝄞'.repeat(64))).toBe('must be at most 255 UTF-8 bytes (it has 256)');
    expect(jobProblem('a\uD800b')).toMatch(/lone surrogate/);
  });

  it('kernel: a slash is allowed; stream names split at the first slash', () => {
    expect(kernelProblem('ns::k/v2')).toBeUndefined();
    expect(kernelProblem('')).toBe('must not be empty');
    expect(parseStreamName('--stream', 'job/ns::k/v2')).toEqual({ stream: 'job/ns::k/v2', job: 'job', kernel: 'ns::k/v2' });
    expect(streamNameProblem('noslash')).toBe("must be '<job>/<kernel>' (no '/' found)");
    expect(streamNameProblem('/k')).toBe("must be '<job>/<kernel>': its job must not be empty");
    expect(streamNameProblem('j/')).toBe("must be '<job>/<kernel>': its kernel must not be empty");
  });

  it('group size: a plain decimal integer 1..32', () => {
    expect([1, 32].map(groupSizeProblem)).toEqual([undefined, undefined]);
    expect([0, 33, 1.5, Number.NaN].map(groupSizeProblem)).toEqual(Array(4).fill('must be an integer 1..32'));
    expect(parseGroupSize('--n', '08')).toBe(8);
    for (const text of ['', ' 8', '8 ', '+8', '1e1', '0x10', '8.0', '33', '0']) {
      expect(() => parseGroupSize('--n', text), text).toThrow(`--n must be an integer 1..32, got '${text}'`);
    }
  });

  it('device: UUIDs in frame form; a selector also takes nvidia-smi form or a model name', () => {
    expect(deviceUuidProblem('5f2c0a9e-0000-4000-8000-00000000000a')).toBeUndefined();
    expect(deviceUuidProblem('5F2C0A9E-0000-4000-8000-00000000000A')).toMatch(/lowercase UUID/);
    expect(parseDeviceSelector('--device', 'GPU-5F2C0A9E-0000-4000-8000-00000000000A')).toBe('5f2c0a9e-0000-4000-8000-00000000000a');
    expect(parseDeviceSelector('--device', 'NVIDIA H100 80GB HBM3')).toBe('NVIDIA H100 80GB HBM3');
    expect(() => parseDeviceSelector('--device', '')).toThrow("--device must be a device UUID or model name: it must not be empty, got ''");
  });

  it('host and labels', () => {
    expect(hostProblem('node-7.example')).toBeUndefined();
    for (const bad of ['', 'node 7', 'a|b', 'a\tb']) expect(hostProblem(bad), JSON.stringify(bad)).toBeDefined();
    expect(parseLabel('--label', ' pod = trainer-0 ')).toEqual(['pod', 'trainer-0']);
    expect(parseLabel('--label', 'empty=')).toEqual(['empty', '']);
    expect(labelProblem('pod')).toBe('must be name=value');
    expect(labelProblem('9pod=x')).toBe('must be name=value: its name must match [A-Za-z_][A-Za-z0-9_.-]{0,63}');
    expect(labelProblem('pod=a\nb')).toBe('must be name=value: its value must not contain control characters (U+000A at character 2)');
    expect(labelProblem(`pod=${'v'.repeat(256)}`)).toBe('must be name=value: its value must be at most 255 UTF-8 bytes (it has 256)');
  });

  it('parse functions throw a StreamIdentityError (a RangeError with code WW_ERR_STREAM_IDENTITY)', () => {
    expect(parseSource('--source', 'cpu')).toBe('cpu');
    let caught: unknown;
    try {
      parseSource('--source', 'gpu');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StreamIdentityError);
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as StreamIdentityError).code).toBe('WW_ERR_STREAM_IDENTITY');
    expect((caught as Error).message).toBe("--source must be cuda or cpu, got 'gpu'");
  });

  // Every part of an identity ends up as an InfluxDB tag value and a Kafka header or key: a
  // control character there splits a line of line protocol (a newline starts a new point), and a
  // backslash before `,`, `=`, a space or the end cannot be stored by InfluxDB 1.8 (measured on
  // 1.8.10: a trailing backslash is refused as "invalid tag format"; docs/estimator.md "Tags").
  const CONTROLS = [
    ...Array.from({ length: 0x20 }, (_, c) => c),
    0x7f,
    ...Array.from({ length: 0x20 }, (_, c) => 0x80 + c),
  ].map((c) => String.fromCharCode(c));
  const PARTS: readonly [string, (text: string) => string | undefined][] = [
    ['job', jobProblem],
    ['kernel', kernelProblem],
    ['device name', deviceNameProblem],
    ['host', hostProblem],
    ['label value', labelValueProblem],
  ];

  it('no part may contain a control character: C0 U+0000–U+001F, DEL U+007F, C1 U+0080–U+009F', () => {
    expect(CONTROLS).toHaveLength(65);
    for (const [part, problem] of PARTS) {
      for (const control of CONTROLS) {
        const code = `U+${control.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
        expect(problem(`ab${control}c`), `${part} ${code}`).toBe(`must not contain control characters (${code} at character 3)`);
      }
      // The neighbours of the ranges are allowed: '~' (U+007E), U+00A0 (no-break space; a host has no whitespace), U+00FF.
      for (const fine of ['~', ...(part === 'host' ? [] : ['\u00a0']), '\u00ff', 'é', '€', '𝄞']) expect(problem(`a${fine}b`), `${part} ${JSON.stringify(fine)}`).toBeUndefined();
    }
    expect(labelProblem('pod=p\u0085')).toBe('must be name=value: its value must not contain control characters (U+0085 at character 2)');
    expect(() => parseKernel('--kernel', 'k\nzz')).toThrow("--kernel must not contain control characters (U+000A at character 2), got 'k\\u000azz'");
    expect(() => parseJob('--job', 'bs\u007f')).toThrow(StreamIdentityError);
    expect(() => parseDeviceSelector('--device', 'H100\r')).toThrow('--device must be a device UUID or model name: it must not contain control characters (U+000D at character 5)');
  });

  it("no part may have a backslash before ',', '=', a space or at its end; elsewhere it is allowed", () => {
    const backslashRule = (at: number): string => `must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character ${at}`;
    for (const [part, problem] of PARTS) {
      expect(problem('bs\\'), part).toBe(backslashRule(3));
      expect(problem('a\\\\'), part).toBe(backslashRule(3));
      expect(problem('a\\,b'), part).toBe(backslashRule(2));
      expect(problem('a\\=b'), part).toBe(backslashRule(2));
      for (const fine of ['a\\b', 'C:\\x\\y', 'a\\\\b', '\\é', 'a,b', 'a=b', '"q"']) expect(problem(fine), `${part} ${fine}`).toBeUndefined();
    }
    expect(kernelProblem('a\\ b')).toBe(backslashRule(2));
    expect(() => parseHost('--host', 'hostB\\')).toThrow(`--host ${backslashRule(6)}, got 'hostB\\'`);
    expect(labelProblem('pod=p\\')).toBe(`must be name=value: its value ${backslashRule(2)}`);
    expect(() => parseJob('--job', 'bs\\')).toThrow(`--job ${backslashRule(3)}, got 'bs\\'`);
  });
});
