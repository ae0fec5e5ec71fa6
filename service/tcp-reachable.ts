import { connect } from 'node:net';

/**
 * Whether any of the `host:port` addresses accepts a TCP connection within `timeoutMillis`
 * each (tried in order): a quick check before a Kafka client, which retries for most of a
 * minute before it says that no broker answers. An address that does not parse as host:port
 * counts as reachable (the client reports it itself).
 *
 * @param addresses `host:port` or `[ipv6]:port`
 * @param timeoutMillis longest wait per address, ms (default 2000)
 * @example if (!(await anyTcpReachable(['127.0.0.1:19092']))) throw new Error('no broker answers');
 */
export async function anyTcpReachable(addresses: readonly string[], timeoutMillis = 2_000): Promise<boolean> {
  const reachable = (address: string): Promise<boolean> => {
    const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address);
    if (match === null) return Promise.resolve(true);
    const host = (match[1] as string).replace(/^\[|\]$/g, '');
    return new Promise<boolean>((resolve) => {
      const socket = connect({ host, port: Number(match[2]) });
      socket.setTimeout(timeoutMillis);
      const done = (ok: boolean): void => {
        socket.destroy();
        resolve(ok);
      };
      socket.once('connect', () => done(true));
      socket.once('timeout', () => done(false));
      socket.once('error', () => done(false));
    });
  };
  for (const address of addresses) if (await reachable(address)) return true;
  return false;
}
