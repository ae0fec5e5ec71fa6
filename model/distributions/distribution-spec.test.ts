import { describe, expect, it } from 'vitest';
import { parseDistributionSpec } from './distribution-spec.ts';
import { formatDistributionSpec } from './family.ts';
import { ModelError } from '../errors.ts';

describe('parseDistributionSpec', () => {
  it('reads every family, ignoring whitespace and case', () => {
    expect(parseDistributionSpec('binom(10,0.5)')).toEqual({ family: 'binom', trials: 10, p: 0.5 });
    expect(parseDistributionSpec(' GEO( 0.05 ) ')).toEqual({ family: 'geo', p: 0.05 });
    expect(parseDistributionSpec('pois(4)')).toEqual({ family: 'pois', lambda: 4 });
    expect(parseDistributionSpec('unif(1,6)')).toEqual({ family: 'unif', low: 1, high: 6 });
    expect(parseDistributionSpec('nbinom(5,0.3)')).toEqual({ family: 'nbinom', r: 5, p: 0.3 });
    expect(parseDistributionSpec('cat(1:2, 5:1)')).toEqual({ family: 'cat', entries: [[1, 2], [5, 1]] });
    expect(parseDistributionSpec('pois(1e1)')).toEqual({ family: 'pois', lambda: 10 });
  });
  it('round-trips through formatDistributionSpec', () => {
    for (const text of ['binom(10,0.5)', 'geo(0.05)', 'pois(4)', 'unif(1,6)', 'nbinom(5,0.3)', 'cat(1:2,5:1)']) {
      expect(formatDistributionSpec(parseDistributionSpec(text))).toBe(text);
    }
  });
  const bad: [string, RegExp][] = [
    ['', /cannot read distribution ''; expected binom\(N,p\), geo\(p\), pois\(lambda\), unif\(a,b\), nbinom\(r,p\) or cat\(v:w,v:w,...\)/],
    ['geo', /cannot read distribution 'geo'/],
    ['normal(0,1)', /unknown distribution family 'normal'; expected binom\(N,p\)/],
    ['geo()', /geo\(p\) takes 1 parameter, got 0/],
    ['binom(10)', /binom\(N,p\) takes 2 parameters, got 1/],
    ['geo(1.5)', /geo\(p\): p must be a number in \(0, 1\], got 1\.5/],
    ['geo(0)', /geo\(p\): p must be a number in \(0, 1\], got 0/],
    ['geo(abc)', /geo\(p\): p must be a number, got 'abc'/],
    ['geo(0x10)', /geo\(p\): p must be a number, got '0x10'/],
    ['binom(2.5,0.5)', /binom\(N,p\): N must be an integer 0\.\.\d+, got 2\.5/],
    ['binom(10,-0.1)', /binom\(N,p\): p must be a number in \[0, 1\], got -0\.1/],
    ['pois(-1)', /pois\(lambda\): lambda must be a number in \[0, 1e6\], got -1/],
    ['unif(5,2)', /unif\(a,b\): a must be <= b, got a=5, b=2/],
    ['unif(-1,2)', /unif\(a,b\): a must be an integer/],
    ['nbinom(0,0.5)', /nbinom\(r,p\): r must be a number in \(0, 1e6\], got 0/],
    ['nbinom(5,1.2)', /nbinom\(r,p\): p must be a number in \(0, 1\], got 1\.2/],
    ['cat()', /cat\(v:w,...\): at least one value:weight entry is required/],
    ['cat(1)', /cat\(v:w,...\): each entry must be value:weight, got '1'/],
    ['cat(1:-2)', /cat\(v:w,...\): weights must be finite and non-negative, got -2 for value 1/],
    ['cat(-1:2)', /cat\(v:w,...\): values must be non-negative integers, got -1/],
    ['cat(1.5:2)', /cat\(v:w,...\): values must be non-negative integers, got 1\.5/],
    ['cat(1:0,2:0)', /cat\(v:w,...\): weights are all zero/],
  ];
  for (const [text, message] of bad) {
    it(`rejects '${text}' with a message naming the problem`, () => {
      expect(() => parseDistributionSpec(text)).toThrow(message);
      expect(() => parseDistributionSpec(text)).toThrow(ModelError);
      expect(() => parseDistributionSpec(text)).toThrow(RangeError);
    });
  }
});
