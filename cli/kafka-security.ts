import type { EstimatorConfig, EstimatorKafkaSecurity } from '../estimator/index.ts';
import { ConfigReader, formatConfigProblem, kafkaClientSecurity, readKafkaSecurity, type EnvSource, type ReadTextFile } from '../service/index.ts';
import { UsageError } from './usage-error.ts';

/**
 * SASL/TLS options for the Kafka clients the CLI wires (estimator, demo, advise), read from the
 * Kafka security slice only (KAFKA_SECURITY_FIELDS: WARPWATCH_KAFKA_SASL_*, WARPWATCH_KAFKA_TLS*)
 * by the reader the collector uses too (service/kafka-security.ts), so the services never
 * disagree about them. No other variable is read. Empty when none is set.
 *
 * @throws UsageError listing every invalid security setting (exit code 2).
 * @example new Kafka({ clientId, brokers, ...kafkaSecurityFromEnv(process.env) })
 */
export function kafkaSecurityFromEnv(env: EnvSource, readTextFile?: ReadTextFile): EstimatorKafkaSecurity {
  const reader = new ConfigReader({ env, readTextFile });
  const security = readKafkaSecurity(reader);
  if (reader.problems.length > 0) throw new UsageError(reader.problems.map(formatConfigProblem).join('; '));
  return kafkaClientSecurity(security);
}

/**
 * The config with the Kafka security options of the environment added.
 *
 * @throws UsageError for invalid security settings.
 * @example const secured = withKafkaSecurity(loadEstimatorConfig({ env: process.env }), process.env);
 */
export function withKafkaSecurity(config: EstimatorConfig, env: EnvSource): EstimatorConfig {
  const security = kafkaSecurityFromEnv(env);
  if (security.sasl === undefined && security.ssl === undefined) return config;
  return Object.freeze({ ...config, kafka: Object.freeze({ ...config.kafka, security }) });
}
