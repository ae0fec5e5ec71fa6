/**
 * Binning in a finite launch (docs/model.md §2d, binning): the launch's N units (rounded down to a
 * multiple of n, as for sorting) are ordered by bin — a counting sort on the bin index, units of
 * one bin in random order — and the sequence is cut into N/n consecutive groups. A group inside
 * one bin draws i.i.d. from W truncated to the bin (its mean H is E[X_b(n)]); a group across a
 * bin boundary holds the last units of one bin and the first of the next (and of more bins when
 * a bin holds fewer than n units).
 *
 * With C_b = number of units in bins 0..b ~ Binomial(N, F_b):
 * - groups inside bin b: E[max(0, ⌊C_b/n⌋ − ⌈C_{b−1}/n⌉)];
 * - the mixed group whose first unit lies in bin b exists when d = C_b mod n > 0 and bin b holds
 *   at least d units; it holds those d units of bin b and the first n − d units of the bins
 *   after b, whose counts given C_b = c are Binomial(N − c, ·) one bin after the other.
 * E[n·max/Σ] of a mixed group is n·∫₀^∞ E[max·e^{−tΣ}] dt (docs/model.md §2b): with d units of bin
 * b and c units of the last bin b' (the maximum lies in the last bin), the integrand is
 * φ_b(t)^d·…·ψ_{b'}(c, t) with φ_b(t) = E[e^{−tW} | b] and ψ_b(c, t) = E[max·e^{−tΣ}] of c draws
 * from bin b. A quadrature on ln t (numerics/laplace-quadrature.ts, relative error ≤ 5e-10) evaluates it.
 *
 * Fast path: when every bin holds at least n units but for a probability below e^{−46}
 * (Bernstein), each mixed group spans exactly two bins and everything depends on C_b mod n only,
 * whose distribution is summed exactly (uniform when its spread σ ≥ 2n: the binomial's
 * characteristic function at 2π/n is below e^{−2π²·4} ≈ 1e-34). Cost O(n·|supp|·K) for K ≈ 30
 * nodes per boundary. Otherwise every position C_b can take is visited with a recursion over
 * the later bins (cost grows with the spread of C_b; fine for the small launches where bins run
 * short).
 */
import { binomialHead, binomialPmf } from '../distributions/binomial-pmf.ts';
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { laplaceQuadrature, type Quadrature } from '../numerics/laplace-quadrature.ts';

/** One bin as the launch computation needs it. */
export interface LaunchBin {
  /** W truncated to the bin (values ascending). */
  readonly distribution: CategoricalDistribution;
  /** P(W in bin). */
  readonly probability: number;
  /** E[X_b(n)] of a group inside the bin (all-zero group: H = 1). */
  readonly expectedLoss: number;
  /** E[max of n draws from the bin]. */
  readonly expectedMaximum: number;
}

/** Result of {@link binnedLaunchLoss}. */
export interface BinnedLaunchLoss {
  /** E[Σ_groups H]/(N/n): the mean H over the launch's groups. */
  readonly expectedLoss: number;
  /** E[Σ_groups n·max]/E[Σ work]. */
  readonly workloadLoss: number;
  /** Groups per launch (N rounded down to a multiple of n, divided by n). */
  readonly groups: number;
  /** Expected groups entirely inside each bin. */
  readonly pureGroups: Float64Array;
  /** Expected groups across a bin boundary. */
  readonly mixedGroups: number;
}

// C_b lies within μ ± reach but for probability ≤ 2e^{−46} (Bernstein), as in sorted-grouping-loss.ts.
const TAIL_EXPONENT = 46;
// Terms below this weight are dropped (H ≤ n ≤ 1024 bounds their effect).
const NEGLIGIBLE = 1e-24;

function bernsteinReach(sd: number): number {
  return TAIL_EXPONENT / 3 + Math.sqrt((TAIL_EXPONENT * TAIL_EXPONENT) / 9 + 2 * TAIL_EXPONENT * sd * sd);
}

/**
 * P(C = c) for c in [low, high], C ~ Binomial(trials, p): one accurate value at the mode, then
 * the ratio recurrence outwards (relative drift ~1e-16 per step).
 */
function binomialRange(trials: number, p: number, q: number, low: number, high: number): Float64Array {
  const out = new Float64Array(high - low + 1);
  if (p <= 0 || q <= 0) {
    const only = p <= 0 ? 0 : trials;
    if (only >= low && only <= high) out[only - low] = 1;
    return out;
  }
  const mode = Math.min(high, Math.max(low, Math.floor((trials + 1) * p)));
  const odds = p / q;
  let term = binomialPmf(mode, trials, p, q);
  out[mode - low] = term;
  for (let c = mode; c < high; c++) {
    term *= ((trials - c) / (c + 1)) * odds;
    out[c + 1 - low] = term;
  }
  term = out[mode - low]!;
  for (let c = mode; c > low; c--) {
    term *= c / (trials - c + 1) / odds;
    out[c - 1 - low] = term;
  }
  return out;
}

