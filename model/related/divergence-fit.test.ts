import { describe, expect, it } from 'vitest';
import {
  addDivergenceObservation,
  createDivergenceMoments,
  divergenceObservationOf,
  divergenceObservationOfGroup,
  fitDivergenceCost,
  solveDivergenceMoments,
  type DivergenceMeasurement,
  type DivergenceObservation,
} from './divergence-fit.ts';
import { divergencePatternBounds } from './divergence-cost.ts';
import { solveLeastSquares } from '../testing/least-squares.ts';
import { mulberry32 } from '../distributions/random.ts';

// Box–Muller normals from the seeded generator, for synthetic measurement noise.
function normal(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** Micro-benchmark measurements (single and nested loops, k = 0..31) made with known costs and seeded noise. */
function syntheticMeasurements(params: { t: number; delta: number; spill: number; overhead?: number; noise: number; seed: number; repeats: number }): DivergenceMeasurement[] {
  const random = mulberry32(params.seed);
  const rows: DivergenceMeasurement[] = [];
  for (const loop of ['single', 'nested'] as const) {
    for (let k = 0; k <= 31; k += 1) {
      const o = divergenceObservationOf({ pattern: '', loop, k, bounds: divergencePatternBounds(k), innerBounds: undefined, cycles: 0, line: 0 });
      for (let r = 0; r < params.repeats; r += 1) {
        const cycles = (params.overhead ?? 0) + params.t * o.issuedIterations + params.delta * o.divergingExits + params.spill * o.spills + params.noise * normal(random);
        rows.push({ pattern: `${loop}-k${k}`, loop, k, bounds: divergencePatternBounds(k), innerBounds: undefined, cycles: Number(cycles.toFixed(3)), line: 0 });
      }
    }
  }
  return rows;
}

describe('solveLeastSquares', () => {
  it('recovers an exact line and matches the closed-form simple regression', () => {
    expect(solveLeastSquares([[1, 0], [1, 1], [1, 2]], [1, 3, 5]).coefficients.map((c) => Number(c.toFixed(12)))).toEqual([1, 2]);
    // Closed form: slope = Sxy/Sxx, intercept = ȳ − slope·x̄.
    const xs = [0, 1, 2, 3, 4];
    const ys = [1.1, 2.9, 5.2, 6.8, 9.1];
    const xBar = 2;
    const yBar = ys.reduce((a, b) => a + b) / 5;
    const sxy = xs.reduce((s, x, i) => s + (x - xBar) * ((ys[i] as number) - yBar), 0);
    const sxx = xs.reduce((s, x) => s + (x - xBar) ** 2, 0);
    const fit = solveLeastSquares(xs.map((x) => [1, x]), ys);
    expect(fit.coefficients[1]).toBeCloseTo(sxy / sxx, 12);
    expect(fit.coefficients[0]).toBeCloseTo(yBar - (sxy / sxx) * xBar, 12);
    // SE(slope) = sqrt(s² / Sxx)
    const s2 = fit.residualSumOfSquares / 3;
    expect(fit.standardErrors?.[1]).toBeCloseTo(Math.sqrt(s2 / sxx), 12);
  });
  it('names a collinear column', () => {
    expect(() => solveLeastSquares([[1, 2], [2, 4], [3, 6]], [1, 2, 3], ['a', 'b'])).toThrow(/'b' cannot be determined/);
  });
});

describe('fitDivergenceCost', () => {
  it('recovers T, δ and the spill cost from noisy synthetic measurements (Kepler-like)', () => {
    const fit = fitDivergenceCost(syntheticMeasurements({ t: 12, delta: 32, spill: 84, noise: 5, seed: 42, repeats: 3 }).map((m) => divergenceObservationOf(m)));
    expect(fit.observations).toBe(192);
    expect(fit.iterationCycles).toBeCloseTo(12, 1);
    expect(Math.abs(fit.deltaCycles - 32)).toBeLessThan(1);
    expect(Math.abs((fit.spillCycles as number) - 84)).toBeLessThan(8);
    expect(fit.rSquared).toBeGreaterThan(0.999);
    expect(fit.rmseCycles).toBeGreaterThan(3.5);
    expect(fit.rmseCycles).toBeLessThan(6.5);
    // Each estimate lies within 4 standard errors of the truth.
    const se = fit.standardErrors as Record<string, number>;
    expect(Math.abs(fit.deltaCycles - 32)).toBeLessThan(4 * (se.deltaCycles as number));
    expect(Math.abs((fit.spillCycles as number) - 84)).toBeLessThan(4 * (se.spillCycles as number));
  });
  it('recovers exact parameters (and an intercept) without noise', () => {
    const fit = fitDivergenceCost(syntheticMeasurements({ t: 7, delta: 26, spill: 176, overhead: 300, noise: 0, seed: 1, repeats: 1 }).map((m) => divergenceObservationOf(m)), { intercept: true });
    expect(fit.iterationCycles).toBeCloseTo(7, 6);
    expect(fit.deltaCycles).toBeCloseTo(26, 6);
    expect(fit.spillCycles).toBeCloseTo(176, 6);
    expect(fit.overheadCycles).toBeCloseTo(300, 4);
    for (const r of fit.residuals) expect(Math.abs(r.residualCycles)).toBeLessThan(1e-3);
  });
  it('reports the spill cost as unidentified when nothing spilled', () => {
    const obs: DivergenceObservation[] = [0, 1, 2, 3, 4].map((k) => ({ label: `k${k}`, issuedIterations: 32, divergingExits: k, spills: 0, cycles: 320 + 30 * k }));
    const fit = fitDivergenceCost(obs);
    expect(fit.unidentified).toEqual(['spillCycles']);
    expect(fit.spillCycles).toBeUndefined();
    expect(fit.deltaCycles).toBeCloseTo(30, 9);
  });
  it('refuses an intercept that the data cannot separate from T', () => {
    const obs: DivergenceObservation[] = [0, 1, 2, 3].map((k) => ({ label: `k${k}`, issuedIterations: 32, divergingExits: k, spills: 0, cycles: 400 + 30 * k }));
    expect(() => fitDivergenceCost(obs, { intercept: true })).toThrow(/cannot be determined/);
  });
});

// Exact rational arithmetic (BigInt fractions) for an independent least-squares solution.
type Fraction = readonly [bigint, bigint];
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
const frac = (n: bigint, d = 1n): Fraction => {
  const g = gcd(n, d) || 1n;
  return d < 0n ? [-n / g, -d / g] : [n / g, d / g];
};
const add = (a: Fraction, b: Fraction): Fraction => frac(a[0] * b[1] + b[0] * a[1], a[1] * b[1]);
const sub = (a: Fraction, b: Fraction): Fraction => add(a, [-b[0], b[1]]);
const mul = (a: Fraction, b: Fraction): Fraction => frac(a[0] * b[0], a[1] * b[1]);
const div = (a: Fraction, b: Fraction): Fraction => frac(a[0] * b[1], a[1] * b[0]);
const num = (a: Fraction): number => Number(a[0]) / Number(a[1]);

/** Exact OLS of integer rows: β = (XᵀX)⁻¹Xᵀy, and s²·diag((XᵀX)⁻¹), by Gauss–Jordan on fractions. */
function exactLeastSquares(design: readonly (readonly number[])[], y: readonly number[]): { beta: number[]; variance: number[] } {
  const p = (design[0] as readonly number[]).length;
  const gram: Fraction[][] = Array.from({ length: p }, (_, i) =>
    Array.from({ length: 2 * p }, (_, j) =>
      j < p ? frac(design.reduce((s, row) => s + BigInt(row[i] as number) * BigInt(row[j] as number), 0n)) : frac(i === j - p ? 1n : 0n),
    ),
  );
  for (let c = 0; c < p; c += 1) {
    const pivotRow = gram.findIndex((row, r) => r >= c && (row[c] as Fraction)[0] !== 0n);
    [gram[c], gram[pivotRow]] = [gram[pivotRow] as Fraction[], gram[c] as Fraction[]];
    const pivot = (gram[c] as Fraction[])[c] as Fraction;
    gram[c] = (gram[c] as Fraction[]).map((v) => div(v, pivot));
    for (let r = 0; r < p; r += 1) {
      if (r === c) continue;
      const factor = (gram[r] as Fraction[])[c] as Fraction;
      gram[r] = (gram[r] as Fraction[]).map((v, j) => sub(v, mul(factor, (gram[c] as Fraction[])[j] as Fraction)));
    }
  }
  const inverse = gram.map((row) => row.slice(p));
  const xty = Array.from({ length: p }, (_, j) => frac(design.reduce((s, row, i) => s + BigInt(row[j] as number) * BigInt(y[i] as number), 0n)));
  const beta = inverse.map((row) => row.reduce((s, v, j) => add(s, mul(v, xty[j] as Fraction)), frac(0n)));
  const yty = frac(y.reduce((s, v) => s + BigInt(v) * BigInt(v), 0n));
  const residual = sub(yty, beta.reduce((s, b, j) => add(s, mul(b, xty[j] as Fraction)), frac(0n)));
  const s2 = div(residual, frac(BigInt(y.length - p)));
  return { beta: beta.map(num), variance: inverse.map((row, j) => num(mul(s2, row[j] as Fraction))) };
}

describe('solveDivergenceMoments against exact least squares on fractions', () => {
  // Integer features of 12 groups (issued, D, spills) and integer ticks that do not lie on the model.
  const rows: [number, number, number, number][] = [
    [40, 3, 0, 9120], [52, 17, 1, 12933], [33, 0, 0, 7211], [61, 22, 2, 15160], [45, 9, 0, 10422], [38, 19, 1, 9870],
    [57, 5, 0, 12301], [49, 26, 3, 13650], [30, 1, 0, 6850], [64, 18, 1, 15002], [42, 12, 0, 10015], [55, 28, 4, 14890],
  ];
  const moments = createDivergenceMoments();
  for (const [issued, exits, spills, cycles] of rows) addDivergenceObservation(moments, { label: '', issuedIterations: issued, divergingExits: exits, spills, cycles });
  const close = (actual: number | undefined, expected: number): void => expect(Math.abs((actual as number) - expected)).toBeLessThanOrEqual(1e-9 * Math.abs(expected) + 1e-9);

  it('with the per-group constant: T, δ, s, c and their standard errors', () => {
    const exact = exactLeastSquares(rows.map(([i, d, s]) => [1, i, d, s]), rows.map((r) => r[3]));
    const fit = solveDivergenceMoments(moments, { intercept: true });
    close(fit.overheadCycles, exact.beta[0] as number);
    close(fit.iterationCycles, exact.beta[1] as number);
    close(fit.deltaCycles, exact.beta[2] as number);
    close(fit.spillCycles, exact.beta[3] as number);
    close(fit.standardErrors?.overheadCycles, Math.sqrt(exact.variance[0] as number));
    close(fit.standardErrors?.iterationCycles, Math.sqrt(exact.variance[1] as number));
    close(fit.standardErrors?.deltaCycles, Math.sqrt(exact.variance[2] as number));
    close(fit.standardErrors?.spillCycles, Math.sqrt(exact.variance[3] as number));
    close(fit.covariance?.deltaCycles?.deltaCycles, exact.variance[2] as number);
    expect(fit.observations).toBe(12);
  });

  it('through the origin (no constant)', () => {
    const exact = exactLeastSquares(rows.map(([i, d, s]) => [i, d, s]), rows.map((r) => r[3]));
    const fit = solveDivergenceMoments(moments, { intercept: false });
    expect(fit.overheadCycles).toBe(0);
    close(fit.iterationCycles, exact.beta[0] as number);
    close(fit.deltaCycles, exact.beta[1] as number);
    close(fit.spillCycles, exact.beta[2] as number);
    close(fit.standardErrors?.deltaCycles, Math.sqrt(exact.variance[1] as number));
  });

  it('with δ and s fixed: T and c of y − δD − s·spills', () => {
    const exact = exactLeastSquares(rows.map(([i]) => [1, i]), rows.map(([, d, s, y]) => y - 30 * d - 90 * s));
    const fit = solveDivergenceMoments(moments, { intercept: true, fixed: { deltaCycles: 30, spillCycles: 90 } });
    expect(fit.deltaCycles).toBe(30);
    expect(fit.spillCycles).toBe(90);
    close(fit.overheadCycles, exact.beta[0] as number);
    close(fit.iterationCycles, exact.beta[1] as number);
    close(fit.standardErrors?.iterationCycles, Math.sqrt(exact.variance[1] as number));
    expect(fit.standardErrors?.deltaCycles).toBeUndefined();
  });

  it('non-negative: a negative δ is fixed at 0 and the rest refitted', () => {
    // Ticks that fall with D: the unconstrained δ is negative.
    const falling = rows.map(([i, d, s]) => [i, d, s, 500 + 200 * i - 40 * d + 600 * s + ((i * 7 + d) % 11)] as const);
    const m = createDivergenceMoments();
    for (const [issued, exits, spills, cycles] of falling) addDivergenceObservation(m, { label: '', issuedIterations: issued, divergingExits: exits, spills, cycles });
    expect(solveDivergenceMoments(m, { intercept: true }).deltaCycles).toBeLessThan(0);
    const exact = exactLeastSquares(falling.map(([i, , s]) => [1, i, s]), falling.map((r) => r[3]));
    const fit = solveDivergenceMoments(m, { intercept: true, nonNegative: true });
    expect(fit.clampedToZero).toEqual(['deltaCycles']);
    expect(fit.deltaCycles).toBe(0);
    close(fit.overheadCycles, exact.beta[0] as number);
    close(fit.iterationCycles, exact.beta[1] as number);
    close(fit.spillCycles, exact.beta[2] as number);
  });

  it('lists what the data cannot separate instead of throwing', () => {
    const flat = createDivergenceMoments();
    for (let k = 0; k < 6; k += 1) addDivergenceObservation(flat, { label: '', issuedIterations: 32, divergingExits: k, spills: 0, cycles: 400 + 30 * k });
    const fit = solveDivergenceMoments(flat, { intercept: true });
    expect(fit.unidentified).toEqual(['iterationCycles', 'spillCycles']);
    expect(fit.iterationCycles).toBeUndefined();
    close(fit.deltaCycles, 30);
  });
});

describe('divergenceObservationOfGroup', () => {
  it('fits T and δ from per-group measured cycles (production-data path)', () => {
    // Groups with random counts; cycles = 11·max + 29·D exactly → the fit must return 11 and 29.
    const random = mulberry32(5);
    const observations = Array.from({ length: 200 }, (_, g) => {
      const counts = Array.from({ length: 32 }, () => Math.floor(random() * 12));
      const max = Math.max(...counts);
      const distinctBelowMax = new Set(counts.filter((c) => c < max)).size;
      return divergenceObservationOfGroup(counts, 11 * max + 29 * distinctBelowMax, `g${g}`);
    });
    const fit = fitDivergenceCost(observations);
    expect(fit.iterationCycles).toBeCloseTo(11, 9);
    expect(fit.deltaCycles).toBeCloseTo(29, 9);
    expect(fit.unidentified).toEqual(['spillCycles']);
  });
});
