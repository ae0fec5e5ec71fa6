/**
 * The "load balancing by sorting" what-if (docs/model.md §2d): a launch's N units are sorted by
 * their work before being grouped, so consecutive groups hold consecutive order statistics.
 *
 * What is computed: the expectation over random launches. A launch draws N units i.i.d. from W,
 * sorts them and cuts them into N/n consecutive groups; the result is E[mean over the groups of
 * H] (and the cost ratio E[Σ n·max]/E[Σ work]). A group holding one value has H = 1 (an all-zero
 * group too, by the convention of docs/model.md §1), so only groups across a boundary between values
 * lose anything, and where a boundary falls is random: the number C_j of units ≤ v_j is
 * Binomial(N, F(v_j)). Putting each boundary at its expected position instead (the i-th unit =
 * Q((i − ½)/N)) is biased: with a 0 → 1 boundary the group across it has H = n/k for k ones,
 * and the average over the random offset of the boundary differs clearly from one fixed offset.
 *
 * Method (exact up to ~1e-9): for each group g (positions a..b = a+n−1) that some boundary can
 * fall into, a dynamic programme over the support values with state "k of the group's n slots
 * are filled" (C_{j} = a−1+k) carries P(state) and E[e^{−t·Σ filled work}; state] for t on a
 * quadrature grid; the cumulative counts form a Markov chain (given C_{j−1} = c, the count of
 * v_j is Binomial(N − c, p_j/P(W ≥ v_j))). 1/Σ = ∫₀^∞ e^{−tΣ} dt turns E[n·max/Σ; mixed] into an
 * integral of products, evaluated by a trapezoidal rule in ln t (~50 nodes, relative error < 1e-9).
 * Groups no boundary can reach (P < 1e-20) are pure. For launches so large that a boundary's
 * spread σ_j = √(N F(1−F)) is many groups wide, E[H] is smooth in the group index there and
 * such groups are evaluated at a stride (one per chunk of up to σ/(4n) groups, weighted by the chunk;
 * measured effect below 1e-4 of the excess loss E[H] − 1). Boundaries spread over at least n units
 * are covered by the stationary programme, in moment form (sorted-stationary-moments.ts; proven
 * error ≤ 1e-6 of the excess) with the quadrature form as fallback and reference.
 */
