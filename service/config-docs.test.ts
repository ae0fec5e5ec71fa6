import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { COLLECTOR_FIELDS, ESTIMATOR_FIELDS, KAFKA_SECURITY_FIELDS, envNamesOf } from '../contracts/index.ts';
import { CONFIG_DOC_TABLES, renderConfigTable, replaceGeneratedSections } from './config-docs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

describe('generated env tables', () => {
  it('are what npm run config-docs writes from the field definitions (run it after changing contracts/config-fields.ts)', () => {
    for (const [path, tables] of Object.entries(CONFIG_DOC_TABLES)) {
      const committed = read(path);
      expect(replaceGeneratedSections(committed, tables), path).toBe(committed);
    }
  });

  it('list every variable each service reads, and the docs name no WARPWATCH_ variable of theirs that no field defines', () => {
    const sections = (path: string): string => [...read(path).matchAll(/<!-- config-table: [a-z-]+ -->([\s\S]*?)<!-- \/config-table -->/g)].map((m) => m[1]).join('\n');
    for (const [path, fields] of [
      ['docs/collector.md', [COLLECTOR_FIELDS, KAFKA_SECURITY_FIELDS]],
      ['docs/estimator.md', [ESTIMATOR_FIELDS, KAFKA_SECURITY_FIELDS]],
    ] as const) {
      const table = sections(path);
      const names = envNamesOf(...fields);
      for (const name of names) expect(table, `${path}: ${name}`).toContain(name.endsWith('_') ? `${name}<NAME>` : `\`${name}\``);
      // Outside the table too, a service doc mentions only variables some definition has (or the stack's and the benchmarks' own).
      // A family or group (`WARPWATCH_LABEL_<NAME>`, `WARPWATCH_INFLUX_*`, `WARPWATCH_KAFKA_TLS*`) is not a name.
      const known = new Set(envNamesOf(COLLECTOR_FIELDS, ESTIMATOR_FIELDS, KAFKA_SECURITY_FIELDS));
      const mentioned = (read(path).match(/WARPWATCH_[A-Z0-9_]+[*<]?/g) ?? []).filter((n) => !/[_*<]$/.test(n));
      const notService = new Set(['WARPWATCH_KAFKA_SASL_PORT', 'WARPWATCH_CACHE_DIR', 'WARPWATCH_SOCKET_DIR', 'WARPWATCH_SOCKET_GID', 'WARPWATCH_BENCH_CPU_PROF_DIR', 'WARPWATCH_BENCH_ESTIMATOR_CASES']);
      expect(mentioned.filter((n) => !known.has(n) && !notService.has(n)), path).toEqual([]);
    }
  });

  it('change when a definition changes, so a stale doc fails the first test', () => {
    const changed = { ...COLLECTOR_FIELDS, retries: { ...COLLECTOR_FIELDS.retries, default: 7 } };
    const before = renderConfigTable({ fields: [COLLECTOR_FIELDS] });
    const after = renderConfigTable({ fields: [changed] });
    expect(after).not.toBe(before);
    expect(after).toContain('| `WARPWATCH_KAFKA_RETRIES` |  | `7` |  | an integer 1..100 | producer retries before a batch is spooled |');
    const doc = `intro\n<!-- config-table: collector -->\n${before}\n<!-- /config-table -->\nend\n`;
    const regenerated = replaceGeneratedSections(doc, { collector: { fields: [changed] } });
    expect(regenerated).toContain('`7`');
    expect(regenerated.startsWith('intro\n') && regenerated.endsWith('<!-- /config-table -->\nend\n')).toBe(true);
  });

  it('refuses a section without a table and a table without a section', () => {
    expect(() => replaceGeneratedSections('<!-- config-table: nope -->\n<!-- /config-table -->', {})).toThrow('unknown config table "nope"');
    expect(() => replaceGeneratedSections('no sections', { collector: { fields: [COLLECTOR_FIELDS] } })).toThrow('no <!-- config-table: collector --> section');
  });

  it('renders only the keys asked for, each variable once', () => {
    const table = renderConfigTable({ fields: [ESTIMATOR_FIELDS, ESTIMATOR_FIELDS], keys: ['metricsPort'] }).split('\n');
    expect(table).toEqual([
      '| variable | flag | default | unit | accepted | meaning |',
      '|---|---|---|---|---|---|',
      '| `WARPWATCH_METRICS_PORT` | `--metrics-port` | `9465` |  | an integer 0..65535 or "off" | port of `/metrics` and `/healthz`; `0` any free port |',
    ]);
  });
});
