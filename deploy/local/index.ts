// Public API of deploy/local: run Kafka and InfluxDB on this machine without containers.
export { resolveLocalStackConfig, LOCAL_STACK_DEFAULTS, LOCAL_STACK_VERSIONS } from './stack-config.ts';
export type { LocalStackConfig, LocalKafkaConfig, LocalInfluxConfig } from './stack-config.ts';
export { bringUpStack, bringDownStack, stackStatus, acquireStackLease, stackEndpoints, createStackServers, withStackLock } from './local-stack.ts';
export type { StackEndpoints, StackLease, ServerStatus, ServerUpResult, ServerDownResult } from './local-stack.ts';
export type { ManagedServer, ServerOwner } from './managed-server.ts';
export { createKafkaServer, createKafkaClusterId, localKafkaSaslCredentials, renderKafkaServerProperties } from './kafka-server.ts';
export type { LocalKafkaSaslCredentials } from './kafka-server.ts';
export { createInfluxServer, renderInfluxConfig, influxQuery, INFLUXD_MODULE, INFLUXD_TOOLCHAINS } from './influx-server.ts';
export { probeKafka, probeInflux, waitUntilReady, warmUpKafkaGroupCoordinator } from './readiness.ts';
export type { ProbeResult, ProbeSasl, ReadinessWait } from './readiness.ts';
export { createStepReporter, silentReporter, formatDuration } from './progress.ts';
export type { StepReporter, ProgressWriter } from './progress.ts';
export { spawnDetached, stopProcess, isProcessRunning, readPidFile, removePidFile, runTool, tailFile, sleep } from './process-control.ts';
export type { DetachedProcessSpec, ToolRunSpec, StopOutcome } from './process-control.ts';
export { findChromium } from './browser.ts';
export type { ChromiumExecutable } from './browser.ts';
export { findSystemPrometheus, ensureOtlpPrometheus, startPrometheus, promQuery, renderPrometheusConfig, freePort, OTLP_PROMETHEUS_VERSION, OTLP_PROMETHEUS_MODULE } from './prometheus-server.ts';
export type { PrometheusOptions, RunningPrometheus, PromSample } from './prometheus-server.ts';
