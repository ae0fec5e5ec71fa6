import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CategoricalDistribution } from '../model/index.ts';
import { formatCountsCsv, parseStrictInteger, parseWeightsText, readTraceFile, readWeightsFile, writeCountsFile } from './counts-file.ts';
import { parseNumberOption } from './commands/numeric-options.ts';
import { UsageError } from './usage-error.ts';

// Item 4: strict, explicit inputs.

const entries = (map: Map<number, number>): [number, number][] => [...map.entries()].sort((a, b) => a[0] - b[0]);

describe('counts-file', () => {
  describe('parseWeightsText', () => {
    it('skips a header only when no field of the first line looks like a number', () => {
      expect(entries(parseWeightsText('value,count\n1,30\n4,10\n', 'counts', 'f'))).toEqual([
        [1, 30],
        [4, 10],
      ]);
      // The example: a malformed numeric first line was dropped as a "header" (loss 1.000).
      expect(() => parseWeightsText('1,3,4\n2,5\n', 'counts', 'f')).toThrow(/f line 1: expected 'value,count' \(two fields\), got '1,3,4'/);
      expect(() => parseWeightsText('x,3\n2,5\n', 'counts', 'f')).toThrow(/line 1: the value must be a non-negative decimal integer/);
    });

    it('takes counts only as strict decimal integers and points fractional weights to --pmf', () => {
      expect(() => parseWeightsText('7,7.5\n', 'counts', 'f')).toThrow(/a count must be a non-negative decimal integer \(units observed\), got '7\.5' \(fractional weights or probabilities: give the file with --pmf\)/);
      for (const bad of ['0x10', '1e3', '+5', '-1', '5 5']) expect(() => parseWeightsText(`${bad},1\n`, 'counts', 'f'), bad).toThrow(UsageError);
      for (const bad of ['0x10', '1e3', '-2']) expect(() => parseWeightsText(`1,${bad}\n`, 'counts', 'f'), bad).toThrow(UsageError);
      expect(() => parseWeightsText('{"1": 2.5}', 'counts', 'f')).toThrow(/a count must be a non-negative integer .* --pmf/);
    });

    it('accepts probabilities and decimal weights with --pmf', () => {
      expect(entries(parseWeightsText('value,probability\n1,0.25\n2,7.5e-1\n', 'pmf', 'f'))).toEqual([
        [1, 0.25],
        [2, 0.75],
      ]);
      expect(entries(parseWeightsText('{"3": 0.5, "4": 0.5}', 'pmf', 'f'))).toEqual([
        [3, 0.5],
        [4, 0.5],
      ]);
      expect(() => parseWeightsText('1,0x1\n', 'pmf', 'f')).toThrow(/a weight must be a non-negative decimal number, got '0x1'/);
    });

    it('reads a JSON array as per-unit counts', () => {
      expect(entries(parseWeightsText('[3, 5, 5, 7, 0]', 'counts', 'f'))).toEqual([
        [0, 1],
        [3, 1],
        [5, 2],
        [7, 1],
      ]);
      expect(() => parseWeightsText('[3, 2.5]', 'counts', 'f')).toThrow(/element 1 of the array must be a unit's iteration count/);
      expect(() => parseWeightsText('[3]', 'pmf', 'f')).toThrow(/a JSON array lists per-unit counts, which is --counts/);
    });

    it('says 2^53−1 is the limit for values above it', () => {
      expect(() => parseWeightsText('9007199254740993,1\n', 'counts', 'f')).toThrow(/at most 2\^53−1 = 9007199254740991/);
      expect(() => parseWeightsText('1,9007199254740993\n', 'counts', 'f')).toThrow(/at most 2\^53−1/);
      expect(parseStrictInteger('9007199254740991', 'v')).toBe(9007199254740991);
    });
  });

  describe('formatCountsCsv / writeCountsFile', () => {
    it('round-trips observed counts through the --counts format', () => {
      const directory = mkdtempSync(join(tmpdir(), 'ww-counts-'));
      const original = CategoricalDistribution.fromCounts(new Map([[0, 3], [7, 1234567], [19, 2]]));
      expect(formatCountsCsv(original)).toBe('value,count\n0,3\n7,1234567\n19,2\n');
      const path = join(directory, 'c.csv');
      writeCountsFile(path, original);
      const back = readWeightsFile(path, 'counts');
      expect(back.values).toEqual(original.values);
      expect(back.totalWeight).toBe(original.totalWeight);
      expect(readFileSync(path, 'utf8').split('\n')[0]).toBe('value,count');
      writeFileSync(join(directory, 'p.csv'), '1,0.5\n2,0.5\n');
      expect(readWeightsFile(join(directory, 'p.csv'), 'pmf').mean()).toBe(1.5);
    });
  });

  describe('parseNumberOption', () => {
    it('takes strict decimal syntax only', () => {
      expect(parseNumberOption('--units', '4096', { min: 1, integer: true })).toBe(4096);
      for (const bad of [' 5', '0x10', '1e3', '', '5 ', '+5']) expect(() => parseNumberOption('--units', bad, { min: 1, integer: true }), `'${bad}'`).toThrow(/--units must be a decimal integer ≥ 1/);
      expect(() => parseNumberOption('--units', '9007199254740993', { min: 1, integer: true })).toThrow(/above 2\^53−1/);
      expect(parseNumberOption('--peak', '2.5e-1', { min: 0, exclusiveMin: true })).toBe(0.25);
      expect(() => parseNumberOption('--peak', '0x1', { min: 0 })).toThrow(/--peak must be a decimal number ≥ 0, got '0x1'/);
    });
  });

  describe('readWeightsFile on the wrong kind of file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ww-counts-kind-'));

    it('recognises a frame file by its magic and points to --frames, without quoting its bytes', () => {
      const file = join(dir, 'run.wwf');
      // 'WWFR' then binary header bytes, as a frame file starts (protocol/ SPEC.md).
      writeFileSync(file, Buffer.from([0x57, 0x57, 0x46, 0x52, 1, 0, 0x80, 0xff, 0x00, 0x0a, 0x1b]));
      expect(() => readWeightsFile(file, 'counts')).toThrow(UsageError);
      expect(() => readWeightsFile(file, 'counts')).toThrow(/is a warpwatch frame file .*give it with --frames/);
    });

    it('points a one-column file of counts to --trace, and quotes a binary line only as printable characters', () => {
      const trace = join(dir, 'trace.csv');
      writeFileSync(trace, 'count\n3\n4\n');
      expect(() => readWeightsFile(trace, 'counts')).toThrow(/line 2: expected 'value,count' \(two fields\), got '3'; one count per line is a per-unit trace: give the file with --trace/);
      const binary = join(dir, 'binary.bin');
      writeFileSync(binary, Buffer.from([0x01, 0x02, 0xff, 0xfe, 0x41, 0x0a, 0x42]));
      let message = '';
      try {
        readWeightsFile(binary, 'counts');
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toMatch(/is not a text file \(its bytes are not UTF-8\): it takes JSON \{"value": count, \.\.\.\}, a JSON array of per-unit counts, or CSV lines value,count$/);
      expect(message).toMatch(/^[\x20-\x7e…'’{}":]*$/u);
    });

    it('says a file of NULs or other binary is not text (not "distribution is empty"), for --counts, --pmf and --trace alike, and echoes none of it', () => {
      const nuls = join(dir, 'zeros.bin');
      writeFileSync(nuls, Buffer.alloc(4096));
      expect(() => readWeightsFile(nuls, 'counts')).toThrow(/--counts file '.*zeros\.bin' is not a text file \(a NUL byte at offset 0\)/);
      expect(() => readWeightsFile(nuls, 'pmf')).toThrow(/--pmf file '.*' is not a text file \(a NUL byte at offset 0\): it takes JSON \{"value": weight, \.\.\.\} or CSV lines value,weight/);
      expect(() => readTraceFile(nuls)).toThrow(/--trace file '.*' is not a text file \(a NUL byte at offset 0\): it takes a JSON array of per-unit counts or one count per line/);
      const mixed = join(dir, 'mixed.bin');
      writeFileSync(mixed, Buffer.concat([Buffer.from('value,count\n1,3\n'), Buffer.from([0x00, 0x1b, 0x5b, 0x32, 0x4a])]));
      expect(() => readWeightsFile(mixed, 'counts')).toThrow(/a NUL byte at offset 16/);
    });
  });
});
