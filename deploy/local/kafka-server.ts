import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeployError } from '../errors.ts';
import type { ManagedServer } from './managed-server.ts';
import { runTool, spawnDetached } from './process-control.ts';
import type { StepReporter } from './progress.ts';
import { ensureLocalTlsMaterial, type LocalTlsMaterial } from './tls-material.ts';
import { probeKafka, warmUpKafkaGroupCoordinator } from './readiness.ts';
import { kafkaLoggingBinding, LOCAL_STACK_DEFAULTS, LOCAL_STACK_VERSIONS, type LocalStackConfig } from './stack-config.ts';

/**
 * A fresh KRaft cluster id: 16 random bytes, base64url without padding (22 characters),
 * like `kafka-storage.sh random-uuid`; ids starting with '-' are drawn again because
 * Kafka's own generator rejects them (they read as command-line flags).
 *
 * @example createKafkaClusterId(); // 'q1Sh-9_ISia_zwGINzRvyQ'
 */
export function createKafkaClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/**
 * server.properties of a single-node KRaft cluster (broker and controller in one JVM)
 * bound to the configured host only. Replication factors and min ISR are 1 because there
 * is one node; no group rebalance delay so tests' consumers start at once.
 *
 * @example renderKafkaServerProperties(resolveLocalStackConfig()).includes('process.roles=broker,controller'); // true
 */
