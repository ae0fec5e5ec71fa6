import { realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCAL_STACK_FIELDS } from '../../contracts/index.ts';
import { ConfigReader, formatConfigProblem } from '../../service/index.ts';
import { DeployError } from '../errors.ts';

/** Versions the local stack installs; changing one installs the new version beside the old. */
export const LOCAL_STACK_VERSIONS = Object.freeze({
  /** The default Kafka (WARPWATCH_STACK_KAFKA_VERSION chooses another). */
  kafka: LOCAL_STACK_FIELDS.kafkaVersion.default,
  /** The older line the compatibility subset of the suite runs on (`npm run test:kafka-compat`). */
  kafkaCompatibility: '3.9.2',
  scala: '2.13',
  /** Kafka 3.x logs through SLF4J 1.7 and reload4j; its binary distribution ships this binding. */
  slf4jReload4j: '1.7.36',
  /** Kafka 4.x logs through SLF4J 1.7 and log4j2; its binary distribution ships this binding (the log4j-core Kafka 4.4 depends on). */
  log4jSlf4jImpl: '2.25.5',
  /** maven-dependency-plugin used for `copy-dependencies`. */
  mavenDependencyPlugin: '3.8.1',
  influxdb: '1.8.10',
});

/** The SLF4J binding of a Kafka version: reload4j for 3.x, log4j2 for 4.x (Kafka 4.0 moved to log4j2). */
export function kafkaLoggingBinding(version: string): { readonly groupId: string; readonly artifactId: string; readonly version: string; readonly log4j2: boolean } {
  return version.startsWith('3.')
    ? { groupId: 'org.slf4j', artifactId: 'slf4j-reload4j', version: LOCAL_STACK_VERSIONS.slf4jReload4j, log4j2: false }
    : { groupId: 'org.apache.logging.log4j', artifactId: 'log4j-slf4j-impl', version: LOCAL_STACK_VERSIONS.log4jSlf4jImpl, log4j2: true };
}

/** Defaults of the local stack, in one place. Ports are TCP ports on 127.0.0.1. */
export const LOCAL_STACK_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  kafkaPort: 19092,
  kafkaControllerPort: 19093,
  /** SASL_PLAINTEXT (SCRAM-SHA-256/512) listener of the same node, for tests of client authentication. */
  kafkaSaslPort: 19094,
  /** SCRAM user created on the local node (its password is generated per data directory). */
  kafkaSaslUsername: 'warpwatch',
  /** SCRAM users of the least-privilege set-up (docs/security.md § Kafka ACLs): ACLs decide what they may do when the authorizer is on. */
  kafkaServiceUsernames: Object.freeze({ collector: 'warpwatch-collector', estimator: 'warpwatch-estimator' }),
  /** JVM heap of the Kafka node (-Xmx), in MiB: enough for tests, modest on small machines. */
  kafkaHeapMebibytes: LOCAL_STACK_FIELDS.kafkaHeapMb.default,
  influxPort: 18086,
  influxRpcPort: 18088,
  influxDatabase: LOCAL_STACK_FIELDS.influxDatabase.default,
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
  /**
   * Ports of the TLS listeners (WARPWATCH_STACK_KAFKA_TLS_PORT and the four after it), or
   * undefined for none: `ssl` verifies the server only, `mtls` requires a client certificate,
   * `saslSsl` is SCRAM over TLS, `wrongHost` and `expired` present bad certificates on purpose.
   */
  readonly tls: { readonly ssl: number; readonly mtls: number; readonly saslSsl: number; readonly wrongHost: number; readonly expired: number } | undefined;
  /**
   * The relay listener (WARPWATCH_STACK_KAFKA_RELAY_PORT), or undefined for none: the node listens
   * on `port` and advertises `advertisedPort` (= port + 1), where a TCP relay of the caller's forwards to `port`.
   */
  readonly relay: { readonly port: number; readonly advertisedPort: number } | undefined;
  readonly heapMebibytes: number;
  /** Kafka version (WARPWATCH_STACK_KAFKA_VERSION), e.g. '4.4.0'. */
  readonly version: string;
  /** True: the KRaft StandardAuthorizer is on (WARPWATCH_STACK_KAFKA_AUTHORIZER). */
  readonly authorizer: boolean;
  /** `<cache>/kafka/<version>`: pom.xml and libs/ (the jars). */
  readonly installDirectory: string;
  /** `<cache>/kafka/node-<port>`: server.properties, data-<version>/, logs, pid file. */
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
  /** `auth-enabled = true`, an admin and a write-only user created at set-up (WARPWATCH_STACK_INFLUX_AUTH). */
  readonly authEnabled: boolean;
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

