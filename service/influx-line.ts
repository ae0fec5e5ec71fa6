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
  let line = measurementText(point.measurement) + tagText(point.tags) + ' ';
  let first = true;
  for (const key of Object.keys(point.fields)) {
    const value = point.fields[key]!;
    line += (first ? '' : ',') + fieldKeyText(key) + '=' + (typeof value === 'number' ? formatFloat(value) : stringField(value));
    first = false;
  }
  return flat(`${line} ${Math.round(point.timestampMillis)}`);
}

/** Matches at once, anywhere: only its side effect on the subject is wanted ({@link flat}). */
const FLATTEN_PROBE = /^/;

/**
 * The same text, flat. V8 keeps a string built piece by piece as a tree of its pieces: a line
 * of 20 fields (~750 characters) held ~3.0 KB instead of ~0.8 KB, for as long as it waited in the InfluxDB
 * writer's buffer (tens of thousands of lines during a burst of window closes: docs/estimator.md,
 * The heap target). A regular expression runs on a flat copy, which V8 makes in place.
 */
function flat(text: string): string {
  FLATTEN_PROBE.test(text);
  return text;
}

/**
 * Texts already checked and escaped, kept so that the names repeated on every point (the
 * measurements and field keys, a few dozen) are not checked and escaped again: each Map holds at
 * most {@link NAME_CACHE_LIMIT} names and is emptied when full (then fills again from use).
 */
const NAME_CACHE_LIMIT = 1024;
const measurementTexts = new Map<string, string>();
const fieldKeyTexts = new Map<string, string>();

function measurementText(measurement: string): string {
  let text = measurementTexts.get(measurement);
  if (text === undefined) {
    text = checked('measurement', measurement).replace(/[, ]/g, (c) => `\\${c}`);
    if (measurementTexts.size >= NAME_CACHE_LIMIT) measurementTexts.clear();
    measurementTexts.set(measurement, text);
  }
  return text;
}

function fieldKeyText(key: string): string {
  let text = fieldKeyTexts.get(key);
  if (text === undefined) {
    text = escapeKey(checked('field key', key));
    if (fieldKeyTexts.size >= NAME_CACHE_LIMIT) fieldKeyTexts.clear();
    fieldKeyTexts.set(key, text);
  }
  return text;
}

/**
 * The tags' part of a line, `,key=value` for each tag with a non-empty value in key order. A
 * frozen tags object (the engine shares one per stream between its points: estimator/engine/
 * series-points.ts) cannot change, so its text is remembered in a WeakMap: an entry lives as long
 * as its tags object, nothing else holds it. Other tags objects are encoded every time.
 */
const frozenTagTexts = new WeakMap<object, string>();

function tagText(tags: Readonly<Record<string, string>>): string {
  const frozen = Object.isFrozen(tags);
  if (frozen) {
    const known = frozenTagTexts.get(tags);
    if (known !== undefined) return known;
  }
  let text = '';
  for (const key of Object.keys(tags).sort()) {
    const value = tags[key];
    if (value === '') continue;
    text += `,${escapeKey(checked('tag key', key))}=${escapeKey(checked(`tag ${key}`, value ?? ''))}`;
  }
  if (frozen) frozenTagTexts.set(tags, text);
  return text;
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
  return ESCAPED_IN_KEYS.test(text) ? text.replace(/[,= ]/g, (c) => `\\${c}`) : text;
}

const ESCAPED_IN_KEYS = /[,= ]/;

function stringField(value: string): string {
  // Any text, a newline included (InfluxDB 1.8 reads a quoted newline as part of the string).
  return `"${value.replace(/["\\]/g, (c) => `\\${c}`)}"`;
}

function formatFloat(value: number): string {
  // Integers are written with a decimal point so InfluxDB types the field as float, never int
  // (String writes an integer below 1e21 in magnitude as plain digits, larger ones as 1e+21).
  const text = String(value);
  return Number.isInteger(value) && Math.abs(value) < 1e21 ? `${text}.0` : text;
}
