/**
 * The "load balancing by binning" what-if (docs/model.md §2d): units are sorted into k bins by their
 * work and grouped within their bin, so each bin's groups draw from W truncated to the bin.
 */
import { CategoricalDistribution } from '../distributions/categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { expectedLoss } from '../loss/expected-loss.ts';
import { assertGroupSize } from '../loss/group-size.ts';
import { expectedMaximum } from '../loss/sample-maximum.ts';
import { powInteger } from '../numerics/special-functions.ts';
import { binnedLaunchLoss } from './binned-launch.ts';

/** How {@link binnedGroupingLoss} chooses bin edges. */
export type BinEdgeChoice = 'equal-mass' | 'optimal';

/** One bin of a binned grouping. */
export interface GroupingBin {
  /** Smallest and largest support value in the bin (inclusive). */
  readonly low: number;
  readonly high: number;
  /** P(W in bin): the share of units, and of groups, in this bin. */
  readonly probability: number;
  /** Share of all work in this bin: probability·E[W | bin]/E[W]. */
  readonly workShare: number;
  /** E[X] of a group drawn from W truncated to the bin. */
  readonly expectedLoss: number;
  /** E[max]/E[W] within the bin. */
  readonly workloadLoss: number;
  readonly expectedMaximum: number;
  readonly mean: number;
  /** With a finite launch: expected number of groups per launch entirely inside this bin. */
  readonly expectedGroups?: number;
}

/** Result of {@link binnedGroupingLoss}. */
export interface BinnedGroupingLoss {
  readonly bins: GroupingBin[];
  /** Mean H over all groups: Σ_b P(bin b)·E[X_b] (groups are formed in proportion to units). */
  readonly expectedLoss: number;
  /** Total SIMT over total MIMD cost: Σ_b P(b)·E[max_b] / E[W]; the run-time view. */
  readonly workloadLoss: number;
  readonly edges: BinEdgeChoice;
  /** Launch size N the policy was evaluated for; undefined for the limit of large launches. */
  readonly units: number | undefined;
  /** With a finite launch: expected groups per launch across a bin boundary (holding units of two or more bins). */
  readonly mixedGroups?: number;
}

/** Largest support for which `optimal` edges are searched (the search costs O(k·|supp|³)). */
export const MAX_OPTIMAL_BINNING_SUPPORT = 300;

function equalMassCuts(probabilities: readonly number[], k: number): number[] {
  // cuts[b] = last index of bin b; bin b ends at the first index whose cdf reaches (b+1)/k.
  const cuts: number[] = [];
  let cumulative = 0;
  let bin = 0;
  for (let j = 0; j < probabilities.length; j++) {
    cumulative += probabilities[j]!;
    if (cumulative >= ((bin + 1) / k) * (1 - 1e-12) || j === probabilities.length - 1) {
      cuts.push(j);
      while (bin < k && cumulative >= ((bin + 1) / k) * (1 - 1e-12)) bin++;
    }
  }
  if (cuts[cuts.length - 1] !== probabilities.length - 1) cuts.push(probabilities.length - 1);
  return cuts;
}

/** P(bin)·E[max of n draws from W | bin] for the bin of indices i..j (by parts, O(j − i)). */
function binWorkCost(values: readonly number[], prefix: Float64Array, i: number, j: number, n: number): number {
  const mass = prefix[j + 1]! - prefix[i]!;
  if (!(mass > 0)) return 0;
  let maximum = values[j]!;
  for (let l = i; l < j; l++) maximum -= (values[l + 1]! - values[l]!) * powInteger((prefix[l + 1]! - prefix[i]!) / mass, n);
  return mass * maximum;
}

function optimalCuts(dist: CategoricalDistribution, n: number, k: number): number[] {
  const size = dist.size;
  const prefix = new Float64Array(size + 1);
  for (let j = 0; j < size; j++) prefix[j + 1] = prefix[j]! + dist.probabilities[j]!;
  const cost: Float64Array[] = [];
  for (let i = 0; i < size; i++) {
    const row = new Float64Array(size);
    for (let j = i; j < size; j++) row[j] = binWorkCost(dist.values, prefix, i, j, n);
    cost.push(row);
  }
  // best[b][j]: least Σ cost of splitting indices 0..j into b+1 bins; choice[b][j]: start of the last bin.
  const bins = Math.min(k, size);
  const best: Float64Array[] = [Float64Array.from({ length: size }, (_, j) => cost[0]![j]!)];
  const choice: Int32Array[] = [new Int32Array(size)];
  for (let b = 1; b < bins; b++) {
    const row = new Float64Array(size).fill(Infinity);
    const from = new Int32Array(size);
    for (let j = b; j < size; j++) {
      for (let start = b; start <= j; start++) {
        const candidate = best[b - 1]![start - 1]! + cost[start]![j]!;
        if (candidate < row[j]!) {
          row[j] = candidate;
          from[j] = start;
        }
      }
    }
    best.push(row);
    choice.push(from);
  }
  const cuts: number[] = [];
  let end = size - 1;
  for (let b = bins - 1; b >= 0; b--) {
    cuts.unshift(end);
    end = b === 0 ? -1 : choice[b]![end]! - 1;
  }
  return cuts;
}

