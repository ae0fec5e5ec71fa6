import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { findSystemPrometheus, renderPrometheusConfig } from './prometheus-server.ts';

const folder = mkdtempSync(join(tmpdir(), 'ww-prom-unit-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('private Prometheus helpers', () => {
  it('renders a scrape job over the given targets at the given interval', () => {
    const config = parse(renderPrometheusConfig(['127.0.0.1:9465', '127.0.0.1:9466'], 2_000)) as {
      global: Record<string, string>;
      scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
    };
    expect(config.global).toEqual({ scrape_interval: '2s', evaluation_interval: '2s' });
    expect(config.scrape_configs[0]?.job_name).toBe('warpwatch-estimator');
    expect(config.scrape_configs[0]?.static_configs[0]?.targets).toEqual(['127.0.0.1:9465', '127.0.0.1:9466']);
    expect((parse(renderPrometheusConfig([], 1_000)) as { scrape_configs: unknown[] }).scrape_configs).toEqual([]);
    expect((parse(renderPrometheusConfig([], 1_000)) as { rule_files?: unknown }).rule_files).toBeUndefined();
  });

  it('lists the rules files to load', () => {
    const config = parse(renderPrometheusConfig(['127.0.0.1:9465'], 1_000, ['/tmp/a rules.yaml', '/tmp/b.yaml'])) as { rule_files: string[] };
    expect(config.rule_files).toEqual(['/tmp/a rules.yaml', '/tmp/b.yaml']);
  });

  it('finds WARPWATCH_PROMETHEUS first, else prometheus on PATH, else nothing', () => {
    const binary = join(folder, 'prometheus');
    writeFileSync(binary, '');
    expect(findSystemPrometheus({ WARPWATCH_PROMETHEUS: binary, PATH: '' })).toBe(binary);
    expect(findSystemPrometheus({ WARPWATCH_PROMETHEUS: join(folder, 'missing'), PATH: folder })).toBeUndefined();
    expect(findSystemPrometheus({ PATH: `/nonexistent:${folder}` })).toBe(binary);
    expect(findSystemPrometheus({ PATH: '/nonexistent' })).toBeUndefined();
  });
});
