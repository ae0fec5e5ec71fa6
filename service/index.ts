// Plumbing both services (collector, estimator) share: the telemetry server, and (as it lands)
// the InfluxDB writer, retry helper and config toolkit. Imports contracts/ only, plus Node and
// the external clients.
export { startTelemetryServer } from './telemetry-server.ts';
export type { TelemetryHealth, TelemetryServer, TelemetryServerOptions } from './telemetry-server.ts';
export { createInfluxWriteApi } from './influx-client.ts';
export type { InfluxWriteApiOptions } from './influx-client.ts';
export { backoffDelayMillis, retry, sleepMillis } from './retry.ts';
export type { BackoffPolicy, RetryOptions } from './retry.ts';
export { encodeLineProtocol } from './influx-line.ts';
export type { InfluxPoint } from './influx-line.ts';
export { serviceResource } from './otel-resource.ts';
export type { ServiceResourceOptions } from './otel-resource.ts';