/**
 * Loss when units are binned by work into k bins (contiguous ranges of the support) and grouped
 * within their bin. Each bin's groups are i.i.d. draws of W truncated to the bin, so bin b has
 * E[X_b] by the fast method; with N units, bin b forms about N·P(b)/n groups.
 *
 * Edges: `equal-mass` (default) ends bin b at the first support value whose cdf reaches b/k
 * (a heavy single value can take several quantiles, so fewer than k bins may result);
 * `optimal` minimises the total SIMT cost Σ_b P(b)·E[max_b] (i.e. the workload loss) over all
 * contiguous partitions into at most k bins by dynamic programming, O(k·|supp|³), for supports up
 * to {@link MAX_OPTIMAL_BINNING_SUPPORT} values.
 *
 * Finite launches (`units` = N, docs/model.md §2d): the launch's N units (rounded down to a
 * multiple of n) are ordered by bin — a counting sort on the bin index, units of one bin in
 * random order — and cut into N/n consecutive groups, as sorting cuts the sorted sequence. Groups
 * inside bin b lose E[X_b(n)]; a group across a bin boundary holds the last units of one bin and
 * the first of the next; where the boundaries fall is Binomial (binned-launch.ts). Then
 * `expectedLoss` = E[mean H over the N/n groups] and `workloadLoss` = E[Σ n·max]/(N·E[W]).
 * Without `units`, the limit N → ∞: Σ P(b)·E[X_b(n)].
 *
 * @throws {ModelError} WW_ERR_MODEL_GROUP_SIZE for a bad n; WW_ERR_MODEL_INVALID_ARGUMENT for k
 *   not an integer 1..1024, units not an integer n..2^40, or an `optimal` request on a too large support.
 * @example binnedGroupingLoss(CategoricalDistribution.fromFamily({ family: 'geo', p: 0.05 }), 32, 4).workloadLoss
 */
export function binnedGroupingLoss(
  dist: CategoricalDistribution,
  n: number,
  k: number,
  options: { edges?: BinEdgeChoice; units?: number } = {},
): BinnedGroupingLoss {
  const launch = options.units;
  assertGroupSize(n);
  if (launch !== undefined && (!Number.isSafeInteger(launch) || launch < n || launch > 2 ** 40)) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `units (launch size) must be an integer >= n=${n} and <= 2^40, got ${String(launch)}`);
  }
  if (!Number.isInteger(k) || k < 1 || k > 1024) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `bin count k must be an integer 1..1024, got ${String(k)}`);
  }
  const edges = options.edges ?? 'equal-mass';
  if (edges !== 'equal-mass' && edges !== 'optimal') {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `edges must be 'equal-mass' or 'optimal', got '${String(edges)}'`);
  }
  if (edges === 'optimal' && dist.size > MAX_OPTIMAL_BINNING_SUPPORT) {
    throw new ModelError(
      'WW_ERR_MODEL_INVALID_ARGUMENT',
      `optimal bin edges need a support of at most ${MAX_OPTIMAL_BINNING_SUPPORT} values, got ${dist.size}; use edges 'equal-mass'`,
    );
  }
  const cuts = edges === 'optimal' ? optimalCuts(dist, n, k) : equalMassCuts(dist.probabilities, k);
  const mean = dist.mean();
  const bins: (GroupingBin & { readonly truncated: CategoricalDistribution })[] = [];
  let start = 0;
  for (const end of cuts) {
    const pairs: [number, number][] = [];
    let probability = 0;
    for (let j = start; j <= end; j++) {
      pairs.push([dist.values[j]!, dist.probabilities[j]!]);
      probability += dist.probabilities[j]!;
    }
    start = end + 1;
    const bin = CategoricalDistribution.fromPmf(pairs);
    const binMean = bin.mean();
    const maximum = expectedMaximum(bin, n);
    bins.push({
      low: bin.min,
      high: bin.max,
      probability,
      workShare: mean > 0 ? (probability * binMean) / mean : 0,
      expectedLoss: expectedLoss(bin, n),
      workloadLoss: binMean > 0 ? maximum / binMean : 1,
      expectedMaximum: maximum,
      mean: binMean,
      truncated: bin,
    });
  }
  if (launch === undefined) {
    const expected = bins.reduce((sum, b) => sum + b.probability * b.expectedLoss, 0);
    const simt = bins.reduce((sum, b) => sum + b.probability * b.expectedMaximum, 0);
    return { bins: bins.map(({ truncated: _unused, ...bin }) => bin), expectedLoss: expected, workloadLoss: mean > 0 ? simt / mean : 1, edges, units: undefined };
  }
  // Finite launch: the bin-ordered sequence cut into consecutive groups (docs/model.md §2d, binning).
  const truncated = bins.map((bin) => bin.truncated);
  const launchResult = binnedLaunchLoss(
    bins.map((bin, index) => ({ distribution: truncated[index]!, probability: bin.probability, expectedLoss: bin.expectedLoss, expectedMaximum: bin.expectedMaximum })),
    n,
    launch,
    mean,
  );
  const withGroups: GroupingBin[] = bins.map(({ truncated: _unused, ...bin }, index) => ({ ...bin, expectedGroups: launchResult.pureGroups[index]! }));
  return {
    bins: withGroups,
    expectedLoss: launchResult.expectedLoss,
    workloadLoss: launchResult.workloadLoss,
    edges,
    units: launch,
    mixedGroups: launchResult.mixedGroups,
  };
}
