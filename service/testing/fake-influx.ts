import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Test support (not exported by index.ts): a stand-in for InfluxDB's v2 write endpoint on
 * 127.0.0.1, a real HTTP server, for the unit tests of the writer's logic (the real InfluxDB
 * runs in test/integration). It records every accepted request body and every request's
 * Authorization header, and answers each after `delayMillis` with what `answerFor` picks: an
 * HTTP status (an error status with a 2.x-style JSON body), a status with its own JSON body, or
 * 'destroy' to close the socket without an answer. `until` resolves once a condition holds, re-checked on each event of the
 * fake (a request body received, an answer sent), so tests wait for events, not fixed times.
 */
export interface FakeInflux {
  readonly url: string;
  /** Lines of each request answered 204, in answer order. */
  readonly bodies: string[][];
  /** Requests whose body has arrived (answered or not). */
  received: number;
  /** The Authorization header of each request whose body has arrived, in arrival order ('' when absent). */
  readonly authorizations: string[];
  /** Most requests open at the same time so far. */
  maxConcurrent: number;
  delayMillis: number;
  answerFor: (requestIndex: number) => FakeInfluxAnswer;
  until(condition: () => boolean): Promise<void>;
  close(): Promise<void>;
}

/** What a {@link FakeInflux} answers one request with. */
export type FakeInfluxAnswer = number | { readonly status: number; readonly json: string } | 'destroy';

/**
 * Starts a {@link FakeInflux} on a free port (every request answered 204 after 30 ms unless told otherwise).
 *
 * @example
 * const fake = await startFakeInflux();
 * fake.answerFor = (index) => (index === 0 ? 503 : 204);
 */
export async function startFakeInflux(): Promise<FakeInflux> {
  let active = 0;
  let requests = 0;
  let watchers: Array<{ condition: () => boolean; resolve: () => void }> = [];
  const notify = (): void => {
    const ready = watchers.filter((watcher) => watcher.condition());
    watchers = watchers.filter((watcher) => !ready.includes(watcher));
    for (const watcher of ready) watcher.resolve();
  };
  const fake = {
    bodies: [] as string[][],
    received: 0,
    authorizations: [] as string[],
    maxConcurrent: 0,
    delayMillis: 30,
    answerFor: (_index: number): FakeInfluxAnswer => 204,
  };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const index = requests++;
    active += 1;
    fake.maxConcurrent = Math.max(fake.maxConcurrent, active);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      // The body as sent: the writer never compresses it (a gzipped body would not parse as lines here).
      const text = Buffer.concat(chunks).toString('utf8');
      fake.received += 1;
      fake.authorizations.push(request.headers.authorization ?? '');
      notify();
      setTimeout(() => {
        const answer = fake.answerFor(index);
        active -= 1;
        if (answer === 'destroy') {
          request.socket.destroy();
        } else {
          const status = typeof answer === 'number' ? answer : answer.status;
          if (status === 204) fake.bodies.push(text.split('\n').filter((line) => line !== ''));
          response.writeHead(status, { 'content-type': 'application/json' });
          response.end(typeof answer !== 'number' ? answer.json : status === 204 ? undefined : JSON.stringify({ code: 'unavailable', message: 'try later' }));
        }
        notify();
      }, fake.delayMillis);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(fake, {
    url: `http://127.0.0.1:${port}`,
    until: (condition: () => boolean) => (condition() ? Promise.resolve() : new Promise<void>((resolve) => watchers.push({ condition, resolve }))),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
