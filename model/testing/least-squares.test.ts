import { describe, expect, it } from 'vitest';
import { solveLeastSquares } from './least-squares.ts';

describe('solveLeastSquares', () => {
  it('solves designs with more rows than a call may take as arguments (regression: Math.hypot(...column) overflowed)', () => {
    const rows = 200_000;
    const design = Array.from({ length: rows }, (_, i) => [1, (i % 97) + 1]);
    // Exact line y = 3 + 2x: the closed-form answer is (3, 2).
    const observations = design.map(([one, x]) => 3 * (one as number) + 2 * (x as number));
    const solution = solveLeastSquares(design, observations, ['intercept', 'slope']);
    expect(solution.coefficients[0]).toBeCloseTo(3, 9);
    expect(solution.coefficients[1]).toBeCloseTo(2, 9);
  });
});
