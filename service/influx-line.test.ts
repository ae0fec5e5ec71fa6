import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { fullCollection } from './heap-target.ts';
import { encodeLineProtocol, InfluxLineError, lineProtocolTextProblem, type InfluxPoint } from './influx-line.ts';

describe('encodeLineProtocol', () => {
  it('sorts tags, leaves out empty ones, writes integers as floats, quotes strings and escapes per the line-protocol reference', () => {
    const line = encodeLineProtocol({
      measurement: 'my measure,x',
      tags: { zone: 'a b', app: 'k=v,w', empty: '' },
      fields: { count: 5, ratio: -0.25, note: 'say "hi" \\o/' },
      timestampMillis: 1_700_000_000_000.4,
    });
    expect(line).toBe('my\\ measure\\,x,app=k\\=v\\,w,zone=a\\ b count=5.0,ratio=-0.25,note="say \\"hi\\" \\\\o/" 1700000000000');
  });

  it('writes a shared frozen tags object the same on every point, and re-encodes tags objects that are not frozen', () => {
    const shared = Object.freeze({ stream: 'j/k', host: 'a b' });
    const first = encodeLineProtocol({ measurement: 'm', tags: shared, fields: { f: 1 }, timestampMillis: 1 });
    const second = encodeLineProtocol({ measurement: 'n', tags: shared, fields: { g: 2.5, big: 1e21 }, timestampMillis: 2 });
    expect(first).toBe('m,host=a\\ b,stream=j/k f=1.0 1');
    expect(second).toBe('n,host=a\\ b,stream=j/k g=2.5,big=1e+21 2');
    const mutable: Record<string, string> = { host: 'x' };
    expect(encodeLineProtocol({ measurement: 'm', tags: mutable, fields: { f: -0 }, timestampMillis: 3 })).toBe('m,host=x f=0.0 3');
    mutable.host = 'y';
    expect(encodeLineProtocol({ measurement: 'm', tags: mutable, fields: { f: 1 }, timestampMillis: 3 })).toBe('m,host=y f=1.0 3');
  });

  it('writes a backslash in a tag as it is (InfluxDB 1.8 keeps one that escapes nothing) and a string field value with \\\\ and \\"', () => {
    // Expected lines written by hand from the line-protocol reference and checked on InfluxDB 1.8.10
    // (test/integration/influx-line.int.test.ts round-trips them).
    const line = encodeLineProtocol({
      measurement: 'm',
      tags: { host: 'C:\\x\\y', kernel: 'a\\\\b, c=d', label: 'é\\ü' },
      fields: { message: 'ends in \\ and "q"\nnext line' },
      timestampMillis: 1,
    });
    expect(line).toBe('m,host=C:\\x\\y,kernel=a\\\\b\\,\\ c\\=d,label=é\\ü message="ends in \\\\ and \\"q\\"\nnext line" 1');
  });

  it('refuses a point whose tag InfluxDB cannot store unchanged: a trailing backslash, one before , = or space, a control character', () => {
    const point = (value: string): Parameters<typeof encodeLineProtocol>[0] => ({ measurement: 'm', tags: { host: value }, fields: { f: 1 }, timestampMillis: 1 });
    for (const [value, why] of [
      ['hostB\\', "a '\\' before ',', '=', a space or at the end"],
      ['p\\,q', "a '\\' before ',', '=', a space or at the end"],
      ['p\\ q', "a '\\' before ',', '=', a space or at the end"],
      ['p\\=q', "a '\\' before ',', '=', a space or at the end"],
      ['k\nzz', 'a control character (U+000A)'],
      ['k\u0085', 'a control character (U+0085)'],
      ['k\u007f', 'a control character (U+007F)'],
    ] as const) {
      expect(lineProtocolTextProblem(value)).toBe(why);
      expect(() => encodeLineProtocol(point(value)), JSON.stringify(value)).toThrow(new InfluxLineError(`tag host ${JSON.stringify(value)} cannot be written to InfluxDB: it has ${why}`));
    }
    expect(() => encodeLineProtocol({ measurement: 'm', tags: {}, fields: { 'f\\': 1 }, timestampMillis: 1 })).toThrow(InfluxLineError);
    expect(lineProtocolTextProblem('a\\b')).toBeUndefined();
  });
});

describe('encodeLineProtocol (memory)', () => {
  it('returns flat lines: a buffered window line holds its text, not the pieces it was built from', () => {
    const collect = fullCollection();
    expect(collect).toBeTypeOf('function');
    const tags = Object.freeze({ stream: 'job/kernel', job: 'job', kernel: 'kernel', device: 'NVIDIA H100', n: '32', source: 'cuda' });
    const point = (i: number): InfluxPoint => ({
      measurement: 'warpwatch_window',
      tags,
      // 20 fields, as a window point has: the line is ~480 characters.
      fields: Object.fromEntries(Array.from({ length: 20 }, (_, f) => [`field_number_${f}`, i + f / 7])),
      timestampMillis: 1_700_000_000_000 + i,
    });
    const count = 20_000;
    collect!();
    const before = getHeapStatistics().used_heap_size;
    const lines = Array.from({ length: count }, (_, i) => encodeLineProtocol(point(i)));
    collect!();
    const perLine = (getHeapStatistics().used_heap_size - before) / count;
    const characters = lines.reduce((sum, line) => sum + line.length, 0) / count;
    expect(characters).toBeGreaterThan(400);
    // A flat one-byte string: its characters + a 16-byte header, + 8 for its slot in the array;
    // the tree of pieces the line was built from held ~4× that (3.0 KB a line, measured unflattened).
    expect(perLine).toBeLessThan(characters + 100);
  });
});
