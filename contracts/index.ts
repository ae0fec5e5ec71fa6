/**
 * Names and identities shared by every folder (see docs/architecture.md): the stream identity
 * and its keys, the Kafka header names, the Kafka topics, the InfluxDB series, the OTel/Prometheus metric names
 * and the configuration fields (environment variable names, types, defaults, bounds). Pure data and functions, no I/O.
 * It exports what other folders use; the modules' other names (the per-part identity checks, topic
 * shapes, field kinds) stay inside contracts/.
 */
export {
  attributionFromHeaders,
  createAttributionReader,
  CONTROL_CHARACTER_PATTERN,
  DEVICE_UUID_PATTERN,
  groupSizeProblem,
  hostProblem,
  identityCharactersProblem,
  INFLUX_UNSAFE_BACKSLASH_PATTERN,
  jobProblem,
  KAFKA_HEADERS,
  labelProblem,
  matchesStreamFilter,
  MAX_GROUP_SIZE,
  MAX_IDENTITY_TEXT_BYTES,
  NIL_UUID,
  parseDeviceSelector,
  parseGroupSize,
  parseHost,
  parseJob,
  parseKernel,
  parseStreamName,
  STREAM_SOURCES,
  streamKeyOf,
  type StreamIdentity,
} from './stream-identity.ts';
export { StreamIdentityError } from './errors.ts';
export { MAX_FRAME_RECORD_BYTES, TOPIC_SPECS, TOPICS, topicConfigProblems, topicToCreate } from './topics.ts';
export type { TopicRole } from './topics.ts';
export { DLQ_HEADERS } from './dlq-headers.ts';
export { ALERT_KINDS, FIELDS, LABEL_TAGS, MEASUREMENTS, PIPELINE_SERVICES, STREAM_TAGS, TAGS, type AlertKind } from './series.ts';
export { labelAttributeName, RESULT_METRICS, RESULT_METRIC_PROMETHEUS_NAMES, STREAM_ATTRIBUTES } from './result-metric-names.ts';
export { SERVICE_NAMES } from './service-names.ts';
export { ESTIMATOR_REJECTED_OUTCOMES, SERVICE_METRICS } from './service-metric-names.ts';
export { COLLECTOR_FIELDS, ESTIMATOR_EXPORT_FIELD_KEYS, ESTIMATOR_FIELDS, KAFKA_COMPRESSION_NAMES, KAFKA_SECURITY_FIELDS, LOCAL_STACK_FIELDS, envNamesOf } from './config-fields.ts';
export type {
  ByteSizeField,
  ConfigField,
  ConfigFields,
  FamilyField,
  FileField,
  ListField,
  SecretField,
  TextField,
} from './config-fields.ts';
export { decodeDistributionRecord, encodeWireRecord } from './wire-records.ts';
export type { AlertEvidence, AlertRecord, AlertSeries, DistributionEntries, DistributionRecord } from './wire-records.ts';
