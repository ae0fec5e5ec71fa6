// Plumbing both services (collector, estimator) share: the telemetry server and OTel resource,
// the InfluxDB line encoding, write transport and writer, the retry helper, the config toolkit
// (config-toolkit.ts: typed fields of contracts/config-fields.ts read from env and flags, every
// problem reported together), the Kafka security slice and the one Kafka client factory, the one
// logger type of both services and their stop signals. Imports contracts/ only, plus Node and the
// external clients.
export { startTelemetryServer } from './telemetry-server.ts';
export type { TelemetryServer } from './telemetry-server.ts';
export { influxAuthHeaders } from './influx-client.ts';
export { retry } from './retry.ts';
export { encodeLineProtocol } from './influx-line.ts';
export type { InfluxPoint } from './influx-line.ts';
export { isUnreachableError, unreachableServerHint } from './server-hint.ts';
export { anyTcpReachable } from './tcp-reachable.ts';
export { createOutageLog } from './outage-log.ts';
export type { OutageLog } from './outage-log.ts';
export { serviceResource } from './otel-resource.ts';
export { ConfigReader, formatConfigProblem, readSecretFile } from './config-toolkit.ts';
export type { ConfigProblem, EnvSource, ReadTextFile } from './config-toolkit.ts';
export { defaultTextOf } from './config-docs.ts';
export { kafkaClientSecurity, kafkaTlsFailure, readKafkaSecurity } from './kafka-security.ts';
export type { KafkaSecurityConfig } from './kafka-security.ts';
export { Secret } from './secret.ts';
export { cachingDefaultPartitioner, createKafkaClient, isRetriedKafkaAnswer, keyPartition } from './kafka-client.ts';
export { kafkaCompressionType } from './kafka-compression.ts';
export type { KafkaCompression } from './kafka-compression.ts';
export { createServiceLogger, formatLogLine, stderrLineSink } from './service-logger.ts';
export type { LogLevel, LogLineSink, ServiceLogger } from './service-logger.ts';
export { stopWithinBound, waitForStopSignal } from './stop-signal.ts';
export type { StopBoundOptions } from './stop-signal.ts';
export { createInfluxWriter, INFLUX_DROP_REASONS, influxHealthReasons, InfluxWriteFailure } from './influx-writer.ts';
export type { InfluxWriter, InfluxWriterStats } from './influx-writer.ts';
export { ensureServiceTopics, retryTransientKafka } from './kafka-topics.ts';
export type { ServiceTopicsReport } from './kafka-topics.ts';
export { KafkaAccessDenied, kafkaAuthorizationDenial, kafkaPrincipalOf, missingAclText, stoppedConsumerDenial } from './kafka-authorization.ts';
export type { KafkaAclNeed } from './kafka-authorization.ts';
export { startHeapTarget } from './heap-target.ts';
export type { HeapTarget } from './heap-target.ts';
