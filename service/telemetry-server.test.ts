import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startTelemetryServer, type TelemetryServer } from './telemetry-server.ts';

const open: TelemetryServer[] = [];
afterEach(async () => {
  while (open.length > 0) await open.pop()!.close();
});

async function start(status: () => string): Promise<TelemetryServer> {
  const server = await startTelemetryServer({
    host: '127.0.0.1',
    port: 0,
    metricsHandler: (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('# metrics body\n');
    },
    health: () => ({ status: status(), detail: 7 }),
  });
  open.push(server);
  return server;
}

describe('startTelemetryServer', () => {
  it('serves /metrics through the handler, /healthz as JSON (503 only while stopping or failed) and 404 elsewhere', async () => {
    let status = 'degraded';
    const server = await start(() => status);
    const base = `http://127.0.0.1:${server.port}`;
    const metrics = await fetch(`${base}/metrics?x=1`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toBe('# metrics body\n');
    const degraded = await fetch(`${base}/healthz`);
    expect(degraded.status).toBe(200);
    expect(degraded.headers.get('content-type')).toBe('application/json');
    expect(await degraded.json()).toEqual({ status: 'degraded', detail: 7 });
    status = 'stopping';
    const stopping = await fetch(`${base}/healthz`);
    expect(stopping.status).toBe(503);
    expect(await stopping.json()).toEqual({ status: 'stopping', detail: 7 });
    status = 'failed';
    const failed = await fetch(`${base}/healthz`);
    expect(failed.status).toBe(503);
    expect(await failed.json()).toEqual({ status: 'failed', detail: 7 });
    status = 'starting';
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const other = await fetch(`${base}/other`);
    expect(other.status).toBe(404);
    expect(await other.text()).toContain('/metrics or /healthz');
  });

  it('maps a bind failure through bindError, and rejects with the raw error without one', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const base = { host: '127.0.0.1', port, metricsHandler: () => undefined, health: () => ({ status: 'ok' }) };
      await expect(startTelemetryServer({ ...base, bindError: (cause) => new Error(`WW_ERR_TEST: ${cause.message}`) })).rejects.toThrow(/^WW_ERR_TEST: .*EADDRINUSE/);
      await expect(startTelemetryServer(base)).rejects.toThrow(/EADDRINUSE/);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  it('close() ends open keep-alive connections and frees the port', async () => {
    const server = await start(() => 'ok');
    const port = server.port;
    await fetch(`http://127.0.0.1:${port}/healthz`, { keepalive: true });
    await open.pop()!.close();
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });
});
