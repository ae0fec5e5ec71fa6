import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { loadCollectorConfig } from './config.ts';
import { startCollectorService } from './collector-service.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-collector-service-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('startCollectorService', () => {
  it('serves /healthz and /metrics, ends when stdin ends, and says start and stop through its one logger', async () => {
    const config = loadCollectorConfig({
      // No broker answers on port 9 (discard): nothing is sent, since stdin brings no frame.
      env: { WARPWATCH_KAFKA_BROKERS: '127.0.0.1:9', WARPWATCH_SPOOL_DIR: join(directory, 'spool'), WARPWATCH_METRICS_PORT: '0', WARPWATCH_HOST: 'unit-host', WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS: '1000' },
      flags: { stdin: true },
    });
    const lines: string[] = [];
    const stdin = new PassThrough();
    const service = await startCollectorService(config, (line) => lines.push(line), { stdin });
    expect(service.servesSocket).toBe(false);
    expect(service.metricsPort).toBeGreaterThan(0);
    const health = await fetch(`http://127.0.0.1:${service.metricsPort}/healthz`);
    expect(health.status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${service.metricsPort}/metrics`)).text();
    expect(metrics).toContain('service_name="warpwatch-collector"');
    stdin.end();
    await service.finished;
    await service.stop();
    await service.stop(); // idempotent
    expect(stdin.destroyed).toBe(true);
    expect(lines[0]).toMatch(/^warpwatch collect info: started: brokers=127\.0\.0\.1:9 .* metrics http:\/\/127\.0\.0\.1:\d+\/metrics and \/healthz$/);
    expect(lines.filter((line) => line.startsWith('warpwatch collect info: stopped: '))).toHaveLength(1);
    expect(lines.every((line) => /^warpwatch collect (info|warn|error): /.test(line))).toBe(true);
  });
});
