import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeployError } from '../errors.ts';
import { createInfluxServer } from './influx-server.ts';
import { createKafkaServer } from './kafka-server.ts';
import type { ManagedServer, ServerOwner } from './managed-server.ts';
import { isProcessRunning, readPidFile, removePidFile, sleep, stopProcess } from './process-control.ts';
import { formatDuration, silentReporter, type StepReporter } from './progress.ts';
import { waitUntilReady } from './readiness.ts';
import type { LocalStackConfig } from './stack-config.ts';

/** Addresses clients use, in the form of the `WARPWATCH_*` environment variables. */
export interface StackEndpoints {
  /** WARPWATCH_KAFKA_BROKERS, e.g. '127.0.0.1:19092'. */
  readonly kafkaBrokers: string;
  /** WARPWATCH_INFLUX_URL, e.g. 'http://127.0.0.1:18086'. */
  readonly influxUrl: string;
  /** WARPWATCH_INFLUX_DATABASE, e.g. 'warpwatch' (v2 API bucket: 'warpwatch/autogen'). */
  readonly influxDatabase: string;
}

/** State of one server as `npm run stack -- status` reports it. */
export interface ServerStatus {
  readonly name: string;
  readonly address: string;
  /** True when deploy/local runs it on this machine; false for an external server given by env. */
  readonly managed: boolean;
  /** It answered the readiness probe. */
  readonly ready: boolean;
  /** Probe detail when ready, the reason otherwise. */
  readonly detail: string;
  /** Pid of the process deploy/local started, when it runs. */
  readonly pid: number | undefined;
  /** Who started that process. */
  readonly owner: ServerOwner | undefined;
  /** Where its log is (managed only). */
  readonly logFile: string | undefined;
}

/** What happened to one server during {@link bringUpStack}. */
export interface ServerUpResult {
  readonly name: string;
  readonly address: string;
  /** 'started' by this call, 'reused' (already running), 'external' (not managed here, checked only). */
  readonly action: 'started' | 'reused' | 'external';
  readonly detail: string;
}

/** The two servers of a configuration, as {@link ManagedServer}s, Kafka first. */
export function createStackServers(config: LocalStackConfig): readonly { readonly server: ManagedServer; readonly managed: boolean }[] {
  return [
    { server: createKafkaServer(config), managed: config.kafka.managed },
    { server: createInfluxServer(config), managed: config.influx.managed },
  ];
}

/** Endpoints of a configuration. @example stackEndpoints(resolveLocalStackConfig()).kafkaBrokers; // '127.0.0.1:19092' */
export function stackEndpoints(config: LocalStackConfig): StackEndpoints {
  return { kafkaBrokers: config.kafka.brokers.join(','), influxUrl: config.influx.url, influxDatabase: config.influx.database };
}

function readOwner(server: ManagedServer): ServerOwner | undefined {
  if (!existsSync(server.ownerFile)) return undefined;
  const text = readFileSync(server.ownerFile, 'utf8').trim();
  return text === 'stack' || text === 'test' ? text : undefined;
}

function runningPid(server: ManagedServer): number | undefined {
  const pid = readPidFile(server.pidFile);
  return pid !== undefined && isProcessRunning(pid, server.commandLineMarker) ? pid : undefined;
}

async function ensureServer(server: ManagedServer, managed: boolean, owner: ServerOwner, config: LocalStackConfig, reporter: StepReporter): Promise<ServerUpResult> {
  const base = { name: server.name, address: server.address };
  if (!managed) {
    const probe = await server.probe();
    if (!probe.ready) throw new DeployError('WW_ERR_STACK_UNREACHABLE', `${server.name} at ${server.address} (external, from the environment) does not answer: ${probe.reason}`, { retriable: true });
    return { ...base, action: 'external', detail: probe.detail };
  }
  const existingPid = runningPid(server);
  const first = await server.probe();
  if (first.ready || existingPid !== undefined) {
    const detail = first.ready
      ? first.detail
      : await reporter.step(`${server.name}: wait for the running process (pid ${existingPid}) to answer`, () =>
          waitUntilReady({ name: server.name, probe: () => server.probe(), pid: existingPid, commandLineMarker: server.commandLineMarker, logFile: server.outputFile, timeoutMillis: config.readyTimeoutMillis }),
        );
    // `stack up` adopts a node a test run started, so the test run leaves it running.
    if (existingPid !== undefined && owner === 'stack') writeFileSync(server.ownerFile, 'stack\n');
    await server.afterReady();
    const who = existingPid === undefined ? 'answering, not started by deploy/local' : `pid ${existingPid}`;
    reporter.note(`${server.name}: already running at ${server.address} (${who})`);
    return { ...base, action: 'reused', detail };
  }
  mkdirSync(server.instanceDirectory, { recursive: true });
  if (!server.isInstalled()) await server.install(reporter);
  const detail = await reporter.step(`${server.name}: start on ${server.address} and wait until it answers`, async () => {
    const pid = await server.spawn(reporter);
    writeFileSync(server.ownerFile, `${owner}\n`);
    return waitUntilReady({ name: server.name, probe: () => server.probe(), pid, commandLineMarker: server.commandLineMarker, logFile: server.outputFile, timeoutMillis: config.readyTimeoutMillis });
  });
  await server.afterReady();
  return { ...base, action: 'started', detail };
}