export function renderKafkaServerProperties(config: LocalStackConfig): string {
  const k = config.kafka;
  const listeners = [`PLAINTEXT://${k.host}:${k.port}`, `SASL_PLAINTEXT://${k.host}:${k.saslPort}`];
  const protocols = ['CONTROLLER:PLAINTEXT', 'PLAINTEXT:PLAINTEXT', 'SASL_PLAINTEXT:SASL_PLAINTEXT'];
  const tlsLines: string[] = [];
  if (k.tls !== undefined) {
    // One node, five TLS listeners (docs/security.md): each has its own keystore; MTLS also a truststore.
    const material = ensureLocalTlsMaterial(localTlsDirectory(config));
    const named = [
      ['SSL', k.tls.ssl, material.serverKeystore],
      ['MTLS', k.tls.mtls, material.serverKeystore],
      ['SASL_SSL', k.tls.saslSsl, material.serverKeystore],
      ['WRONGHOST', k.tls.wrongHost, material.wrongHostKeystore],
      ['EXPIRED', k.tls.expired, material.expiredKeystore],
    ] as const;
    for (const [name, port, keystore] of named) {
      const prefix = `listener.name.${name.toLowerCase()}`;
      listeners.push(`${name}://${k.host}:${port}`);
      protocols.push(`${name}:${name === 'SASL_SSL' ? 'SASL_SSL' : 'SSL'}`);
      tlsLines.push(`${prefix}.ssl.keystore.type=PKCS12`, `${prefix}.ssl.keystore.location=${keystore}`, `${prefix}.ssl.keystore.password=${material.keystorePassword}`);
    }
    tlsLines.push(
      'listener.name.mtls.ssl.client.auth=required',
      'listener.name.mtls.ssl.truststore.type=PEM',
      `listener.name.mtls.ssl.truststore.location=${material.caFile}`,
      'listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    );
  }
  const advertised = [...listeners];
  if (k.relay !== undefined) {
    // Clients that bootstrap at the relay get the relay's address in every metadata answer of this listener.
    listeners.push(`RELAY://${k.host}:${k.relay.port}`);
    advertised.push(`RELAY://${k.host}:${k.relay.advertisedPort}`);
    protocols.push('RELAY:PLAINTEXT');
  }
  return [
    '# Written by deploy/local/kafka-server.ts on every start; edits are overwritten.',
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${k.host}:${k.controllerPort}`,
    `listeners=${[listeners[0], `CONTROLLER://${k.host}:${k.controllerPort}`, ...listeners.slice(1)].join(',')}`,
    `advertised.listeners=${advertised.join(',')}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    `listener.security.protocol.map=${protocols.join(',')}`,
    // SCRAM on the SASL listener (credentials live in the KRaft metadata, see registerScramUser).
    'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512',
    'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;',
    ...tlsLines,
    ...(k.authorizer
      ? [
          // ACLs decide for the service users; ANONYMOUS is who the PLAINTEXT and controller
          // listeners (127.0.0.1 only) see, so the node itself and the admin path keep working.
          'authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer',
          `super.users=User:ANONYMOUS;User:${LOCAL_STACK_DEFAULTS.kafkaSaslUsername}`,
          'allow.everyone.if.no.acl.found=false',
        ]
      : []),
    `log.dirs=${kafkaDataDirectory(config)}`,
    'num.partitions=1',
    'default.replication.factor=1',
    'offsets.topic.replication.factor=1',
    'offsets.topic.num.partitions=10',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'min.insync.replicas=1',
    'group.initial.rebalance.delay.ms=0',
    'auto.create.topics.enable=true',
    'delete.topic.enable=true',
    'num.network.threads=2',
    'num.io.threads=4',
    'num.recovery.threads.per.data.dir=1',
    'log.retention.hours=24',
    'log.segment.bytes=67108864',
    'log.cleaner.dedupe.buffer.size=16777216',
    '',
  ].join('\n');
}

/** `<instance>/data-<version>`: one KRaft log per Kafka version, so switching versions never reads another's metadata. */
function kafkaDataDirectory(config: LocalStackConfig): string {
  return join(config.kafka.instanceDirectory, `data-${config.kafka.version}`);
}

/** One SCRAM login of the local node. */
export interface LocalKafkaLogin {
  readonly username: string;
  readonly password: string;
  /** A file holding only the password (mode 0600), for WARPWATCH_KAFKA_SASL_PASSWORD_FILE. */
  readonly passwordFile: string;
}

/** The SCRAM login of the local node's SASL listener. */
export interface LocalKafkaSaslCredentials {
  /** Bootstrap list of the SASL_PLAINTEXT listener, e.g. ['127.0.0.1:19094']. */
  readonly brokers: readonly string[];
  readonly username: string;
  readonly password: string;
  /** A file holding only the password (mode 0600), for WARPWATCH_KAFKA_SASL_PASSWORD_FILE. */
  readonly passwordFile: string;
  /** The service users of the least-privilege set-up (no ACLs of their own: docs/security.md § Kafka ACLs). */
  readonly services: { readonly collector: LocalKafkaLogin; readonly estimator: LocalKafkaLogin };
}

type ServiceUser = keyof typeof LOCAL_STACK_DEFAULTS.kafkaServiceUsernames;
const SERVICE_USERS: readonly ServiceUser[] = ['collector', 'estimator'];

interface CredentialsFile {
  username: string;
  password: string;
  /** Passwords of the service users, by role. */
  services: Record<ServiceUser, string>;
  /** Cluster id of the data directory the user was registered in (re-registered after a re-format). */
  registeredInCluster: string | null;
}

const credentialsPath = (config: LocalStackConfig): string => join(config.kafka.instanceDirectory, 'sasl-credentials.json');

function readCredentialsFile(config: LocalStackConfig): CredentialsFile {
  const path = credentialsPath(config);
  if (existsSync(path)) {
    try {
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as CredentialsFile;
      if (typeof parsed.username === 'string' && typeof parsed.password === 'string' && SERVICE_USERS.every((role) => typeof parsed.services?.[role] === 'string')) return parsed;
    } catch {
      // Unreadable: make new credentials below (the user is registered again).
    }
  }
  const created: CredentialsFile = {
    username: LOCAL_STACK_DEFAULTS.kafkaSaslUsername,
    password: randomBytes(18).toString('base64url'),
    services: { collector: randomBytes(18).toString('base64url'), estimator: randomBytes(18).toString('base64url') },
    registeredInCluster: null,
  };
  writeCredentialsFile(config, created);
  return created;
}

function writeCredentialsFile(config: LocalStackConfig, credentials: CredentialsFile): void {
  mkdirSync(config.kafka.instanceDirectory, { recursive: true });
  const path = credentialsPath(config);
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  const files: [string, string][] = [['sasl-password', credentials.password], ...SERVICE_USERS.map((role): [string, string] => [`sasl-password-${role}`, credentials.services[role]])];
  for (const [name, password] of files) {
    const passwordFile = join(config.kafka.instanceDirectory, name);
    writeFileSync(passwordFile, password, { mode: 0o600 });
    chmodSync(passwordFile, 0o600);
  }
}

/**
 * The SCRAM logins of the local node (created on first use; local test credentials kept in
 * `<cache>/kafka/node-<port>/sasl-credentials.json`, mode 0600). The users exist on the node
 * once the stack is up: they are registered when its storage is formatted.
 *
 * @example const { brokers, username, passwordFile } = localKafkaSaslCredentials(resolveLocalStackConfig());
 */
export function localKafkaSaslCredentials(config: LocalStackConfig): LocalKafkaSaslCredentials {
  const credentials = readCredentialsFile(config);
  return {
    brokers: [`${config.kafka.host}:${config.kafka.saslPort}`],
    username: credentials.username,
    password: credentials.password,
    passwordFile: join(config.kafka.instanceDirectory, 'sasl-password'),
    services: {
      collector: serviceLogin(config, credentials, 'collector'),
      estimator: serviceLogin(config, credentials, 'estimator'),
    },
  };
}

function serviceLogin(config: LocalStackConfig, credentials: CredentialsFile, role: ServiceUser): LocalKafkaLogin {
  return {
    username: LOCAL_STACK_DEFAULTS.kafkaServiceUsernames[role],
    password: credentials.services[role],
    passwordFile: join(config.kafka.instanceDirectory, `sasl-password-${role}`),
  };
}

/** `--add-scram` arguments of kafka-storage format: every user, both mechanisms. */
function scramFormatArguments(credentials: CredentialsFile): string[] {
  const users: [string, string][] = [[credentials.username, credentials.password], ...SERVICE_USERS.map((role): [string, string] => [LOCAL_STACK_DEFAULTS.kafkaServiceUsernames[role], credentials.services[role]])];
  return users.flatMap(([name, password]) => ['SCRAM-SHA-256', 'SCRAM-SHA-512'].flatMap((mechanism) => ['--add-scram', `${mechanism}=[name=${name},password=${password}]`]));
}

const localTlsDirectory = (config: LocalStackConfig): string => join(config.kafka.instanceDirectory, 'tls');

/** The TLS listeners of the local node and the files a client needs for them. */
export interface LocalKafkaTls extends LocalTlsMaterial {
  /** Bootstrap lists, one per listener, e.g. { ssl: ['127.0.0.1:19095'], ... }. */
  readonly brokers: { readonly ssl: string; readonly mtls: string; readonly saslSsl: string; readonly wrongHost: string; readonly expired: string };
}

/**
 * The TLS listeners of a node started with WARPWATCH_STACK_KAFKA_TLS_PORT and their
 * certificate files (generated with openssl on first use, docs/security.md), or undefined
 * when the node has none.
 *
 * @example const tls = localKafkaTls(config); tls?.brokers.mtls; // '127.0.0.1:19096'
 */
export function localKafkaTls(config: LocalStackConfig): LocalKafkaTls | undefined {
  const ports = config.kafka.tls;
  if (ports === undefined) return undefined;
  const at = (port: number): string => `${config.kafka.host}:${port}`;
  return {
    ...ensureLocalTlsMaterial(localTlsDirectory(config)),
    brokers: { ssl: at(ports.ssl), mtls: at(ports.mtls), saslSsl: at(ports.saslSsl), wrongHost: at(ports.wrongHost), expired: at(ports.expired) },
  };
}

function clusterIdOf(dataDirectory: string): string | undefined {
  const file = join(dataDirectory, 'meta.properties');
  if (!existsSync(file)) return undefined;
  return /^cluster\.id=(.+)$/m.exec(readFileSync(file, 'utf8'))?.[1]?.trim();
}

/** Logging of the node: INFO to a bounded rolling file, WARN and above also to stdout (kafka.out); reload4j for 3.x, log4j2 for 4.x. */
function renderLoggingConfig(instanceDirectory: string, log4j2: boolean): string {
  const logFile = join(instanceDirectory, 'logs', 'server.log');
  const pattern = '[%d] %p %m (%c)%n';
  if (log4j2) {
    return [
      '# Written by deploy/local/kafka-server.ts: INFO to a bounded rolling file, WARN and above also to stdout (kafka.out).',
      'status = warn',
      'appender.file.type = RollingFile',
      'appender.file.name = file',
      `appender.file.fileName = ${logFile}`,
      `appender.file.filePattern = ${logFile}.%i`,
      'appender.file.layout.type = PatternLayout',
      `appender.file.layout.pattern = ${pattern}`,
      'appender.file.policies.type = Policies',
      'appender.file.policies.size.type = SizeBasedTriggeringPolicy',
      'appender.file.policies.size.size = 10MB',
      'appender.file.strategy.type = DefaultRolloverStrategy',
      'appender.file.strategy.max = 2',
      'appender.stdout.type = Console',
      'appender.stdout.name = stdout',
      'appender.stdout.layout.type = PatternLayout',
      `appender.stdout.layout.pattern = ${pattern}`,
      'appender.stdout.filter.threshold.type = ThresholdFilter',
      'appender.stdout.filter.threshold.level = warn',
      'rootLogger.level = info',
      'rootLogger.appenderRef.file.ref = file',
      'rootLogger.appenderRef.stdout.ref = stdout',
      'logger.clients.name = org.apache.kafka.clients',
      'logger.clients.level = warn',
      'logger.requests.name = kafka.request.logger',
      'logger.requests.level = warn',
      '',
    ].join('\n');
  }
  return [
    '# Written by deploy/local/kafka-server.ts: INFO to a bounded rolling file, WARN and above also to stdout (kafka.out).',
    'log4j.rootLogger=INFO, file, stdout',
    'log4j.appender.file=org.apache.log4j.RollingFileAppender',
    `log4j.appender.file.File=${logFile}`,
    'log4j.appender.file.MaxFileSize=10MB',
    'log4j.appender.file.MaxBackupIndex=2',
    'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
    `log4j.appender.file.layout.ConversionPattern=${pattern}`,
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.Threshold=WARN',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    `log4j.appender.stdout.layout.ConversionPattern=${pattern}`,
    'log4j.logger.org.apache.kafka.clients=WARN',
    'log4j.logger.kafka.request.logger=WARN',
    '',
  ].join('\n');
}

/**
 * The local Kafka node as a {@link ManagedServer}: jars from Maven Central (kafka_2.13 and
 * its runtime dependencies plus the SLF4J binding of its line, {@link kafkaLoggingBinding}) in
 * `<cache>/kafka/<version>/libs`, one KRaft node whose storage is formatted, with its SCRAM
 * users, on its first start.
 *
 * @example const kafka = createKafkaServer(resolveLocalStackConfig()); kafka.address; // '127.0.0.1:19092'
 */
export function createKafkaServer(config: LocalStackConfig): ManagedServer {
  const k = config.kafka;
  const libsDirectory = join(k.installDirectory, 'libs');
  const installedMarker = join(k.installDirectory, 'installed.json');
  const dataDirectory = kafkaDataDirectory(config);
  const propertiesFile = join(k.instanceDirectory, 'server.properties');
  const logging = kafkaLoggingBinding(k.version);
  const loggingFile = join(k.instanceDirectory, logging.log4j2 ? 'log4j2.properties' : 'log4j.properties');
  const classPath = `${libsDirectory}/*`;

  return {
    name: 'kafka',
    address: `${k.host}:${k.port}`,
    instanceDirectory: k.instanceDirectory,
    pidFile: join(k.instanceDirectory, 'kafka.pid'),
    ownerFile: join(k.instanceDirectory, 'owner'),
    logFile: join(k.instanceDirectory, 'logs', 'server.log'),
    outputFile: join(k.instanceDirectory, 'kafka.out'),
    commandLineMarker: propertiesFile,

    isInstalled(): boolean {
      return existsSync(installedMarker);
    },

    async install(reporter: StepReporter): Promise<void> {
      mkdirSync(k.installDirectory, { recursive: true });
      copyFileSync(join(config.repositoryRoot, 'deploy', 'local', 'kafka.pom.xml'), join(k.installDirectory, 'pom.xml'));
      const staging = join(k.installDirectory, 'libs.partial');
      rmSync(staging, { recursive: true, force: true });
      await reporter.step(
        `kafka: download Kafka ${k.version} jars from Maven Central`,
        () =>
          runTool({
            command: config.tools.maven,
            args: [
              '-B',
              '-q',
              '-f',
              join(k.installDirectory, 'pom.xml'),
              `-Dkafka.version=${k.version}`,
              `-Dscala.binary.version=${LOCAL_STACK_VERSIONS.scala}`,
              `-Dlogging.groupId=${logging.groupId}`,
              `-Dlogging.artifactId=${logging.artifactId}`,
              `-Dlogging.version=${logging.version}`,
              `org.apache.maven.plugins:maven-dependency-plugin:${LOCAL_STACK_VERSIONS.mavenDependencyPlugin}:copy-dependencies`,
              '-DincludeScope=runtime',
              `-DoutputDirectory=${staging}`,
            ],
            cwd: k.installDirectory,
            logFile: join(k.installDirectory, 'maven.log'),
            description: `Maven download of the Kafka ${k.version} jars`,
          }),
        { expectation: 'first run only; ~50 MB, typically 10-60 s' },
      );
      const jars = readdirSync(staging).filter((name) => name.endsWith('.jar'));
      if (!jars.some((name) => name.startsWith(`kafka_${LOCAL_STACK_VERSIONS.scala}-`))) {
        throw new DeployError('WW_ERR_STACK_INSTALL', `Maven finished but ${staging} holds no kafka_${LOCAL_STACK_VERSIONS.scala} jar (found ${jars.length} jars)`, { retriable: true });
      }
      rmSync(libsDirectory, { recursive: true, force: true });
      renameSync(staging, libsDirectory);
      writeFileSync(installedMarker, `${JSON.stringify({ version: k.version, jars: jars.length, installedAt: new Date().toISOString() }, null, 2)}\n`);
      reporter.note(`kafka: ${jars.length} jars in ${libsDirectory}`);
    },

    async spawn(reporter: StepReporter): Promise<number> {
      mkdirSync(join(k.instanceDirectory, 'logs'), { recursive: true });
      // Mode 0600: with TLS listeners it holds the local keystores' password.
      writeFileSync(propertiesFile, renderKafkaServerProperties(config), { mode: 0o600 });
      writeFileSync(loggingFile, renderLoggingConfig(k.instanceDirectory, logging.log4j2));
      // C1 only (TieredStopAtLevel=1): start-up on a loaded 2-core machine went from ~15 s to ~9 s;
      // peak throughput of a test/dev node does not matter.
      const jvmArgs = [
        '-Xms128m',
        `-Xmx${k.heapMebibytes}m`,
        '-XX:+UseG1GC',
        '-XX:MaxGCPauseMillis=20',
        '-XX:TieredStopAtLevel=1',
        '-XX:-UsePerfData',
        '-Djava.awt.headless=true',
        logging.log4j2 ? `-Dlog4j2.configurationFile=file:${loggingFile}` : `-Dlog4j.configuration=file:${loggingFile}`,
        `-Dkafka.logs.dir=${join(k.instanceDirectory, 'logs')}`,
      ];
      if (!existsSync(join(dataDirectory, 'meta.properties'))) {
        const clusterId = createKafkaClusterId();
        const credentials = readCredentialsFile(config);
        // The SCRAM users go into the bootstrap metadata (`--add-scram`, Kafka ≥ 3.5): no admin
        // tool is needed later, and Kafka 4.x no longer ships ConfigCommand in kafka_2.13.
        await reporter.step('kafka: format KRaft storage', async () => {
          await runTool({
            command: config.tools.java,
            args: [...jvmArgs.filter((a) => !a.startsWith('-Xms')), '-cp', classPath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propertiesFile, '--ignore-formatted', ...scramFormatArguments(credentials)],
            cwd: k.instanceDirectory,
            logFile: join(k.instanceDirectory, 'format.log'),
            description: 'Kafka storage format (kafka.tools.StorageTool)',
          });
          writeCredentialsFile(config, { ...credentials, registeredInCluster: clusterId });
        });
        reporter.note(`kafka: cluster id ${clusterId}, data in ${dataDirectory}`);
      }
      return spawnDetached({
        command: config.tools.java,
        args: [...jvmArgs, '-cp', classPath, 'kafka.Kafka', propertiesFile],
        cwd: k.instanceDirectory,
        outputFile: join(k.instanceDirectory, 'kafka.out'),
        pidFile: join(k.instanceDirectory, 'kafka.pid'),
      });
    },

    probe() {
      return probeKafka(k.brokers);
    },

    async afterReady(): Promise<void> {
      // Topics are created by the services (collector/estimator) or auto-created on first use;
      // only the offsets topic is made ready here, for consumer groups.
      await warmUpKafkaGroupCoordinator(k.brokers);
      await ensureScramUser(config, dataDirectory);
    },
  };
}

/**
 * Checks that the SCRAM users registered when the storage was formatted log in (SCRAM-SHA-512)
 * on the SASL listener.
 *
 * @throws DeployError WW_ERR_STACK_UNREACHABLE when the SASL listener does not answer (a node
 *   started with an older server.properties: `npm run stack -- down`, then up) or the login
 *   fails; WW_ERR_STACK_CONFIG when the credentials file is not the one this data directory was
 *   formatted with (it was deleted or replaced).
 */
async function ensureScramUser(config: LocalStackConfig, dataDirectory: string): Promise<void> {
  const k = config.kafka;
  const credentials = readCredentialsFile(config);
  const clusterId = clusterIdOf(dataDirectory) ?? 'unknown';
  const saslBroker = `${k.host}:${k.saslPort}`;
  if (credentials.registeredInCluster !== clusterId) {
    throw new DeployError(
      'WW_ERR_STACK_CONFIG',
      `kafka: ${credentialsPath(config)} was not written when ${dataDirectory} was formatted (cluster ${clusterId}), so its SCRAM passwords are unknown to the node; run \`npm run stack -- down\`, delete ${dataDirectory} and start again`,
    );
  }
  // Credentials reach the listener through the metadata log a moment after the start.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const probe = await probeKafka([saslBroker], 3_000, { mechanism: 'scram-sha-512', username: credentials.username, password: credentials.password });
    if (probe.ready) return;
    if (Date.now() > deadline) {
      throw new DeployError(
        'WW_ERR_STACK_UNREACHABLE',
        `kafka: the SASL listener ${saslBroker} does not accept the local SCRAM user (${probe.reason}); if this node was started before the listener existed, run \`npm run stack -- down\` and start it again`,
        { retriable: true },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
