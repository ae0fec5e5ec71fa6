// Public API of collector/: the agent that forwards frames from GPU jobs to Kafka. It exports what
// other folders use (cli/, bench/, test/); the modules' other names stay inside collector/.
export { CollectorConfigError } from './errors.ts';
export { defaultSocketPath, loadCollectorConfig, loadCollectorKafkaConfig } from './config.ts';
export type { CollectorConfig } from './config.ts';
export { threadRecordsOf } from './stream-validator.ts';
export { createKafkaProducer } from './kafka-producer.ts';
export { createInfluxMetricsWriter } from './influx-metrics-writer.ts';
export { startCollector } from './collector.ts';
export type { RunningCollector } from './collector.ts';
export { startCollectorService } from './collector-service.ts';
