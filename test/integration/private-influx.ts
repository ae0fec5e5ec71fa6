// A private InfluxDB 1.8 with authentication on (deploy/local, WARPWATCH_STACK_INFLUX_AUTH): own
// port and instance directory, so the shared stack's open InfluxDB is left alone.
import { rmSync } from 'node:fs';
import {
  createInfluxServer,
  localInfluxCredentials,
  resolveLocalStackConfig,
  silentReporter,
  stopProcess,
  waitUntilReady,
  type LocalInfluxCredentials,
} from '../../deploy/local/index.ts';

/** A running private InfluxDB: its URL, database, users; `destroy` stops it and deletes its data. */
export interface PrivateInflux {
  readonly url: string;
  readonly database: string;
  readonly credentials: LocalInfluxCredentials;
  destroy(): Promise<void>;
}

/** Starts an InfluxDB with `auth-enabled = true` on `port` (RPC on `port + 2`), admin and write-only user created. */
export async function startPrivateInflux(port: number, database: string): Promise<PrivateInflux> {
  const url = `http://127.0.0.1:${port}`;
  const config = resolveLocalStackConfig({ ...process.env, WARPWATCH_INFLUX_URL: url, WARPWATCH_INFLUX_RPC_PORT: String(port + 2), WARPWATCH_INFLUX_DATABASE: database, WARPWATCH_STACK_INFLUX_AUTH: 'true' });
  const server = createInfluxServer(config);
  if (!server.isInstalled()) await server.install(silentReporter);
  const pid = await server.spawn(silentReporter);
  await waitUntilReady({ name: 'private influxdb', probe: () => server.probe(), pid, commandLineMarker: server.commandLineMarker, logFile: server.logFile, timeoutMillis: 60_000 });
  await server.afterReady();
  return {
    url,
    database,
    credentials: localInfluxCredentials(config),
    async destroy() {
      await stopProcess(pid, { timeoutMillis: 30_000, commandLineMarker: server.commandLineMarker });
      rmSync(server.instanceDirectory, { recursive: true, force: true });
    },
  };
}
