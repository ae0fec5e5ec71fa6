import { describe, expect, it } from 'vitest';
import { solveLeastSquares } from '../testing/least-squares.ts';
import { createSeededRandom } from '../distributions/random.ts';
import { addRegressionRow, createRegressionMoments, mergeRegressionMoments, solveRegressionMoments } from './streaming-regression.ts';

// Expected values come from the QR solver (model/testing/least-squares.ts) on the same rows with an
// explicit intercept column: an independent algorithm on the raw data.
function qrReference(rows: { x: number[]; y: number }[]) {
  return solveLeastSquares(
    rows.map((r) => [1, ...r.x]),
    rows.map((r) => r.y),
  );
}

function randomRows(seed: number, count: number, scale: number) {
  const source = createSeededRandom(seed);
  const random = (): number => source.nextFloat();
  const rows: { x: number[]; y: number }[] = [];
  for (let i = 0; i < count; i += 1) {
    const issued = 1 + Math.floor(random() * 200);
    const exits = Math.floor(random() * 31);
    const spills = exits > 16 ? Math.ceil((exits - 16) / 4) : 0;
    const noise = (random() - 0.5) * 40;
    rows.push({ x: [issued, exits, spills], y: scale + 37.5 * issued + 26 * exits + 176 * spills + noise });
  }
  return rows;
}

