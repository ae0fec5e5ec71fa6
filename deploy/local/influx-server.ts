import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
    `  auth-enabled = ${i.authEnabled ? 'true' : 'false'}`,
    '  log-enabled = false',
    '  flux-enabled = false',
    '',
    '[continuous_queries]',
    '  log-enabled = false',
    '',
  ].join('\n');
}

/**
 * Runs one InfluxQL statement through `POST /query`, with HTTP basic auth when `login` is given
 * (a server started with WARPWATCH_STACK_INFLUX_AUTH, {@link localInfluxCredentials}).
 *
 * @returns the parsed JSON answer.
 * @throws DeployError WW_ERR_STACK_UNREACHABLE when the server does not answer or reports an error.
 * @example await influxQuery('http://127.0.0.1:18086', 'CREATE DATABASE "warpwatch"');
 */
export async function influxQuery(url: string, statement: string, database?: string, login?: { readonly username: string; readonly password: string }): Promise<unknown> {
  const body = new URLSearchParams({ q: statement });
  if (database !== undefined) body.set('db', database);
  const headers: Record<string, string> = login === undefined ? {} : { Authorization: `Basic ${Buffer.from(`${login.username}:${login.password}`).toString('base64')}` };
  let response: Response;
  try {
    response = await fetch(`${url}/query`, { method: 'POST', body, headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new DeployError('WW_ERR_STACK_UNREACHABLE', `InfluxDB at ${url} did not answer POST /query: ${error instanceof Error ? error.message : String(error)}`, { retriable: true, cause: error });
  }
  const text = await response.text();
  if (!response.ok || text.includes('"error"')) {
    throw new DeployError('WW_ERR_STACK_UNREACHABLE', `InfluxDB at ${url} rejected "${statement.replace(/PASSWORD '[^']*'/gi, "PASSWORD '***'")}": HTTP ${response.status} ${text.slice(0, 300)}`);
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
      const admin = i.authEnabled ? await ensureInfluxUsers(config) : undefined;
      await influxQuery(i.url, `CREATE DATABASE "${i.database}"`, undefined, admin);
      // One retention default for every deployment (an existing database is brought in line).
      await influxQuery(i.url, `ALTER RETENTION POLICY "autogen" ON "${i.database}" DURATION ${INFLUX_RETENTION} SHARD DURATION 1d DEFAULT`, undefined, admin);
      if (admin !== undefined) await influxQuery(i.url, `GRANT WRITE ON "${i.database}" TO "${localInfluxCredentials(config).writer.username}"`, undefined, admin);
    },
  };
}


/** The users of a local InfluxDB started with authentication (WARPWATCH_STACK_INFLUX_AUTH). */
export interface LocalInfluxCredentials {
  /** All privileges: creates databases, reads everything. */
  readonly admin: { readonly username: string; readonly password: string };
  /** May only write to the stack's database: what the services use. */
  readonly writer: { readonly username: string; readonly password: string };
  /** Files (mode 0600) holding `user:password`, for WARPWATCH_INFLUX_TOKEN_FILE. */
  readonly adminTokenFile: string;
  readonly writerTokenFile: string;
}

/**
 * The local InfluxDB's users (passwords generated on first use, kept in
 * `<cache>/influxdb/node-<port>/credentials.json`, mode 0600, with `user:password` token files
 * beside it). They exist on the server once the stack is up with WARPWATCH_STACK_INFLUX_AUTH.
 *
 * @example const { writerTokenFile } = localInfluxCredentials(config); // WARPWATCH_INFLUX_TOKEN_FILE=<it>
 */
export function localInfluxCredentials(config: LocalStackConfig): LocalInfluxCredentials {
  const directory = config.influx.instanceDirectory;
  const path = join(directory, 'credentials.json');
  let stored: { admin: string; writer: string } | undefined;
  if (existsSync(path)) {
    try {
      stored = JSON.parse(readFileSync(path, 'utf8')) as { admin: string; writer: string };
    } catch {
      stored = undefined;
    }
  }
  if (stored === undefined || typeof stored.admin !== 'string' || typeof stored.writer !== 'string') {
    stored = { admin: randomBytes(18).toString('base64url'), writer: randomBytes(18).toString('base64url') };
    mkdirSync(directory, { recursive: true });
    writeFileSync(path, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600 });
    chmodSync(path, 0o600);
  }
  const admin = { username: 'warpwatch-admin', password: stored.admin };
  const writer = { username: 'warpwatch-writer', password: stored.writer };
  const adminTokenFile = join(directory, 'admin-token');
  const writerTokenFile = join(directory, 'writer-token');
  for (const [file, user] of [[adminTokenFile, admin], [writerTokenFile, writer]] as const) {
    writeFileSync(file, `${user.username}:${user.password}`, { mode: 0o600 });
    chmodSync(file, 0o600);
  }
  return { admin, writer, adminTokenFile, writerTokenFile };
}

/**
 * Creates the admin (the first user may be created without logging in) and the write-only
 * user on a server with `auth-enabled = true`, unless they exist; returns the admin login.
 *
 * @throws DeployError WW_ERR_STACK_UNREACHABLE when the server refuses (users from another password file).
 */
async function ensureInfluxUsers(config: LocalStackConfig): Promise<{ username: string; password: string }> {
  const i = config.influx;
  const { admin, writer } = localInfluxCredentials(config);
  const q = (text: string): string => text.replace(/'/g, "\\'");
  try {
    await influxQuery(i.url, 'SHOW USERS', undefined, admin);
  } catch {
    // No user yet: InfluxDB lets anyone create the first, admin, user.
    await influxQuery(i.url, `CREATE USER "${admin.username}" WITH PASSWORD '${q(admin.password)}' WITH ALL PRIVILEGES`);
  }
  const users = JSON.stringify(await influxQuery(i.url, 'SHOW USERS', undefined, admin));
  if (!users.includes(`"${writer.username}"`)) await influxQuery(i.url, `CREATE USER "${writer.username}" WITH PASSWORD '${q(writer.password)}'`, undefined, admin);
  return admin;
}
