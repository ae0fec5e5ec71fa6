import { describe, expect, it } from 'vitest';
import { divergencePatternBounds } from '../model/index.ts';
import { clockUnitOfCsv, parseDivergenceCsv } from './divergence-csv.ts';

describe('parseDivergenceCsv', () => {
  it('reads k patterns, explicit bounds, nested rows and ignores comments and extra columns', () => {
    const rows = parseDivergenceCsv('# comment\npattern,loop,k,bounds,cycles,device\na,single,2,,100,x\nb,nested,,4 4 3;2,200.5,x\n\n');
    expect(rows).toHaveLength(2);
    expect(rows[0]?.bounds).toEqual(divergencePatternBounds(2));
    expect(rows[1]).toMatchObject({ pattern: 'b', loop: 'nested', bounds: [4, 4, 3, 2], cycles: 200.5, line: 4 });
  });
  it('names the line and column of a problem', () => {
    expect(() => parseDivergenceCsv('loop,k,cycles\nsingle,3,abc\n')).toThrow(/line 2: cycles/);
    expect(() => parseDivergenceCsv('loop,k,cycles\ndouble,3,1\n')).toThrow(/line 2: loop must be/);
    expect(() => parseDivergenceCsv('loop,cycles\nsingle,1\n')).toThrow(/'k' or 'bounds'/);
    expect(() => parseDivergenceCsv('loop,k,cycles\nsingle,40,1\n')).toThrow(/line 2: k must be an integer 0..31/);
    expect(() => parseDivergenceCsv('')).toThrow(/empty/);
  });
});

describe('clockUnitOfCsv', () => {
  it('reads ns for the CPU backend, cycles for CUDA or without the columns, and refuses a mix', () => {
    expect(clockUnitOfCsv('pattern,loop,k,bounds,cycles,clock_hz,source\nsingle-k1,single,1,,500,1000000000,cpu\n')).toBe('ns');
    expect(clockUnitOfCsv('pattern,loop,k,bounds,cycles,clock_hz,source\nsingle-k1,single,1,,500,1500000000,cuda\n')).toBe('cycles');
    expect(clockUnitOfCsv('pattern,loop,k,bounds,cycles\nsingle-k1,single,1,,500\n')).toBe('cycles');
    expect(() => clockUnitOfCsv('loop,k,cycles,clock_hz,source\nsingle,1,5,1000000000,cpu\nsingle,1,5,1500000000,cuda\n')).toThrow(/mixes clock units/);
  });
});
