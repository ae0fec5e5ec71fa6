import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, openSync, closeSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { DeployError } from '../errors.ts';
import { runTool, sleep, tailFile } from './process-control.ts';

/**
 * A private, throw-away Prometheus for tests and local checks (not part of the shared stack):
 * its own free port, configuration and TSDB in a temporary folder, a child of the calling
 * process, removed on stop. Two binaries:
 *
 * - the system's Prometheus (Debian's `prometheus` package, 2.42), found by
 *   {@link findSystemPrometheus}: scrapes the estimator's `/metrics`;
 * - Prometheus {@link OTLP_PROMETHEUS_VERSION} built once with `go install` from the Go module
 *   proxy into `<cache>/prometheus/<version>/bin` by {@link ensureOtlpPrometheus} (Debian's has
 *   no OTLP receiver): receives the estimator's OTLP push on `/api/v1/otlp/v1/metrics`.
 */

/** Prometheus release built for the OTLP receiver (Go module version v0.316.0 = Prometheus 3.16.0). */
export const OTLP_PROMETHEUS_VERSION = '3.16.0';
/** Go module path and version of that release's server command. */
export const OTLP_PROMETHEUS_MODULE = 'github.com/prometheus/prometheus/cmd/prometheus@v0.316.0';

/**
 * The system Prometheus: WARPWATCH_PROMETHEUS when set, else `prometheus` on PATH.
 *
 * @returns the executable's path, or undefined when there is none.
 * @example findSystemPrometheus(process.env); // '/usr/bin/prometheus'
 */
export function findSystemPrometheus(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const explicit = env['WARPWATCH_PROMETHEUS']?.trim();
  if (explicit) return existsSync(explicit) ? explicit : undefined;
  for (const folder of (env['PATH'] ?? '').split(delimiter)) {
    if (folder !== '' && existsSync(join(folder, 'prometheus'))) return join(folder, 'prometheus');
  }
  return undefined;
}

/**
 * Builds Prometheus {@link OTLP_PROMETHEUS_VERSION} once (pure Go, service discovery left out
 * with the `remove_all_sd` build tag; 131 s on this 2-core machine with a warm module cache of
 * InfluxDB's build) and returns the binary's path; later calls return the cached binary.
 *
 * @param cacheDirectory the stack's cache folder (resolveLocalStackConfig().cacheDirectory).
 * @throws DeployError WW_ERR_STACK_TOOL_MISSING without `go`, WW_ERR_STACK_INSTALL when the build fails.
 * @example const binary = await ensureOtlpPrometheus(resolveLocalStackConfig().cacheDirectory);
 */
