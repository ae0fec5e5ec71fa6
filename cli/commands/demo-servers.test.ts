// `warpwatch demo --influx` / `--kafka` check their servers before any workload runs:
// with no server behind WARPWATCH_INFLUX_URL / WARPWATCH_KAFKA_BROKERS the demo fails at once,
// says once what to try (here the variable: the address is not the local stack's default), and
// writes no output.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/run-cli.ts';
import { closedPort } from '../../service/testing/test-support.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-demo-servers-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));


describe('warpwatch demo --influx without InfluxDB', () => {
  it('fails before running the workloads, naming the variable to check', async () => {
    const before = process.env.WARPWATCH_INFLUX_URL;
    process.env.WARPWATCH_INFLUX_URL = `http://127.0.0.1:${await closedPort()}`;
    try {
      const out = join(directory, 'demo');
      const result = await runCli('demo', '--quick', '--influx', '--no-progress', '--out', out);
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^warpwatch: WW_ERR_DEMO_TRANSPORT: InfluxDB at http:\/\/127\.0\.0\.1:\d+ does not answer; check WARPWATCH_INFLUX_URL: nothing answers at http:\/\/127\.0\.0\.1:\d+; or run the demo without --influx\n$/);
      expect(result.stdout).toBe(''); // no run was reported
      expect(existsSync(out)).toBe(false);
    } finally {
      if (before === undefined) delete process.env.WARPWATCH_INFLUX_URL;
      else process.env.WARPWATCH_INFLUX_URL = before;
    }
  });

  it('with --kafka and no broker, fails at once and says what to try', async () => {
    const before = process.env.WARPWATCH_KAFKA_BROKERS;
    process.env.WARPWATCH_KAFKA_BROKERS = `127.0.0.1:${await closedPort()}`;
    try {
      const started = Date.now();
      const result = await runCli('demo', '--quick', '--kafka', '--no-progress', '--out', join(directory, 'kafka'));
      expect(result.status).toBe(1);
      expect(result.stderr).toMatch(/^warpwatch: WW_ERR_DEMO_TRANSPORT: no Kafka broker answers at 127\.0\.0\.1:\d+; check WARPWATCH_KAFKA_BROKERS: nothing answers at 127\.0\.0\.1:\d+; or run the demo without --kafka\n$/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1); // said once, not per retry
      expect(Date.now() - started).toBeLessThan(30_000); // not kafkajs's minute of retries
    } finally {
      if (before === undefined) delete process.env.WARPWATCH_KAFKA_BROKERS;
      else process.env.WARPWATCH_KAFKA_BROKERS = before;
    }
  });
});
