// Helpers of the collector integration tests: read a topic back from the real broker, and
// run a private Kafka node (own ports and data directory) that a test may stop and start
// without disturbing the shared stack other tests use.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { Kafka, logLevel, type IHeaders } from 'kafkajs';
import { createKafkaServer, resolveLocalStackConfig, silentReporter, stopProcess, waitUntilReady, type LocalStackConfig } from '../../deploy/local/index.ts';

/** A message read back from Kafka, headers decoded as UTF-8. */
export interface ConsumedMessage {
  readonly key: string | null;
  readonly value: Buffer;
  readonly headers: Record<string, string>;
  readonly partition: number;
  readonly offset: bigint;
}

function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) out[name] = Array.isArray(value) ? String(value[0]) : String(value);
  return out;
}

/**
 * Reads `topic` from the beginning until `count` messages arrived (or `timeoutMillis`
 * passed), in partition order. Returns what it got; the test compares.
 */
export async function consumeTopic(brokers: string, topic: string, count: number, timeoutMillis = 60_000): Promise<ConsumedMessage[]> {
  const kafka = new Kafka({ clientId: 'warpwatch-collector-it', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `warpwatch-collector-it-${randomUUID()}`, maxBytes: 64 << 20 });
  const messages: ConsumedMessage[] = [];
  let done: () => void = () => {};
  const enough = new Promise<void>((resolve) => (done = resolve));
  try {
    await consumer.connect();
    // A topic created a moment ago may not be in every broker's metadata yet: retry briefly.
    for (let attempt = 0; ; attempt++) {
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        break;
      } catch (error) {
        if (attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          messages.push({ key: m.key === null ? null : m.key.toString(), value: m.value ?? Buffer.alloc(0), headers: decodeHeaders(m.headers), partition: batch.partition, offset: BigInt(m.offset) });
        }
        if (messages.length >= count) done();
      },
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([enough, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMillis)))]);
    clearTimeout(timer);
    // A short grace to catch duplicates or extra messages that would make the count wrong.
    await new Promise((resolve) => setTimeout(resolve, 500));
  } finally {
    await consumer.disconnect();
  }
  return messages;
}

/** Partition count of a topic as the broker reports it. */
export async function topicPartitionCount(brokers: string, topic: string): Promise<number> {
  const kafka = new Kafka({ clientId: 'warpwatch-collector-it', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  } finally {
    await admin.disconnect();
  }
}

/** True when something accepts connections on 127.0.0.1:`port`. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A Kafka node private to one test: start, stop (for an outage), start again, destroy. */
export interface PrivateKafka {
  readonly brokers: string;
  /** Its deploy/local settings (TLS listeners, SASL port). */
  readonly config: LocalStackConfig;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends a signal to the node: SIGKILL (dead broker, waits until it is gone), SIGSTOP / SIGCONT (frozen broker). */
  signal(signal: 'SIGKILL' | 'SIGSTOP' | 'SIGCONT'): Promise<void>;
  /** Stops it and deletes its data directory. */
  destroy(): Promise<void>;
}

/** The deploy/local settings of a private node on `port` (controller `port + 1`), with `env` added. */
export function privateKafkaConfig(port: number, env: Record<string, string> = {}): LocalStackConfig {
  return resolveLocalStackConfig({
    ...process.env,
    WARPWATCH_KAFKA_BROKERS: `127.0.0.1:${port}`,
    WARPWATCH_KAFKA_CONTROLLER_PORT: String(port + 1),
    WARPWATCH_KAFKA_HEAP_MB: '384',
    ...env,
  });
}

/**
 * A second single-node Kafka from deploy/local (same jars as the shared one, its own
 * ports `port` and `port + 1` and its own instance directory), so stopping it disturbs no
 * other test.
 */
export function createPrivateKafka(port: number, env: Record<string, string> = {}): PrivateKafka {
  const config = privateKafkaConfig(port, env);
  const server = createKafkaServer(config);
  let pid: number | undefined;
  const stop = async (): Promise<void> => {
    if (pid === undefined) return;
    await stopProcess(pid, { timeoutMillis: 30_000, commandLineMarker: server.commandLineMarker });
    pid = undefined;
  };
  return {
    brokers: server.address,
    config,
    async start() {
      // Another node on these ports (broker, controller, SASL; another suite or worktree picked them) would share this node's
      // data directory and corrupt both: refuse instead.
      for (const p of [port, port + 1, port + 2]) {
        if (await listening(p)) throw new Error(`private kafka: 127.0.0.1:${p} is already in use (another test's node?); pick other ports`);
      }
      if (!server.isInstalled()) await server.install(silentReporter);
      pid = await server.spawn(silentReporter);
      await waitUntilReady({ name: 'private kafka', probe: () => server.probe(), pid, commandLineMarker: server.commandLineMarker, logFile: server.logFile, timeoutMillis: 120_000 });
      // With settings of its own (TLS listeners), the set-up of deploy/local runs too (SCRAM user, group coordinator).
      if (Object.keys(env).length > 0) await server.afterReady();
    },
    stop,
    async signal(name) {
      if (pid === undefined) throw new Error('private kafka is not running');
      const target = pid;
      process.kill(target, name);
      if (name !== 'SIGKILL') return;
      pid = undefined;
      for (let i = 0; i < 200; i++) {
        try {
          process.kill(target, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error(`private kafka ${target} did not die on SIGKILL`);
    },
    async destroy() {
      if (pid !== undefined) process.kill(pid, 'SIGCONT');
      await stop();
      rmSync(server.instanceDirectory, { recursive: true, force: true });
    },
  };
}