import { binomialHead, binomialPmf } from '../distributions/binomial-pmf.ts';
import type { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { logFactorial } from '../numerics/special-functions.ts';
import { assertGroupSize } from '../loss/group-size.ts';
import { laplaceQuadrature as quadratureFor, type Quadrature } from '../numerics/laplace-quadrature.ts';
import { NEGLIGIBLE_RUN, poissonRunLengths, stationaryMomentExcess } from './sorted-stationary-moments.ts';

/** Result of {@link sortedGroupingLoss}. */
export interface SortedGroupingLoss {
  /** E[mean of H over the groups of a sorted random launch]. */
  readonly expectedLoss: number;
  /** E[Σ n·max] / E[Σ work] over the groups of a sorted launch (the run-time view). */
  readonly workloadLoss: number;
  /** Full groups formed (units rounded down to a multiple of n). */
  readonly groups: number;
  /** Launch size N actually used: groups·n. */
  readonly units: number;
  /** Expected number of groups holding more than one distinct value, rounded to an integer. */
  readonly mixedGroups: number;
  /** Expected number of groups holding more than one distinct value (not rounded). */
  readonly expectedMixedGroups: number;
  /** Groups evaluated one by one (the rest are pure or, for huge launches, covered by a stride). */
  readonly evaluatedGroups: number;
}

/** Default number of units of a sorted launch: 2^20. */
export const DEFAULT_SORTED_UNITS = 1 << 20;

/** Largest launch accepted: 2^40 units. */
export const MAX_SORTED_UNITS = 2 ** 40;

// A boundary C_j is taken to lie within μ ± x where the Bernstein bound gives P(outside) ≤ 2e^{−46} ≈ 2e-20.
const TAIL_EXPONENT = 46;
// Terms below this weight are dropped from the dynamic programme (H ≤ n ≤ 1024 bounds their effect).
const NEGLIGIBLE = 1e-24;
// Boundaries whose position spreads over at least this many groups (σ ≥ n) fall at an offset
// within their group that is uniform to within 2e^{−2π²} ≈ 5e-9 (the binomial's characteristic
// function at 2π/n is about e^{−2π²σ²/n²}).
const STATIONARY_SPREAD = 1;

interface Boundary {
  /** Index j of the value below the boundary: C_j = #units ≤ v_j. */
  readonly index: number;
  readonly mean: number;
  readonly sd: number;
  /** Groups (0-based) whose mixing positions a..b−1 the boundary can reach. */
  readonly firstGroup: number;
  readonly lastGroup: number;
}

/**
 * Expected loss of grouping a sorted random launch (see the file comment): N units drawn i.i.d.
 * from W, sorted by work, cut into consecutive groups of n. With a discrete W most groups hold
 * one value (H = 1), so the loss tends to 1 as N grows, roughly 1 + O(|supp|·n/N).
 * Cost: the per-group programme about (groups a boundary can reach) × (values per group) × n·(≈50)
 * operations; the stationary programme about |support|·n²·9 additions (moment form). Measured on a
 * 2-core box, N = 2^20, n = 32: unif(0, 100000) about 0.8 s (6.9 s with `stationary: 'quadrature'`).
 *
 * @param options.units launch size N, an integer n..2^40 (default 2^20); rounded down to a multiple of n.
 * @param options.exact evaluate every group a boundary can reach one by one, without the stride
 *   for huge launches (default false; the stride changes the result by < 1e-4 of the excess loss).
 * @param options.stationary how the stationary programme evaluates 1/Σ: 'moments' (default) a
 *   series with a proven remainder bound (≤ 1e-6 of each start value's excess), falling back to
 *   the quadrature where the bound is larger; 'quadrature' the ~50-node Laplace quadrature for
 *   every start value (the previous method, ~8× slower at 10^5 values; kept as the reference).
 * @param options.onProgress called after each group the per-group programme evaluates, with the
 *   groups walked so far and the groups of the launch (that programme can take minutes for large
 *   supports in small launches); pure callback, no I/O here.
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_INVALID_ARGUMENT for bad units.
 * @example sortedGroupingLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32, { units: 4096 }).expectedLoss
 */
export function sortedGroupingLoss(
  dist: CategoricalDistribution,
  n: number,
  options: { units?: number; exact?: boolean; stationary?: 'moments' | 'quadrature'; onProgress?: (groupsDone: number, groups: number) => void } = {},
): SortedGroupingLoss {
  assertGroupSize(n);
  const requested = options.units ?? DEFAULT_SORTED_UNITS;
  if (!Number.isSafeInteger(requested) || requested < n || requested > MAX_SORTED_UNITS) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `units (launch size) must be an integer >= n=${n} and <= 2^40, got ${String(requested)}`);
  }
  const groups = Math.floor(requested / n);
  const units = groups * n;
  const m = dist.size;
  const values = dist.values;
  const p = dist.probabilities;
  const total = p.reduce((a, b) => a + b, 0);
  // below[j] = P(W ≤ v_j), above[j] = P(W > v_j), each summed from its own side for precision.
  const below = new Float64Array(m);
  const above = new Float64Array(m);
  let running = 0;
  for (let j = 0; j < m; j++) below[j] = running += p[j]! / total;
  running = 0;
  for (let j = m - 1; j >= 0; j--) {
    above[j] = running;
    running += p[j]! / total;
  }
  const mean = dist.mean();
  const workloadLoss = mean > 0 ? expectedGroupMaximumSum(values, below, above, units, n) / (groups * mean) : 1;
  if (m === 1 || n === 1) {
    return { expectedLoss: 1, workloadLoss, groups, units, mixedGroups: 0, expectedMixedGroups: 0, evaluatedGroups: 0 };
  }

  const boundaries: Boundary[] = [];
  // C_j lies in reachLow[j]..reachHigh[j] but for probability ≤ 2e-20.
  const reachLow = new Float64Array(m);
  const reachHigh = new Float64Array(m);
  const stationary = new Uint8Array(m);
  for (let j = 0; j < m - 1; j++) {
    const mu = units * below[j]!;
    const sd = Math.sqrt(units * below[j]! * above[j]!);
    const reach = TAIL_EXPONENT / 3 + Math.sqrt((TAIL_EXPONENT * TAIL_EXPONENT) / 9 + 2 * TAIL_EXPONENT * sd * sd);
    const low = Math.max(0, Math.ceil(mu - reach));
    const high = Math.min(units, Math.floor(mu + reach));
    reachLow[j] = low;
    reachHigh[j] = high;
    // A boundary spread over many groups falls at a uniform offset within its group: the
    // stationary programme covers the groups that start with v_j (docs/model.md §2d).
    if (options.exact !== true && sd >= STATIONARY_SPREAD * n) {
      stationary[j] = 1;
      continue;
    }
    // Group g mixes when C_j ∈ [g·n + 1, g·n + n − 1].
    const firstGroup = Math.max(0, Math.ceil((low - n + 1) / n));
    const lastGroup = Math.min(groups - 1, Math.floor((high - 1) / n));
    if (firstGroup <= lastGroup) boundaries.push({ index: j, mean: mu, sd, firstGroup, lastGroup });
  }

  const positive = values.find((v) => v > 0);
  if (positive === undefined || (boundaries.length === 0 && !stationary.includes(1))) {
    return { expectedLoss: 1, workloadLoss, groups, units, mixedGroups: 0, expectedMixedGroups: 0, evaluatedGroups: 0 };
  }
  const quadrature = quadratureFor(positive, n * values[m - 1]!);
  const stationaryPart = !stationary.includes(1)
    ? { excess: 0, mixed: 0 }
    : options.stationary === 'quadrature'
      ? stationaryExcess(values, p, total, units, n, quadrature, stationary)
      : stationaryHybrid(values, p, total, units, n, quadrature, stationary);
  if (boundaries.length === 0) {
    return {
      expectedLoss: 1 + stationaryPart.excess / groups,
      workloadLoss,
      groups,
      units,
      mixedGroups: Math.round(stationaryPart.mixed),
      expectedMixedGroups: stationaryPart.mixed,
      evaluatedGroups: 0,
    };
  }
  const evaluator = createGroupEvaluator(values, p, total, below, above, units, n, quadrature, reachLow, reachHigh, stationary);

  // Walk the groups some boundary reaches, in order; each group's boundaries are those whose
  // group range contains it. Smooth stretches of huge launches are sampled at a stride.
  const order = [...boundaries].sort((x, y) => x.firstGroup - y.firstGroup);
  let excessSum = 0;
  let mixedSum = 0;
  let evaluated = 0;
  let next = 0;
  const active: Boundary[] = [];
  let g = order[0]!.firstGroup;
  while (g < groups) {
    while (next < order.length && order[next]!.firstGroup <= g) active.push(order[next++]!);
    for (let i = active.length - 1; i >= 0; i--) if (active[i]!.lastGroup < g) active.splice(i, 1);
    if (active.length === 0) {
      if (next >= order.length) break;
      g = order[next]!.firstGroup;
      continue;
    }
    // Chunk of groups sharing this estimate: up to σ_min/(4n) groups (E[H] varies on a scale of σ/n
    // groups), and no boundary entering or leaving within it.
    let minSd = Infinity;
    let firstIndex = m;
    let lastIndex = -1;
    let chunkEnd = groups - 1;
    for (const b of active) {
      minSd = Math.min(minSd, b.sd);
      firstIndex = Math.min(firstIndex, b.index);
      lastIndex = Math.max(lastIndex, b.index);
      chunkEnd = Math.min(chunkEnd, b.lastGroup);
    }
    if (next < order.length) chunkEnd = Math.min(chunkEnd, order[next]!.firstGroup - 1);
    const stride = options.exact === true ? 1 : Math.max(1, Math.floor(minSd / (4 * n)));
    const length = Math.min(stride, chunkEnd - g + 1);
    const sample = g + Math.floor((length - 1) / 2);
    const result = evaluator(sample, firstIndex, lastIndex);
    excessSum += length * result.excess;
    mixedSum += length * result.mixed;
    evaluated++;
    g += length;
    options.onProgress?.(Math.min(g, groups), groups);
  }
  const expectedMixedGroups = mixedSum + stationaryPart.mixed;
  return {
    expectedLoss: 1 + (excessSum + stationaryPart.excess) / groups,
    workloadLoss,
    groups,
    units,
    mixedGroups: Math.round(expectedMixedGroups),
    expectedMixedGroups,
    evaluatedGroups: evaluated,
  };
}