/** Distribution of C mod n for C ~ Binomial(trials, p): exact sum, or uniform when σ ≥ 2n. */
function remainderDistribution(trials: number, p: number, q: number, n: number): Float64Array {
  const out = new Float64Array(n);
  const sd = Math.sqrt(trials * p * q);
  if (sd >= 2 * n) {
    out.fill(1 / n);
    return out;
  }
  const mu = trials * p;
  const reach = bernsteinReach(sd);
  const low = Math.max(0, Math.ceil(mu - reach));
  const high = Math.min(trials, Math.floor(mu + reach));
  const pmf = binomialRange(trials, p, q, low, high);
  let mass = 0;
  for (let c = low; c <= high; c++) {
    const probability = pmf[c - low]!;
    out[c % n] = out[c % n]! + probability;
    mass += probability;
  }
  for (let r = 0; r < n; r++) out[r] = out[r]! / mass;
  return out;
}

/**
 * Laplace tables of one bin at the nodes (column 0: t = 0): powers φ^d, d = 0..n, and
 * ψ(c) = E[max·e^{−tΣ}] of c draws, c = 1..n − 1. ψ(c) = Σ_a v_a·(Φ_a^c − Φ_{a−1}^c) with Φ_a the
 * partial transform up to value a; each difference is δ·Σ_{i<c} Φ_a^i·Φ_{a−1}^{c−1−i} (δ = f_a·e^{−t·v_a}),
 * a sum of positive terms, so nothing cancels.
 */
interface BinTables {
  readonly powers: Float64Array; // [d·width + i]
  readonly maxima: Float64Array; // [c·width + i]
}

function binTables(bin: CategoricalDistribution, times: Float64Array, n: number, withMaxima = true): BinTables {
  const width = times.length + 1;
  const powers = new Float64Array((n + 1) * width);
  const maxima = new Float64Array((n + 1) * width);
  const values = bin.values;
  const f = bin.probabilities;
  const total = f.reduce((a, b) => a + b, 0);
  const sums = new Float64Array(n); // sums[c] = ψ(c) at the current node
  for (let i = 0; i < width; i++) {
    const t = i === 0 ? 0 : times[i - 1]!;
    let previous = 0;
    sums.fill(0);
    for (let a = 0; a < values.length; a++) {
      const decay = t === 0 ? 1 : Math.exp(-t * values[a]!);
      if (decay === 0) break; // values ascend: every later term underflows too
      const delta = (f[a]! / total) * decay;
      const current = previous + delta;
      if (withMaxima) {
        // chain = Σ_{i<c} Φ^i·Φ_prev^{c−1−i}, power = Φ^c, both built up over c.
        const scaled = values[a]! * delta;
        let power = 1;
        let chain = 0;
        for (let c = 1; c < n; c++) {
          chain = previous * chain + power;
          power *= current;
          sums[c] = sums[c]! + scaled * chain;
        }
      }
      previous = current;
    }
    for (let c = 1; c < n; c++) maxima[c * width + i] = sums[c]!;
    let p = 1;
    for (let d = 0; d <= n; d++) {
      powers[d * width + i] = p;
      p *= previous;
    }
  }
  return { powers, maxima };
}

/**
 * E[mean H] and E[Σ n·max]/E[Σ work] of binning a launch of `units` units into the given bins
 * (ascending, contiguous ranges of the support) and grouping the bin-ordered sequence (see the
 * file comment).
 *
 * @param bins the bins, ascending; their probabilities sum to 1.
 * @param n group size (1..1024, validated by the caller).
 * @param units launch size N ≥ n (validated by the caller); rounded down to a multiple of n.
 * @param mean E[W].
 * @param options.general take the general path even when every bin is long (to check the fast one).
 * @returns expected loss, workload loss, groups per launch and the expected pure and mixed groups.
 * @example binnedLaunchLoss(bins, 32, 4096, dist.mean()).expectedLoss
 */
