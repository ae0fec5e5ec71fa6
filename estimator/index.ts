// Public exports of estimator/: series names (imported by dashboards), window
// state, per-window computation, alerting, sinks, configuration and the service.
export { MEASUREMENTS, TAGS, LABEL_TAGS, STREAM_TAGS, FIELDS, ALERT_KINDS, PIPELINE_SERVICES, TOPICS } from './series.ts';
export type { MeasurementName, AlertKind } from './series.ts';
export { ESTIMATOR_ERROR_CODES, EstimatorError, EstimatorConfigError } from './errors.ts';
export type { EstimatorErrorCode } from './errors.ts';
export { loadEstimatorConfig, loadEstimatorKafkaConfig } from './config.ts';
export type { EstimatorConfig, EstimatorConfigInput, EstimatorFlags, EstimatorKafkaSecurity, PredictionBasis } from './config.ts';
export {
  DEFAULT_COUNT_HISTOGRAM_OPTIONS,
  addCount,
  addHistogram,
  binOfValue,
  binningErrorBound,
  cloneCountHistogram,
  createCountHistogram,
  histogramEntries,
  mergeCountHistograms,
  representativeCounts,
  scaleCountHistogram,
} from './engine/count-histogram.ts';
export type { CountHistogram, CountHistogramOptions, HistogramEntry } from './engine/count-histogram.ts';
export { streamIdentityOf, streamKeyOf } from './engine/launch-observation.ts';
export type { LaunchObservation, StreamIdentity } from './engine/launch-observation.ts';
export { observationFromFrame, sampledGroupInputOf, samplesObservationFromFrame } from './engine/frame-observation.ts';
export {
  closeIdleWindows,
  closeWindowsThrough,
  createStreamState,
  createWindowAccumulation,
  frameIdentityOf,
  mergeWindowAccumulations,
  recordLaunchInWindow,
  recordObservation,
  snapshotWindow,
  windowStartOf,
} from './engine/stream-state.ts';
export type { CurrentDistributionOptions, RecordOutcome, StreamState, WindowAccumulation, WindowOptions } from './engine/stream-state.ts';
export { computeWindowResult, relativeError } from './engine/window-result.ts';
export type { ParametricFit, ParametricFitter, WindowComputeOptions, WindowResult } from './engine/window-result.ts';
export { DEFAULT_CUSUM_OPTIONS, createCusumState, isMonitoring, updateCusum } from './engine/change-detector.ts';
export type { CusumAlarm, CusumOptions, CusumState } from './engine/change-detector.ts';
export { createAlertState, evaluateAlerts, evaluateStale } from './engine/alert-detector.ts';
export { evaluateDetector } from './engine/detector-evaluation.ts';
export type { DetectorFigures } from './engine/detector-evaluation.ts';
export type { AlertEvent, AlertOptions, AlertSeries, AlertState } from './engine/alert-detector.ts';
export { alertPoint, pipelinePoint, streamTags, toLineProtocol, windowPoints } from './engine/series-points.ts';
export type { PipelineCounters, SeriesPoint } from './engine/series-points.ts';
export { alertRecord, distributionRecord } from './kafka-records.ts';
export type { AlertRecord, DistributionEntries, DistributionRecord } from './kafka-records.ts';
export { decodeStreamCheckpoint, encodeStreamCheckpoint } from './engine/checkpoint-codec.ts';
export type { StreamCheckpoint } from './engine/checkpoint-codec.ts';
export { createEstimatorEngine } from './engine/estimator-engine.ts';
export type { CheckpointRecord, EngineOptions, EngineOutputs, EngineTelemetry, EstimatorEngine, FrameOutcome } from './engine/estimator-engine.ts';
export { createEstimatorInfluxWriter, ensureInfluxDatabase, estimatorInfluxError, type InfluxDatabaseCheck } from './adapters/influx-writer.ts';
export type { EstimatorInfluxOptions } from './adapters/influx-writer.ts';
export { createEstimatorKafka, retryTransientKafka } from './adapters/kafka.ts';
export type { CheckpointMirror, ConsumedMessage, EstimatorKafka, EstimatorKafkaOptions, FramesHandlers, OutgoingRecord } from './adapters/kafka.ts';
export { contextFromTraceparent, createEstimatorTelemetry } from './adapters/estimator-telemetry.ts';
export type { EstimatorCounters, EstimatorTelemetry } from './adapters/estimator-telemetry.ts';
export { startMetricsServer } from './adapters/metrics-server.ts';
export type { EstimatorHealth, MetricsServer } from './adapters/metrics-server.ts';
export { engineOptionsFromConfig, modelFitter, startEstimator } from './estimator-service.ts';
export type { RunningEstimator } from './estimator-service.ts';
export { syntheticLaunchSummary } from './engine/synthetic-launch.ts';
export type { SyntheticLaunchOptions } from './engine/synthetic-launch.ts';
export { hashString, normalDeviate, poissonDeviate } from './engine/random-deviates.ts';
