import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createInfluxWriteTransport, influxAuthHeaders, InfluxHttpError, InfluxTimeoutError, type InfluxWriteTransport } from './influx-client.ts';
import { Secret } from './secret.ts';

// The write transport against a real local HTTP server standing in for InfluxDB's write
// endpoint: what arrives on the wire (request line, headers, body bytes), answers other than 2xx,
// a server that never answers, and connection reuse. The real InfluxDB 1.8 (with and without
// authentication) runs in test/integration (influx-auth, influx-line, estimator, collector-metrics).

interface Arrival {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  /** Which TCP connection carried it (0 = the first the server accepted). */
  readonly connection: number;
}

interface Answer {
  readonly status: number;
  readonly body?: string;
  readonly contentType?: string;
  /** Never answer (the request hangs until the client gives up). */
  readonly hang?: boolean;
  /** Send the head and part of a longer body, then close the connection. */
  readonly cut?: boolean;
}

interface Fake {
  readonly url: string;
  readonly arrivals: Arrival[];
  /** TCP connections accepted so far. */
  connections(): number;
  /** TCP connections closed so far (by either side). */
  closedConnections(): number;
  answer: (arrival: Arrival) => Answer;
  close(): Promise<void>;
}

async function startFake(): Promise<Fake> {
  const arrivals: Arrival[] = [];
  const sockets = new Map<Socket, number>();
  let closed = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const arrival: Arrival = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks),
        connection: sockets.get(request.socket) ?? -1,
      };
      arrivals.push(arrival);
      const answer = fake.answer(arrival);
      if (answer.hang === true) return;
      if (answer.cut === true) {
        response.writeHead(answer.status, { 'content-length': '100' });
        response.write('0123456789', () => request.socket.destroy());
        return;
      }
      response.writeHead(answer.status, answer.contentType === undefined ? {} : { 'content-type': answer.contentType });
      response.end(answer.body);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, sockets.size);
    socket.on('close', () => {
      closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: Fake = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    connections: () => sockets.size,
    closedConnections: () => closed,
    answer: () => ({ status: 204 }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

const waitFor = async (condition: () => boolean, timeoutMillis = 5_000): Promise<void> => {
  const deadline = Date.now() + timeoutMillis;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

const LINES = ['warpwatch_window,stream=j/k loss_predicted=1.0 1700000000000', 'warpwatch_window,stream=j/k,host=h\\ 1 note="ü€" 1700000000001'];

let fake: Fake | undefined;
let transport: InfluxWriteTransport | undefined;
afterEach(async () => {
  transport?.dispose();
  transport = undefined;
  await fake?.close();
  fake = undefined;
});

function open(url: string, token = '', requestTimeoutMillis = 5_000): InfluxWriteTransport {
  transport = createInfluxWriteTransport({ url, token: new Secret(token), org: '-', bucket: 'db/autogen', requestTimeoutMillis });
  return transport;
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('createInfluxWriteTransport', () => {
  it('sends exactly what the v2 write API expects: POST /api/v2/write?org&bucket&precision=ms, text/plain, the lines joined by \\n, uncompressed', async () => {
    fake = await startFake();
    await open(fake.url).write(LINES);
    expect(fake.arrivals).toHaveLength(1);
    const arrival = fake.arrivals[0]!;
    expect(arrival.method).toBe('POST');
    expect(arrival.url).toBe('/api/v2/write?org=-&bucket=db%2Fautogen&precision=ms');
    const expectedBody = Buffer.from(`${LINES[0]}\n${LINES[1]}`, 'utf8');
    expect(arrival.body.equals(expectedBody)).toBe(true);
    expect(arrival.headers).toEqual({
      'content-type': 'text/plain; charset=utf-8',
      'content-length': String(expectedBody.length),
      'user-agent': 'warpwatch',
      host: new URL(fake.url).host,
      connection: 'keep-alive',
    });
    // No gzip, no chunked encoding, no credentials for an empty token.
    expect(arrival.headers['content-encoding']).toBeUndefined();
    expect(arrival.headers.authorization).toBeUndefined();
  });

  it('keeps a base path of the URL in front of /api/v2/write (with or without a trailing /) and escapes org and bucket', async () => {
    fake = await startFake();
    await open(`${fake.url}/influx/`).write(['m f=1.0 1']);
    transport?.dispose();
    transport = createInfluxWriteTransport({ url: `${fake.url}/a/b`, token: new Secret(''), org: 'my org&x', bucket: 'db/rp 1', requestTimeoutMillis: 5_000 });
    await transport.write(['m f=2.0 2']);
    expect(fake.arrivals.map((arrival) => arrival.url)).toEqual([
      '/influx/api/v2/write?org=-&bucket=db%2Fautogen&precision=ms',
      '/a/b/api/v2/write?org=my%20org%26x&bucket=db%2Frp%201&precision=ms',
    ]);
  });

  it('sends the credentials as they arrive: user:password as Basic auth, an API token as Token; a 401 rejects with InfluxHttpError', async () => {
    fake = await startFake();
    const basic = `Basic ${Buffer.from('writer:s3cret').toString('base64')}`;
    fake.answer = (arrival) =>
      arrival.headers.authorization === basic || arrival.headers.authorization === 'Token abc123'
        ? { status: 204 }
        : { status: 401, contentType: 'application/json', body: '{"error":"authorization failed"}' };
    await open(fake.url, 'writer:s3cret').write(['m f=1.0 1']);
    transport?.dispose();
    await open(fake.url, 'abc123').write(['m f=1.0 2']);
    transport?.dispose();
    const failure = await failureOf(open(fake.url, 'writer:wrong').write(['m f=1.0 3']));
    expect(fake.arrivals.map((arrival) => arrival.headers.authorization)).toEqual([basic, 'Token abc123', `Basic ${Buffer.from('writer:wrong').toString('base64')}`]);
    expect(failure).toBeInstanceOf(InfluxHttpError);
    expect(failure).toMatchObject({ statusCode: 401, body: '{"error":"authorization failed"}', message: '401 Unauthorized: {"error":"authorization failed"}' });
    // The secret never shows in the error.
    expect(JSON.stringify(failure) + String(failure)).not.toContain('wrong');
  });

  it('rejects a partial write (HTTP 400) with InfluxHttpError carrying the whole JSON body', async () => {
    fake = await startFake();
    const error = `partial write: unable to parse 'm,t=a\\\\ f=1 1': invalid tag format\nunable to parse 'm,t=b\\\\ f=1 2': invalid tag format dropped=0`;
    const body = JSON.stringify({ error: `${error}${' '.repeat(2_000)}` });
    fake.answer = () => ({ status: 400, contentType: 'application/json', body });
    const failure = await failureOf(open(fake.url).write(['m f=1.0 1']));
    expect(failure).toBeInstanceOf(InfluxHttpError);
    expect((failure as InfluxHttpError).statusCode).toBe(400);
    expect((failure as InfluxHttpError).body).toBe(body); // JSON is kept whole, longer than 1,000 characters
    expect((failure as InfluxHttpError).message.startsWith(`400 Bad Request: {"error":"partial write: unable to parse`)).toBe(true);
  });

  it('keeps the start of a text error answer and the X-Influxdb-Error header of an empty one', async () => {
    fake = await startFake();
    let index = 0;
    fake.answer = () => (index++ === 0 ? { status: 503, contentType: 'text/plain', body: 'x'.repeat(5_000) } : { status: 500 });
    const text = await failureOf(open(fake.url).write(['m f=1.0 1']));
    expect(text).toMatchObject({ statusCode: 503, body: 'x'.repeat(1_000) });
    // The connection survives an error answer read to its end.
    const empty = await failureOf(transport!.write(['m f=1.0 2']));
    expect(empty).toMatchObject({ statusCode: 500, body: '', message: '500 Internal Server Error' });
    expect(fake.connections()).toBe(1);
  });

  it('gives up on a request with no answer after requestTimeoutMillis: InfluxTimeoutError, and the connection is closed', async () => {
    fake = await startFake();
    fake.answer = () => ({ status: 204, hang: true });
    const started = Date.now();
    const failure = await failureOf(open(fake.url, '', 200).write(['m f=1.0 1']));
    const elapsed = Date.now() - started;
    expect(failure).toBeInstanceOf(InfluxTimeoutError);
    expect((failure as Error).message).toBe('no answer within 200 ms (request timed out)');
    expect(elapsed).toBeGreaterThanOrEqual(195);
    expect(elapsed).toBeLessThan(3_000);
    const served = fake;
    await waitFor(() => served.closedConnections() === 1);
    // The next request gets a new connection, and an answer.
    fake.answer = () => ({ status: 204 });
    await transport!.write(['m f=1.0 2']);
    expect(fake.connections()).toBe(2);
  });

  it('reuses one kept-alive connection for consecutive writes', async () => {
    fake = await startFake();
    const writer = open(fake.url);
    for (let i = 0; i < 5; i += 1) await writer.write([`m f=${i}.0 ${i}`]);
    expect(fake.arrivals.map((arrival) => arrival.connection)).toEqual([0, 0, 0, 0, 0]);
    expect(fake.connections()).toBe(1);
    expect(fake.closedConnections()).toBe(0);
    writer.dispose();
    const served = fake;
    await waitFor(() => served.closedConnections() === 1);
    await expect(writer.write(['m f=9.0 9'])).rejects.toThrow('disposed');
  });

  it('rejects (no InfluxHttpError, so the writer retries) when the connection closes in the middle of an answer', async () => {
    for (const status of [200, 400]) {
      fake = await startFake();
      fake.answer = () => ({ status, cut: true });
      const failure = await failureOf(open(fake.url).write(['m f=1.0 1']));
      expect(failure).toBeInstanceOf(Error);
      expect(failure).not.toBeInstanceOf(InfluxHttpError);
      transport?.dispose();
      await fake.close();
      fake = undefined;
    }
  });

  it('rejects with the Node error when nothing listens (retriable for the writer)', async () => {
    fake = await startFake();
    const url = fake.url;
    await fake.close();
    fake = undefined;
    const failure = await failureOf(open(url).write(['m f=1.0 1']));
    expect(failure).toBeInstanceOf(Error);
    expect(failure).not.toBeInstanceOf(InfluxHttpError);
    expect((failure as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('speaks TLS to an https URL and checks the certificate against the default CAs (a self-signed one is refused)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'ww-influx-tls-'));
    try {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], {
        cwd: directory,
        stdio: 'ignore',
      });
      let requests = 0;
      const server = createHttpsServer({ key: readFileSync(join(directory, 'key.pem')), cert: readFileSync(join(directory, 'cert.pem')) }, (_request, response) => {
        requests += 1;
        response.writeHead(204).end();
      });
      let handshakes = 0;
      server.on('secureConnection', () => {
        handshakes += 1;
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const failure = await failureOf(open(`https://127.0.0.1:${(server.address() as AddressInfo).port}`).write(['m f=1.0 1']));
        expect((failure as NodeJS.ErrnoException).code).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
        expect([handshakes, requests]).toEqual([0, 0]);
      } finally {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('refuses a URL that is not http or https', () => {
    expect(() => createInfluxWriteTransport({ url: 'ftp://127.0.0.1:8086', token: new Secret(''), org: '-', bucket: 'db', requestTimeoutMillis: 1_000 })).toThrow(/Unsupported protocol "ftp:"/);
    expect(() => createInfluxWriteTransport({ url: 'not a url', token: new Secret(''), org: '-', bucket: 'db', requestTimeoutMillis: 1_000 })).toThrow(/not a valid URL/);
  });
});

describe('influxAuthHeaders', () => {
  it('sends nothing for an empty token, user:password as basic auth, and anything else as a 2.x token', () => {
    expect(influxAuthHeaders(new Secret(''))).toEqual({});
    expect(influxAuthHeaders(new Secret('admin:s3cret'))).toEqual({ Authorization: `Basic ${Buffer.from('admin:s3cret').toString('base64')}` });
    expect(influxAuthHeaders(new Secret('abc123'))).toEqual({ Authorization: 'Token abc123' });
  });
});
