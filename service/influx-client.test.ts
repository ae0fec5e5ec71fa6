import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpError } from '@influxdata/influxdb-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createInfluxWriteApi, influxAuthHeaders } from './influx-client.ts';
import { Secret } from './secret.ts';

// A stand-in for InfluxDB's write endpoint answering every request with `status`, counting requests.
async function startFake(status: number): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests += 1;
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(status === 204 ? undefined : JSON.stringify({ code: 'unavailable', message: 'try later' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createInfluxWriteApi', () => {
  it('rejects flush with the HttpError of a failed request, sends it once, and leaves the console (the client logger) silent', async () => {
    const fake = await startFake(503);
    const printed = [vi.spyOn(console, 'error').mockImplementation(() => {}), vi.spyOn(console, 'warn').mockImplementation(() => {})];
    try {
      const api = createInfluxWriteApi({ url: fake.url, token: new Secret(''), org: '-', bucket: 'db/autogen', requestTimeoutMillis: 5_000, maxBatchLines: 10 });
      api.writeRecords(['m f=1.0 1700000000000']);
      const failure = await api.flush().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(HttpError);
      expect((failure as HttpError).statusCode).toBe(503);
      expect(fake.requests()).toBe(1); // no retry by the client
      await api.dispose();
      for (const spy of printed) expect(spy).not.toHaveBeenCalled();
    } finally {
      await fake.close();
    }
  });

  it('resolves flush once InfluxDB accepted the lines', async () => {
    const fake = await startFake(204);
    try {
      const api = createInfluxWriteApi({ url: fake.url, token: new Secret(''), org: '-', bucket: 'db/autogen', requestTimeoutMillis: 5_000, maxBatchLines: 10 });
      api.writeRecords(['m f=1.0 1700000000000', 'm f=2.0 1700000000001']);
      await api.flush();
      expect(fake.requests()).toBe(1);
      await api.dispose();
    } finally {
      await fake.close();
    }
  });
});

describe('influxAuthHeaders', () => {
  it('sends nothing for an empty token, user:password as basic auth, and anything else as a 2.x token', () => {
    expect(influxAuthHeaders(new Secret(''))).toEqual({});
    expect(influxAuthHeaders(new Secret('admin:s3cret'))).toEqual({ Authorization: `Basic ${Buffer.from('admin:s3cret').toString('base64')}` });
    expect(influxAuthHeaders(new Secret('abc123'))).toEqual({ Authorization: 'Token abc123' });
  });
});