export async function ensureOtlpPrometheus(cacheDirectory: string, goCommand = 'go'): Promise<string> {
  const installDirectory = join(cacheDirectory, 'prometheus', OTLP_PROMETHEUS_VERSION);
  const binary = join(installDirectory, 'bin', 'prometheus');
  if (existsSync(binary)) return binary;
  mkdirSync(installDirectory, { recursive: true });
  // Build into a private folder and rename: a concurrent build never leaves a half-written binary.
  const staging = mkdtempSync(join(installDirectory, 'build-'));
  try {
    await runTool({
      command: goCommand,
      args: ['install', '-tags', 'remove_all_sd', OTLP_PROMETHEUS_MODULE],
      cwd: staging,
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -modcacherw -buildvcs=false`.trim() },
      logFile: join(installDirectory, 'go-install.log'),
      description: `go install of Prometheus ${OTLP_PROMETHEUS_VERSION}`,
    });
    mkdirSync(join(installDirectory, 'bin'), { recursive: true });
    renameSync(join(staging, 'prometheus'), binary);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** What {@link startPrometheus} runs. */
export interface PrometheusOptions {
  /** Executable (system or built). */
  readonly binary: string;
  /** host:port targets scraped at `/metrics` (job `warpwatch-estimator`); empty for none. */
  readonly scrapeTargets: readonly string[];
  /** Scrape and evaluation interval (ms, ≥ 1000). */
  readonly scrapeIntervalMillis: number;
  /** Enable the OTLP receiver (Prometheus ≥ 3: --web.enable-otlp-receiver). */
  readonly otlpReceiver: boolean;
  /** Rules files to load (YAML text, e.g. the alerting rules of dashboards/prometheus-rules.ts); none by default. */
  readonly ruleFiles?: readonly string[];
  /** How long to wait for /-/ready (ms). */
  readonly readyTimeoutMillis?: number;
}

/** A running private Prometheus. */
export interface RunningPrometheus {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  readonly url: string;
  /** OTLP/HTTP metrics endpoint (meaningful with otlpReceiver). */
  readonly otlpMetricsUrl: string;
  /** Its log file (in the temporary folder). */
  readonly logFile: string;
  /** SIGTERM, wait (≤ 10 s, then SIGKILL), remove the temporary folder. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1 (bound and released). @example await freePort(); // 41234 */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * prometheus.yml of a private Prometheus: one scrape job `warpwatch-estimator` over `targets`,
 * and the rules files `ruleFiles` (paths) when given.
 *
 * @example renderPrometheusConfig(['127.0.0.1:9465'], 1000).includes("'127.0.0.1:9465'"); // true
 */
export function renderPrometheusConfig(targets: readonly string[], intervalMillis: number, ruleFiles: readonly string[] = []): string {
  const seconds = `${Math.max(1, Math.round(intervalMillis / 1000))}s`;
  const lines = ['# Written by deploy/local/prometheus-server.ts', 'global:', `  scrape_interval: ${seconds}`, `  evaluation_interval: ${seconds}`];
  if (ruleFiles.length > 0) lines.push('rule_files:', ...ruleFiles.map((file) => `  - '${file}'`));
  if (targets.length === 0) lines.push('scrape_configs: []');
  else {
    lines.push('scrape_configs:', '  - job_name: warpwatch-estimator', `    scrape_timeout: ${seconds}`, '    static_configs:', `      - targets: [${targets.map((t) => `'${t}'`).join(', ')}]`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Starts a private Prometheus and waits until `/-/ready` answers 200.
 *
 * @throws DeployError WW_ERR_STACK_START when it exits or is not ready in time (message with its last log lines).
 * @example
 * const prometheus = await startPrometheus({ binary: '/usr/bin/prometheus', scrapeTargets: ['127.0.0.1:9465'], scrapeIntervalMillis: 1000, otlpReceiver: false });
 * await prometheus.stop();
 */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const directory = mkdtempSync(join(tmpdir(), 'ww-prometheus-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const configFile = join(directory, 'prometheus.yml');
  const logFile = join(directory, 'prometheus.log');
  const ruleFiles = (options.ruleFiles ?? []).map((text, index) => {
    const file = join(directory, `rules-${index}.yaml`);
    writeFileSync(file, text);
    return file;
  });
  writeFileSync(configFile, renderPrometheusConfig(options.scrapeTargets, options.scrapeIntervalMillis, ruleFiles));
  const args = [`--config.file=${configFile}`, `--storage.tsdb.path=${join(directory, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`, '--storage.tsdb.retention.time=1d'];
  if (options.otlpReceiver) args.push('--web.enable-otlp-receiver');
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(options.binary, args, { cwd: directory, stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  let exited: string | undefined;
  const exit = new Promise<void>((resolveExit) => {
    child.on('error', (error) => {
      exited = error.message;
      resolveExit();
    });
    child.on('exit', (code, signalName) => {
      exited = signalName ?? `exit code ${code}`;
      resolveExit();
    });
  });
  const stop = async (): Promise<void> => {
    if (exited === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(timer);
    }
    rmSync(directory, { recursive: true, force: true });
  };
  const deadline = Date.now() + (options.readyTimeoutMillis ?? 60_000);
  for (;;) {
    if (exited !== undefined) {
      const tail = tailFile(logFile, 25);
      rmSync(directory, { recursive: true, force: true });
      throw new DeployError('WW_ERR_STACK_START', `prometheus (${options.binary}) exited during start-up (${exited}); last log lines:\n${tail}`, { retriable: true });
    }
    try {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      const tail = tailFile(logFile, 25);
      await stop();
      throw new DeployError('WW_ERR_STACK_START', `prometheus at ${url} not ready within ${options.readyTimeoutMillis ?? 60_000} ms; last log lines:\n${tail}`, { retriable: true });
    }
    await sleep(200);
  }
  return { url, otlpMetricsUrl: `${url}/api/v1/otlp/v1/metrics`, logFile, stop };
}

/** One sample of an instant-vector answer. */
export interface PromSample {
  readonly metric: Readonly<Record<string, string>>;
  readonly value: number;
}

/**
 * Runs an instant PromQL query through `GET /api/v1/query` (optionally at `timeSeconds`).
 *
 * @returns the vector (a scalar answer becomes one sample without labels).
 * @throws DeployError WW_ERR_STACK_UNREACHABLE when Prometheus does not answer or rejects the query.
 * @example const [sample] = await promQuery(url, 'up'); sample?.value; // 1
 */
export async function promQuery(url: string, expression: string, timeSeconds?: number): Promise<PromSample[]> {
  const query = new URLSearchParams({ query: expression });
  if (timeSeconds !== undefined) query.set('time', String(timeSeconds));
  let body: { status: string; error?: string; data?: { resultType: string; result: unknown } };
  try {
    const response = await fetch(`${url}/api/v1/query?${query.toString()}`, { signal: AbortSignal.timeout(10_000) });
    body = (await response.json()) as typeof body;
  } catch (error) {
    throw new DeployError('WW_ERR_STACK_UNREACHABLE', `Prometheus at ${url} did not answer the query ${expression}: ${error instanceof Error ? error.message : String(error)}`, {
      retriable: true,
      cause: error,
    });
  }
  if (body.status !== 'success' || body.data === undefined) throw new DeployError('WW_ERR_STACK_UNREACHABLE', `Prometheus rejected ${expression}: ${body.error ?? body.status}`);
  if (body.data.resultType === 'scalar') {
    const [, text] = body.data.result as [number, string];
    return [{ metric: {}, value: Number(text) }];
  }
  if (body.data.resultType !== 'vector') throw new DeployError('WW_ERR_STACK_UNREACHABLE', `Prometheus answered ${expression} with a ${body.data.resultType}, expected a vector`);
  return (body.data.result as { metric: Record<string, string>; value: [number, string] }[]).map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}