/**
 * E[Σ_g max_g]: the maximum of group g (1-based) is the order statistic X_(g·n), and
 * Σ_g P(X_(g·n) > v_j) = Σ_g P(C_j ≤ g·n − 1) = G − E[⌊C_j/n⌋].
 */
function expectedGroupMaximumSum(values: readonly number[], below: Float64Array, above: Float64Array, units: number, n: number): number {
  const groups = units / n;
  let sum = groups * values[0]!;
  for (let j = 0; j < values.length - 1; j++) {
    const mu = units * below[j]!;
    const sd = Math.sqrt(units * below[j]! * above[j]!);
    let remainder: number; // E[C_j mod n]
    if (n === 1) remainder = 0;
    else if (sd >= 2 * n) remainder = (n - 1) / 2; // the binomial is uniform mod n to ~e^{−2π²·4} ≈ 1e-34
    else {
      const reach = TAIL_EXPONENT / 3 + Math.sqrt((TAIL_EXPONENT * TAIL_EXPONENT) / 9 + 2 * TAIL_EXPONENT * sd * sd);
      const low = Math.max(0, Math.ceil(mu - reach));
      const high = Math.min(units, Math.floor(mu + reach));
      let mass = 0;
      let weighted = 0;
      for (let c = low; c <= high; c++) {
        const pc = binomialPmf(c, units, below[j]!, above[j]!);
        mass += pc;
        weighted += pc * (c % n);
      }
      remainder = mass > 0 ? weighted / mass : 0;
    }
    const floorMean = (mu - remainder) / n;
    sum += (values[j + 1]! - values[j]!) * (groups - floorMean);
  }
  return sum;
}

