import { readFileSync, writeFileSync } from 'node:fs';
import { CategoricalDistribution, ModelError } from '../model/index.ts';
import { FRAME_MAGIC } from '../protocol/index.ts';
import { UsageError } from './usage-error.ts';

/**
 * The `--counts FILE` and `--pmf FILE` formats of `warpwatch model` and `advise` (strict,
 * explicit inputs). Formats:
 *
 * - CSV: lines `value,weight`; blank lines and `#` comments are skipped; the first line is a
 *   header only when none of its fields looks like a number (`value,count`), so a malformed
 *   numeric first line is an error, never silently dropped.
 * - JSON object `{"value": weight, ...}`.
 * - JSON array `[w_1, w_2, ...]` of per-unit iteration counts (one element per unit).
 *
 * Values are iteration counts: strict decimal integers 0..2^53−1 (no sign, no spaces inside,
 * no `0x10`, no `1e3`, no `7.5`). `--counts` weights are numbers of units, the same strict
 * integers; `--pmf` weights are probabilities or relative weights (decimal numbers ≥ 0, an
 * exponent allowed: `2.5e-3`), for published tables of iteration counts.
 */

/** Which kind of weight a file holds: unit counts (integers) or probabilities (`--pmf`). */
export type WeightKind = 'counts' | 'pmf';

