import { describe, expect, it } from 'vitest';
import { renderInfluxConfig } from './influx-server.ts';
import { resolveLocalStackConfig } from './stack-config.ts';

describe('renderInfluxConfig', () => {
  const config = resolveLocalStackConfig({ WARPWATCH_INFLUX_URL: 'http://127.0.0.1:28086', WARPWATCH_CACHE_DIR: '/tmp/ww-influx' });
  const text = renderInfluxConfig(config);

  it('binds every listener to 127.0.0.1 on the configured ports', () => {
    const binds = [...text.matchAll(/bind-address = "([^"]+)"/g)].map((m) => m[1]);
    expect(binds).toEqual(['127.0.0.1:28088', '127.0.0.1:28086']);
  });

  it('disables usage reporting and the _internal monitor store, and keeps all storage in the instance folder', () => {
    expect(text).toMatch(/^reporting-disabled = true$/m);
    expect(text).toMatch(/\[monitor\]\n {2}store-enabled = false/);
    const dirs = [...text.matchAll(/(?:dir|wal-dir) = "([^"]+)"/g)].map((m) => m[1]);
    expect(dirs).toEqual(['/tmp/ww-influx/influxdb/node-28086/meta', '/tmp/ww-influx/influxdb/node-28086/data', '/tmp/ww-influx/influxdb/node-28086/wal']);
  });

  it('has no [[udp]]-style array tables written as plain tables (influxd rejects them)', () => {
    expect(text).not.toMatch(/^\[(udp|graphite|opentsdb|collectd)\]$/m);
  });
});
