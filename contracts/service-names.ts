/**
 * OpenTelemetry service.name of each warpwatch service (Prometheus `target_info`
 * `service_name`, or `job` through an OTLP receiver). Pure data.
 */
export const SERVICE_NAMES = Object.freeze({
  collector: 'warpwatch-collector',
  estimator: 'warpwatch-estimator',
} as const);
