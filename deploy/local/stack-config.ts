import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DeployError } from '../errors.ts';

/** Versions the local stack installs; changing one installs the new version beside the old. */
export const LOCAL_STACK_VERSIONS = Object.freeze({
  kafka: '3.9.2',
  scala: '2.13',
  /** Kafka 3.9 is built against SLF4J 1.7; its binary distribution ships this binding. */
  slf4jReload4j: '1.7.36',
  /** maven-dependency-plugin used for `copy-dependencies`. */
  mavenDependencyPlugin: '3.8.1',
  influxdb: '1.8.10',
});

/** Defaults of the local stack, in one place. Ports are TCP ports on 127.0.0.1. */
export const LOCAL_STACK_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  kafkaPort: 19092,
  kafkaControllerPort: 19093,
  /** SASL_PLAINTEXT (SCRAM-SHA-256/512) listener of the same node, for tests of client authentication. */
  kafkaSaslPort: 19094,
  /** SCRAM user created on the local node (its password is generated per data directory). */
  kafkaSaslUsername: 'warpwatch',
  /** JVM heap of the Kafka node (-Xmx), in MiB: enough for tests, modest on small machines. */
  kafkaHeapMebibytes: 512,
  influxPort: 18086,
  influxRpcPort: 18088,
  influxDatabase: 'warpwatch',
  /** Longest wait for a started server to answer. */
  readyTimeoutMillis: 120_000,
  /** Longest wait after SIGTERM before SIGKILL. */
  stopTimeoutMillis: 30_000,
  /** Longest wait for another process that holds the stack lock (a first build takes minutes). */
  lockTimeoutMillis: 20 * 60_000,
});

/** Where and how the local Kafka node runs. */
export interface LocalKafkaConfig {
  /** True when the broker address is on this machine and deploy/local runs it; false = external, only checked. */
  readonly managed: boolean;
  /** Bootstrap broker list as given to clients, e.g. ['127.0.0.1:19092']. */
  readonly brokers: readonly string[];
  readonly host: string;
  readonly port: number;
  readonly controllerPort: number;
  /** Port of the SASL_PLAINTEXT listener (SCRAM-SHA-256 and SCRAM-SHA-512) on `host`. */
  readonly saslPort: number;
  readonly heapMebibytes: number;
  readonly version: string;
  /** `<cache>/kafka/<version>`: pom.xml and libs/ (the jars). */
  readonly installDirectory: string;
  /** `<cache>/kafka/node-<port>`: server.properties, data/, logs, pid file. */
  readonly instanceDirectory: string;
}

/** Where and how the local InfluxDB runs. */
export interface LocalInfluxConfig {
  /** True when the URL is on this machine and deploy/local runs it; false = external, only checked. */
  readonly managed: boolean;
  /** Base URL without trailing slash, e.g. 'http://127.0.0.1:18086'. */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  /** Port of the backup/restore RPC service, bound to the same host. */
  readonly rpcPort: number;
  /** Database created on start; the v2 API bucket is `<database>/autogen`. */
  readonly database: string;
  readonly version: string;
  /** `<cache>/influxdb/<version>`: bin/influxd. */
  readonly installDirectory: string;
  /** `<cache>/influxdb/node-<port>`: influxdb.conf, meta/, data/, wal/, log, pid file. */
  readonly instanceDirectory: string;
}

/** Validated, frozen settings of the local stack; built once by {@link resolveLocalStackConfig}. */
export interface LocalStackConfig {
  /** Repository root (the folder holding package.json). */
  readonly repositoryRoot: string;
  /** Everything downloaded, built or written lives below this folder. */
  readonly cacheDirectory: string;
  readonly kafka: LocalKafkaConfig;
  readonly influx: LocalInfluxConfig;
  /** Commands used to install and run the servers (overridable for unusual machines). */
  readonly tools: { readonly java: string; readonly maven: string; readonly go: string };
  readonly readyTimeoutMillis: number;
  readonly stopTimeoutMillis: number;
  readonly lockTimeoutMillis: number;
}

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function parsePort(text: string, name: string, problems: string[]): number | undefined {
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    problems.push(`${name} must be a TCP port 1..65535, got "${text}"`);
    return undefined;
  }
  return Number(text);
}

