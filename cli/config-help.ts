import type { ConfigField } from '../contracts/index.ts';
import { defaultTextOf } from '../service/index.ts';

/**
 * The end of a flag's help text, from its field definition (contracts/config-fields.ts), so
 * `--help` says the same default and variable as the code and the docs tables.
 *
 * @example settingHint(COLLECTOR_FIELDS.partitions) // '(default 6; env WARPWATCH_KAFKA_PARTITIONS)'
 */
export function settingHint(field: ConfigField): string {
  return `(default ${defaultTextOf(field).replace(/`/g, '')}; env ${field.env})`;
}