interface GroupEstimate {
  /** E[H] − 1 of the group. */
  readonly excess: number;
  /** P(the group holds more than one value). */
  readonly mixed: number;
}

function createGroupEvaluator(
  values: readonly number[],
  p: readonly number[],
  total: number,
  below: Float64Array,
  above: Float64Array,
  units: number,
  n: number,
  quadrature: Quadrature,
  reachLow: Float64Array,
  reachHigh: Float64Array,
  stationary: Uint8Array,
): (group: number, firstIndex: number, lastIndex: number) => GroupEstimate {
  const m = values.length;
  const width = quadrature.times.length + 1; // column 0: probability; 1..: Laplace nodes
  // powers of g_j(t) = e^{−t·v_j}: powers[d·width + i] = g^d at node i (column 0 ≡ 1).
  const powerCache = new Map<number, Float64Array>();
  const powersOf = (j: number): Float64Array => {
    let table = powerCache.get(j);
    if (table === undefined) {
      table = new Float64Array((n + 1) * width);
      for (let i = 0; i < width; i++) {
        const base = i === 0 ? 1 : Math.exp(-quadrature.times[i - 1]! * values[j]!);
        let power = 1;
        for (let d = 0; d <= n; d++) {
          table[d * width + i] = power;
          power *= base;
        }
      }
      powerCache.set(j, table);
    }
    return table;
  };
  let state = new Float64Array(n * width); // state[k·width + i], k = 1..n−1 slots filled
  let nextState = new Float64Array(n * width);
  const alive = new Uint8Array(n);
  const nextAlive = new Uint8Array(n);
  const head = new Float64Array(n + 1);
  const completion = new Float64Array(width);

  return (group, firstIndex, lastIndex) => {
    for (const key of powerCache.keys()) if (key < firstIndex) powerCache.delete(key);
    const before = group * n; // a − 1: units strictly before the group
    state.fill(0);
    alive.fill(0);
    completion.fill(0);
    let anyAlive = false;
    for (let j = firstIndex; j < m; j++) {
      if (!anyAlive && j > lastIndex) break;
      const powers = powersOf(j);
      nextState.fill(0);
      nextAlive.fill(0);
      let nextAny = false;
      if (anyAlive) {
        // The count of v_j given C_{j−1} = c is Binomial(N − c, p_j / P(W ≥ v_j)).
        const q = j === m - 1 ? 1 : p[j]! / total / above[j - 1]!;
        const qc = j === m - 1 ? 0 : above[j]! / above[j - 1]!;
        for (let k = 1; k < n; k++) {
          if (alive[k] === 0) continue;
          const need = n - k;
          const trials = units - before - k;
          // Usual case: v_j is far more common than the slots left, so it surely completes the group.
          const certain = trials * q > need && binomialPmf(need - 1, trials, q, qc) * need < NEGLIGIBLE;
          const headSum = certain ? 0 : binomialHead(trials, q, qc, need, head);
          const base = k * width;
          const finish = Math.max(0, 1 - headSum);
          if (finish > NEGLIGIBLE) {
            const offset = need * width;
            const scale = n * values[j]!;
            completion[0] = completion[0]! + state[base]! * finish;
            for (let i = 1; i < width; i++) completion[i] = completion[i]! + state[base + i]! * finish * scale * powers[offset + i]!;
          }
          for (let d = 0; d < need && !certain; d++) {
            const w = head[d]!;
            if (w * state[base]! <= NEGLIGIBLE) continue;
            const target = (k + d) * width;
            const offset = d * width;
            for (let i = 0; i < width; i++) nextState[target + i] = nextState[target + i]! + w * state[base + i]! * powers[offset + i]!;
            nextAlive[k + d] = 1;
            nextAny = true;
          }
        }
      }
      // Groups that start with a value of the stationary set are counted by stationaryExcess.
      if (j < m - 1 && stationary[j] === 0 && before + n - 1 >= reachLow[j]! && before + 1 <= reachHigh[j]!) {
        // Enter: the group starts with v_j, C_{j−1} ≤ a − 1 and C_j = s = a − 1 + k. Given C_j = s,
        // the count of v_j among the s is Binomial(s, π), π = p_j/F_j, and C_{j−1} ≤ a − 1 means
        // it is ≥ k: T(k) = P(Binomial(a − 1 + k, π) ≥ k), T(k + 1) = T(k) − (1 − π)·P(Binomial(a − 1 + k, π) = k).
        const share = j === 0 ? 1 : p[j]! / total / below[j]!;
        const shareComplement = j === 0 ? 0 : below[j - 1]! / below[j]!;
        let atLeast = j === 0 ? 1 : 1 - Math.exp((before + 1) * (shareComplement < 0.5 ? Math.log(shareComplement) : Math.log1p(-share)));
        for (let k = 1; k < n; k++) {
          if (k > 1 && j > 0) atLeast -= shareComplement * binomialPmf(k - 1, before + k - 1, share, shareComplement);
          if (atLeast <= 0) break;
          const pc = binomialPmf(before + k, units, below[j]!, above[j]!);
          const enter = pc * atLeast;
          if (enter <= NEGLIGIBLE) continue;
          const target = k * width;
          for (let i = 0; i < width; i++) nextState[target + i] = nextState[target + i]! + enter * powers[target + i]!;
          nextAlive[k] = 1;
          nextAny = true;
        }
      }
      const swap = state;
      state = nextState;
      nextState = swap;
      alive.set(nextAlive);
      anyAlive = nextAny;
    }
    let laplace = 0;
    for (let i = 1; i < width; i++) laplace += quadrature.weights[i - 1]! * completion[i]!;
    return { excess: laplace - completion[0]!, mixed: completion[0]! };
  };
}

