import { createServer, type AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createKafkaClient, isRetriedKafkaAnswer, type KafkaClientLogEntry } from './kafka-client.ts';
import { Secret } from './secret.ts';

/** A local port that refuses connections (bound, then closed). */
async function refusedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('createKafkaClient', () => {
  it("passes kafkajs' log entries from the asked level on, with its retry and timeouts applied", async () => {
    const port = await refusedPort();
    const entries: KafkaClientLogEntry[] = [];
    const kafka = createKafkaClient({
      clientId: 'ww-unit',
      brokers: [`127.0.0.1:${port}`],
      connectionTimeoutMillis: 500,
      retry: { retries: 0 },
      log: { level: 'error', entry: (entry) => entries.push(entry) },
    });
    const admin = kafka.admin();
    const started = Date.now();
    await expect(admin.connect()).rejects.toThrow(/ECONNREFUSED|Connection error/);
    // retries 0: one attempt, no backoff of kafkajs' default five retries (seconds).
    expect(Date.now() - started).toBeLessThan(5_000);
    await admin.disconnect();
    expect(entries.length).toBeGreaterThan(0);
    expect(entries.every((entry) => entry.level === 'error')).toBe(true);
    expect(entries.some((entry) => /ECONNREFUSED|Connection error/.test(`${entry.message} ${String(entry.error)}`))).toBe(true);
  });

  it('reveals the credentials to kafkajs only: the client options never print them', async () => {
    const port = await refusedPort();
    const entries: KafkaClientLogEntry[] = [];
    const kafka = createKafkaClient({
      clientId: 'ww-unit',
      brokers: [`127.0.0.1:${port}`],
      retry: { retries: 0 },
      security: { sasl: { mechanism: 'plain', username: 'u', password: new Secret('hunter2') }, tls: undefined },
      log: { level: 'warn', entry: (entry) => entries.push(entry) },
    });
    const admin = kafka.admin();
    await expect(admin.connect()).rejects.toThrow();
    await admin.disconnect();
    expect(JSON.stringify(entries)).not.toContain('hunter2');
  });
});

describe('isRetriedKafkaAnswer: the answers kafkajs retries by itself stay out of the services\' logs', () => {
  const answer = (message: string, error: unknown, namespace = 'Connection'): KafkaClientLogEntry => ({ level: 'error', namespace, message, error });

  it('is true for a restarted broker\'s coordinator and leader answers (kafkajs\' retriable protocol errors)', () => {
    expect(isRetriedKafkaAnswer(answer('Response InitProducerId(key: 22, version: 4)', "The coordinator is loading and hence can't process requests for this group"))).toBe(true);
    expect(isRetriedKafkaAnswer(answer('Response FindCoordinator(key: 10, version: 2)', 'The group coordinator is not available'))).toBe(true);
    expect(isRetriedKafkaAnswer(answer('Response Produce(key: 0, version: 7)', 'This server is not the leader for that topic-partition'))).toBe(true);
    expect(isRetriedKafkaAnswer(answer('Response Metadata(key: 3, version: 6)', 'There is no leader for this topic-partition as we are in the middle of a leadership election'))).toBe(true);
  });

  it('is false for answers an operator must see, and for entries that are not answers', () => {
    expect(isRetriedKafkaAnswer(answer('Response Produce(key: 0, version: 7)', 'Not authorized to access topics: [Topic authorization failed]'))).toBe(false);
    expect(isRetriedKafkaAnswer(answer('Response SaslAuthenticate(key: 36, version: 1)', 'SASL SCRAM SHA256 authentication failed'))).toBe(false);
    expect(isRetriedKafkaAnswer(answer('Response Produce(key: 0, version: 7)', undefined))).toBe(false);
    expect(isRetriedKafkaAnswer(answer('Connection error', 'The group coordinator is not available'))).toBe(false);
    expect(isRetriedKafkaAnswer(answer('Response Produce(key: 0, version: 7)', 'The group coordinator is not available', 'Producer'))).toBe(false);
  });
});
