// A TCP relay in front of a Kafka listener that can cut one client off from some of the broker's
// services while the others go on: it reads the Kafka request framing (int32 size, then the
// request header's int16 api key) on the way to the broker and, while cut, holds back the
// requests of the chosen api keys (they are forwarded, in order, when the cut heals, as a
// network that heals delivers what it held); the other requests of the same connection go on. Answers pass through unchanged. With the broker's
// RELAY listener (deploy/local WARPWATCH_STACK_KAFKA_RELAY_PORT) advertising the relay's port,
// every connection of a client that bootstraps at the relay goes through it.
import { createServer, connect as connectTcp, type Server, type Socket } from 'node:net';

/** Kafka api keys (the protocol's request header). */
export const KAFKA_API = { produce: 0, fetch: 1, listOffsets: 2, metadata: 3, offsetCommit: 8, offsetFetch: 9, findCoordinator: 10, joinGroup: 11, heartbeat: 12, leaveGroup: 13, syncGroup: 14 } as const;

/** The relay; see {@link startKafkaRelay}. */
export interface KafkaRelay {
  /** The port clients bootstrap at. */
  readonly port: number;
  /** Holds back, from now on, every request whose api key is in `apiKeys`. */
  cut(apiKeys: readonly number[]): void;
  /** Forwards what was held, in order, and holds nothing more. */
  heal(): void;
  /** Requests held back so far (all connections), by api key. */
  readonly held: ReadonlyMap<number, number>;
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1:`port` and relays every connection to 127.0.0.1:`upstreamPort`.
 *
 * @example
 * const relay = await startKafkaRelay(29797, 29796);
 * relay.cut([KAFKA_API.heartbeat, KAFKA_API.joinGroup]);
 */
export async function startKafkaRelay(port: number, upstreamPort: number): Promise<KafkaRelay> {
  let cutKeys = new Set<number>();
  const held = new Map<number, number>();
  const connections = new Set<{ client: Socket; upstream: Socket; waiting: Buffer[] }>();
  const server: Server = createServer((client) => {
    const upstream = connectTcp(upstreamPort, '127.0.0.1');
    const connection = { client, upstream, waiting: [] as Buffer[] };
    connections.add(connection);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 6) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const request = pending.subarray(0, 4 + size);
        pending = pending.subarray(4 + size);
        const apiKey = request.readInt16BE(4);
        // kafkajs matches answers to requests by correlation id, so the others may overtake a held one.
        if (cutKeys.has(apiKey)) {
          held.set(apiKey, (held.get(apiKey) ?? 0) + 1);
          connection.waiting.push(Buffer.from(request));
          continue;
        }
        upstream.write(request);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = (): void => {
      connections.delete(connection);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    port,
    held,
    cut(apiKeys) {
      cutKeys = new Set(apiKeys);
    },
    heal() {
      cutKeys = new Set();
      for (const connection of connections) {
        for (const request of connection.waiting.splice(0)) connection.upstream.write(request);
      }
    },
    async close() {
      for (const connection of connections) {
        connection.client.destroy();
        connection.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
