// Public exports of estimator/: what other folders use (cli/, bench/, dashboards/ and test/).
// The layout (docs/estimator.md, Layout): engine/ is the pure core (frames in, points and records
// out, no I/O), adapters/ hold Kafka, InfluxDB and OpenTelemetry, estimator-service.ts wires them.
// Series names, topics and the wire records are imported from contracts/, not from here.
export { EstimatorConfigError, EstimatorError } from './errors.ts';
export { loadEstimatorConfig, loadEstimatorKafkaConfig } from './config.ts';
export type { EstimatorConfig, EstimatorKafkaSecurity } from './config.ts';
// The pure engine (engine/).
export { createEstimatorEngine } from './engine/estimator-engine.ts';
export type { EngineOptions, EngineTelemetry } from './engine/estimator-engine.ts';
export { sampledGroupInputOf, samplesObservationFromFrame } from './engine/frame-observation.ts';
export type { ParametricFitter, WindowResult } from './engine/window-result.ts';
export type { AlertEvent } from './engine/alert-detector.ts';
export { DEFAULT_CUSUM_OPTIONS } from './engine/change-detector.ts';
export { evaluateDetector } from './engine/detector-evaluation.ts';
export { alertPoint, pipelinePoint, windowPoints } from './engine/series-points.ts';
export type { SeriesPoint } from './engine/series-points.ts';
export { syntheticLaunchSummary } from './engine/synthetic-launch.ts';
// The adapters (adapters/).
export { createEstimatorInfluxWriter, ensureInfluxDatabase, toLineProtocol } from './adapters/influx-writer.ts';
export type { EstimatorInfluxOptions } from './adapters/influx-writer.ts';
export { createEstimatorKafka } from './adapters/kafka.ts';
// The service.
export { modelFitter, startEstimator } from './estimator-service.ts';
export type { RunningEstimator } from './estimator-service.ts';
