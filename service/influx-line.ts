import { CONTROL_CHARACTER_PATTERN, INFLUX_UNSAFE_BACKSLASH_PATTERN } from '../contracts/index.ts';

/** One point as both services write it to InfluxDB. Numeric fields are written as floats, so a field never changes type. */
export interface InfluxPoint {
  readonly measurement: string;
  /** Tags with an empty value are left out. */
  readonly tags: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, number | string>>;
  /** Milliseconds since the Unix epoch. */
  readonly timestampMillis: number;
}

/**
 * InfluxDB line protocol of a point, timestamp in milliseconds (write precision `ms`).
 * Escaping per the line-protocol reference, each with a backslash: measurement `,` and space;
 * tag keys, tag values and field keys `,` `=` and space; string field values `"` and `\`.
 * InfluxDB 1.8 has no escape for a backslash in a measurement, tag or field key: it keeps a
 * backslash that is not before one of the escaped characters as it is (measured on 1.8.10:
 * `a\b` is stored as `a\b`, `a\\b` as `a\\b`), so one is written unchanged; a backslash
 * right before `,`, `=`, a space or at the end cannot be stored at all ({@link lineProtocolTextProblem},
 * the stream identity rule of contracts/stream-identity.ts keeps such values out).
 *
 * @throws InfluxLineError (WW_ERR_INFLUX_LINE) when the measurement, a tag key or value, or a
 *   field key cannot be written unchanged ({@link lineProtocolTextProblem}): the point is refused
 *   rather than written wrongly or split into two
 * @example
 * encodeLineProtocol(point); // 'warpwatch_window,stream=a/b,... loss_predicted=1.2 1700000000000'
 */
export function encodeLineProtocol(point: InfluxPoint): string {
  const measurement = checked('measurement', point.measurement);
  const tagParts = Object.keys(point.tags)
    .sort()
    .filter((key) => point.tags[key] !== '')
    .map((key) => `${escapeKey(checked('tag key', key))}=${escapeKey(checked(`tag ${key}`, point.tags[key] ?? ''))}`);
  const fieldParts = Object.entries(point.fields).map(([key, value]) =>
    typeof value === 'number' ? `${escapeKey(checked('field key', key))}=${formatFloat(value)}` : `${escapeKey(checked('field key', key))}=${stringField(value)}`,
  );
  const head = [measurement.replace(/[, ]/g, (c) => `\\${c}`), ...tagParts].join(',');
  return `${head} ${fieldParts.join(',')} ${Math.round(point.timestampMillis)}`;
}

/** A point {@link encodeLineProtocol} refuses: a name or tag InfluxDB cannot store unchanged. */
export class InfluxLineError extends RangeError {
  readonly code = 'WW_ERR_INFLUX_LINE';

  constructor(message: string) {
    super(message);
    this.name = 'InfluxLineError';
  }
}

/**
 * What keeps a measurement, tag key, tag value or field key from being written to InfluxDB
 * unchanged, or undefined: a control character (C0, DEL, C1; a newline would end the line and
 * start a new point), a backslash right before `,`, `=`, a space or at the end (InfluxDB 1.8
 * refuses a tag value ending in one as "invalid tag format" and stores `\,` with the backslash
 * doubled), or an empty text.
 *
 * @example lineProtocolTextProblem('hostB\\') // "a '\\' before ',', '=', a space or at the end"
 */
export function lineProtocolTextProblem(text: string): string | undefined {
  if (text === '') return 'empty';
  const control = CONTROL_CHARACTER_PATTERN.exec(text);
  if (control !== null) return `a control character (U+${control[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`;
  if (INFLUX_UNSAFE_BACKSLASH_PATTERN.test(text)) return "a '\\' before ',', '=', a space or at the end";
  return undefined;
}

/** One test for everything {@link lineProtocolTextProblem} refuses but the empty text (the fast path of every name and tag). */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNWRITABLE = /[\u0000-\u001f\u007f-\u009f]|\\(?=[,= ]|$)/;

function checked(what: string, text: string): string {
  if (text !== '' && !UNWRITABLE.test(text)) return text;
  const problem = lineProtocolTextProblem(text);
  if (problem !== undefined) throw new InfluxLineError(`${what} ${JSON.stringify(text)} cannot be written to InfluxDB: it has ${problem}`);
  return text;
}

function escapeKey(text: string): string {
  return text.replace(/[,= ]/g, (c) => `\\${c}`);
}

function stringField(value: string): string {
  // Any text, a newline included (InfluxDB 1.8 reads a quoted newline as part of the string).
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function formatFloat(value: number): string {
  // Integers are written with a decimal point so InfluxDB types the field as float, never int.
  const text = String(value);
  return /^-?\d+$/.test(text) ? `${text}.0` : text;
}