const INTEGER = /^\d+$/;
const DECIMAL = /^(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NUMBER_LIKE = /^[+-]?(?:\d|\.\d)/;

function flagOf(kind: WeightKind): string {
  return kind === 'counts' ? '--counts' : '--pmf';
}

/**
 * Parses a strict decimal integer 0..2^53−1 (a value or a unit count).
 *
 * @throws UsageError naming `what`, what arrived and what is allowed.
 * @example parseStrictInteger('12', 'value') // 12
 */
export function parseStrictInteger(text: string, what: string): number {
  if (!INTEGER.test(text)) throw new UsageError(`${what} must be a non-negative decimal integer (digits only), got '${text}'`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new UsageError(`${what} must be at most 2^53−1 = 9007199254740991 (larger integers are not exact in a double), got '${text}'`);
  return value;
}

function parseWeight(text: string, kind: WeightKind, where: string): number {
  if (kind === 'counts') {
    if (!INTEGER.test(text)) {
      const hint = DECIMAL.test(text) ? ` (fractional weights or probabilities: give the file with --pmf)` : '';
      throw new UsageError(`${where}: a count must be a non-negative decimal integer (units observed), got '${text}'${hint}`);
    }
    return parseStrictInteger(text, `${where}: a count`);
  }
  if (!DECIMAL.test(text)) throw new UsageError(`${where}: a weight must be a non-negative decimal number, got '${text}'`);
  const value = Number(text);
  if (!Number.isFinite(value)) throw new UsageError(`${where}: a weight must be finite, got '${text}'`);
  return value;
}

function jsonWeight(raw: unknown, kind: WeightKind, where: string): number {
  if (typeof raw !== 'number' || !Number.isFinite(raw)) throw new UsageError(`${where}: a ${kind === 'counts' ? 'count' : 'weight'} must be a JSON number, got ${JSON.stringify(raw)}`);
  if (kind === 'counts' && !(Number.isInteger(raw) && raw >= 0)) {
    throw new UsageError(`${where}: a count must be a non-negative integer (units observed), got ${raw}${raw >= 0 ? ' (fractional weights or probabilities: give the file with --pmf)' : ''}`);
  }
  if (kind === 'counts' && !Number.isSafeInteger(raw)) throw new UsageError(`${where}: a count must be at most 2^53−1 = 9007199254740991, got ${raw}`);
  if (raw < 0) throw new UsageError(`${where}: a weight must be non-negative, got ${raw}`);
  return raw;
}

/**
 * The text of a file given as counts, pmf or trace, or a UsageError when it is not text: a NUL
 * byte (a binary file) or bytes that are not UTF-8. Nothing of such a file is echoed.
 */
function textOf(bytes: Buffer, label: string, expected: string): string {
  const nul = bytes.indexOf(0);
  if (nul >= 0) throw new UsageError(`${label} is not a text file (a NUL byte at offset ${nul}): it takes ${expected}`);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${label} is not a text file (its bytes are not UTF-8): it takes ${expected}`);
  }
}

/** A line as it may be quoted in a one-line message: control and non-ASCII bytes as '?', at most 40 characters. */
function printable(line: string): string {
  const clean = line.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

/**
 * Parses the text of a counts or pmf file into value → weight (duplicates added).
 *
 * @param label how to name the file in messages (`--counts file 'c.csv'`).
 * @throws UsageError for anything that is not the format above; the message names the line or
 *   key, what arrived and what is allowed.
 * @example parseWeightsText('value,count\n1,30\n4,10\n', 'counts', 'c.csv') // Map {1 => 30, 4 => 10}
 */
export function parseWeightsText(text: string, kind: WeightKind, label: string): Map<number, number> {
  const weights = new Map<number, number>();
  const add = (value: number, weight: number): void => {
    weights.set(value, (weights.get(value) ?? 0) + weight);
  };
  if (/^\s*[[{]/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${label} is not valid JSON: ${(error as Error).message}`);
    }
    if (Array.isArray(parsed)) {
      if (kind === 'pmf') throw new UsageError(`${label}: a JSON array lists per-unit counts, which is --counts; --pmf takes {"value": weight, ...} or CSV value,weight`);
      parsed.forEach((raw, index) => {
        if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
          throw new UsageError(`${label}: element ${index} of the array must be a unit's iteration count (an integer 0..2^53−1), got ${JSON.stringify(raw)}`);
        }
        add(raw, 1);
      });
      return weights;
    }
    if (parsed === null || typeof parsed !== 'object') throw new UsageError(`${label} must hold a JSON object {"value": ${kind === 'counts' ? 'count' : 'weight'}, ...} or an array of per-unit counts`);
    for (const [key, raw] of Object.entries(parsed as Record<string, unknown>)) {
      add(parseStrictInteger(key, `${label}: key '${key}': a value`), jsonWeight(raw, kind, `${label}: value ${key}`));
    }
    return weights;
  }
  const lines = text.split(/\r?\n/);
  let first = true;
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const fields = line.split(',').map((field) => field.trim());
    const isFirst = first;
    first = false;
    if (isFirst && fields.every((field) => field !== '' && !NUMBER_LIKE.test(field))) return; // header: no field looks numeric
    const where = `${label} line ${index + 1}`;
    if (fields.length !== 2) {
      // One number per line is a per-unit trace (unit order), which --trace reads.
      const traceHint = fields.length === 1 && /^\d+$/.test(fields[0]!) ? '; one count per line is a per-unit trace: give the file with --trace' : '';
      throw new UsageError(`${where}: expected 'value,${kind === 'counts' ? 'count' : 'weight'}' (two fields), got '${printable(line)}'${traceHint}`);
    }
    add(parseStrictInteger(fields[0]!, `${where}: the value`), parseWeight(fields[1]!, kind, where));
  });
  return weights;
}

/**
 * Reads a counts (`kind` 'counts') or pmf file into a distribution.
 *
 * @throws UsageError when the file is missing or malformed, or all weights are zero.
 * @example readWeightsFile('counts.csv', 'counts').mean()
 */