/**
 * Builds the local stack configuration from `WARPWATCH_*` environment variables, once.
 * All problems are reported together; the result is deeply frozen.
 *
 * Environment (all optional):
 * - WARPWATCH_CACHE_DIR — cache folder (default `<repo>/.cache/warpwatch`).
 * - WARPWATCH_KAFKA_BROKERS — `host:port`; a single 127.0.0.1/localhost broker is run here on
 *   that port (default 127.0.0.1:19092), anything else is treated as an external cluster.
 * - WARPWATCH_KAFKA_CONTROLLER_PORT (default 19093), WARPWATCH_KAFKA_SASL_PORT (default 19094,
 *   SCRAM listener), WARPWATCH_KAFKA_HEAP_MB (default 512).
 * - WARPWATCH_INFLUX_URL — `http://127.0.0.1:<port>` is run here (default port 18086), other URLs are external.
 * - WARPWATCH_INFLUX_RPC_PORT (default 18088), WARPWATCH_INFLUX_DATABASE (default warpwatch).
 * - WARPWATCH_JAVA, WARPWATCH_MVN, WARPWATCH_GO — commands (default java, mvn, go).
 *
 * @param env - environment to read (default `process.env`).
 * @throws DeployError WW_ERR_STACK_CONFIG listing every invalid variable.
 * @example
 * const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092' });
 * config.kafka.port; // 29092
 */
