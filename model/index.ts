// Public API of model/: pure imbalance mathematics (model.md). No I/O, no Node built-ins.
export { CategoricalDistribution, type Truncation, type WeightInput } from './categorical-distribution.ts';
export {
  FAMILY_NAMES,
  MAX_FAMILY_SUPPORT,
  familyLogPmf,
  formatDistributionSpec,
  generateFamilyPmf,
  validateFamilySpec,
  type FamilyPmf,
  type FamilySpec,
} from './family.ts';
export { parseDistributionSpec } from './distribution-spec.ts';
export { MODEL_ERROR_CODES, ModelError, type ModelErrorCode } from './errors.ts';
export { MAX_GROUP_SIZE, assertGroupSize } from './group-size.ts';
export { expectedLoss, LOSS_METHODS, type LossMethod } from './expected-loss.ts';
export { fastExpectedLoss, type FastLossResult } from './fast-loss.ts';
export {
  EXACT_CELL_LIMIT,
  EXACT_WORK_LIMIT,
  exactCost,
  exactExpectedLoss,
  exactLossDistribution,
  type ExactCost,
  type ExactLossDistribution,
  type LossOutcome,
} from './exact-loss.ts';
export { DEFAULT_QUANTILE_SEED, EXACT_QUANTILE_WORK_LIMIT, lossQuantiles, type LossQuantiles } from './loss-quantiles.ts';
export { expectedMaximum, sampleMaximumPmf, workloadLoss, type MaximumPmf } from './sample-maximum.ts';
export { idleLaneShare } from './idle-lane-share.ts';
export { relativeError } from './relative-error.ts';
export { DEFAULT_SWEEP_GROUP_SIZES, granularitySweep, type GranularityRow } from './granularity-sweep.ts';
export { groupLoss } from './group-loss.ts';
export { normalCdf, normalQuantileTwoSided } from './normal-quantile.ts';
export { localityLoss, ratioEstimate, ratioOfConstantDenominator, type LocalityLoss, type LocalityLossRow, type RatioEstimate } from './locality-loss.ts';
export { blockLoss, type BlockLoss } from './block-loss.ts';
export { coarseEstimate, DEFAULT_PREPASS_STRIDE, runPolicyLoss, traceLocalityLoss, type RunPolicy, type RunPolicyLoss } from './run-policies.ts';
export { createSeededRandom, type RandomSource } from './random.ts';
export { createCategoricalSampler, type CategoricalSampler } from './categorical-sampler.ts';
export { createFamilySampler, sampleFamily } from './family-sampler.ts';
export { logFactorial, logGamma, powInteger } from './special-functions.ts';

// --- related models: divergence cost, finishing-time bound, transit model ---
export {
  emulateReconvergenceStack,
  type LoopSpec,
  type ReconvergenceStackOptions,
  type ReconvergenceStackTrace,
} from './reconvergence-stack.ts';
export {
  DIVERGENCE_ARCHITECTURES,
  divergenceArchitecture,
  divergencePatternBounds,
  predictDivergenceCycles,
  extendedMeasuredLoss,
  type DivergenceArchitecture,
  type DivergenceArchitectureName,
  type DivergenceCostParameters,
  type DivergenceCyclePrediction,
  type ExtendedMeasuredLoss,
  type ExtendedMeasuredLossOptions,
} from './divergence-cost.ts';
export {
  SAMPLED_GROUP_DIVERGENCE_FIT,
  addDivergenceObservation,
  createDivergenceMoments,
  fitDivergenceCost,
  solveDivergenceMoments,
  divergenceObservationOf,
  divergenceObservationOfGroup,
  type DivergenceFit,
  type DivergenceFitOptions,
  type DivergenceMomentsFit,
  type DivergenceParameter,
  type DivergenceMeasurement,
  type DivergenceObservation,
} from './divergence-fit.ts';
export { solveLeastSquares, type LeastSquaresSolution } from './least-squares.ts';
export {
  addRegressionRow,
  createRegressionMoments,
  mergeRegressionMoments,
  solveRegressionMoments,
  type RegressionMoments,
  type RegressionOptions,
  type StreamingRegressionFit,
} from './streaming-regression.ts';
export {
  MIN_DIVERGENCE_FIT_GROUPS,
  cloneSampledGroups,
  createSampledGroups,
  mergeSampledGroups,
  recordSampledBlock,
  recordSampledGroup,
  summarizeSampledGroups,
  type SampledDivergenceFit,
  type SampledGroupInput,
  type SampledGroupsAccumulation,
  type SampledGroupsResult,
} from './sampled-groups.ts';
export {
  PUBLISHED_FINISHING_TIME_MACHINE,
  PUBLISHED_SUB_BLOCK_SHAPE,
  finishingTimeBound,
  finishingTimeProgram,
  normaliseFinishingTimeProblem,
  type FinishingTimeBound,
  type FinishingTimeInstruction,
  type FinishingTimeMachine,
  type FinishingTimeProblem,
  type SubBlockShape,
} from './finishing-time-bound.ts';
export {
  simulateFinishingTime,
  type FinishingTimePolicy,
  type FinishingTimeSimulation,
  type FinishingTimeSimulationOptions,
} from './finishing-time-simulation.ts';
export {
  solveTransit,
  transitOperatingPoint,
  normaliseTransitParameters,
  memorySupply,
  computeDemand,
  type TransitParameters,
  type TransitBoundClass,
  type TransitOperatingPoint,
  type TransitSolution,
} from './transit-model.ts';
export { DEFAULT_SORTED_UNITS, MAX_SORTED_UNITS, sortedGroupingLoss, type SortedGroupingLoss } from './sorted-grouping-loss.ts';
export {
  MAX_OPTIMAL_BINNING_SUPPORT,
  binnedGroupingLoss,
  type BinEdgeChoice,
  type BinnedGroupingLoss,
  type GroupingBin,
} from './binned-grouping-loss.ts';
export { fitParametric, type ParametricFit } from './fit-parametric.ts';
export { maximumSumMoments } from './fast-loss.ts';
