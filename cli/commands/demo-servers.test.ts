// `warpwatch demo --influx` checks its server before it runs any workload (issue 18): with no
// InfluxDB behind WARPWATCH_INFLUX_URL it fails at once, says how to start the local stack,
// and writes no output.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-demo-servers-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A local port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('warpwatch demo --influx without InfluxDB', () => {
  it('fails before running the workloads, with the command that starts the local stack', async () => {
    const before = process.env.WARPWATCH_INFLUX_URL;
    process.env.WARPWATCH_INFLUX_URL = `http://127.0.0.1:${await closedPort()}`;
    try {
      const out = join(directory, 'demo');
      const result = await runCli('demo', '--quick', '--influx', '--no-progress', '--out', out);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^warpwatch: WW_ERR_DEMO_TRANSPORT: InfluxDB at http:\/\/127\.0\.0\.1:\d+ does not answer; start the local stack with `npm run stack -- up`/);
      expect(result.stdout).toBe(''); // no run was reported
      expect(existsSync(out)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.WARPWATCH_INFLUX_URL;
      else process.env.WARPWATCH_INFLUX_URL = before;
    }
  });
});