export function binnedLaunchLoss(bins: readonly LaunchBin[], n: number, units: number, mean: number, options: { general?: boolean } = {}): BinnedLaunchLoss {
  const groups = Math.floor(units / n);
  const size = groups * n;
  const count = bins.length;
  // below[b] = F_b = P(bin ≤ b), above[b] = 1 − F_b, each summed from its own side.
  const below = new Float64Array(count);
  const above = new Float64Array(count);
  let running = 0;
  for (let b = 0; b < count; b++) below[b] = running += bins[b]!.probability;
  running = 0;
  for (let b = count - 1; b >= 0; b--) {
    above[b] = running;
    running += bins[b]!.probability;
  }
  const total = running;
  for (let b = 0; b < count; b++) {
    below[b] = below[b]! / total;
    above[b] = above[b]! / total;
  }
  const probability = (b: number): number => bins[b]!.probability / total;
  // A bin is long when it holds ≥ n units but for probability ≤ 2e^{−46}.
  const long = bins.map((_, b) => {
    const p = probability(b);
    const mu = size * p;
    return mu - bernsteinReach(Math.sqrt(size * p * (1 - p))) >= n;
  });
  const allLong = options.general !== true && long.every(Boolean);

  // Groups inside bin b: E[⌊C_b/n⌋] − E[⌈C_{b−1}/n⌉] + P(bin b ends inside the group it starts in).
  const pureGroups = new Float64Array(count);
  const remainders: Float64Array[] = []; // remainders[b][r] = P(C_b mod n = r), b < count − 1
  for (let b = 0; b < count - 1; b++) remainders.push(remainderDistribution(size, below[b]!, above[b]!, n));
  const meanRemainder = (b: number): number => {
    if (b < 0 || b >= count - 1) return 0; // C_{−1} = 0, C_{count−1} = N: multiples of n
    let s = 0;
    for (let r = 1; r < n; r++) s += r * remainders[b]![r]!;
    return s;
  };
  const meanComplement = (b: number): number => {
    if (b < 0 || b >= count - 1) return 0;
    let s = 0;
    for (let r = 1; r < n; r++) s += (n - r) * remainders[b]![r]!;
    return s;
  };
  for (let b = 0; b < count; b++) {
    const upper = b === count - 1 ? size : size * below[b]!;
    const lower = b === 0 ? 0 : size * below[b - 1]!;
    let pure = (upper - meanRemainder(b)) / n - (lower + meanComplement(b - 1)) / n;
    if (!long[b] && b > 0) pure += shortBinCorrection(size, below[b - 1]!, above[b - 1]!, probability(b) / above[b - 1]!, n);
    pureGroups[b] = pure;
  }

  let mixedLoss = 0;
  let mixedMaximum = 0;
  let mixedGroups = 0;
  if (count > 1 && n > 1) {
    if (allLong) {
      for (let b = 0; b < count - 1; b++) {
        const low = bins[b]!.distribution.min;
        const next = bins[b + 1]!.distribution;
        const quadrature = laplaceQuadrature(next.min + (n - 1) * low, n * next.max);
        const width = quadrature.times.length + 1;
        const first = binTables(bins[b]!.distribution, quadrature.times, n, false);
        const second = binTables(next, quadrature.times, n);
        const remainder = remainders[b]!;
        for (let d = 1; d < n; d++) {
          const weight = remainder[d]!;
          if (weight <= NEGLIGIBLE) continue;
          const powers = d * width;
          const maxima = (n - d) * width;
          let integral = 0;
          for (let i = 1; i < width; i++) integral += quadrature.weights[i - 1]! * first.powers[powers + i]! * second.maxima[maxima + i]!;
          mixedLoss += weight * n * integral;
          mixedMaximum += weight * n * second.maxima[maxima]!;
          mixedGroups += weight;
        }
      }
    } else {
      const general = generalMixedGroups(bins, below, above, total, size, n);
      mixedLoss = general.loss;
      mixedMaximum = general.maximum;
      mixedGroups = general.groups;
    }
  }
  let lossSum = mixedLoss;
  let maximumSum = mixedMaximum;
  for (let b = 0; b < count; b++) {
    lossSum += pureGroups[b]! * bins[b]!.expectedLoss;
    maximumSum += pureGroups[b]! * n * bins[b]!.expectedMaximum;
  }
  const work = size * mean;
  return { expectedLoss: lossSum / groups, workloadLoss: work > 0 ? maximumSum / work : 1, groups, pureGroups, mixedGroups };
}

/**
 * P(⌈C_{b−1}/n⌉ > ⌊C_b/n⌋): bin b lies strictly inside one group (it starts after a group
 * boundary and holds fewer units than the group has left). Given C_{b−1} = c the count of bin b
 * is Binomial(N − c, q) with q = P(b)/P(W beyond bin b − 1).
 */