/**
 * The stationary programme as advise runs it (docs/model.md §2d, sorting): the moment form
 * (sorted-stationary-moments.ts) for every start value whose proven remainder bound is within
 * 1e-6 of its excess, the quadrature form ({@link stationaryExcess}) for the rest (v_j = 0, or
 * v_j small against the spread of the values its windows reach). The quadrature form runs only
 * over the values up to the last hard one plus a margin whose Poisson(Λ) run lengths hold n − 1
 * units but for probability < 1e-20 (Λ ≥ truncationMass(n)); windows reaching past the
 * margin are dropped, which changes a hard start value's excess by < (n − 1)·1e-20.
 */
function stationaryHybrid(
  values: readonly number[],
  p: readonly number[],
  total: number,
  units: number,
  n: number,
  quadrature: Quadrature,
  stationary: Uint8Array,
): { excess: number; mixed: number } {
  const moments = stationaryMomentExcess(values, p, total, units, n, stationary);
  if (moments.lastHard < 0) return { excess: moments.excess, mixed: moments.mixed };
  const m = values.length;
  let top = moments.lastHard;
  let mass = 0;
  while (top < m - 1 && mass < truncationMass(n)) mass += (units * p[++top]!) / total;
  const quadraturePart = stationaryExcess(values, p, total, units, n, quadrature, moments.hard, top);
  return { excess: moments.excess + quadraturePart.excess, mixed: moments.mixed + quadraturePart.mixed };
}

/**
 * Smallest Poisson mean Λ (to 1 %) with P(Poisson(Λ) ≤ n − 2) < 1e-20: runs of that much
 * expected length hold the n − 1 units a window needs but for that probability. Memoised per n.
 */
