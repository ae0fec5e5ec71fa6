/**
 * Names and numbers the deployment files (compose.yaml, k8s/, grafana/) rely on, in one
 * place; deploy/deploy.test.ts checks the YAML against these and these against the code
 * (collector/estimator defaults, dashboards' datasource uid).
 */
import { COLLECTOR_FIELDS, ESTIMATOR_FIELDS, KAFKA_SECURITY_FIELDS, envNamesOf } from '../contracts/index.ts';

/** Container ports of the full stack (compose and k8s). */
export const CONTAINER_PORTS = Object.freeze({
  kafka: 9092,
  influxdb: 8086,
  grafana: 3000,
  /** collector /metrics and /healthz (its WARPWATCH_METRICS_PORT default). */
  collectorMetrics: COLLECTOR_FIELDS.metricsPort.default,
  /** estimator /metrics and /healthz (its WARPWATCH_METRICS_PORT default). */
  estimatorMetrics: ESTIMATOR_FIELDS.metricsPort.default,
});

/** The image's entrypoint (Dockerfile ENTRYPOINT): Node and the CLI, a subcommand after it. */
export const IMAGE_ENTRYPOINT: readonly string[] = Object.freeze(['node', 'bin/warpwatch.mjs']);

/**
 * Node/V8 flags the estimator runs with (docs/estimator.md, The young generation and malloc): V8's
 * semi-spaces at 8 MiB instead of Node's 16, which lowers the estimator's RSS by ~20–40 MB at
 * the same throughput. They must be given where Node starts (V8 sizes its heap then), so
 * compose.yaml and k8s/ start the estimator with `node <flags> bin/warpwatch.mjs estimate`, and
 * bench/estimator.bench.ts runs its estimators the same way.
 */
export const ESTIMATOR_NODE_FLAGS: readonly string[] = Object.freeze(['--max-semi-space-size=8']);

/**
 * Environment of the image's processes beside their `WARPWATCH_*` settings (Dockerfile ENV):
 * glibc's malloc at 2 arenas instead of up to 8 per core, so memory freed by the threads that
 * compress and send (zlib, sockets) is reused rather than kept in arenas of their own
 * (docs/estimator.md, The young generation and malloc). bench/estimator.bench.ts runs its
 * estimators with it too.
 */
export const IMAGE_PROCESS_ENV: Readonly<Record<string, string>> = Object.freeze({ MALLOC_ARENA_MAX: '2' });

/** `warpwatch` subcommand each service image runs. */
export const SERVICE_COMMANDS = Object.freeze({ collector: 'collect', estimator: 'estimate' });

/** The one module per service that reads its `WARPWATCH_*` environment variables (architecture.md). */
export const SERVICE_CONFIG_MODULES = Object.freeze({ collector: 'collector/config.ts', estimator: 'estimator/config.ts' });

/**
 * The configuration fields each service image reads (contracts/config-fields.ts): its own and
 * the Kafka security slice (the estimator reads its own in estimator/config.ts).
 */
export const SERVICE_CONFIG_FIELDS = Object.freeze({
  collector: [COLLECTOR_FIELDS, KAFKA_SECURITY_FIELDS],
  estimator: [ESTIMATOR_FIELDS, KAFKA_SECURITY_FIELDS],
} as const);

/**
 * Every `WARPWATCH_*` variable a service reads (a family such as `WARPWATCH_LABEL_` by its prefix).
 *
 * @example serviceEnvNames('collector').includes('WARPWATCH_SOCKET') // true
 */
export function serviceEnvNames(service: keyof typeof SERVICE_CONFIG_FIELDS): readonly string[] {
  return envNamesOf(...SERVICE_CONFIG_FIELDS[service]);
}

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
 * (WARPWATCH_INFLUX_RETENTION's default).
 */
export const INFLUX_RETENTION = ESTIMATOR_FIELDS.influxRetention.default;
