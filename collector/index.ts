// Public API of collector/: the agent that forwards frames from GPU jobs to Kafka. It exports what
// other folders use (cli/, bench/, test/); the modules' other names stay inside collector/.
export { CollectorConfigError, CollectorError } from './errors.ts';
export { defaultSocketPath, describeCollectorConfig, loadCollectorConfig, loadCollectorKafkaConfig } from './config.ts';
export type { CollectorConfig } from './config.ts';
export { describeTotals } from './collector-metrics.ts';
export type { LogFunction } from './delivery-pipeline.ts';
export { threadRecordsOf } from './stream-validator.ts';
export { startHealthServer } from './health-server.ts';
export type { HealthServer } from './health-server.ts';
export { createKafkaProducer } from './kafka-producer.ts';
export { createInfluxMetricsWriter } from './influx-metrics-writer.ts';
export { startCollector } from './collector.ts';
export type { RunningCollector } from './collector.ts';
export { COLLECTOR_LOG_PREFIX, startCollectorService } from './collector-service.ts';
export type { CollectorServiceOptions, RunningCollectorService } from './collector-service.ts';
