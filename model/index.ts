// Public API of model/: pure imbalance mathematics (docs/model.md). No I/O, no Node built-ins.
// It exports what other folders use; the modules' other names stay inside model/ (its tests import
// the modules directly). The subfolders read as a table of contents (docs/model.md §10):
//   distributions/  work distributions W: categorical, families, specs, samplers, fits, seeded random
//   loss/           the imbalance model: exact and fast E[X_W(n)], one group's loss, quantiles, locality
//   what-ifs/       design what-ifs: granularity, sorting, binning, run policies
//   related/        related models: divergence cost and its fit, sampled groups, finishing time, transit
//   numerics/       special functions, quantiles, quadrature
//   testing/        test-only fixtures (brute force, random distributions, a QR least-squares reference)
export { ModelError } from './errors.ts';

// --- distributions/ ---
export { CategoricalDistribution } from './distributions/categorical-distribution.ts';
export { createCategoricalSampler } from './distributions/categorical-sampler.ts';
export { parseDistributionSpec } from './distributions/distribution-spec.ts';
export { createFamilySampler, sampleFamily } from './distributions/family-sampler.ts';
export { formatDistributionSpec } from './distributions/family.ts';
export { fitParametric } from './distributions/fit-parametric.ts';
export { createSeededRandom, mulberry32, type RandomSource } from './distributions/random.ts';

// --- loss/ ---
export { blockLoss } from './loss/block-loss.ts';
export { exactCost, exactExpectedLoss, exactLossDistribution } from './loss/exact-loss.ts';
export { expectedLoss, type LossMethod } from './loss/expected-loss.ts';
export { fastExpectedLoss, prepareFastLoss, preparedExpectedLoss, type FastLossPreparation } from './loss/fast-loss.ts';
export { groupLoss } from './loss/group-loss.ts';
export { MAX_GROUP_SIZE } from './loss/group-size.ts';
export { idleLaneShare } from './loss/idle-lane-share.ts';
export { localityLoss } from './loss/locality-loss.ts';
export { DEFAULT_QUANTILE_SEED, lossQuantiles } from './loss/loss-quantiles.ts';
export { conditionalLosses, lossStandardError } from './loss/loss-influence.ts';
export { relativeError } from './loss/relative-error.ts';
export { prepareWorkloadLoss, preparedWorkloadLoss, workloadLoss } from './loss/sample-maximum.ts';

// --- numerics/ ---
export { normalQuantileTwoSided } from './numerics/normal-quantile.ts';

// --- related/ ---
export {
  DIVERGENCE_ARCHITECTURES,
  divergenceArchitecture,
  divergencePatternBounds,
  extendedMeasuredLoss,
  predictDivergenceCycles,
} from './related/divergence-cost.ts';
export {
  type DivergenceMeasurement,
  type DivergenceObservation,
  divergenceObservationOf,
  divergenceObservationOfGroup,
  type DivergenceParameter,
  fitDivergenceCost,
  SAMPLED_GROUP_DIVERGENCE_FIT,
  solveDivergenceMoments,
} from './related/divergence-fit.ts';
export {
  finishingTimeBound,
  type FinishingTimeProblem,
  PUBLISHED_FINISHING_TIME_MACHINE,
  PUBLISHED_SUB_BLOCK_SHAPE,
} from './related/finishing-time-bound.ts';
export { simulateFinishingTime } from './related/finishing-time-simulation.ts';
export { type LoopSpec } from './related/reconvergence-stack.ts';
export {
  cloneSampledGroups,
  createSampledGroups,
  mergeSampledGroups,
  MIN_DIVERGENCE_FIT_GROUPS,
  recordSampledBlock,
  recordSampledGroup,
  recordSampledGroupColumns,
  type SampledGroupColumns,
  type SampledGroupInput,
  type SampledGroupsAccumulation,
  type SampledGroupsResult,
  summarizeSampledGroups,
} from './related/sampled-groups.ts';
export {
  computeDemand,
  memorySupply,
  solveTransit,
  type TransitOperatingPoint,
  type TransitParameters,
  type TransitSolution,
} from './related/transit-model.ts';

// --- what-ifs/ ---
export { binnedGroupingLoss, type GroupingBin } from './what-ifs/binned-grouping-loss.ts';
export { granularitySweep } from './what-ifs/granularity-sweep.ts';
export { DEFAULT_PREPASS_STRIDE, runPolicyLoss, traceLocalityLoss } from './what-ifs/run-policies.ts';
export { sortedGroupingLoss } from './what-ifs/sorted-grouping-loss.ts';
