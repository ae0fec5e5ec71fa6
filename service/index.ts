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
export { isUnreachableError, LOCAL_STACK_ADDRESSES, unreachableServerHint } from './server-hint.ts';
export { createOutageLog } from './outage-log.ts';
export type { OutageLog } from './outage-log.ts';