export function resolveLocalStackConfig(env: NodeJS.ProcessEnv = process.env): LocalStackConfig {
  const problems: string[] = [];
  const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  const cacheText = env['WARPWATCH_CACHE_DIR']?.trim();
  const cacheDirectory = cacheText ? (isAbsolute(cacheText) ? cacheText : resolve(cacheText)) : join(repositoryRoot, '.cache', 'warpwatch');
  const d = LOCAL_STACK_DEFAULTS;

  // Kafka: the broker list decides whether we run the node or only check an external one.
  const brokersText = env['WARPWATCH_KAFKA_BROKERS']?.trim() || `${d.host}:${d.kafkaPort}`;
  const brokers = brokersText.split(',').map((b) => b.trim()).filter((b) => b.length > 0);
  let kafkaHost: string = d.host;
  let kafkaPort: number = d.kafkaPort;
  let kafkaManaged = false;
  const brokerPattern = /^(\[[^\]]+\]|[^:]+):(\d+)$/;
  for (const broker of brokers) {
    if (!brokerPattern.test(broker)) problems.push(`WARPWATCH_KAFKA_BROKERS must be a comma list of host:port, got "${broker}"`);
  }
  const first = brokerPattern.exec(brokers[0] ?? '');
  if (brokers.length === 1 && first && LOCAL_HOSTS.has(first[1] ?? '')) {
    kafkaManaged = true;
    kafkaHost = first[1] === 'localhost' ? d.host : (first[1] ?? d.host);
    kafkaPort = parsePort(first[2] ?? '', 'WARPWATCH_KAFKA_BROKERS port', problems) ?? d.kafkaPort;
  }
  const controllerText = env['WARPWATCH_KAFKA_CONTROLLER_PORT']?.trim();
  const controllerPort = controllerText ? (parsePort(controllerText, 'WARPWATCH_KAFKA_CONTROLLER_PORT', problems) ?? 0) : kafkaPort === d.kafkaPort ? d.kafkaControllerPort : kafkaPort + 1;
  if (kafkaManaged && controllerPort === kafkaPort) problems.push(`WARPWATCH_KAFKA_CONTROLLER_PORT must differ from the broker port ${kafkaPort}`);
  const saslText = env['WARPWATCH_KAFKA_SASL_PORT']?.trim();
  const saslPort = saslText ? (parsePort(saslText, 'WARPWATCH_KAFKA_SASL_PORT', problems) ?? 0) : kafkaPort === d.kafkaPort ? d.kafkaSaslPort : kafkaPort + 2;
  if (kafkaManaged && (saslPort === kafkaPort || saslPort === controllerPort)) {
    problems.push(`WARPWATCH_KAFKA_SASL_PORT must differ from the broker port ${kafkaPort} and the controller port ${controllerPort}`);
  }
  const heapText = env['WARPWATCH_KAFKA_HEAP_MB']?.trim();
  let heapMebibytes: number = d.kafkaHeapMebibytes;
  if (heapText) {
    if (!/^\d+$/.test(heapText) || Number(heapText) < 128 || Number(heapText) > 65536) problems.push(`WARPWATCH_KAFKA_HEAP_MB must be an integer 128..65536 (MiB), got "${heapText}"`);
    else heapMebibytes = Number(heapText);
  }

  // InfluxDB: same rule with the URL.
  const urlText = (env['WARPWATCH_INFLUX_URL']?.trim() || `http://${d.host}:${d.influxPort}`).replace(/\/+$/, '');
  let influxHost: string = d.host;
  let influxPort: number = d.influxPort;
  let influxManaged = false;
  try {
    const url = new URL(urlText);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push(`WARPWATCH_INFLUX_URL must be an http(s) URL, got "${urlText}"`);
    if (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname)) {
      influxManaged = true;
      influxHost = url.hostname === 'localhost' ? d.host : url.hostname;
      influxPort = url.port === '' ? 80 : Number(url.port);
    }
  } catch {
    problems.push(`WARPWATCH_INFLUX_URL must be a URL like http://127.0.0.1:18086, got "${urlText}"`);
  }
  const rpcText = env['WARPWATCH_INFLUX_RPC_PORT']?.trim();
  const rpcPort = rpcText ? (parsePort(rpcText, 'WARPWATCH_INFLUX_RPC_PORT', problems) ?? 0) : influxPort === d.influxPort ? d.influxRpcPort : influxPort + 2;
  if (influxManaged && rpcPort === influxPort) problems.push(`WARPWATCH_INFLUX_RPC_PORT must differ from the HTTP port ${influxPort}`);
  const database = env['WARPWATCH_INFLUX_DATABASE']?.trim() || d.influxDatabase;
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(database)) problems.push(`WARPWATCH_INFLUX_DATABASE must be 1..64 of [A-Za-z0-9_.-], got "${database}"`);
  if (influxManaged && kafkaManaged && new Set([kafkaPort, controllerPort, saslPort, influxPort, rpcPort]).size < 5) {
    problems.push(`the five local ports must differ, got kafka ${kafkaPort}, controller ${controllerPort}, kafka sasl ${saslPort}, influx ${influxPort}, influx rpc ${rpcPort}`);
  }

  if (problems.length > 0) throw new DeployError('WW_ERR_STACK_CONFIG', `invalid local stack settings: ${problems.join('; ')}`);

  const config: LocalStackConfig = {
    repositoryRoot,
    cacheDirectory,
    kafka: {
      managed: kafkaManaged,
      brokers,
      host: kafkaHost,
      port: kafkaPort,
      controllerPort,
      saslPort,
      heapMebibytes,
      version: LOCAL_STACK_VERSIONS.kafka,
      installDirectory: join(cacheDirectory, 'kafka', LOCAL_STACK_VERSIONS.kafka),
      instanceDirectory: join(cacheDirectory, 'kafka', `node-${kafkaPort}`),
    },
    influx: {
      managed: influxManaged,
      url: urlText,
      host: influxHost,
      port: influxPort,
      rpcPort,
      database,
      version: LOCAL_STACK_VERSIONS.influxdb,
      installDirectory: join(cacheDirectory, 'influxdb', LOCAL_STACK_VERSIONS.influxdb),
      instanceDirectory: join(cacheDirectory, 'influxdb', `node-${influxPort}`),
    },
    tools: {
      java: env['WARPWATCH_JAVA']?.trim() || 'java',
      maven: env['WARPWATCH_MVN']?.trim() || 'mvn',
      go: env['WARPWATCH_GO']?.trim() || 'go',
    },
    readyTimeoutMillis: d.readyTimeoutMillis,
    stopTimeoutMillis: d.stopTimeoutMillis,
    lockTimeoutMillis: d.lockTimeoutMillis,
  };
  Object.freeze(config.kafka.brokers);
  Object.freeze(config.kafka);
  Object.freeze(config.influx);
  Object.freeze(config.tools);
  return Object.freeze(config);
}
