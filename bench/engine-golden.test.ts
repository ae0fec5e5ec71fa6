import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GOLDEN_PATH, goldenOutputs } from './engine-golden.ts';

// The golden file was captured from the engine before its hot path was optimised
// (docs/estimator.md, Performance): every later change must reproduce it byte for byte.
describe('estimator engine golden outputs', () => {
  it('reproduces the committed points, distribution records, alerts and outcomes byte for byte', () => {
    const expected = readFileSync(GOLDEN_PATH, 'utf8');
    const actual = goldenOutputs();
    // Compare line by line first: a failure names the first line that differs instead of a 1.7 MB diff.
    const expectedLines = expected.split('\n');
    const actualLines = actual.split('\n');
    const first = expectedLines.findIndex((line, i) => line !== actualLines[i]);
    expect(first === -1 ? undefined : { line: first + 1, expected: expectedLines[first]?.slice(0, 400), actual: actualLines[first]?.slice(0, 400) }).toBeUndefined();
    expect(actual.length).toBe(expected.length);
    expect(actual === expected).toBe(true);
    // The scenarios cover what an optimisation could break: alerts, dedupe, late, rejected, eviction, idle close.
    expect(expected).toContain('"outcome":"duplicate"');
    expect(expected).toContain('"outcome":"late"');
    expect(expected).toContain('"outcome":"rejected"');
    expect(expected).toContain('\\"kind\\":\\"rising_imbalance\\"');
    expect(expected).toContain('\\"kind\\":\\"drift\\"');
    expect(expected).toMatch(/"tick":\d+,"closed":[1-9]/);
  });
});
