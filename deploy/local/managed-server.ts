import type { StepReporter } from './progress.ts';
import type { ProbeResult } from './readiness.ts';

/** Who started a managed server: `npm run stack -- up` (kept running) or a test setup (stopped by the last test run). */
export type ServerOwner = 'stack' | 'test';

/**
 * One server that deploy/local installs into the cache and runs on this machine
 * (Kafka node, InfluxDB). local-stack.ts drives both through this shape.
 */
export interface ManagedServer {
  /** 'kafka' or 'influxdb'. */
  readonly name: string;
  /** What clients connect to, e.g. '127.0.0.1:19092' or 'http://127.0.0.1:18086'. */
  readonly address: string;
  /** Folder of this instance (configuration, data, logs, pid and owner files). */
  readonly instanceDirectory: string;
  readonly pidFile: string;
  /** Holds the {@link ServerOwner} of the running process. */
  readonly ownerFile: string;
  /** The server's main log (what `npm run stack -- logs` prints). */
  readonly logFile: string;
  /** Captured stdout/stderr of the process (start-up failures land here). */
  readonly outputFile: string;
  /** A string in the process command line that identifies this instance (guards against recycled pids). */
  readonly commandLineMarker: string;
  /** True when the binaries are in the cache. */
  isInstalled(): boolean;
  /** Downloads or builds the binaries into the cache (first run). */
  install(reporter: StepReporter): Promise<void>;
  /** Writes configuration, prepares storage, spawns the detached process; returns its pid. */
  spawn(reporter: StepReporter): Promise<number>;
  /** One readiness probe. */
  probe(): Promise<ProbeResult>;
  /** Runs once the server answers (e.g. create the database); idempotent. */
  afterReady(): Promise<void>;
}