describe('streaming regression moments', () => {
  it('matches QR least squares with an intercept (coefficients, standard errors, R²) at GPU clock magnitudes', () => {
    for (const [seed, scale] of [
      [1, 0],
      [2, 1e6],
      [3, 1e9],
    ] as const) {
      const rows = randomRows(seed, 3000, scale);
      const moments = createRegressionMoments(3);
      for (const row of rows) addRegressionRow(moments, row.x, row.y);
      const fit = solveRegressionMoments(moments);
      const reference = qrReference(rows);
      expect(fit.intercept).toBeCloseTo(reference.coefficients[0] as number, scale >= 1e9 ? 1 : 6);
      for (let j = 0; j < 3; j += 1) {
        expect(Math.abs((fit.coefficients[j] as number) - (reference.coefficients[j + 1] as number))).toBeLessThan(1e-6 * Math.abs(reference.coefficients[j + 1] as number) + 1e-9);
        const se = fit.standardErrors?.[j] as number;
        expect(Math.abs(se - (reference.standardErrors?.[j + 1] as number)) / se).toBeLessThan(1e-5);
      }
      const mean = rows.reduce((s, r) => s + r.y, 0) / rows.length;
      const total = rows.reduce((s, r) => s + (r.y - mean) ** 2, 0);
      expect(fit.rSquared).toBeCloseTo(1 - reference.residualSumOfSquares / total, 9);
      expect(fit.rmse).toBeCloseTo(Math.sqrt(reference.residualSumOfSquares / rows.length), 6);
      expect(fit.rows).toBe(3000);
    }
  });

  it('through the origin and with a fixed coefficient matches QR least squares on the adjusted rows', () => {
    for (const [seed, scale] of [
      [4, 0],
      [5, 1e6],
    ] as const) {
      const rows = randomRows(seed, 2000, scale);
      const moments = createRegressionMoments(3);
      for (const row of rows) addRegressionRow(moments, row.x, row.y);
      // No intercept: QR on the raw features.
      const origin = solveRegressionMoments(moments, { intercept: false });
      const originReference = solveLeastSquares(rows.map((r) => r.x), rows.map((r) => r.y));
      expect(origin.intercept).toBe(0);
      for (let j = 0; j < 3; j += 1) {
        expect(Math.abs((origin.coefficients[j] as number) - (originReference.coefficients[j] as number))).toBeLessThan(1e-7 * Math.abs(originReference.coefficients[j] as number) + 1e-9);
        expect(Math.abs((origin.standardErrors?.[j] as number) / (originReference.standardErrors?.[j] as number) - 1)).toBeLessThan(1e-6);
      }
      expect(origin.rmse).toBeCloseTo(Math.sqrt(originReference.residualSumOfSquares / rows.length), 4);
      // β_1 fixed at 26 with an intercept: QR of y − 26·x_1 on (1, x_0, x_2).
      const fixed = solveRegressionMoments(moments, { fixed: { 1: 26 } });
      const fixedReference = solveLeastSquares(
        rows.map((r) => [1, r.x[0] as number, r.x[2] as number]),
        rows.map((r) => r.y - 26 * (r.x[1] as number)),
      );
      expect(fixed.coefficients[1]).toBe(26);
      expect(Number.isNaN(fixed.standardErrors?.[1])).toBe(true);
      expect(fixed.unidentified).toEqual([]);
      expect(Math.abs((fixed.coefficients[0] as number) / (fixedReference.coefficients[1] as number) - 1)).toBeLessThan(1e-7);
      expect(Math.abs((fixed.coefficients[2] as number) / (fixedReference.coefficients[2] as number) - 1)).toBeLessThan(1e-7);
      expect(Math.abs((fixed.standardErrors?.[2] as number) / (fixedReference.standardErrors?.[2] as number) - 1)).toBeLessThan(1e-5);
      expect(Math.abs((fixed.interceptStandardError as number) / (fixedReference.standardErrors?.[0] as number) - 1)).toBeLessThan(1e-5);
    }
  });

  it('merging split streams equals adding every row to one (any split, any order)', () => {
    const rows = randomRows(7, 999, 5e5);
    const whole = createRegressionMoments(3);
    for (const row of rows) addRegressionRow(whole, row.x, row.y);
    const parts = [createRegressionMoments(3), createRegressionMoments(3), createRegressionMoments(3)];
    rows.forEach((row, i) => addRegressionRow(parts[i % 7 < 2 ? 0 : i % 7 < 5 ? 1 : 2] as ReturnType<typeof createRegressionMoments>, row.x, row.y));
    const [p0, p1, p2] = parts as [ReturnType<typeof createRegressionMoments>, ReturnType<typeof createRegressionMoments>, ReturnType<typeof createRegressionMoments>];
    const left = mergeRegressionMoments(mergeRegressionMoments(p0, p1), p2);
    const right = mergeRegressionMoments(p2, mergeRegressionMoments(p1, p0));
    for (const merged of [left, right]) {
      expect(merged.count).toBe(whole.count);
      merged.means.forEach((m, i) => expect(m).toBeCloseTo(whole.means[i] as number, 6));
      merged.comoments.forEach((c, i) => expect(Math.abs(c - (whole.comoments[i] as number))).toBeLessThan(1e-9 * Math.abs(whole.comoments[i] as number) + 1e-6));
    }
    expect(mergeRegressionMoments(whole, createRegressionMoments(3))).toEqual(whole);
    expect(mergeRegressionMoments(createRegressionMoments(3), whole)).toEqual(whole);
  });

  it('leaves out constant and collinear features and fits the rest', () => {
    const source = createSeededRandom(11);
  const random = (): number => source.nextFloat();
    const moments = createRegressionMoments(3);
    const rows: { x: number[]; y: number }[] = [];
    for (let i = 0; i < 200; i += 1) {
      const a = Math.floor(random() * 50);
      const x = [a, 2 * a + 3, 0];
      const y = 10 + 4 * a + (random() - 0.5);
      rows.push({ x, y });
      addRegressionRow(moments, x, y);
    }
    const fit = solveRegressionMoments(moments);
    expect(fit.unidentified).toEqual([1, 2]);
    expect(Number.isNaN(fit.coefficients[1])).toBe(true);
    const reference = solveLeastSquares(
      rows.map((r) => [1, r.x[0] as number]),
      rows.map((r) => r.y),
    );
    expect(fit.coefficients[0]).toBeCloseTo(reference.coefficients[1] as number, 9);
    expect(fit.intercept).toBeCloseTo(reference.coefficients[0] as number, 8);
  });

  it('rejects bad rows and too few rows', () => {
    const moments = createRegressionMoments(2);
    expect(() => addRegressionRow(moments, [1], 2)).toThrow(/2 feature values/);
    expect(() => addRegressionRow(moments, [1, Number.NaN], 2)).toThrow(/finite/);
    expect(() => createRegressionMoments(0)).toThrow(RangeError);
    addRegressionRow(moments, [1, 2], 3);
    expect(() => solveRegressionMoments(moments)).toThrow(/at least 2 rows/);
    expect(() => mergeRegressionMoments(moments, createRegressionMoments(3))).toThrow(/features/);
  });
});