const truncationMasses = new Map<number, number>();
function truncationMass(n: number): number {
  let cached = truncationMasses.get(n);
  if (cached === undefined) {
    cached = n;
    for (;;) {
      // ln P(Poisson(Λ) ≤ n − 2), summed downward from its largest term k = n − 2 (Λ ≥ n).
      const top = Math.max(0, n - 2);
      const logTop = -cached + top * Math.log(cached) - logFactorial(top);
      let sum = 0;
      let term = 1;
      for (let k = top; k >= 0; k--) {
        sum += term;
        term *= k / cached;
      }
      if (logTop + Math.log(sum) < Math.log(1e-20)) break;
      cached *= 1.01;
    }
    truncationMasses.set(n, cached);
  }
  return cached;
}

/**
 * The stationary programme (docs/model.md §2d, sorting): Σ over the groups that start with a value
 * v_j of the stationary set of E[H − 1] and P(mixed), for launches where the boundary after v_j
 * falls at a uniform offset within its group. A window of n consecutive sorted units that starts
 * d < n units before the end of the run of v_j is a group with probability 1/n; it holds d copies
 * of v_j and the first n − d units of the later runs, whose lengths are taken as independent
 * Poisson(N·f(v)) counts. Backward over the values, B_j(r) = E[max·e^{−tΣ}; the first r units
 * from runs j, j+1, ... exist] (column 0: P(they exist)):
 *   B_j(r) = Σ_{l<r} P(L_j = l)·e^{−t·l·v_j}·B_{j+1}(r − l) + P(L_j ≥ r)·v_j·e^{−t·r·v_j}.
 * Cost O(|supp|·n²·K) for K quadrature nodes, independent of N (terms with P(L_j = l) < 1e-20 skipped).
 */
function stationaryExcess(
  values: readonly number[],
  p: readonly number[],
  total: number,
  units: number,
  n: number,
  quadrature: Quadrature,
  stationary: Uint8Array,
  top = values.length - 1,
): { excess: number; mixed: number } {
  const width = quadrature.times.length + 1;
  // next[r·width + i] = B_{j+1}(r) at node i (column 0: probability), r = 1..n−1.
  let next = new Float64Array(n * width);
  let current = new Float64Array(n * width);
  const powers = new Float64Array((n + 1) * width); // e^{−t·l·v_j}, l = 0..n
  const runPmf = new Float64Array(n); // P(L_j = l), l = 0..n−1
  const runTail = new Float64Array(n + 1); // P(L_j ≥ r), r = 0..n
  let excess = 0;
  let mixed = 0;
  for (let j = top; j >= 0; j--) {
    poissonRunLengths((units * p[j]!) / total, n, runPmf, runTail);
    // Nodes with t·v_j > 50 carry e^{−t·Σ} ≤ e^{−50} for every window from run j on (Σ ≥ v_j):
    // negligible, so the loops stop at `used` (nodes ascend in t; values descend as j does).
    let used = width;
    if (values[j]! > 0) while (used > 1 && quadrature.times[used - 2]! * values[j]! > 50) used--;
    for (let i = 0; i < used; i++) {
      const base = i === 0 ? 1 : Math.exp(-quadrature.times[i - 1]! * values[j]!);
      let power = 1;
      for (let l = 0; l <= n; l++) {
        powers[l * width + i] = power;
        power *= base;
      }
    }
    if (stationary[j] === 1) {
      // Windows that start d units before the end of run j: d copies of v_j, then B_{j+1}(n − d).
      for (let d = 1; d < n; d++) {
        const startWeight = runTail[d]!;
        if (startWeight <= NEGLIGIBLE_RUN) break;
        const row = (n - d) * width;
        const fill = next[row]!;
        let laplace = 0;
        for (let i = 1; i < used; i++) laplace += quadrature.weights[i - 1]! * powers[d * width + i]! * next[row + i]!;
        excess += startWeight * (n * laplace - fill);
        mixed += startWeight * fill;
      }
    }
    if (j === 0) break;
    current.fill(0);
    for (let r = 1; r < n; r++) {
      const target = r * width;
      for (let l = 0; l < r; l++) {
        const weight = runPmf[l]!;
        if (weight <= NEGLIGIBLE_RUN) continue;
        const source = (r - l) * width;
        const offset = l * width;
        for (let i = 0; i < used; i++) current[target + i] = current[target + i]! + weight * powers[offset + i]! * next[source + i]!;
      }
      const tail = runTail[r]!;
      if (tail > 0) {
        current[target] = current[target]! + tail;
        const scale = tail * values[j]!;
        for (let i = 1; i < used; i++) current[target + i] = current[target + i]! + scale * powers[r * width + i]!;
      }
    }
    const swap = next;
    next = current;
    current = swap;
  }
  return { excess: excess / n, mixed: mixed / n };
}