/**
 * Runs `work` while holding the stack lock (`<cache>/stack.lock`, a directory holding the
 * owner pid), so concurrent `stack up`/test runs do not build or start the same server twice.
 * A lock whose owner process is gone is taken over.
 *
 * @throws DeployError WW_ERR_STACK_LOCKED when another live process holds it past `config.lockTimeoutMillis`.
 * @example await withStackLock(config, silentReporter, () => bringUp());
 */
export async function withStackLock<T>(config: LocalStackConfig, reporter: StepReporter, work: () => Promise<T>): Promise<T> {
  mkdirSync(config.cacheDirectory, { recursive: true });
  const lock = join(config.cacheDirectory, 'stack.lock');
  const deadline = Date.now() + config.lockTimeoutMillis;
  let announced = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), `${process.pid}\n`);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readPidFile(join(lock, 'pid'));
      if (holder === undefined || !isProcessRunning(holder)) {
        // Give a process that just created the folder a moment to write its pid.
        await sleep(200);
        const again = readPidFile(join(lock, 'pid'));
        if (again === undefined || !isProcessRunning(again)) rmSync(lock, { recursive: true, force: true });
        continue;
      }
      if (Date.now() > deadline) throw new DeployError('WW_ERR_STACK_LOCKED', `the local stack lock ${lock} is held by pid ${holder} for more than ${formatDuration(config.lockTimeoutMillis)}; if that process hangs, stop it`, { retriable: true });
      if (!announced) reporter.note(`waiting for pid ${holder}, which is bringing the local stack up or down (lock ${lock})`);
      announced = true;
      await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Brings Kafka and InfluxDB up: reuses running ones, installs into the cache on first use
 * (Maven download, Go build), starts detached processes, waits until both answer, and
 * creates the InfluxDB database. Servers outside this machine (given by env) are only checked.
 *
 * @param options.owner - 'stack' (`npm run stack -- up`; kept until `down`) or 'test' (stopped by the last test run).
 * @throws DeployError with codes WW_ERR_STACK_* (tool missing, install, start, not ready, unreachable, locked).
 * @example const { endpoints } = await bringUpStack(resolveLocalStackConfig(), { owner: 'stack', reporter });
 */
export async function bringUpStack(config: LocalStackConfig, options: { owner: ServerOwner; reporter?: StepReporter }): Promise<{ endpoints: StackEndpoints; servers: readonly ServerUpResult[] }> {
  const reporter = options.reporter ?? silentReporter;
  const servers = await withStackLock(config, reporter, () =>
    // Both at once: the Maven download is network-bound, the Go build CPU-bound.
    Promise.all(createStackServers(config).map(({ server, managed }) => ensureServer(server, managed, options.owner, config, reporter))),
  );
  return { endpoints: stackEndpoints(config), servers };
}

/** What happened to one server during {@link bringDownStack}. */
export interface ServerDownResult {
  readonly name: string;
  readonly address: string;
  /** 'stopped' (SIGTERM), 'killed' (SIGKILL after the timeout), 'not-running', 'kept' (filtered out or not ours), 'external'. */
  readonly action: 'stopped' | 'killed' | 'not-running' | 'kept' | 'external';
  readonly detail: string;
}

async function stopServer(server: ManagedServer, managed: boolean, config: LocalStackConfig, onlyOwner: ServerOwner | undefined): Promise<ServerDownResult> {
  const base = { name: server.name, address: server.address };
  if (!managed) return { ...base, action: 'external', detail: 'not managed by deploy/local; left alone' };
  const pid = runningPid(server);
  if (pid === undefined) {
    removePidFile(server.pidFile);
    const probe = await server.probe();
    return { ...base, action: probe.ready ? 'kept' : 'not-running', detail: probe.ready ? 'answering, but not started by deploy/local; left alone' : 'no process' };
  }
  const owner = readOwner(server);
  if (onlyOwner !== undefined && owner !== onlyOwner) return { ...base, action: 'kept', detail: `pid ${pid} started by ${owner ?? 'unknown'}; left running` };
  const started = Date.now();
  const outcome = await stopProcess(pid, { timeoutMillis: config.stopTimeoutMillis, commandLineMarker: server.commandLineMarker });
  removePidFile(server.pidFile);
  rmSync(server.ownerFile, { force: true });
  return { ...base, action: outcome, detail: `pid ${pid}, ${outcome === 'killed' ? 'killed after SIGTERM timed out' : 'exited after SIGTERM'} in ${formatDuration(Date.now() - started)}` };
}