/**
 * The path with its longest existing prefix resolved through symbolic links and the rest
 * appended. The servers' command lines name files in the cache folder, and the stack knows its
 * own processes by them (process-control.ts isProcessRunning): two checkouts that reach one
 * cache folder by different paths (a symlink) must name it alike, or each takes the other's
 * servers for strangers.
 *
 * @example canonicalPath('/work/b/.cache/warpwatch') // '/work/a/.cache/warpwatch' when /work/b/.cache → /work/a/.cache
 */
function canonicalPath(path: string): string {
  const rest: string[] = [];
  let head = path;
  for (;;) {
    try {
      return join(realpathSync(head), ...rest);
    } catch {
      const parent = dirname(head);
      if (parent === head) return path;
      rest.unshift(basename(head));
      head = parent;
    }
  }
}

/**
 * Builds the local stack configuration from `WARPWATCH_*` environment variables, once, from the
 * field definitions LOCAL_STACK_FIELDS (contracts/config-fields.ts; their table is docs/stack.md
 * "Settings", generated by `npm run config-docs`). All problems are reported together; the result
 * is deeply frozen. A single 127.0.0.1/localhost broker and an `http://127.0.0.1:<port>` InfluxDB
 * are run here; anything else is treated as an external server, only checked.
 *
 * @param env - environment to read (default `process.env`).
 * @throws DeployError WW_ERR_STACK_CONFIG listing every invalid variable.
 * @example
 * const config = resolveLocalStackConfig({ WARPWATCH_KAFKA_BROKERS: '127.0.0.1:29092' });
 * config.kafka.port; // 29092
 */