export function readWeightsFile(file: string, kind: WeightKind): CategoricalDistribution {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read ${flagOf(kind)} file '${file}': ${(error as Error).message}`);
  }
  const label = `${flagOf(kind)} file '${file}'`;
  if (FRAME_MAGIC.every((byte, i) => bytes[i] === byte)) {
    throw new UsageError(`${label} is a warpwatch frame file (it starts with the frame magic 'WWFR'), not a text file of counts: give it with --frames (warpwatch advise --frames ${file}, or warpwatch analyze ${file})`);
  }
  const text = textOf(bytes, label, kind === 'counts' ? 'JSON {"value": count, ...}, a JSON array of per-unit counts, or CSV lines value,count' : 'JSON {"value": weight, ...} or CSV lines value,weight');
  const weights = parseWeightsText(text, kind, label);
  try {
    return kind === 'counts' ? CategoricalDistribution.fromCounts(weights) : CategoricalDistribution.fromPmf(weights);
  } catch (error) {
    if (error instanceof ModelError) throw new UsageError(`${label}: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * The `--counts` CSV text of a distribution: a `value,count` header and one line per value.
 * Counts are `probability × totalWeight` rounded to integers (exact for observed counts).
 *
 * @example formatCountsCsv(CategoricalDistribution.fromCounts({ 1: 3, 4: 1 })) // 'value,count\n1,3\n4,1\n'
 */
export function formatCountsCsv(distribution: CategoricalDistribution): string {
  const lines = ['value,count'];
  distribution.values.forEach((value, i) => {
    const count = Math.round((distribution.probabilities[i] ?? 0) * distribution.totalWeight);
    if (count > 0) lines.push(`${value},${count}`);
  });
  return `${lines.join('\n')}\n`;
}

/**
 * Writes {@link formatCountsCsv} to a file (`--export-counts FILE`).
 *
 * @throws UsageError when the file cannot be written.
 * @example writeCountsFile('observed.csv', distribution)
 */
export function writeCountsFile(file: string, distribution: CategoricalDistribution): void {
  try {
    writeFileSync(file, formatCountsCsv(distribution));
  } catch (error) {
    throw new UsageError(`cannot write --export-counts file '${file}': ${(error as Error).message}`);
  }
}

/**
 * Parses the text of a per-unit counts trace (`--trace FILE` of `model` and `advise`): the
 * iteration counts of units in unit order (lane order within a group, groups in order). Either
 * a JSON array `[w_1, w_2, ...]` of integers, or CSV with one value per line; blank lines and
 * `#` comments are skipped, and the first line is a header only when it does not look like a
 * number (`count`). Values are the strict decimal integers 0..2^53−1 of {@link parseStrictInteger}.
 *
 * @param label how to name the file in messages (`--trace file 't.csv'`).
 * @throws UsageError (WW_ERR_USAGE) for anything else — a second field on a line, a sign, a
 *   fraction, an exponent, a non-integer JSON element — or an empty trace; the message names
 *   the line or element, what arrived and what is allowed.
 * @example parseTraceText('count\n3\n5\n0\n', 't.csv') // [3, 5, 0]
 */
export function parseTraceText(text: string, label: string): number[] {
  const trace: number[] = [];
  if (/^\s*[[{]/.test(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${label} is not valid JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsed)) throw new UsageError(`${label} must hold a JSON array of per-unit counts in unit order, or CSV with one count per line`);
    parsed.forEach((raw, index) => {
      if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 0) {
        throw new UsageError(`${label}: element ${index} of the array must be a unit's iteration count (an integer 0..2^53−1), got ${JSON.stringify(raw)}`);
      }
      trace.push(raw);
    });
  } else {
    let first = true;
    text.split(/\r?\n/).forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const isFirst = first;
      first = false;
      if (isFirst && !line.includes(',') && !NUMBER_LIKE.test(line)) return; // header: one field that does not look numeric
      if (line.includes(',')) throw new UsageError(`${label} line ${index + 1}: expected one count per line (a trace in unit order), got '${line}'`);
      trace.push(parseStrictInteger(line, `${label} line ${index + 1}: a count`));
    });
  }
  if (trace.length === 0) throw new UsageError(`${label} holds no unit counts`);
  return trace;
}

/**
 * Reads a per-unit counts trace file ({@link parseTraceText}).
 *
 * @throws UsageError (WW_ERR_USAGE) when the file cannot be read or is malformed.
 * @example readTraceFile('trace.csv').length
 */
export function readTraceFile(file: string): number[] {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw new UsageError(`cannot read --trace file '${file}': ${(error as Error).message}`);
  }
  const label = `--trace file '${file}'`;
  return parseTraceText(textOf(bytes, label, 'a JSON array of per-unit counts or one count per line'), label);
}
