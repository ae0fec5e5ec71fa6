import { describe, expect, it } from 'vitest';
import {
  DIVERGENCE_ARCHITECTURES,
  divergenceArchitecture,
  divergencePatternBounds,
  extendedMeasuredLoss,
  predictDivergenceCycles,
} from './divergence-cost.ts';

describe('divergencePatternBounds', () => {
  it('builds (32,…,32,31,…,32−k)', () => {
    expect(divergencePatternBounds(0)).toEqual(new Array(32).fill(32));
    const b = divergencePatternBounds(3);
    expect(b.slice(0, 29)).toEqual(new Array(29).fill(32));
    expect(b.slice(29)).toEqual([31, 30, 29]);
    expect(divergencePatternBounds(2, 4)).toEqual([4, 4, 3, 2]);
  });
  it('rejects k outside 0..lanes−1', () => {
    expect(() => divergencePatternBounds(32)).toThrow(/k must be an integer 0..31/);
    expect(() => divergencePatternBounds(-1)).toThrow(RangeError);
  });
});

describe('divergenceArchitecture', () => {
  it('returns the published presets', () => {
    expect(divergenceArchitecture('Kepler')).toMatchObject({ deltaCycles: 32, spillCycles: 84 });
    expect(divergenceArchitecture('maxwell')).toMatchObject({ deltaCycles: 26, spillCycles: 176 });
    expect(DIVERGENCE_ARCHITECTURES.generic.deltaCycles).toBe(29);
  });
  it('names the known presets on a miss', () => {
    expect(() => divergenceArchitecture('volta')).toThrow(/kepler, maxwell, generic/);
  });
});

describe('predictDivergenceCycles', () => {
  it('adds δ per diverging exit and the spill cost per spill', () => {
    // k = 20: 20 exits, 21 tokens → spills = ceil((21 − 16)/4) = 2.
    const p = predictDivergenceCycles({ bounds: divergencePatternBounds(20) }, { ...DIVERGENCE_ARCHITECTURES.kepler, iterationCycles: 10, overheadCycles: 7 });
    expect(p.divergenceCycles).toBe(20 * 32);
    expect(p.spillCycles).toBe(2 * 84);
    expect(p.baseCycles).toBe(32 * 10 + 7);
    expect(p.totalCycles).toBe(327 + 640 + 168);
  });
  it('leaves the base and total undefined without T', () => {
    const p = predictDivergenceCycles({ bounds: [3, 2] }, DIVERGENCE_ARCHITECTURES.maxwell);
    expect(p.baseCycles).toBeUndefined();
    expect(p.totalCycles).toBeUndefined();
    expect(p.divergenceCycles).toBe(26);
  });
  it('rejects negative costs', () => {
    expect(() => predictDivergenceCycles({ bounds: [1] }, { deltaCycles: -1, spillCycles: 0 })).toThrow(/deltaCycles/);
  });
});

describe('extendedMeasuredLoss', () => {
  it('adds n·(δ·D + s·spills)/(T·Σw) to each group loss', () => {
    const r = extendedMeasuredLoss([[4, 4, 3, 2], [2, 2, 2, 2], [0, 0, 0, 0]], { iterationCycles: 100, deltaCycles: 30, spillCycles: 100 });
    const h1 = 16 / 13;
    const ext1 = (100 * 4 * 4 + 4 * 2 * 30) / (100 * 13);
    expect(r.groups).toBe(3);
    expect(r.lossCounts).toBeCloseTo((h1 + 1 + 1) / 3, 12);
    expect(r.lossExtended).toBeCloseTo((ext1 + 1 + 1) / 3, 12);
    expect(r.divergenceTerm).toBeCloseTo((ext1 - h1) / 3, 12);
  });
  it('reports the share of the measured gap explained', () => {
    const base = extendedMeasuredLoss([[4, 4, 3, 2]], { iterationCycles: 100, deltaCycles: 30, spillCycles: 0 });
    const r = extendedMeasuredLoss([[4, 4, 3, 2]], { iterationCycles: 100, deltaCycles: 30, spillCycles: 0, lossMeasured: base.lossCounts + 2 * base.divergenceTerm });
    expect(r.gapExplainedFraction).toBeCloseTo(0.5, 12);
  });
  it('includes spill cost for deep divergence', () => {
    const counts = divergencePatternBounds(31);
    const sum = counts.reduce((a, b) => a + b, 0);
    const r = extendedMeasuredLoss([counts], { iterationCycles: 50, deltaCycles: 0, spillCycles: 200 });
    expect(r.divergenceTerm).toBeCloseTo((32 * 4 * 200) / (50 * sum), 12);
  });
  it('rejects T ≤ 0 and empty input', () => {
    expect(() => extendedMeasuredLoss([[1]], { iterationCycles: 0, deltaCycles: 1, spillCycles: 1 })).toThrow(/iterationCycles/);
    expect(() => extendedMeasuredLoss([], { iterationCycles: 1, deltaCycles: 1, spillCycles: 1 })).toThrow(/at least one group/);
  });
});
