// Public exports of estimator/: series names (imported by dashboards), window state,
// per-window computation, sinks, alerting, the estimator service.
export { MEASUREMENTS, TAGS, STREAM_TAGS, FIELDS, ALERT_KINDS, PIPELINE_SERVICES, TOPICS } from './series.ts';
export type { MeasurementName, AlertKind } from './series.ts';
