import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { INFLUX_RETENTION } from '../contracts.ts';
import { DeployError } from '../errors.ts';
import type { ManagedServer } from './managed-server.ts';
import { runTool, spawnDetached } from './process-control.ts';
import type { StepReporter } from './progress.ts';
import { probeInflux } from './readiness.ts';
import type { LocalStackConfig } from './stack-config.ts';

/** Go module path of the InfluxDB 1.x server command. */
export const INFLUXD_MODULE = 'github.com/influxdata/influxdb/cmd/influxd';

/**
 * Toolchains tried in order by `go install`: the local one first; if that fails, one
 * fetched by the go command from the module proxy (golang.org/toolchain). Both were
 * checked to build influxd 1.8.10 (Go 1.26.8 local, go1.21.13 fetched).
 */
export const INFLUXD_TOOLCHAINS: readonly string[] = Object.freeze(['local', 'go1.21.13']);

/**
 * influxdb.conf for InfluxDB 1.8: HTTP and RPC bound to the configured host only,
 * usage reporting off, the `_internal` monitor database off, storage in the instance folder.
 *
 * @example renderInfluxConfig(resolveLocalStackConfig()).includes('reporting-disabled = true'); // true
 */
export function renderInfluxConfig(config: LocalStackConfig): string {
  const i = config.influx;
  const q = (text: string): string => JSON.stringify(text);
  return [
    '# Written by deploy/local/influx-server.ts on every start; edits are overwritten.',
    'reporting-disabled = true',
    `bind-address = ${q(`${i.host}:${i.rpcPort}`)}`,
    '',
    '[meta]',
    `  dir = ${q(join(i.instanceDirectory, 'meta'))}`,
    '',
    '[data]',
    `  dir = ${q(join(i.instanceDirectory, 'data'))}`,
    `  wal-dir = ${q(join(i.instanceDirectory, 'wal'))}`,
    '  query-log-enabled = false',
    '  cache-max-memory-size = "256m"',
    '',
    '[monitor]',
    '  store-enabled = false',
    '',
    '[http]',
    '  enabled = true',
    `  bind-address = ${q(`${i.host}:${i.port}`)}`,
    '  auth-enabled = false',
    '  log-enabled = false',
    '  flux-enabled = false',
    '',
    '[continuous_queries]',
    '  log-enabled = false',
    '',
  ].join('\n');
}

/**
 * Runs one InfluxQL statement through `POST /query`.
 *
 * @returns the parsed JSON answer.
 * @throws DeployError WW_ERR_STACK_UNREACHABLE when the server does not answer or reports an error.
 * @example await influxQuery('http://127.0.0.1:18086', 'CREATE DATABASE "warpwatch"');
 */