export function resolveLocalStackConfig(env: NodeJS.ProcessEnv = process.env): LocalStackConfig {
  const F = LOCAL_STACK_FIELDS;
  const reader = new ConfigReader({ env });
  const v = reader.read(F);
  const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
  const cacheDirectory = canonicalPath(v.cacheDir === undefined ? join(repositoryRoot, '.cache', 'warpwatch') : isAbsolute(v.cacheDir) ? v.cacheDir : resolve(v.cacheDir));
  const d = LOCAL_STACK_DEFAULTS;

  // Kafka: the broker list decides whether we run the node or only check an external one.
  const brokers = [...v.kafkaBrokers];
  let kafkaHost: string = d.host;
  let kafkaPort: number = d.kafkaPort;
  let kafkaManaged = false;
  const first = F.kafkaBrokers.item.exec(brokers[0] ?? '');
  if (brokers.length === 1 && first && LOCAL_HOSTS.has(first[1] ?? '')) {
    kafkaManaged = true;
    kafkaHost = first[1] === 'localhost' ? d.host : (first[1] ?? d.host);
    const port = Number(first[2]);
    if (port >= 1 && port <= 65_535) kafkaPort = port;
    else reader.report({ name: `${F.kafkaBrokers.env} port`, value: first[2] ?? '', why: 'must be a TCP port 1..65535' });
  }
  const controllerPort = v.kafkaControllerPort ?? (kafkaPort === d.kafkaPort ? d.kafkaControllerPort : kafkaPort + 1);
  if (kafkaManaged && controllerPort === kafkaPort) reader.report({ name: F.kafkaControllerPort.env, value: String(controllerPort), why: `must differ from the broker port ${kafkaPort}` });
  const saslPort = v.kafkaSaslPort ?? (kafkaPort === d.kafkaPort ? d.kafkaSaslPort : kafkaPort + 2);
  if (kafkaManaged && (saslPort === kafkaPort || saslPort === controllerPort)) {
    reader.report({ name: F.kafkaSaslPort.env, value: String(saslPort), why: `must differ from the broker port ${kafkaPort} and the controller port ${controllerPort}` });
  }

  // InfluxDB: same rule with the URL.
  const urlText = v.influxUrl.replace(/\/+$/, '');
  let influxHost: string = d.host;
  let influxPort: number = d.influxPort;
  let influxManaged = false;
  try {
    const url = new URL(urlText);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') reader.report({ name: F.influxUrl.env, value: urlText, why: 'must be an http(s) URL' });
    if (url.protocol === 'http:' && LOCAL_HOSTS.has(url.hostname)) {
      influxManaged = true;
      influxHost = url.hostname === 'localhost' ? d.host : url.hostname;
      influxPort = url.port === '' ? 80 : Number(url.port);
    }
  } catch {
    reader.report({ name: F.influxUrl.env, value: urlText, why: 'must be a URL like http://127.0.0.1:18086' });
  }
  const rpcPort = v.influxRpcPort ?? (influxPort === d.influxPort ? d.influxRpcPort : influxPort + 2);
  if (influxManaged && rpcPort === influxPort) reader.report({ name: F.influxRpcPort.env, value: String(rpcPort), why: `must differ from the HTTP port ${influxPort}` });
  if (influxManaged && kafkaManaged && new Set([kafkaPort, controllerPort, saslPort, influxPort, rpcPort]).size < 5) {
    reader.report({
      name: 'the five local ports',
      why: `must differ, got kafka ${kafkaPort}, controller ${controllerPort}, kafka sasl ${saslPort}, influx ${influxPort}, influx rpc ${rpcPort}`,
    });
  }
  const tlsBase = v.kafkaTlsPort;
  const tls = tlsBase === undefined ? undefined : { ssl: tlsBase, mtls: tlsBase + 1, saslSsl: tlsBase + 2, wrongHost: tlsBase + 3, expired: tlsBase + 4 };
  if (kafkaManaged && tls !== undefined && Object.values(tls).some((port) => port === kafkaPort || port === controllerPort || port === saslPort)) {
    reader.report({ name: F.kafkaTlsPort.env, value: String(tlsBase), why: `its five ports must differ from the broker port ${kafkaPort}, the controller port ${controllerPort} and the SASL port ${saslPort}` });
  }
  const relay = v.kafkaRelayPort === undefined ? undefined : { port: v.kafkaRelayPort, advertisedPort: v.kafkaRelayPort + 1 };
  if (kafkaManaged && relay !== undefined && [relay.port, relay.advertisedPort].some((port) => port === kafkaPort || port === controllerPort || port === saslPort || (tls !== undefined && Object.values(tls).includes(port)))) {
    reader.report({ name: F.kafkaRelayPort.env, value: String(relay.port), why: `it and the port after it must differ from the broker, controller, SASL and TLS ports` });
  }
  const heapMebibytes = v.kafkaHeapMb;
  const database = v.influxDatabase;

  if (reader.problems.length > 0) throw new DeployError('WW_ERR_STACK_CONFIG', `invalid local stack settings: ${reader.problems.map(formatConfigProblem).join('; ')}`);

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
      tls: tls === undefined ? undefined : Object.freeze(tls),
      relay: relay === undefined ? undefined : Object.freeze(relay),
      heapMebibytes,
      version: v.kafkaVersion,
      authorizer: v.kafkaAuthorizer,
      installDirectory: join(cacheDirectory, 'kafka', v.kafkaVersion),
      instanceDirectory: join(cacheDirectory, 'kafka', `node-${kafkaPort}`),
    },
    influx: {
      managed: influxManaged,
      url: urlText,
      host: influxHost,
      port: influxPort,
      rpcPort,
      database,
      authEnabled: v.influxAuth,
      version: LOCAL_STACK_VERSIONS.influxdb,
      installDirectory: join(cacheDirectory, 'influxdb', LOCAL_STACK_VERSIONS.influxdb),
      instanceDirectory: join(cacheDirectory, 'influxdb', `node-${influxPort}`),
    },
    tools: { java: v.java, maven: v.maven, go: v.go },
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
