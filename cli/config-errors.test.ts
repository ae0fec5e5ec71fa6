// Bad settings of the services as the CLI says them: one stderr line carrying the config error's
// code and every bad variable or flag, exit code 2, nothing started.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCli } from './testing/run-cli.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('config errors on the command line', () => {
  it('collect lists every bad setting on one line with WW_ERR_COLLECTOR_CONFIG', async () => {
    vi.stubEnv('WARPWATCH_SPOOL_POLICY', 'drop-middle');
    vi.stubEnv('WARPWATCH_KAFKA_MAX_IN_FLIGHT', '9');
    const result = await runCli('collect', '--partitions', '0', '--metrics-port', 'off');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'warpwatch: WW_ERR_COLLECTOR_CONFIG: --partitions must be an integer 1..10000, got "0"; WARPWATCH_KAFKA_MAX_IN_FLIGHT must be an integer 1..5, got "9"; ' +
        'WARPWATCH_SPOOL_POLICY must be one of drop-oldest|drop-newest, got "drop-middle"\n',
    );
  });

  it('estimate lists every bad setting on one line with WW_ERR_ESTIMATOR_CONFIG', async () => {
    vi.stubEnv('WARPWATCH_CONFIDENCE_LEVEL', '2');
    const result = await runCli('estimate', '--window-millis', '5', '--metrics-port', 'off');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      'warpwatch: WW_ERR_ESTIMATOR_CONFIG: invalid estimator configuration: --window-millis must be an integer 10..86400000, got "5"; WARPWATCH_CONFIDENCE_LEVEL must be a number 0.5..0.9999, got "2"\n',
    );
  });
});
