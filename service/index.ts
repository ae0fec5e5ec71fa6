// Plumbing both services (collector, estimator) share: the telemetry server, the InfluxDB line
// encoding, write-API policy and writer, the retry helper (and, as it lands, the config toolkit). Imports contracts/ only, plus Node and
// the external clients.
export { startTelemetryServer } from './telemetry-server.ts';
export type { TelemetryHealth, TelemetryServer, TelemetryServerOptions } from './telemetry-server.ts';
export { createInfluxWriteApi } from './influx-client.ts';
export type { InfluxWriteApiOptions } from './influx-client.ts';
export { backoffDelayMillis, retry, sleepMillis } from './retry.ts';
export type { BackoffPolicy, RetryOptions } from './retry.ts';
export { encodeLineProtocol } from './influx-line.ts';
export type { InfluxPoint } from './influx-line.ts';
export {
  BUSY_LINGER_MILLIS,
  createInfluxWriter,
  DEFAULT_INFLUX_MAX_IN_FLIGHT_BATCHES,
  INFLUX_DROP_REASONS,
  influxHealthReasons,
  InfluxWriteFailure,
  urlWithoutCredentials,
} from './influx-writer.ts';
export type { InfluxDropReason, InfluxWriter, InfluxWriterHooks, InfluxWriterOptions, InfluxWriterStats } from './influx-writer.ts';
