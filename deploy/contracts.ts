/**
 * Names and numbers the deployment files (compose.yaml, k8s/, grafana/) rely on, in one
 * place; deploy/deploy.test.ts checks the YAML against these and these against the code
 * (collector/estimator defaults, dashboards' datasource uid).
 */
import { ESTIMATOR_DEFAULTS } from '../estimator/index.ts';

/** Container ports of the full stack (compose and k8s). */
export const CONTAINER_PORTS = Object.freeze({
  kafka: 9092,
  influxdb: 8086,
  grafana: 3000,
  /** collector /metrics and /healthz (COLLECTOR_DEFAULTS.metricsPort). */
  collectorMetrics: 9464,
  /** estimator /metrics and /healthz (ESTIMATOR_DEFAULTS.metricsPort). */
  estimatorMetrics: 9465,
});

/** `warpwatch` subcommand each service image runs. */
export const SERVICE_COMMANDS = Object.freeze({ collector: 'collect', estimator: 'estimate' });

/** The one module per service that reads its `WARPWATCH_*` environment variables (architecture.md). */
export const SERVICE_CONFIG_MODULES = Object.freeze({ collector: 'collector/config.ts', estimator: 'estimator/config.ts' });

/** uid of the provisioned Grafana InfluxQL datasource (dashboards/datasource.ts references it). */
export const GRAFANA_DATASOURCE_UID = 'warpwatch-influxql';

/** Where Grafana reads the generated dashboards (the provider's options.path). */
export const GRAFANA_DASHBOARDS_PATH = '/var/lib/grafana/dashboards/warpwatch';

/** Folder of the collector's unix socket inside containers and on Kubernetes nodes. */
export const COLLECTOR_SOCKET_DIRECTORY = '/run/warpwatch';

/**
 * How long InfluxDB keeps warpwatch's points, the one default of every deployment: the local
 * stack sets it on the database's default retention policy, compose on the initial bucket,
 * and the estimator (everywhere, Kubernetes included) when it creates a missing database
 * (WARPWATCH_INFLUX_RETENTION, ESTIMATOR_DEFAULTS.influxRetentionDuration).
 */
export const INFLUX_RETENTION = ESTIMATOR_DEFAULTS.influxRetentionDuration;