/**
 * Stops the servers deploy/local started (SIGTERM, wait, SIGKILL after `config.stopTimeoutMillis`).
 * Servers not started by deploy/local are never touched.
 *
 * @param options.onlyOwner - stop only servers with this owner (the test teardown passes 'test').
 * @example await bringDownStack(resolveLocalStackConfig(), {});
 */
export async function bringDownStack(config: LocalStackConfig, options: { onlyOwner?: ServerOwner; reporter?: StepReporter } = {}): Promise<readonly ServerDownResult[]> {
  return withStackLock(config, options.reporter ?? silentReporter, () => stopAll(config, options.onlyOwner));
}

function stopAll(config: LocalStackConfig, onlyOwner: ServerOwner | undefined): Promise<ServerDownResult[]> {
  return Promise.all(createStackServers(config).map(({ server, managed }) => stopServer(server, managed, config, onlyOwner)));
}

/**
 * Probes both servers once and reports process, owner and readiness.
 *
 * @example (await stackStatus(resolveLocalStackConfig())).every((s) => s.ready);
 */
export async function stackStatus(config: LocalStackConfig): Promise<readonly ServerStatus[]> {
  return Promise.all(
    createStackServers(config).map(async ({ server, managed }) => {
      const probe = await server.probe();
      const pid = managed ? runningPid(server) : undefined;
      return {
        name: server.name,
        address: server.address,
        managed,
        ready: probe.ready,
        detail: probe.ready ? probe.detail : probe.reason,
        pid,
        owner: pid === undefined ? undefined : readOwner(server),
        logFile: managed ? server.logFile : undefined,
      };
    }),
  );
}

/** Names of lease files whose process still runs; removes the others (crashed test runs). */
function liveOtherLeases(leases: string): string[] {
  if (!existsSync(leases)) return [];
  return readdirSync(leases).filter((name) => {
    const pid = /^\d+$/.test(name) ? Number(name) : undefined;
    const alive = pid !== undefined && pid !== process.pid && isProcessRunning(pid);
    if (!alive && pid !== process.pid) rmSync(join(leases, name), { force: true });
    return alive;
  });
}

/** A test run's hold on the stack; see {@link acquireStackLease}. */
export interface StackLease {
  readonly endpoints: StackEndpoints;
  readonly servers: readonly ServerUpResult[];
  /**
   * Gives the hold back. When no other live lease remains, servers that a test run
   * started (owner 'test') are stopped; servers started by `stack up` keep running.
   */
  release(): Promise<readonly ServerDownResult[]>;
}

/**
 * Brings the stack up for a test run and registers a lease (`<cache>/leases/<pid>`), so
 * that concurrent test runs share one Kafka and one InfluxDB and the last one to finish
 * stops what test runs started.
 *
 * @example
 * const lease = await acquireStackLease(resolveLocalStackConfig(), reporter);
 * try { ... } finally { await lease.release(); }
 */
export async function acquireStackLease(config: LocalStackConfig, reporter: StepReporter = silentReporter): Promise<StackLease> {
  const leases = join(config.cacheDirectory, 'leases');
  const leaseFile = join(leases, `${process.pid}`);
  const servers = await withStackLock(config, reporter, async () => {
    mkdirSync(leases, { recursive: true });
    writeFileSync(leaseFile, `${new Date().toISOString()}\n`);
    try {
      return await Promise.all(createStackServers(config).map(({ server, managed }) => ensureServer(server, managed, 'test', config, reporter)));
    } catch (error) {
      // Do not leave half a stack behind: stop what test runs started, unless another run uses it.
      rmSync(leaseFile, { force: true });
      if (liveOtherLeases(leases).length === 0) await stopAll(config, 'test').catch(() => undefined);
      throw error;
    }
  });
  let released = false;
  return {
    endpoints: stackEndpoints(config),
    servers,
    release(): Promise<readonly ServerDownResult[]> {
      if (released) return Promise.resolve([]);
      released = true;
      return withStackLock(config, reporter, async () => {
        rmSync(leaseFile, { force: true });
        if (liveOtherLeases(leases).length > 0) return [];
        return stopAll(config, 'test');
      });
    },
  };
}
