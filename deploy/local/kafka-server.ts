import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DeployError } from '../errors.ts';
import type { ManagedServer } from './managed-server.ts';
import { runTool, spawnDetached } from './process-control.ts';
import type { StepReporter } from './progress.ts';
import { probeKafka, warmUpKafkaGroupCoordinator } from './readiness.ts';
import { LOCAL_STACK_VERSIONS, type LocalStackConfig } from './stack-config.ts';

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
  return [
    '# Written by deploy/local/kafka-server.ts on every start; edits are overwritten.',
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@${k.host}:${k.controllerPort}`,
    `listeners=PLAINTEXT://${k.host}:${k.port},CONTROLLER://${k.host}:${k.controllerPort}`,
    `advertised.listeners=PLAINTEXT://${k.host}:${k.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${join(k.instanceDirectory, 'data')}`,
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

function renderLog4jProperties(instanceDirectory: string): string {
  const logFile = join(instanceDirectory, 'logs', 'server.log');
  return [
    '# Written by deploy/local/kafka-server.ts: INFO to a bounded rolling file, WARN and above also to stdout (kafka.out).',
    'log4j.rootLogger=INFO, file, stdout',
    'log4j.appender.file=org.apache.log4j.RollingFileAppender',
    `log4j.appender.file.File=${logFile}`,
    'log4j.appender.file.MaxFileSize=10MB',
    'log4j.appender.file.MaxBackupIndex=2',
    'log4j.appender.file.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
    'log4j.appender.stdout.Threshold=WARN',
    'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
    'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
    'log4j.logger.org.apache.kafka.clients=WARN',
    'log4j.logger.kafka.request.logger=WARN',
    '',
  ].join('\n');
}

/**
 * The local Kafka node as a {@link ManagedServer}: jars from Maven Central (kafka_2.13 and
 * its runtime dependencies plus slf4j-reload4j) in `<cache>/kafka/<version>/libs`, one
 * KRaft node whose storage is formatted on its first start.
 *
 * @example const kafka = createKafkaServer(resolveLocalStackConfig()); kafka.address; // '127.0.0.1:19092'
 */
export function createKafkaServer(config: LocalStackConfig): ManagedServer {
  const k = config.kafka;
  const libsDirectory = join(k.installDirectory, 'libs');
  const installedMarker = join(k.installDirectory, 'installed.json');
  const dataDirectory = join(k.instanceDirectory, 'data');
  const propertiesFile = join(k.instanceDirectory, 'server.properties');
  const log4jFile = join(k.instanceDirectory, 'log4j.properties');
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
              `-Dslf4j.version=${LOCAL_STACK_VERSIONS.slf4jReload4j}`,
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
      writeFileSync(propertiesFile, renderKafkaServerProperties(config));
      writeFileSync(log4jFile, renderLog4jProperties(k.instanceDirectory));
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
        `-Dlog4j.configuration=file:${log4jFile}`,
        `-Dkafka.logs.dir=${join(k.instanceDirectory, 'logs')}`,
      ];
      if (!existsSync(join(dataDirectory, 'meta.properties'))) {
        const clusterId = createKafkaClusterId();
        await reporter.step('kafka: format KRaft storage', () =>
          runTool({
            command: config.tools.java,
            args: [...jvmArgs.filter((a) => !a.startsWith('-Xms')), '-cp', classPath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', propertiesFile, '--ignore-formatted'],
            cwd: k.instanceDirectory,
            logFile: join(k.instanceDirectory, 'format.log'),
            description: 'Kafka storage format (kafka.tools.StorageTool)',
          }),
        );
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
    },
  };
}
