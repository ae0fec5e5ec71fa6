/** The estimator's InfluxDB series names and topics: defined once in contracts/ (series.ts, topics.ts). */
export { ALERT_KINDS, FIELDS, LABEL_TAGS, MEASUREMENTS, PIPELINE_SERVICES, STREAM_TAGS, TAGS, TOPICS, type AlertKind, type MeasurementName } from '../contracts/index.ts';
