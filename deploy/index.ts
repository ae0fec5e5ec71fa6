// Public API of deploy/: deployment contracts and errors. The local stack lives in ./local/index.ts.
export { CONTAINER_PORTS, ESTIMATOR_NODE_FLAGS, IMAGE_ENTRYPOINT, IMAGE_PROCESS_ENV, SERVICE_COMMANDS, SERVICE_CONFIG_FIELDS, SERVICE_CONFIG_MODULES, serviceEnvNames, GRAFANA_DATASOURCE_UID, GRAFANA_DASHBOARDS_PATH, COLLECTOR_SOCKET_DIRECTORY } from './contracts.ts';
export { DeployError, DEPLOY_ERROR_CODES } from './errors.ts';
export type { DeployErrorCode } from './errors.ts';
