/**
 * An independent reference for the Python examples' tests: the escape-time counts computed in
 * TypeScript (not by the examples) and the loss values they imply.
 */

/**
 * Escape-time iteration counts of a width × height grid, computed here (not by the examples):
 * pixel unit = y·width + x, c = (−2 + 2.5x/width) + i(−1.25 + 2.5y/height), z ← z² + c from 0
 * while |z|² ≤ 4, at most maxIter; the same real arithmetic the examples' docstrings state.
 *
 * @example escapeCounts(32, 16, 40).length // 512
 */
export function escapeCounts(width: number, height: number, maxIter: number): number[] {
  const counts: number[] = [];
  for (let unit = 0; unit < width * height; unit++) {
    const x = unit % width, y = Math.floor(unit / width);
    const cr = -2.0 + (2.5 * x) / width, ci = -1.25 + (2.5 * y) / height;
    let zr = 0, zi = 0, w = 0;
    while (w < maxIter && zr * zr + zi * zi <= 4.0) {
      const t = zr * zr - zi * zi + cr;
      zi = 2.0 * zr * zi + ci;
      zr = t;
      w++;
    }
    counts.push(w);
  }
  return counts;
}

/**
 * What `warpwatch analyze` (and the estimator's window) must report for counts in groups of n
 * consecutive units: groups, mean per-group H = n·max/Σ (all-zero group 1), n·Σmax/Σsum, mean count.
 *
 * @example expectedFromCounts(escapeCounts(32, 16, 40), 8).lossCounts
 */
export function expectedFromCounts(counts: readonly number[], n: number): { groups: number; lossCounts: number; workloadLossCounts: number; meanCount: number } {
  let sumH = 0, sumMax = 0, sum = 0;
  const groups = counts.length / n;
  for (let g = 0; g < groups; g++) {
    const lanes = counts.slice(g * n, g * n + n);
    const max = Math.max(...lanes), total = lanes.reduce((a, b) => a + b, 0);
    sumH += total === 0 ? 1 : (n * max) / total;
    sumMax += max;
    sum += total;
  }
  return { groups, lossCounts: sumH / groups, workloadLossCounts: (n * sumMax) / sum, meanCount: sum / counts.length };
}
