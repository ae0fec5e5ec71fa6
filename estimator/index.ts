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
} from './count-histogram.ts';
export type { CountHistogram, CountHistogramOptions, HistogramEntry } from './count-histogram.ts';
export { streamIdentityOf, streamKeyOf } from './launch-observation.ts';
export type { LaunchObservation, StreamIdentity } from './launch-observation.ts';
export { observationFromFrame, sampledGroupInputOf, samplesObservationFromFrame } from './frame-observation.ts';
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
} from './stream-state.ts';
export type { CurrentDistributionOptions, RecordOutcome, StreamState, WindowAccumulation, WindowOptions } from './stream-state.ts';
export { computeWindowResult, relativeError } from './window-result.ts';
export type { ParametricFit, ParametricFitter, WindowComputeOptions, WindowResult } from './window-result.ts';
export { DEFAULT_CUSUM_OPTIONS, createCusumState, isMonitoring, updateCusum } from './change-detector.ts';
export type { CusumAlarm, CusumOptions, CusumState } from './change-detector.ts';
export { createAlertState, evaluateAlerts, evaluateStale } from './alert-detector.ts';
export { evaluateDetector } from './detector-evaluation.ts';
export type { DetectorFigures } from './detector-evaluation.ts';
export type { AlertEvent, AlertOptions, AlertSeries, AlertState } from './alert-detector.ts';
export { alertPoint, pipelinePoint, streamTags, toLineProtocol, windowPoints } from './series-points.ts';
export type { PipelineCounters, SeriesPoint } from './series-points.ts';
export { alertRecord, distributionRecord } from './kafka-records.ts';
export type { AlertRecord, DistributionEntries, DistributionRecord } from './kafka-records.ts';
export { decodeStreamCheckpoint, encodeStreamCheckpoint } from './checkpoint-codec.ts';
export type { StreamCheckpoint } from './checkpoint-codec.ts';
export { createEstimatorEngine } from './estimator-engine.ts';
export type { CheckpointRecord, EngineOptions, EngineOutputs, EngineTelemetry, EstimatorEngine, FrameOutcome } from './estimator-engine.ts';
export { createEstimatorInfluxWriter, ensureInfluxDatabase, estimatorInfluxError, type InfluxDatabaseCheck } from './influx-writer.ts';
export type { EstimatorInfluxOptions } from './influx-writer.ts';
export { createEstimatorKafka, retryTransientKafka } from './kafka.ts';
export type { CheckpointMirror, ConsumedMessage, EstimatorKafka, EstimatorKafkaOptions, FramesHandlers, OutgoingRecord } from './kafka.ts';
export { contextFromTraceparent, createEstimatorTelemetry } from './estimator-telemetry.ts';
export type { EstimatorCounters, EstimatorTelemetry } from './estimator-telemetry.ts';
export { startMetricsServer } from './metrics-server.ts';
export type { EstimatorHealth, MetricsServer } from './metrics-server.ts';
export { engineOptionsFromConfig, modelFitter, startEstimator } from './estimator-service.ts';
export type { RunningEstimator } from './estimator-service.ts';
export { syntheticLaunchSummary } from './synthetic-launch.ts';
export type { SyntheticLaunchOptions } from './synthetic-launch.ts';
export { hashString, normalDeviate, poissonDeviate } from './random-deviates.ts';
