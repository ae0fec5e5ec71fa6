import { createServer } from 'node:net';

/**
 * Test support shared by the tests of service/ and cli/: a local TCP port on which nothing
 * listens (bound to 127.0.0.1, then released), for "server is down" cases against real sockets.
 *
 * @returns the port number; a connection to it is refused (ECONNREFUSED) until someone binds it.
 * @example const port = await closedPort(); // WARPWATCH_KAFKA_BROKERS=`127.0.0.1:${port}`
 */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
