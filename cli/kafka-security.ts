import { CollectorConfigError, kafkaClientSecurity, loadCollectorConfig } from '../collector/index.ts';
import type { EstimatorConfig, EstimatorKafkaSecurity } from '../estimator/index.ts';
import { UsageError } from './usage-error.ts';

/** The variables that configure SASL and TLS for every Kafka client of warpwatch. */
const SECURITY_VARIABLE = /^WARPWATCH_KAFKA_(SASL|TLS)/;

/**
 * SASL/TLS options for the Kafka clients the CLI wires (estimator, demo, advise), read from the
 * same WARPWATCH_KAFKA_SASL_* and WARPWATCH_KAFKA_TLS* variables as the collector and parsed by
 * the collector's own parser, so the services never disagree about them. Empty when none is set.
 *
 * @throws UsageError listing every invalid security setting (exit code 2).
 * @example new Kafka({ clientId, brokers, ...kafkaSecurityFromEnv(process.env) })
 */
export function kafkaSecurityFromEnv(env: Readonly<Record<string, string | undefined>>): EstimatorKafkaSecurity {
  const securityOnly = Object.fromEntries(Object.entries(env).filter(([name]) => SECURITY_VARIABLE.test(name)));
  try {
    return kafkaClientSecurity(loadCollectorConfig({ env: securityOnly }).kafka);
  } catch (error) {
    if (error instanceof CollectorConfigError) throw new UsageError(error.message, { cause: error, code: error.code });
    throw error;
  }
}

/**
 * The config with the Kafka security options of the environment added.
 *
 * @throws UsageError for invalid security settings.
 * @example const secured = withKafkaSecurity(loadEstimatorConfig({ env: process.env }), process.env);
 */
export function withKafkaSecurity(config: EstimatorConfig, env: Readonly<Record<string, string | undefined>>): EstimatorConfig {
  const security = kafkaSecurityFromEnv(env);
  if (security.sasl === undefined && security.ssl === undefined) return config;
  return Object.freeze({ ...config, kafka: Object.freeze({ ...config.kafka, security }) });
}
