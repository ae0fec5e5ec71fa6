import { divergencePatternBounds, type DivergenceMeasurement } from '../model/index.ts';
import { UsageError } from './usage-error.ts';
import { formatQuantity } from './commands/numeric-options.ts';

/**
 * The CSV of the kernels `divergence` micro-benchmark workload (docs/related-models.md §1):
 * parsing into model/ DivergenceMeasurement rows and the clock unit of the file.
 */

function parseBoundsList(text: string, where: string): number[] {
  const parts = text.trim().split(/[\s;]+/).filter((p) => p.length > 0);
  return parts.map((p) => {
    const v = Number(p);
    if (!/^\d+$/.test(p) || !Number.isSafeInteger(v)) throw new RangeError(`${where}: bounds must be non-negative integers separated by spaces or ';', got '${p}'`);
    return v;
  });
}

/**
 * Parses the divergence micro-benchmark CSV: header line with at least `loop`, `cycles` and
 * one of `k`/`bounds`; optional `pattern`, `inner_bounds`; other columns ignored; `#` lines and
 * blank lines skipped. `bounds` lists lane trip counts separated by spaces or `;`; when empty,
 * the (32,…,32,31,…,32−k) pattern of `k` is used. Nested rows run the inner loop with
 * `inner_bounds` (default: the same bounds).
 *
 * @throws RangeError naming the line and column of the first problem
 * @example parseDivergenceCsv('pattern,loop,k,bounds,cycles\nk0,single,0,,1234\n')
 */
export function parseDivergenceCsv(text: string): DivergenceMeasurement[] {
  const lines = text.split(/\r?\n/);
  let header: string[] | undefined;
  const rows: DivergenceMeasurement[] = [];
  lines.forEach((raw, index) => {
    const line = raw.trim();
    const lineNumber = index + 1;
    if (line.length === 0 || line.startsWith('#')) return;
    const cells = line.split(',').map((c) => c.trim().replace(/^"(.*)"$/, '$1'));
    if (header === undefined) {
      header = cells.map((c) => c.toLowerCase());
      for (const required of ['loop', 'cycles']) {
        if (!header.includes(required)) throw new RangeError(`line ${lineNumber}: header must name a '${required}' column, got '${line}'`);
      }
      if (!header.includes('k') && !header.includes('bounds')) throw new RangeError(`line ${lineNumber}: header must name a 'k' or 'bounds' column, got '${line}'`);
      return;
    }
    const columns = header;
    if (cells.length < columns.length) throw new RangeError(`line ${lineNumber}: expected ${columns.length} columns, got ${cells.length}`);
    const cell = (name: string): string => (columns.includes(name) ? (cells[columns.indexOf(name)] as string) : '');
    const loop = cell('loop').toLowerCase();
    if (loop !== 'single' && loop !== 'nested') throw new RangeError(`line ${lineNumber}: loop must be 'single' or 'nested', got '${cell('loop')}'`);
    const cycles = Number(cell('cycles'));
    if (cell('cycles') === '' || !Number.isFinite(cycles) || cycles < 0) throw new RangeError(`line ${lineNumber}: cycles must be a number ≥ 0, got '${cell('cycles')}'`);
    const kText = cell('k');
    const k = kText === '' ? undefined : Number(kText);
    if (k !== undefined && (!Number.isInteger(k) || k < 0)) throw new RangeError(`line ${lineNumber}: k must be a non-negative integer, got '${kText}'`);
    let bounds: number[];
    if (cell('bounds') !== '') bounds = parseBoundsList(cell('bounds'), `line ${lineNumber}`);
    else if (k !== undefined) {
      try {
        bounds = divergencePatternBounds(k);
      } catch (error) {
        throw new RangeError(`line ${lineNumber}: ${(error as Error).message}`);
      }
    } else throw new RangeError(`line ${lineNumber}: needs k or bounds, got neither`);
    if (bounds.length === 0) throw new RangeError(`line ${lineNumber}: bounds must list at least one lane`);
    const innerBounds = cell('inner_bounds') === '' ? undefined : parseBoundsList(cell('inner_bounds'), `line ${lineNumber}`);
    if (innerBounds !== undefined && innerBounds.length !== bounds.length) {
      throw new RangeError(`line ${lineNumber}: inner_bounds must have ${bounds.length} lanes like bounds, got ${innerBounds.length}`);
    }
    rows.push({ pattern: cell('pattern') || `${loop}-k${kText || '?'}`, loop, k, bounds, innerBounds: loop === 'nested' ? innerBounds : undefined, cycles, line: lineNumber });
  });
  if (header === undefined) throw new RangeError('divergence CSV is empty: expected a header line and at least one row');
  if (rows.length === 0) throw new RangeError('divergence CSV has a header but no rows');
  return rows;
}

/**
 * The clock unit of a divergence CSV, from its `source` and `clock_hz` columns (what the
 * kernels' divergence workload writes): `ns` for the CPU backend (clock_hz 1e9), `cycles` for
 * CUDA (clock64), `ticks of H Hz` for another clock; `cycles` when the columns are absent.
 *
 * @example clockUnitOfCsv('pattern,loop,k,bounds,cycles,clock_hz,source\nsingle-k1,single,1,,500,1000000000,cpu') // 'ns'
 */
export function clockUnitOfCsv(text: string): string {
  const rows = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const header = (rows[0] ?? '').split(',').map((c) => c.trim().toLowerCase());
  const sourceAt = header.indexOf('source');
  const clockAt = header.indexOf('clock_hz');
  const units = new Set<string>();
  for (const row of rows.slice(1)) {
    const cells = row.split(',').map((c) => c.trim());
    const source = sourceAt < 0 ? '' : (cells[sourceAt] ?? '').toLowerCase();
    const clockHz = clockAt < 0 ? Number.NaN : Number(cells[clockAt]);
    units.add(source === 'cpu' || clockHz === 1e9 ? 'ns' : source === 'cuda' || Number.isNaN(clockHz) ? 'cycles' : `ticks of ${formatQuantity(clockHz)} Hz`);
  }
  if (units.size > 1) throw new UsageError(`the CSV mixes clock units (${[...units].join(', ')}): fit the CPU and the GPU measurements separately`);
  return [...units][0] ?? 'cycles';
}
