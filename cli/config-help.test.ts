import { describe, expect, it } from 'vitest';
import { COLLECTOR_FIELDS, ESTIMATOR_FIELDS, type ConfigFields } from '../contracts/index.ts';
import { settingHint } from './config-help.ts';
import { runCli } from './testing/run-cli.ts';

describe('--help of the services', () => {
  it('says the default and variable of the field definitions', () => {
    expect(settingHint(COLLECTOR_FIELDS.partitions)).toBe('(default 6; env WARPWATCH_KAFKA_PARTITIONS)');
    expect(settingHint(COLLECTOR_FIELDS.spoolMaxBytes)).toBe('(default 1 GiB; env WARPWATCH_SPOOL_MAX_BYTES)');
    expect(settingHint(COLLECTOR_FIELDS.host)).toBe('(default os.hostname(); env WARPWATCH_HOST)');
  });

  it('has every flag a field definition names, with its variable', async () => {
    for (const [command, fields] of [
      ['collect', COLLECTOR_FIELDS],
      ['estimate', ESTIMATOR_FIELDS],
    ] as const satisfies readonly (readonly [string, ConfigFields])[]) {
      const help = (await runCli(command, '--help')).stdout.replace(/\s+/g, ' ');
      for (const field of Object.values(fields as ConfigFields)) {
        if (field.flag === undefined) continue;
        expect(help, `${command} ${field.flag}`).toMatch(new RegExp(`${field.flag}[ ,]`));
        expect(help, `${command} ${field.flag}`).toContain(field.env);
      }
    }
  });
});
