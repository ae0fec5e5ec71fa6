// Public API of analysis/: the domain the CLI commands and the benchmarks compute with (docs/architecture.md §2):
// the advice of `warpwatch advise` (docs/advise.md), the per-stream analysis of decoded frames of
// `warpwatch analyze` and `compare` with its divergence-extended prediction (docs/model.md §2c, §4),
// and the sampled runs grouped by launch. Pure: no I/O, no Node built-ins (a lint rule keeps it so).
export { BALANCED_LOSS, computeAdvice, type Advice } from './advice.ts';
export { analyzeFrames, isCountsOnlySummary, observedDistributionOf, type StreamAnalysis } from './stream-analysis.ts';
export { DIVERGENCE_OFF_NOTE, divergenceSettingsOf, type DivergenceSettings } from './divergence-analysis.ts';
export { runsByLaunchOf } from './launch-runs.ts';