function shortBinCorrection(size: number, belowPrevious: number, abovePrevious: number, share: number, n: number): number {
  const sd = Math.sqrt(size * belowPrevious * abovePrevious);
  const mu = size * belowPrevious;
  const reach = bernsteinReach(sd);
  const low = Math.max(0, Math.ceil(mu - reach));
  const high = Math.min(size, Math.floor(mu + reach));
  const pmf = binomialRange(size, belowPrevious, abovePrevious, low, high);
  const head = new Float64Array(n);
  let sum = 0;
  const q = Math.min(1, share);
  for (let c = low; c <= high; c++) {
    const offset = c % n;
    if (offset === 0) continue;
    const weight = pmf[c - low]!;
    if (weight <= NEGLIGIBLE) continue;
    sum += weight * binomialHead(size - c, q, 1 - q, n - offset, head);
  }
  return sum;
}

/**
 * Mixed groups when some bin may hold fewer than n units: every position c of C_b, the group
 * starting in bin b with d = c mod n of its units, then the first n − d units of the later bins.
 * V_b(R, r) = E[max·e^{−tΣ}] of the first r units of bins b, b+1, … when R units remain:
 *   V_b(R, r) = Σ_{l<r} P(N_b = l | R)·φ_b^l·V_{b+1}(R − l, r − l) + P(N_b ≥ r | R)·ψ_b(r).
 */
function generalMixedGroups(
  bins: readonly LaunchBin[],
  below: Float64Array,
  above: Float64Array,
  total: number,
  size: number,
  n: number,
): { loss: number; maximum: number; groups: number } {
  const count = bins.length;
  let smallest = Infinity;
  let largest = 0;
  for (const bin of bins) {
    const positive = bin.distribution.values.find((v) => v > 0);
    if (positive !== undefined) smallest = Math.min(smallest, positive);
    largest = Math.max(largest, bin.distribution.max);
  }
  const quadrature: Quadrature = laplaceQuadrature(smallest, n * largest);
  const width = quadrature.times.length + 1;
  const tables = bins.map((bin) => binTables(bin.distribution, quadrature.times, n));
  const memo = new Map<number, Float64Array>();
  const head = new Float64Array(n + 1);
  // V_b(R, ·) as one array [r·width + i], r = 1..n−1.
  const continuation = (b: number, remaining: number): Float64Array => {
    if (b === count - 1) return tables[b]!.maxima; // the last bin holds all remaining units (≥ r)
    const key = b * (size + 1) + remaining;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    const q = Math.min(1, bins[b]!.probability / total / above[b - 1]!);
    binomialHead(remaining, q, 1 - q, n, head);
    const out = new Float64Array(n * width);
    const { powers, maxima } = tables[b]!;
    for (let r = 1; r < n; r++) {
      let shortMass = 0;
      for (let l = 0; l < r; l++) {
        const w = head[l]!;
        shortMass += w;
        if (w <= NEGLIGIBLE) continue;
        const later = continuation(b + 1, remaining - l);
        for (let i = 0; i < width; i++) out[r * width + i] = out[r * width + i]! + w * powers[l * width + i]! * later[(r - l) * width + i]!;
      }
      const fill = Math.max(0, 1 - shortMass);
      for (let i = 0; i < width; i++) out[r * width + i] = out[r * width + i]! + fill * maxima[r * width + i]!;
    }
    memo.set(key, out);
    return out;
  };
  let loss = 0;
  let maximum = 0;
  let groups = 0;
  for (let b = 0; b < count - 1; b++) {
    const p = below[b]!;
    const sd = Math.sqrt(size * p * above[b]!);
    const mu = size * p;
    const reach = bernsteinReach(sd);
    const low = Math.max(0, Math.ceil(mu - reach));
    const high = Math.min(size, Math.floor(mu + reach));
    const pmf = binomialRange(size, p, above[b]!, low, high);
    // Given C_b = c, the count of bin b among the c units is Binomial(c, π), π = P(b)/F_b.
    const share = b === 0 ? 1 : Math.min(1, bins[b]!.probability / total / p);
    const { powers } = tables[b]!;
    for (let c = low; c <= high; c++) {
      const d = c % n;
      if (d === 0) continue;
      const atLeast = share >= 1 ? 1 : Math.max(0, 1 - binomialHead(c, share, 1 - share, d, head));
      const weight = pmf[c - low]! * atLeast;
      if (weight <= NEGLIGIBLE) continue;
      const later = continuation(b + 1, size - c);
      let integral = 0;
      for (let i = 1; i < width; i++) integral += quadrature.weights[i - 1]! * powers[d * width + i]! * later[(n - d) * width + i]!;
      loss += weight * n * integral;
      maximum += weight * n * later[(n - d) * width]!;
      groups += weight;
    }
  }
  return { loss, maximum, groups };
}