export async function influxQuery(url: string, statement: string, database?: string): Promise<unknown> {
  const body = new URLSearchParams({ q: statement });
  if (database !== undefined) body.set('db', database);
  let response: Response;
  try {
    response = await fetch(`${url}/query`, { method: 'POST', body, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new DeployError('WW_ERR_STACK_UNREACHABLE', `InfluxDB at ${url} did not answer POST /query: ${error instanceof Error ? error.message : String(error)}`, { retriable: true, cause: error });
  }
  const text = await response.text();
  if (!response.ok || text.includes('"error"')) {
    throw new DeployError('WW_ERR_STACK_UNREACHABLE', `InfluxDB at ${url} rejected "${statement}": HTTP ${response.status} ${text.slice(0, 300)}`);
  }
  return JSON.parse(text) as unknown;
}

/**
 * The local InfluxDB 1.8 as a {@link ManagedServer}: `influxd` built once with
 * `go install github.com/influxdata/influxdb/cmd/influxd@v1.8.10` into
 * `<cache>/influxdb/<version>/bin`, database created after start.
 *
 * @example const influx = createInfluxServer(resolveLocalStackConfig()); influx.address; // 'http://127.0.0.1:18086'
 */
export function createInfluxServer(config: LocalStackConfig): ManagedServer {
  const i = config.influx;
  const binary = join(i.installDirectory, 'bin', 'influxd');
  const configFile = join(i.instanceDirectory, 'influxdb.conf');
  const outputFile = join(i.instanceDirectory, 'influxd.log');

  return {
    name: 'influxdb',
    address: i.url,
    instanceDirectory: i.instanceDirectory,
    pidFile: join(i.instanceDirectory, 'influxd.pid'),
    ownerFile: join(i.instanceDirectory, 'owner'),
    logFile: outputFile,
    outputFile,
    commandLineMarker: configFile,

    isInstalled(): boolean {
      return existsSync(binary);
    },

    async install(reporter: StepReporter): Promise<void> {
      mkdirSync(join(i.installDirectory, 'bin'), { recursive: true });
      const ldflags = `-X main.version=${i.version} -X main.branch=${i.version.split('.').slice(0, 2).join('.')} -X main.commit=v${i.version}`;
      let lastError: unknown;
      for (const toolchain of INFLUXD_TOOLCHAINS) {
        const env: NodeJS.ProcessEnv = {
          ...process.env,
          GOBIN: join(i.installDirectory, 'bin'),
          // Pure Go build: no C compiler needed, a static binary.
          CGO_ENABLED: '0',
          // Module cache files writable, so `rm -rf` of the cache works.
          GOFLAGS: `${process.env['GOFLAGS'] ?? ''} -modcacherw`.trim(),
          ...(toolchain === 'local' ? {} : { GOTOOLCHAIN: toolchain }),
        };
        try {
          await reporter.step(
            `influxdb: build influxd ${i.version} with Go (${toolchain === 'local' ? 'installed toolchain' : `toolchain ${toolchain} from the module proxy`})`,
            () =>
              runTool({
                command: config.tools.go,
                args: ['install', '-ldflags', ldflags, `${INFLUXD_MODULE}@v${i.version}`],
                cwd: i.installDirectory,
                env,
                logFile: join(i.installDirectory, `go-install-${toolchain}.log`),
                description: `go install of influxd ${i.version} (${toolchain} toolchain)`,
              }),
            { expectation: 'first run only; downloads modules and compiles, typically 2-5 min on 2 cores', heartbeatMillis: 20_000 },
          );
          if (!existsSync(binary)) throw new DeployError('WW_ERR_STACK_INSTALL', `go install finished but ${binary} does not exist`);
          reporter.note(`influxdb: built ${binary}`);
          return;
        } catch (error) {
          if (error instanceof DeployError && error.code === 'WW_ERR_STACK_TOOL_MISSING') throw error;
          lastError = error;
          reporter.note(`influxdb: build with ${toolchain} toolchain failed${toolchain === INFLUXD_TOOLCHAINS.at(-1) ? '' : ', trying the next one'}`);
        }
      }
      throw lastError;
    },

    spawn(): Promise<number> {
      for (const folder of ['meta', 'data', 'wal']) mkdirSync(join(i.instanceDirectory, folder), { recursive: true });
      writeFileSync(configFile, renderInfluxConfig(config));
      return Promise.resolve(
        spawnDetached({
          command: binary,
          args: ['run', '-config', configFile],
          cwd: i.instanceDirectory,
          env: { ...process.env, INFLUXDB_REPORTING_DISABLED: 'true' },
          outputFile,
          pidFile: join(i.instanceDirectory, 'influxd.pid'),
        }),
      );
    },

    probe() {
      return probeInflux(i.url);
    },

    async afterReady(): Promise<void> {
      await influxQuery(i.url, `CREATE DATABASE "${i.database}"`);
      // One retention default for every deployment (an existing database is brought in line).
      await influxQuery(i.url, `ALTER RETENTION POLICY "autogen" ON "${i.database}" DURATION ${INFLUX_RETENTION} SHARD DURATION 1d DEFAULT`);
    },
  };
}

